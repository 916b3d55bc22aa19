"""A user's module with ``transforms.scipy``: checked by ``mypy --strict`` and pyright strict
(``.ci/run``). SciPy's names type as differentiable functions of arrays."""

from __future__ import annotations

from typing import assert_type

import numpy as np

import transforms as T
import transforms.numpy as tnp
import transforms.scipy.special as tsp
from transforms import Array
from transforms.scipy.misc import logsumexp


def nll(w: Array, X: Array, y: Array) -> Array:
    z = X @ w
    return -tnp.sum(y * tsp.log_ndtr(z) + (1 - y) * tsp.log_ndtr(-z))


X, y, w = np.ones((4, 3)), np.array([0.0, 1.0, 1.0, 0.0]), np.zeros(3)
assert_type(T.grad(nll)(w, X, y), Array)
assert_type(tsp.gammaln(w), Array)
assert_type(tsp.xlogy(w, 2.0), Array)
assert_type(tsp.gammainc(2.0, w), Array)
assert_type(tsp.jv(1.5, w), Array)
assert_type(tsp.logsumexp(w, axis=0), Array)
assert_type(tsp.logsumexp(w, b=w, return_sign=True), tuple[Array, Array])
assert_type(logsumexp(w), Array)
assert_type(tsp.softmax(w, axis=0), Array)
assert_type(tsp.multigammaln(w + 3.0, 2), Array)
