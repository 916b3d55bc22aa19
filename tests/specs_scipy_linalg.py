"""Op-spec rows of ``transforms.scipy.linalg`` (joined into ``OP_SPECS`` by ``op_specs.py``);
``covers`` names them ``scipy.linalg.<name>``.

As in ``specs_linalg``, each row builds the matrix its function needs inside the row (so the
construction is differentiated too): ``_conditioned`` (diagonally dominant with a positive
diagonal: its triangles are well-conditioned, its eigenvalues in the right half-plane, away
from the branch cut of ``logm``/``sqrtm``), ``_spd`` (symmetric positive definite),
``_separated`` (symmetric, eigenvalues at least 1 apart), and ``_pivoted`` (a dominant
anti-diagonal, so that ``lu_factor`` pivots, with pivots that stay fixed nearby).
Eigenvectors are seen through their elementwise squares (sign-invariant).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st
from op_specs import OpSpec
from specs_linalg import _complex, _conditioned, _separated, _solve_shapes, _spd, _square
from strategies import SMALL, Shape, shapes

import transforms.numpy as tnp
import transforms.scipy.linalg as tsl

Params = dict[str, Any]


def _row(name: str, fn: Any, shapes_: Any, *params: Any, **kw: Any) -> OpSpec:
    """A row named ``scipy.linalg.<name>`` (a suffix after ``:`` names a variant)."""
    kw.setdefault("covers", (f"scipy.linalg.{name.partition(':')[0]}",))
    return OpSpec(f"scipy.linalg.{name}", fn, shapes_, *params, **kw)


def _pivoted(x: Any) -> Any:
    """``x / 4`` plus 3 on the anti-diagonal: partial pivoting swaps rows, stably."""
    n = x.shape[-1]
    return x * 0.25 + 3.0 * np.eye(n)[::-1]


def _fixed(**strategies: st.SearchStrategy[Any]) -> Any:
    return lambda arg_shapes: st.fixed_dictionaries(strategies)


_TRIANGULAR = _fixed(
    trans=st.sampled_from([0, 1, 2, "N", "T", "C"]),
    lower=st.booleans(),
    unit_diagonal=st.booleans(),
)
_LOWER = _fixed(lower=st.booleans())


def _solve_triangular(x: Any, b: Any, **params: Any) -> Any:
    return tsl.solve_triangular(_conditioned(x), b, **params)


def _solve_triangular_complex(x: Any, y: Any, b: Any, c: Any, **params: Any) -> Any:
    out = tsl.solve_triangular(_conditioned(_complex(x, y)), _complex(b, c), **params)
    return tnp.stack([tnp.real(out), tnp.imag(out)])


def _cho_solve(x: Any, b: Any, lower: bool) -> Any:
    return tsl.cho_solve(tsl.cho_factor(_spd(x), lower=lower), b)


def _lu_solve(x: Any, b: Any, trans: Any) -> Any:
    return tsl.lu_solve(tsl.lu_factor(_pivoted(x)), b, trans=trans)


def _eigh(x: Any, lower: bool) -> Any:
    w, v = tsl.eigh(_separated(x), lower=lower)
    return tnp.concatenate([w, tnp.reshape(v * v, (-1,))])


def _eigh_generalized(x: Any, y: Any, lower: bool) -> Any:
    """``a v = w b v`` with ``b = I + (y y^T) / 50``: the eigenvalues stay apart."""
    n = x.shape[-1]
    b = np.eye(n) + y @ tnp.swapaxes(y, -1, -2) * 0.02
    w, v = tsl.eigh(_separated(x), b, lower=lower)
    return tnp.concatenate([w, tnp.reshape(v * v, (-1,))])


@st.composite
def _sylvester_shapes(draw: st.DrawFn) -> tuple[Shape, Shape, Shape]:
    batch = draw(shapes(max_dims=1, max_side=2))
    m, n = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    lead_a = batch if draw(st.booleans()) else ()
    return lead_a + (m, m), (n, n), batch + (m, n)


@st.composite
def _block_shapes(draw: st.DrawFn) -> tuple[Shape, ...]:
    count = draw(st.integers(1, 3))
    return tuple(draw(shapes(max_dims=2, max_side=3)) for _ in range(count))


def _complex_triangular_shapes() -> st.SearchStrategy[tuple[Shape, ...]]:
    return _solve_shapes(vector=False).map(lambda s: (s[0], s[0], s[1], s[1]))


SPECS: tuple[OpSpec, ...] = (
    _row(
        "solve_triangular",
        _solve_triangular,
        _solve_shapes(vector=False),
        _TRIANGULAR,
    ),
    _row(
        "solve_triangular:vector",
        _solve_triangular,
        _solve_shapes(vector=True),
        _TRIANGULAR,
    ),
    _row(
        "solve_triangular:complex",
        _solve_triangular_complex,
        _complex_triangular_shapes(),
        _TRIANGULAR,
    ),
    _row("cholesky", lambda x, lower: tsl.cholesky(_spd(x), lower=lower), _square(), _LOWER),
    _row(
        "cho_factor",
        lambda x, lower: tsl.cho_factor(_spd(x), lower=lower)[0],
        _square(),
        _LOWER,
    ),
    _row("cho_solve", _cho_solve, _solve_shapes(vector=False), _LOWER),
    _row("lu_factor", lambda x: tsl.lu_factor(_pivoted(x))[0], _square()),
    _row(
        "lu_solve",
        _lu_solve,
        _square(max_batch=0).map(lambda s: (s[0], s[0][-1:])),
        _fixed(trans=st.sampled_from([0, 1, 2])),
    ),
    _row(
        "lu_solve:matrix",
        _lu_solve,
        _square(max_batch=0).flatmap(
            lambda s: st.integers(1, 3).map(lambda k: (s[0], (s[0][-1], k)))
        ),
        _fixed(trans=st.sampled_from([0, 1, 2])),
    ),
    _row("expm", lambda x: tsl.expm(x * 0.5), _square(), rtol=1e-4),
    _row("logm", lambda x: tsl.logm(_conditioned(x)), _square(), rtol=1e-4),
    _row("sqrtm", lambda x: tsl.sqrtm(_conditioned(x)), _square(), rtol=1e-4),
    _row(
        "solve_sylvester",
        lambda x, y, q: tsl.solve_sylvester(_conditioned(x), _conditioned(y), q),
        _sylvester_shapes(),
    ),
    _row("block_diag", tsl.block_diag, _block_shapes()),
    _row("eigh", _eigh, _square(max_batch=0), _LOWER),
    _row(
        "eigh:eigvals_only",
        lambda x, lower: tsl.eigh(_separated(x), lower=lower, eigvals_only=True),
        _square(),
        _LOWER,
    ),
    _row(
        "eigh:generalized",
        _eigh_generalized,
        _square(max_batch=0).map(lambda s: s * 2),
        _LOWER,
        domain=SMALL,
    ),
    _row("inv", lambda x: tsl.inv(_conditioned(x)), _square()),
    _row("det", lambda x: tsl.det(_conditioned(x)), _square()),
)

NONDIFFERENTIABLE: dict[str, int] = {}
