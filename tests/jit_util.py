"""Helpers of the jit tests: bitwise comparison of results (trees of arrays)."""

from __future__ import annotations

from typing import Any

import numpy as np

from transforms.tree_util import tree_flatten


def assert_same_bits(actual: Any, expected: Any, what: str = "") -> None:
    """``actual`` and ``expected`` are equal trees of arrays of the same type, shape, dtype
    and bits (NaNs equal to NaNs of the same payload, -0.0 different from 0.0); a 0-d array
    stands for a NumPy scalar (docs/jit.md, "Results")."""
    a_leaves, a_tree = tree_flatten(actual)
    e_leaves, e_tree = tree_flatten(expected)
    assert a_tree == e_tree, f"{what}: structure {a_tree} != {e_tree}"
    for i, (a, e) in enumerate(zip(a_leaves, e_leaves, strict=True)):
        if isinstance(e, np.generic) and type(a) is np.ndarray and a.ndim == 0:
            pass  # eager NumPy's operators make a NumPy scalar of a 0-d result; jit a 0-d array
        else:
            assert type(a) is type(e), f"{what} [{i}]: type {type(a)} != {type(e)}"
        if not isinstance(e, (np.ndarray, np.generic)):
            assert a == e or (a != a and e != e), f"{what} [{i}]: {a!r} != {e!r}"
            continue
        assert a.shape == e.shape, f"{what} [{i}]: shape {a.shape} != {e.shape}"
        assert a.dtype == e.dtype, f"{what} [{i}]: dtype {a.dtype} != {e.dtype}"
        a_bytes = np.ascontiguousarray(a).tobytes()
        e_bytes = np.ascontiguousarray(e).tobytes()
        if a_bytes != e_bytes:
            np.testing.assert_array_equal(a, e, err_msg=f"{what} [{i}]")
            raise AssertionError(f"{what} [{i}]: equal values, different bits (-0.0 or NaN)")
