"""A user's module with ``transforms.scipy.stats``: checked by ``mypy --strict`` and pyright
strict (``.ci/run``). The distributions' functions type as differentiable functions of
arrays, with SciPy's optional parameters."""

from __future__ import annotations

from typing import assert_type

import numpy as np

import transforms as T
import transforms.numpy as tnp
from transforms import Array
from transforms.scipy.stats import beta, binom, dirichlet, gamma, multivariate_normal, norm, t


def nll(params: Array, x: Array) -> Array:
    """A Student-t likelihood in a location and a log-scale."""
    return -tnp.sum(t.logpdf(x, 4.0, params[0], tnp.exp(params[1])))


x = np.linspace(-1.0, 1.0, 5)
params = np.array([0.1, -0.2])
assert_type(T.grad(nll)(params, x), Array)
assert_type(norm.logpdf(x), Array)
assert_type(norm.cdf(x, 1.0, 2.0), Array)
assert_type(norm.ppf(0.3), Array)
assert_type(gamma.logpdf(x + 2.0, 2.0, scale=3.0), Array)
assert_type(beta.sf(0.3, 2.0, x + 2.0), Array)
assert_type(binom.logpmf(2, 5, 0.3), Array)
assert_type(dirichlet.logpdf(np.array([0.2, 0.8]), np.array([1.0, 2.0])), Array)
assert_type(multivariate_normal.logpdf(np.zeros((3, 2)), cov=np.eye(2)), Array)
assert_type(T.vmap(gamma.logpdf)(x + 2.0, x + 3.0), Array)
