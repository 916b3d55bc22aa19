"""A user's module with ``transforms.scipy.linalg``, ``signal`` and ``integrate``: checked by
``mypy --strict`` and pyright strict (``.ci/run``)."""

from __future__ import annotations

from typing import assert_type

import numpy as np

import transforms as T
import transforms.numpy as tnp
import transforms.scipy.linalg as tsl
import transforms.scipy.signal as tss
from transforms import Array
from transforms.scipy.integrate import odeint

a, b = np.eye(3) * 2.0, np.ones(3)
c_and_lower = tsl.cho_factor(a)
assert_type(c_and_lower, tuple[Array, bool])
assert_type(tsl.cho_solve(c_and_lower, b), Array)
assert_type(tsl.solve_triangular(a, b, trans="T", lower=True), Array)
lu_and_piv = tsl.lu_factor(a)
assert_type(lu_and_piv, tuple[Array, Array])
assert_type(tsl.lu_solve(lu_and_piv, b, trans=1), Array)
assert_type(tsl.expm(a), Array)
assert_type(tsl.eigh(a), tuple[Array, Array])
assert_type(tsl.eigh(a, eigvals_only=True), Array)
assert_type(tsl.block_diag(a, b), Array)
assert_type(tss.convolve(b, b, mode="same"), Array)
assert_type(tss.correlate(b, b, method="fft"), Array)


def decay(y: Array, t: Array, k: Array) -> Array:
    return -k * y


def end(k: Array) -> Array:
    return tnp.sum(odeint(decay, b, np.array([0.0, 1.0]), k)[-1])


assert_type(T.grad(end)(np.array(0.5)), Array)
