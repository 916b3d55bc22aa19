"""Issue 11's property family: every custom-rule path in every mode and nesting, against
finite differences of the function itself (never against our own derivatives).

Each path computes the same kind of scalar function of ``x`` (shape (3,)) through one
mechanism whose rules are the true derivative: ``custom_jvp``, ``custom_vjp`` (each also
with a tuple output, and with a dict output of a pytree argument, one of whose leaves the
path does not use), ``checkpoint`` (also of a function closing over ``x``, reading it with
its argument and alone), a user primitive with a container argument, ``custom_root`` and
``custom_linear_solve`` (the operator depending on ``x``; and each with a solver that
differentiates the function it solves, by ``jacfwd``), and rules with convergence loops
(with one output and with a tuple output). The modes include every path that transposes a
pullback (``linearize``, its nestings, ``hvp``) and ``vmap`` on either side of ``grad``
(over the values a solver's function closes over). Every (path, mode) pair is either exact
(matches finite differences) or refused with the documented exception: the table
``REFUSED`` lists the refusals, so a new silent wrong number (or a refusal that disappears)
fails here. Hypothesis draws the point.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import transforms as T
import transforms.numpy as tnp

M = np.array([[4.0, 1.0, 0.5], [0.2, 5.0, 1.0], [0.3, 0.1, 6.0]])
W = np.array([1.0, -2.0, 0.5])


# ---- the paths ---------------------------------------------------------------------------------
@T.custom_jvp
def _jvp_fn(x: Any) -> Any:
    return tnp.sin(x) * x


@_jvp_fn.defjvp
def _jvp_fn_rule(primals: Any, tangents: Any) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    return _jvp_fn(x), (tnp.cos(x) * x + tnp.sin(x)) * t


@T.custom_vjp
def _vjp_fn(x: Any) -> Any:
    return tnp.sin(x) * x


_vjp_fn.defvjp(lambda x: (_vjp_fn(x), x), lambda x, ct: ((tnp.cos(x) * x + tnp.sin(x)) * ct,))


@T.primitive
def _pair_fn(p: Any) -> Any:  # a container argument: (a, b) -> a * exp(b)
    a, b = p
    return a * np.exp(b)


T.defjvp(_pair_fn, lambda t, ans, p: t[0] * tnp.exp(p[1]) + p[0] * tnp.exp(p[1]) * t[1])
T.defvjp(
    _pair_fn,
    lambda ans, p: lambda ct: (ct * tnp.exp(p[1]), ct * p[0] * tnp.exp(p[1])),
)


def _pair_batch(args: Any, dims: Any) -> tuple[Any, int]:
    """Elementwise: batch axes first, an unbatched operand broadcasts."""
    pairs = zip(args[0], dims[0], strict=True)
    leaves = [x if d is None else tnp.moveaxis(x, d, 0) for x, d in pairs]
    return _pair_fn(tuple(leaves)), 0


T.defbatch(_pair_fn, _pair_batch)


def _solve_scalar_roots(f: Any, r: Any) -> Any:
    """A convergence loop on plain arrays (a chord iteration)."""
    for _ in range(500):
        fr = f(r)
        if np.max(np.abs(fr)) < 1e-15:
            break
        r = r - fr
    return r


def _root_path(x: Any) -> Any:
    # r = x + 0.3 sin(r), elementwise: f's Jacobian is diag(1 - 0.3 cos r)
    def diagonal(g: Any, y: Any) -> Any:
        return y / g(np.ones_like(y))

    r = T.custom_root(
        lambda r: r - 0.3 * tnp.sin(r) - x, tnp.zeros_like(x), _solve_scalar_roots, diagonal
    )
    return tnp.sum(W * r + r**2)


def _jacobi(matvec: Any, b: Any) -> Any:
    r = np.zeros_like(b)
    for _ in range(2000):
        res = b - matvec(r)
        if np.max(np.abs(res)) < 1e-15:
            break
        r = r + res / 7.0
    return r


def _linear_path(x: Any) -> Any:
    # (M + diag(x^2)) r = sin(x): the operator and the right-hand side both depend on x
    r = T.custom_linear_solve(lambda v: M @ v + x**2 * v, tnp.sin(x), _jacobi, _jacobi)
    return tnp.sum(W * r + r**2)


def _far(w: Any, target: Any) -> Any:
    """The convergence test of the loops below: relative to the target, so that halving
    ``w - target`` always ends (an absolute 1e-15 can stay one rounding step away)."""
    return tnp.max(tnp.abs(w - target)) > 1e-15 * (1.0 + tnp.max(tnp.abs(target)))


def _newton(f: Any, r: Any) -> Any:
    """Newton's method with ``f``'s Jacobian by ``jacfwd``: a solver that differentiates the
    function it solves (which closes over the path's traced ``x``)."""
    for _ in range(50):
        fr = f(r)
        if np.max(np.abs(fr)) < 1e-14:
            break
        r = r - tnp.linalg.solve(T.jacfwd(f)(r), fr)
    return r


def _dense_solve(g: Any, y: Any) -> Any:
    """A linear map's solve by its matrix, built by ``jacfwd`` of the map."""
    return tnp.linalg.solve(T.jacfwd(g)(y), y)


def _newton_root_path(x: Any) -> Any:
    # r + 0.2 tanh(M r) = x sin(x) + 0.1 sum(x): a coupled system
    r = T.custom_root(
        lambda r: r + 0.2 * tnp.tanh(M @ r) - x * tnp.sin(x) - 0.1 * tnp.sum(x),
        tnp.zeros_like(x),
        _newton,
        _dense_solve,
    )
    return tnp.sum(W * r + r**2)


def _dense_linear_path(x: Any) -> Any:
    def solve(matvec: Any, b: Any) -> Any:  # the matrix by jacfwd of matvec, inside solve
        return tnp.linalg.solve(T.jacfwd(matvec)(b), b)

    r = T.custom_linear_solve(lambda v: M @ v + tnp.cos(x) * v, x**2, solve, solve)
    return tnp.sum(W * r + r**2)


@T.custom_vjp
def _looping_vjp(x: Any) -> Any:
    return tnp.sin(x) * x


def _looping_bwd(x: Any, ct: Any) -> tuple[Any]:
    g = tnp.cos(x) * x + tnp.sin(x)
    w = ct
    while _far(w, ct * g):  # a convergence loop on the cotangent
        w = 0.5 * (w + ct * g)
    return (w,)


_looping_vjp.defvjp(lambda x: (_looping_vjp(x), x), _looping_bwd)


@T.custom_jvp
def _looping_jvp(x: Any) -> Any:
    return tnp.sin(x) * x


def _converged_tangent(x: Any, t: Any) -> Any:
    """``(sin(x) x)' t`` reached by a convergence loop on the tangent (control flow on it)."""
    g = tnp.cos(x) * x + tnp.sin(x)
    u = t
    while _far(u, g * t):
        u = 0.5 * (u + g * t)
    return u


@_looping_jvp.defjvp
def _looping_jvp_rule(primals: Any, tangents: Any) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    return _looping_jvp(x), _converged_tangent(x, t)


# ---- pytree outputs: (a, b) = (sin(x) x, exp(0.3 x)); {"u": s sin(x), "v": (s x^2, unused)}
@T.custom_jvp
def _jvp_tuple(x: Any) -> Any:
    return tnp.sin(x) * x, tnp.exp(0.3 * x)


@_jvp_tuple.defjvp
def _jvp_tuple_rule(primals: Any, tangents: Any) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    return _jvp_tuple(x), ((tnp.cos(x) * x + tnp.sin(x)) * t, 0.3 * tnp.exp(0.3 * x) * t)


@T.custom_vjp
def _vjp_tuple(x: Any) -> Any:
    return tnp.sin(x) * x, tnp.exp(0.3 * x)


def _vjp_tuple_bwd(x: Any, ct: Any) -> tuple[Any]:
    ct_a, ct_b = ct
    return ((tnp.cos(x) * x + tnp.sin(x)) * ct_a + 0.3 * tnp.exp(0.3 * x) * ct_b,)


_vjp_tuple.defvjp(lambda x: (_vjp_tuple(x), x), _vjp_tuple_bwd)


def _tuple_path(fn: Any) -> Callable[[Any], Any]:
    def path(x: Any) -> Any:
        a, b = fn(x)
        return tnp.sum(W * a + a * b + b**2)

    return path


@T.custom_jvp
def _jvp_dict(p: Any) -> Any:
    x, s = p["x"], p["s"][0]
    return {"u": s * tnp.sin(x), "v": (s * x**2, tnp.cos(x))}


@_jvp_dict.defjvp
def _jvp_dict_rule(primals: Any, tangents: Any) -> tuple[Any, Any]:
    (p,), (tp,) = primals, tangents
    x, s, tx, ts = p["x"], p["s"][0], tp["x"], tp["s"][0]
    tangent = {
        "u": ts * tnp.sin(x) + s * tnp.cos(x) * tx,
        "v": (ts * x**2 + 2 * s * x * tx, -tnp.sin(x) * tx),
    }
    return _jvp_dict(p), tangent


@T.custom_vjp
def _vjp_dict(p: Any) -> Any:
    x, s = p["x"], p["s"][0]
    return {"u": s * tnp.sin(x), "v": (s * x**2, tnp.cos(x))}


def _vjp_dict_bwd(p: Any, ct: Any) -> tuple[Any]:
    x, s = p["x"], p["s"][0]
    ct_u, (ct_v, ct_w) = ct["u"], ct["v"]
    ct_x = s * tnp.cos(x) * ct_u + 2 * s * x * ct_v - tnp.sin(x) * ct_w
    return ({"x": ct_x, "s": (tnp.sum(tnp.sin(x) * ct_u + x**2 * ct_v),)},)


_vjp_dict.defvjp(lambda p: (_vjp_dict(p), p), _vjp_dict_bwd)


def _dict_path(fn: Any) -> Callable[[Any], Any]:
    def path(x: Any) -> Any:  # "v"[1] is not used: its cotangent is a zero
        out = fn({"x": x, "s": (tnp.sum(x) + 2.0,)})
        return tnp.sum(W * out["u"] + out["u"] * out["v"][0])

    return path


@T.custom_vjp
def _looping_vjp_tuple(x: Any) -> Any:
    return tnp.sin(x) * x, x**2


def _looping_tuple_bwd(x: Any, ct: Any) -> tuple[Any]:
    target = ct[0] * (tnp.cos(x) * x + tnp.sin(x)) + ct[1] * 2 * x
    w = ct[0]
    while _far(w, target):  # a convergence loop on the cotangent
        w = 0.5 * (w + target)
    return (w,)


_looping_vjp_tuple.defvjp(lambda x: (_looping_vjp_tuple(x), x), _looping_tuple_bwd)


@T.custom_jvp
def _looping_jvp_tuple(x: Any) -> Any:
    return tnp.sin(x) * x, x**2


@_looping_jvp_tuple.defjvp
def _looping_jvp_tuple_rule(primals: Any, tangents: Any) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    return _looping_jvp_tuple(x), (_converged_tangent(x, t), 2 * x * t)


PATHS: dict[str, Callable[[Any], Any]] = {
    "custom_jvp": lambda x: tnp.sum(W * _jvp_fn(x) + _jvp_fn(x) ** 2),
    "custom_vjp": lambda x: tnp.sum(W * _vjp_fn(x) + _vjp_fn(x) ** 2),
    "checkpoint": lambda x: tnp.sum(T.checkpoint(lambda y: W * tnp.sin(y) * y + y**3)(x)),
    "checkpoint closing over x": lambda x: tnp.sum(
        T.checkpoint(lambda y: W * tnp.sin(y * x) + y * x**2)(tnp.cos(x))
    ),
    "checkpoint reading x alone in its closure": lambda x: tnp.sum(
        T.checkpoint(lambda y: y * tnp.sin(x) + tnp.exp(0.5 * x[0]))(x**2)
    ),
    "primitive with a container argument": lambda x: tnp.sum(
        W * _pair_fn((x, 0.5 * x)) + _pair_fn((x**2, -x))
    ),
    "custom_root": _root_path,
    "custom_linear_solve": _linear_path,
    "custom_root with Newton by jacfwd in its solve": _newton_root_path,
    "custom_linear_solve with jacfwd in its solve": _dense_linear_path,
    "custom_vjp with a loop in bwd": lambda x: tnp.sum(W * _looping_vjp(x) + _looping_vjp(x) ** 2),
    "custom_jvp with a loop in its rule": lambda x: tnp.sum(
        W * _looping_jvp(x) + _looping_jvp(x) ** 2
    ),
    "custom_jvp with a tuple output": _tuple_path(_jvp_tuple),
    "custom_vjp with a tuple output": _tuple_path(_vjp_tuple),
    "custom_jvp with a dict output": _dict_path(_jvp_dict),
    "custom_vjp with a dict output": _dict_path(_vjp_dict),
    "custom_vjp with a tuple output and a loop in bwd": _tuple_path(_looping_vjp_tuple),
    "custom_jvp with a tuple output and a loop in its rule": _tuple_path(_looping_jvp_tuple),
}

V = np.array([0.3, -0.7, 1.1])


def _grad_of_grad(f: Any) -> Any:
    return T.grad(lambda x: tnp.sum(T.grad(f)(x) * V))


MODES: dict[str, Callable[[Any, Any], Any]] = {  # each returns a gradient or a Hessian
    "grad": lambda f, x: T.grad(f)(x),
    "jvp": lambda f, x: np.stack([T.jvp(f, (x,), (e,))[1] for e in np.eye(3)]),
    "jacfwd": lambda f, x: T.jacfwd(f)(x),
    "jacrev": lambda f, x: T.jacrev(f)(x),
    "vmap of grad": lambda f, x: T.vmap(T.grad(f))(np.stack([x, x]))[1],
    "grad of vmap": lambda f, x: T.grad(lambda y: tnp.sum(T.vmap(f)(tnp.stack([y, y]))) / 2)(x),
    "hessian": lambda f, x: T.hessian(f)(x),
    "jacfwd of grad": lambda f, x: T.jacfwd(T.grad(f))(x),
    "grad of grad": lambda f, x: _grad_of_grad(f)(x),  # H @ V
    # the paths that transpose a pullback: linearize's map, and its nestings
    "linearize": lambda f, x: np.stack([T.linearize(f, x)[1](e) for e in np.eye(3)]),
    "vmap of linearize": lambda f, x: T.vmap(T.linearize(f, x)[1])(np.eye(3)),
    "linearize of grad": lambda f, x: T.linearize(T.grad(f), x)[1](V),  # H @ V
    "grad of linearize": lambda f, x: T.grad(lambda y: T.linearize(f, y)[1](V))(x),  # H @ V
    "hvp": lambda f, x: T.hvp(f, (x,), (V,))[1][0],  # H @ V
}
SECOND_ORDER = {"hessian", "jacfwd of grad"}
HESSIAN_TIMES_V = {"grad of grad", "linearize of grad", "grad of linearize", "hvp"}

# (path, mode) -> the exception: the refusals, each documented in docs/custom-rules.md
_LOOPING_VJP = ("custom_vjp with a loop in bwd", "custom_vjp with a tuple output and a loop in bwd")
_LOOPING_JVP = (
    "custom_jvp with a loop in its rule",
    "custom_jvp with a tuple output and a loop in its rule",
)
_TRANSPOSING_MODES = (
    "linearize",
    "vmap of linearize",
    "linearize of grad",
    "grad of linearize",
    "hvp",
)
REFUSED: dict[tuple[str, str], type[Exception]] = {
    **{
        (p, m): T.ConcretizationTypeError
        for p in _LOOPING_VJP
        for m in ("jvp", "jacfwd", "jacfwd of grad")
    },
    **{
        (p, m): T.TracerBoolConversionError
        for p in _LOOPING_VJP
        for m in ("vmap of grad", "grad of vmap", "hessian")
    },
    **{
        (p, m): T.ConcretizationTypeError
        for p in _LOOPING_JVP
        for m in (
            "grad",
            "jacrev",
            "vmap of grad",
            "grad of vmap",
            "hessian",
            "jacfwd of grad",
            "grad of grad",
        )
    },
    **{(p, "jacfwd"): T.TracerBoolConversionError for p in _LOOPING_JVP},
    **{  # linearize transposes the whole pullback, bwd rules included (issue 31)
        (p, m): T.ConcretizationTypeError
        for p in _LOOPING_VJP + _LOOPING_JVP
        for m in _TRANSPOSING_MODES
    },
}


def _numpy_value(f: Any, x: np.ndarray) -> float:
    return float(np.asarray(f(x)))


def _fd_gradient(f: Any, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    e = np.eye(x.size) * h
    return np.array([(_numpy_value(f, x + d) - _numpy_value(f, x - d)) / (2 * h) for d in e])


def _fd_hessian(f: Any, x: np.ndarray, h: float = 1e-4) -> np.ndarray:
    e = np.eye(x.size) * h
    n = x.size
    out = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            out[i, j] = (
                _numpy_value(f, x + e[i] + e[j])
                - _numpy_value(f, x + e[i] - e[j])
                - _numpy_value(f, x - e[i] + e[j])
                + _numpy_value(f, x - e[i] - e[j])
            ) / (4 * h * h)
    return out


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("path", sorted(PATHS))
@settings(max_examples=3, deadline=None)
@given(x=st.lists(st.floats(-1.0, 1.0), min_size=3, max_size=3).map(np.array))
def test_custom_path_is_exact_or_refused(path: str, mode: str, x: np.ndarray) -> None:
    f = PATHS[path]
    refused = REFUSED.get((path, mode))
    if refused is not None:
        with pytest.raises(refused):
            MODES[mode](f, x)
        return
    got = np.asarray(MODES[mode](f, x))
    if mode in SECOND_ORDER:
        np.testing.assert_allclose(got, _fd_hessian(f, x), rtol=1e-5, atol=1e-5)
    elif mode in HESSIAN_TIMES_V:
        np.testing.assert_allclose(got, _fd_hessian(f, x) @ V, rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_allclose(got, _fd_gradient(f, x), rtol=1e-7, atol=1e-8)
