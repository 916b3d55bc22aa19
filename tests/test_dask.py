"""Every row of the op-spec table on Dask arrays, in every mode the row allows, against NumPy.

Modes: the function itself, ``grad`` of a scalarisation (reverse mode through the row's VJP
rules), ``jvp`` (forward mode, Dask tangents) and ``vmap`` over a batch of two. Each runs
with the Dask scheduler replaced by one that fails the test (building the result must not
compute anything: a ``compute()``, an ``np.asarray`` of a Dask array) and with Dask's
warning for a NumPy function it lacks (it would compute the whole array) as an error. The
result's arrays must be Dask arrays, and computed they must equal NumPy's result on the same
values (to rounding: Dask sums chunk by chunk).

A row Dask cannot run (``DASK_LACKS``: it has no such operation) must raise
``ArrayLibraryError`` in every mode, naming the primitive and the library.
"""

from __future__ import annotations

import traceback
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from op_specs import OP_SPECS, OpSpec, cases

import transforms as T
import transforms.numpy as tnp
from transforms.core import ArrayLibraryError, current_traces

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

#: Rows whose operation Dask does not have: each must raise ArrayLibraryError.
_SCIPY_ONLY = "SciPy's {} takes NumPy arrays only (np.asarray would compute them); {}"
DASK_LACKS: dict[str, str] = {
    # linear algebra and SciPy (transforms/numpy/_linalg.py, transforms/scipy)
    **dict.fromkeys(
        [
            "linalg_det",
            "linalg_det_rank_deficient",
            "linalg_det_rank_deficient_complex",
            "linalg_det_complex",
            "scipy.linalg.det",
        ],
        "Dask has no det",
    ),
    **dict.fromkeys(["linalg_slogdet", "linalg_slogdet_complex"], "Dask has no slogdet"),
    **dict.fromkeys(
        ["linalg_eigh", "linalg_eigh_non_symmetric", "linalg_eigh_complex", "scipy.linalg.eigh"],
        "Dask has no eigh",
    ),
    **dict.fromkeys(
        [
            "linalg_eigvalsh",
            "linalg_eigvalsh_non_symmetric",
            "linalg_eigvalsh_complex",
            "scipy.linalg.eigh:eigvals_only",
        ],
        "Dask has no eigvalsh",
    ),
    **dict.fromkeys(
        ["linalg_eig_real", "linalg_eig_complex", "linalg_eigvals", "linalg_eig_complex_input"],
        "Dask has no eig",
    ),
    "scipy.linalg.eigh:generalized": "Dask has no eigh",
    **dict.fromkeys(
        ["scipy.linalg.lu_factor", "scipy.linalg.lu_solve", "scipy.linalg.lu_solve:matrix"],
        _SCIPY_ONLY.format("lu_factor", "Dask has no lu_factor"),
    ),
    **{
        f"scipy.linalg.{name}": _SCIPY_ONLY.format(name, f"Dask has no {name}")
        for name in ("expm", "logm", "sqrtm", "solve_sylvester")
    },
    **dict.fromkeys(
        [
            "scipy.integrate.odeint",
            "scipy.integrate.odeint:nonlinear",
            "scipy.integrate.odeint:times",
        ],
        "SciPy's odeint (LSODA) steps on NumPy arrays in one process",
    ),
    # the NumPy namespace
    "sort": "Dask has no sort (argsort)",
    "sort_under_vmap": "Dask has no sort (argsort)",
    "partition": "Dask has no argpartition",
    "percentile": "exact quantiles sort (argsort); Dask's percentile is approximate",
    "quantile": "exact quantiles sort (argsort); Dask's percentile is approximate",
    "unique": "the shape of its result depends on the values",
    "unique:axis": "the shape of its result depends on the values",
    "real_if_close_complex": "the dtype of its result depends on the values",
    "real_if_close_to_real": "the dtype of its result depends on the values",
}


#: Rows that call an array's own method or operator: on a raw Dask array (the "f" mode) that
#: is Dask's method, no code of transforms runs (under a transform it is the tracer's).
DASK_OWN = frozenset(
    (
        "conjugate_method",
        "cumprod_method",
        "cumsum_method",
        "diagonal_method",
        "dot_method",
        "getitem_fancy",
        "repeat_method",
        "take_method",
    )
)


def _refuse_compute(dsk: Any, keys: Any, **kwargs: Any) -> Any:
    frames = [f for f in traceback.extract_stack() if "/transforms/" in f.filename]
    where = " <- ".join(
        f"{f.filename.rsplit('/transforms/', 1)[-1]}:{f.lineno}" for f in frames[::-1][:4]
    )
    raise AssertionError(f"a Dask array was computed while the result was built, at {where}")


def to_dask(a: np.ndarray) -> Any:
    """``a`` as a Dask array of two chunks along each axis (one for a length-1 axis)."""
    a = np.asarray(a)
    return da.from_array(a, chunks=tuple(max(1, (n + 1) // 2) for n in a.shape))


def _leaves(y: Any) -> Iterator[Any]:
    if isinstance(y, (tuple, list)):
        for v in y:
            yield from _leaves(v)
    else:
        yield y


def _scalar(f: Callable[..., Any]) -> Callable[..., Any]:
    def g(*xs: Any) -> Any:
        total = 0.0
        for v in _leaves(f(*xs)):
            if np.issubdtype(v.dtype, np.inexact):
                total = total + tnp.sum(tnp.real(v) * 1.5)
        return total

    return g


def _modes(
    f: Callable[..., Any], args: tuple[Any, ...], convert: Callable[[Any], Any]
) -> dict[str, tuple[Callable[..., Any], tuple[Any, ...]]]:
    n = len(args)
    tangents = tuple(convert(np.full_like(a, 0.5)) for a in args)
    batched = tuple(convert(np.stack([a, a * 0.5 + 0.25])) for a in args)
    return {
        "f": (f, tuple(map(convert, args))),
        "grad": (T.grad(_scalar(f), argnums=tuple(range(n))), tuple(map(convert, args))),
        "jvp": (lambda *xs: T.jvp(f, xs, tangents), tuple(map(convert, args))),
        "vmap": (T.vmap(f), batched),
    }


def _numpy(fun: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    try:
        return fun(*args)
    except Exception:  # the row does not allow this mode (no derivative, not batchable)
        return None


def _lazily(fun: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # Dask: "... is not implemented"
        with dask.config.set(scheduler=_refuse_compute):
            return fun(*args)


def _check(got: Any, expected: Any, what: str) -> None:
    got_leaves, expected_leaves = list(_leaves(got)), list(_leaves(expected))
    assert len(got_leaves) == len(expected_leaves), what
    for g, e in zip(got_leaves, expected_leaves, strict=True):
        if isinstance(e, np.ndarray) and e.size and not isinstance(g, da.Array):
            raise AssertionError(f"{what}: a {type(g).__name__} where a Dask array was due")
        value = g.compute(scheduler="sync") if isinstance(g, da.Array) else g
        assert np.shape(value) == np.shape(e), what
        assert np.asarray(value).dtype == np.asarray(e).dtype, what
        np.testing.assert_allclose(value, e, rtol=1e-9, atol=1e-12, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("spec", OP_SPECS, ids=lambda s: s.name)
@settings(max_examples=1, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_row_on_dask_equals_numpy(spec: OpSpec, data: st.DataObject) -> None:
    case = data.draw(cases(spec), label="case")
    numpy_modes = _modes(case.f, case.args, lambda a: a)
    dask_modes = _modes(case.f, case.args, to_dask)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (a row's domain edges: values compared)
        for mode, (fun, args) in numpy_modes.items():
            expected = _numpy(fun, args)
            if expected is None or (mode == "f" and spec.name in DASK_OWN):
                continue
            lazy_fun, lazy_args = dask_modes[mode]
            if spec.name in DASK_LACKS:
                with pytest.raises(ArrayLibraryError, match="dask"):
                    _lazily(lazy_fun, lazy_args)
                continue
            _check(_lazily(lazy_fun, lazy_args), expected, f"{spec.name} {mode}")
    assert current_traces() == ()
