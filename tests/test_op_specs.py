"""Every row of the op-spec table, differentiated in every mode and checked by value.

1. ``jvp`` against central finite differences along a random direction;
2. ``jvp``/``vjp`` duality: ``<w, J t>`` from ``jvp`` equals ``<J^T w, t>`` from the pullback;
3. second order in all four pairings (fwd/fwd, fwd/rev, rev/fwd, rev/rev) of the scalar
   ``g(x) = sum(y * (w + c * y / 2))`` with ``y = f(x)``: against each other and against a
   finite difference of the first-order JVP and VJP. The quadratic term keeps the second
   derivative non-zero even for linear ops (``J^T diag(c) J``), so the rules of a linear op
   really run on tracers of an outer transform;
4. ``transforms.check_grads`` (library code itself, so only one check among the others);
5. every pullback the reverse interpreter records returns a cotangent of its operand's dtype
   (a complex cotangent for a real operand would silently leak into a derivative), in
   reverse mode, reverse over forward and reverse over reverse;
6. ``linearize`` (the pullback transposed, with control flow on the cotangent refused)
   equals ``jvp``.

The finite-difference oracle evaluates the row's function on plain NumPy arrays, where
``transforms.numpy`` falls through to NumPy itself. Tolerances are relative to the size of
the compared values (``atol * max(1, max|expected|)``): sums over a few dozen O(1) terms
must not fail on round-off alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_specs import OP_SPECS, Case, OpSpec, cases
from strategies import seeds, uniform_like

import transforms as T
import transforms.numpy as tnp
from transforms.core import concrete
from transforms.reverse import VJPTrace, VJPTracer
from transforms.reverse._trace import Slot

Arrays = tuple[np.ndarray, ...]

# Two derivative modes disagree only by floating-point rounding: a much tighter tolerance
# than against finite differences (scaled down from the row's finite-difference rtol).
MODE_RTOL_FACTOR = 1e-3

specs = pytest.mark.parametrize("spec", OP_SPECS, ids=lambda s: s.name)


# ---- helpers ---------------------------------------------------------------------------------
def _draw(data: st.DataObject, spec: OpSpec) -> tuple[Case, np.random.Generator]:
    case = data.draw(cases(spec), label="case")
    rng = np.random.default_rng(data.draw(seeds(), label="seed"))
    return case, rng


def _leaves(tree: Any) -> list[np.ndarray]:
    if isinstance(tree, (tuple, list)):
        return [np.asarray(x) for x in tree]
    return [np.asarray(tree)]


def _inner(a: Any, b: Any) -> float:
    pairs = zip(_leaves(a), _leaves(b), strict=True)
    return float(sum(np.sum(x.astype(np.float64) * y.astype(np.float64)) for x, y in pairs))


def _abs_inner(a: Any, b: Any) -> float:
    """``sum |a_i b_i|``: the size of the terms of ``<a, b>``, the scale of its round-off."""
    pairs = zip(_leaves(a), _leaves(b), strict=True)
    return float(sum(np.sum(np.abs(x.astype(np.float64) * y)) for x, y in pairs))


def _assert_close(actual: Any, expected: Any, rtol: float, atol: float, what: str) -> None:
    """Leaf by leaf, ``atol`` scaled by the largest expected magnitude (at least 1)."""
    for i, (a, e) in enumerate(zip(_leaves(actual), _leaves(expected), strict=True)):
        assert a.shape == e.shape, f"{what} [{i}]: shape {a.shape}, expected {e.shape}"
        size = float(np.max(np.abs(e), initial=0.0))
        np.testing.assert_allclose(
            a, e, rtol=rtol, atol=atol * max(1.0, size), err_msg=f"{what} [{i}]"
        )


def _assert_scalars_close(values: dict[str, float], rtol: float, scale: float) -> None:
    reference = next(iter(values.values()))
    for name, value in values.items():
        assert abs(value - reference) <= rtol * max(1.0, scale), (
            f"second order: {name} = {value!r} but {next(iter(values))} = {reference!r} "
            f"(all: {values})"
        )


def _central(fun: Callable[..., Any], xs: Arrays, ts: Arrays, eps: float) -> Any:
    """The central difference ``(f(x + eps t) - f(x - eps t)) / 2 eps``, leaf by leaf."""
    plus = _leaves(fun(*(np.asarray(x + eps * t) for x, t in zip(xs, ts, strict=True))))
    minus = _leaves(fun(*(np.asarray(x - eps * t) for x, t in zip(xs, ts, strict=True))))
    diffs = [(p.astype(np.float64) - m) / (2 * eps) for p, m in zip(plus, minus, strict=True)]
    return diffs[0] if len(diffs) == 1 else tuple(diffs)


def _assert_like_inputs(cts: Any, xs: Arrays, what: str) -> None:
    """A cotangent of the inputs is a tuple with each input's shape and dtype."""
    assert isinstance(cts, tuple), f"{what}: expected a tuple, got {type(cts).__name__}"
    assert len(cts) == len(xs), f"{what}: {len(cts)} cotangents for {len(xs)} inputs"
    for i, (ct, x) in enumerate(zip(cts, xs, strict=True)):
        ct = np.asarray(ct)
        assert ct.shape == x.shape, f"{what} [{i}]: shape {ct.shape}, input has {x.shape}"
        assert ct.dtype == x.dtype, f"{what} [{i}]: dtype {ct.dtype}, input has {x.dtype}"


# ---- 1. forward mode against finite differences --------------------------------------------
@specs
@given(data=st.data())
def test_jvp_matches_finite_differences(spec: OpSpec, data: st.DataObject) -> None:
    case, rng = _draw(data, spec)
    ts = tuple(uniform_like(rng, x) for x in case.args)

    out, t_out = T.jvp(case.f, case.args, ts)

    expected = np.asarray(case.f(*case.args))  # plain NumPy: no tracer involved
    out, t_out = np.asarray(out), np.asarray(t_out)
    assert out.shape == expected.shape and out.dtype == expected.dtype
    np.testing.assert_allclose(out, expected, rtol=1e-13, atol=0, err_msg="jvp primal output")
    assert t_out.shape == out.shape, f"tangent shape {t_out.shape}, output {out.shape}"
    assert t_out.dtype == out.dtype, f"tangent dtype {t_out.dtype}, output {out.dtype}"
    numeric = _central(case.f, case.args, ts, spec.eps)
    _assert_close(t_out, numeric, spec.rtol, spec.atol, "jvp vs finite differences")


# ---- 2. reverse mode by duality with forward mode --------------------------------------------
@specs
@given(data=st.data())
def test_jvp_vjp_duality(spec: OpSpec, data: st.DataObject) -> None:
    case, rng = _draw(data, spec)
    ts = tuple(uniform_like(rng, x) for x in case.args)

    out, pullback = T.vjp(case.f, *case.args)
    w = uniform_like(rng, out).astype(np.asarray(out).dtype)
    cts = pullback(w)
    _, t_out = T.jvp(case.f, case.args, ts)

    np.testing.assert_allclose(out, case.f(*case.args), rtol=1e-13, atol=0)
    _assert_like_inputs(cts, case.args, "vjp cotangent")
    lhs, rhs = _inner(w, t_out), _inner(cts, ts)
    scale = max(_abs_inner(w, t_out), _abs_inner(cts, ts))
    rtol = spec.rtol * MODE_RTOL_FACTOR
    assert abs(lhs - rhs) <= rtol * max(1.0, scale), f"<w, J t> = {lhs!r} != <J^T w, t> = {rhs!r}"
    # and the pullback against finite differences directly, not only through jvp
    numeric = _central(case.f, case.args, ts, spec.eps)
    assert abs(_inner(w, numeric) - rhs) <= spec.rtol * max(1.0, scale), (
        f"<w, finite difference> = {_inner(w, numeric)!r} != <J^T w, t> = {rhs!r}"
    )
    # a pullback is reusable: a second call with another cotangent is linear in it
    again = pullback(2.0 * w)
    _assert_close(again, tuple(2.0 * np.asarray(c) for c in cts), rtol, rtol, "pullback(2w)")


# ---- 3. second order, all four pairings -------------------------------------------------------
def _scalarised(f: Callable[..., Any], w: np.ndarray, c: np.ndarray) -> Callable[..., Any]:
    """``g(x) = sum(y * (w + c * y / 2))`` with ``y = f(x)``: Hessian ``J^T diag(c) J + ...``."""

    def g(*xs: Any) -> Any:
        y = f(*xs)
        return tnp.sum(tnp.multiply(y, tnp.add(w, tnp.multiply(0.5 * c, y))))

    return g


@specs
@given(data=st.data())
def test_second_order_all_pairings(spec: OpSpec, data: st.DataObject) -> None:
    case, rng = _draw(data, spec)
    xs = case.args
    y = np.asarray(case.f(*xs))
    w, c = uniform_like(rng, y), uniform_like(rng, y)
    us = tuple(uniform_like(rng, x) for x in xs)
    vs = tuple(uniform_like(rng, x) for x in xs)
    g = _scalarised(case.f, w, c)
    one = np.ones(())

    def directional(*a: Any) -> Any:  # x -> <grad g(x), v>, by forward mode
        return T.jvp(g, a, vs)[1]

    def gradient(*a: Any) -> Any:  # x -> grad g(x), by reverse mode
        return T.vjp(g, *a)[1](one)

    uhv_fwd_fwd = T.jvp(directional, xs, us)[1]
    hu_fwd_rev = T.jvp(gradient, xs, us)[1]
    hv_rev_fwd = T.vjp(directional, *xs)[1](one)
    hv_rev_rev = T.vjp(gradient, *xs)[1](vs)

    assert np.shape(uhv_fwd_fwd) == (), f"fwd/fwd gave shape {np.shape(uhv_fwd_fwd)}"
    _assert_like_inputs(tuple(hu_fwd_rev), xs, "fwd/rev H u")
    _assert_like_inputs(hv_rev_fwd, xs, "rev/fwd H v")
    _assert_like_inputs(hv_rev_rev, xs, "rev/rev H v")

    mode_rtol = spec.rtol * MODE_RTOL_FACTOR
    _assert_close(hv_rev_rev, hv_rev_fwd, mode_rtol, mode_rtol, "rev/rev vs rev/fwd (H v)")

    scale = max(_abs_inner(hu_fwd_rev, vs), _abs_inner(hv_rev_fwd, us), 1.0)
    uhv = {
        "fwd/fwd": float(uhv_fwd_fwd),
        "fwd/rev": _inner(hu_fwd_rev, vs),
        "rev/fwd": _inner(hv_rev_fwd, us),
        "rev/rev": _inner(hv_rev_rev, us),
    }
    _assert_scalars_close(uhv, mode_rtol, scale)
    fd_uhv = float(_central(directional, xs, us, spec.eps))  # FD of the first-order JVP
    _assert_scalars_close({"fwd/fwd": uhv["fwd/fwd"], "FD of jvp": fd_uhv}, spec.rtol, scale)
    fd_hu = _central(gradient, xs, us, spec.eps)  # FD of the first-order VJP
    _assert_close(hu_fwd_rev, fd_hu, spec.rtol, spec.atol, "fwd/rev (H u) vs FD of the gradient")


# ---- 4. the library's own checker, as one more opinion ---------------------------------------
@specs
@given(data=st.data())
def test_check_grads(spec: OpSpec, data: st.DataObject) -> None:
    case, rng = _draw(data, spec)
    seed = int(rng.integers(2**32))
    low_precision = spec.rtol > 1e-5
    tolerances: dict[str, Any] = (
        {"rtol": spec.rtol, "atol": spec.atol, "eps": spec.eps} if low_precision else {}
    )
    T.check_grads(case.f, case.args, order=2, modes=("fwd", "rev"), seed=seed, **tolerances)


# ---- 5. the cotangent dtype contract, pullback by pullback -----------------------------------
def _checked(pullback: Callable[[Any], Any], dtype: Any, name: str) -> Callable[[Any], Any]:
    def check(ct: Any) -> Any:
        result = pullback(ct)
        if dtype is not None and type(result) is not Slot:
            got = np.asarray(concrete(result)).dtype
            assert got == dtype, f"the pullback of {name} returned {got} for a {dtype} operand"
        return result

    return check


@contextmanager
def _cotangent_dtypes_checked() -> Iterator[None]:
    """Wrap every pullback recorded meanwhile with a check of its result's dtype."""
    original = VJPTrace.process_primitive

    def process(self: VJPTrace, primitive: Any, args: Any, params: Any) -> object:
        start = len(self.tape)
        out = original(self, primitive, args, params)
        dtypes = {
            a.index: np.asarray(concrete(a)).dtype
            for a in args
            if type(a) is VJPTracer and a._trace is self
        }
        for i in range(start, len(self.tape)):
            parents, pullbacks = self.tape[i]
            if type(parents) is int:
                self.tape[i] = (parents, _checked(pullbacks, dtypes.get(parents), primitive.name))
            else:
                self.tape[i] = (
                    parents,
                    tuple(
                        _checked(pb, dtypes.get(p), primitive.name)
                        for p, pb in zip(parents, pullbacks, strict=True)
                    ),
                )
        return out

    VJPTrace.process_primitive = process  # type: ignore[method-assign]
    try:
        yield
    finally:
        VJPTrace.process_primitive = original  # type: ignore[method-assign]


@specs
@settings(max_examples=6)
@given(data=st.data())
def test_pullbacks_return_cotangents_of_their_operands_dtype(
    spec: OpSpec, data: st.DataObject
) -> None:
    case, rng = _draw(data, spec)
    xs = case.args
    ts = tuple(uniform_like(rng, x) for x in xs)
    out = np.asarray(case.f(*xs))
    w = uniform_like(rng, out).astype(out.dtype)
    xs32 = tuple(x.astype(np.float32) for x in xs)  # float32 operands meet float64 constants
    out32 = np.asarray(case.f(*xs32))
    with _cotangent_dtypes_checked():
        T.vjp(case.f, *xs)[1](w)
        T.vjp(lambda *v: T.jvp(case.f, v, ts)[1], *xs)[1](w)
        T.vjp(lambda *v: T.vjp(case.f, *v)[1](w), *xs)[1](ts)
        T.vjp(case.f, *xs32)[1](w.astype(out32.dtype))


# ---- 6. linearize: every pullback is linear in its cotangent, with no control flow on it ----
@specs
@settings(max_examples=3)
@given(data=st.data())
def test_linearize_matches_jvp(spec: OpSpec, data: st.DataObject) -> None:
    """``linearize`` transposes the recorded pullback with its trace marked ``transposing``,
    which refuses any read of a cotangent's values (a user's bwd looping on it would be
    transposed at one iteration count): no built-in rule may read one, so each row's
    linearized map runs and equals its ``jvp``."""
    case, rng = _draw(data, spec)
    ts = tuple(uniform_like(rng, x) for x in case.args)
    _, expected = T.jvp(case.f, case.args, ts)
    _, f_jvp = T.linearize(case.f, *case.args)
    rtol = spec.rtol * MODE_RTOL_FACTOR  # the two modes differ by rounding only
    _assert_close(f_jvp(*ts), expected, rtol, rtol, "linearize vs jvp")
