"""Differential tests of transforms against an independent oracle (``tests/oracle.py``).

Random scalar programs (a DAG through ``let``, Python branches on values, ``+ - * / **``,
``sin cos exp log tanh sqrt``, constants) are differentiated up to order 4 by a random
nesting of transforms (``grad``, ``jvp``, ``vjp``, ``jacfwd``, ``jacrev``, ``linearize``,
``value_and_grad``; ``hessian``/``hvp`` count twice), and the same nesting is computed by the
oracle's dual numbers and Wengert list, in modes drawn independently (the oracle's forward and
reverse modes must agree with each other as well as with transforms). Programs may also take
derivatives *inside* themselves, of functions that close over the variables of the enclosing
derivatives: the programs where perturbation confusion shows.

Program syntax (nested tuples, evaluated by ``evaluate`` with either backend):

- ``("x", i)``: variable ``i`` of the environment (the point, then each enclosing derivative's
  variable, then each ``let``);
- ``("c", v)``: the float constant ``v``;
- ``("u", name, e)``: ``sin cos exp log tanh sqrt`` or ``neg`` of ``e``;
- ``("b", op, e1, e2)``: ``add sub mul div pow`` (Python operators);
- ``("let", e1, e2)``: ``e2`` with the value of ``e1`` as a new variable (sharing);
- ``("if", e, c, e_then, e_else)``: ``e_then if e > c else e_else`` (a Python branch);
- ``("d", mode, oracle_modes, body, at)``: the derivative (order 1, or 2 for ``hessian``
  and ``hvp``) of ``y -> body`` at the value of ``at``; ``body`` sees the environment plus
  ``y``. ``mode`` is the transform used by transforms, ``oracle_modes`` the oracle's.

Inputs are kept in each function's domain by construction: ``log``, ``sqrt``, a denominator
and the base of a traced power go through a positive map (``u*u + 0.5``, ``exp(tanh u)`` or
``sqrt(u*u + 1)``), ``exp`` through ``tanh`` or ``sin``, and traced exponents through ``tanh``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

import numpy as np
import oracle as O
import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

import transforms as T
import transforms.numpy as tnp
from transforms.core import current_traces

Expr = tuple[Any, ...]

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "dev")
EXAMPLES = {"dev": 30, "ci": 150, "long": 3000}.get(PROFILE, 30)
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

# Transforms' first- and second-order derivative operators, and which oracle modes each is
# naturally compared with (the test also draws the oracle's modes freely).
FIRST_ORDER = ("grad", "jvp", "vjp", "jacfwd", "jacrev", "linearize", "value_and_grad")
SECOND_ORDER = ("hessian", "hvp")
ORDER = {**dict.fromkeys(FIRST_ORDER, 1), **dict.fromkeys(SECOND_ORDER, 2)}


# ---- the two backends ----------------------------------------------------------------------
def _t_derivative(mode: str, f: Callable[[Any], Any], at: Any) -> Any:
    if mode == "grad":
        return T.grad(f)(at)
    if mode == "jvp":
        return T.jvp(f, (at,), (1.0,))[1]
    if mode == "vjp":
        return T.vjp(f, at)[1](1.0)[0]
    if mode == "jacfwd":
        return T.jacfwd(f)(at)
    if mode == "jacrev":
        return T.jacrev(f)(at)
    if mode == "linearize":
        return T.linearize(f, at)[1](1.0)
    if mode == "value_and_grad":
        return T.value_and_grad(f)(at)[1]
    if mode == "hessian":
        return T.hessian(f)(at)
    if mode == "hvp":
        return T.hvp(f, (at,), (1.0,))[1][0]
    raise ValueError(mode)


def _o_derivative(modes: tuple[str, ...], f: Callable[[Any], Any], at: Any) -> Any:
    derivative = O.fwd if modes[0] == "fwd" else O.rev
    if len(modes) == 1:
        return derivative(f, at)
    return derivative(lambda a: _o_derivative(modes[1:], f, a), at)


class Backend:
    """The functions a program calls: transforms.numpy's, or the oracle's."""

    def __init__(self, name: str) -> None:
        self.name = name
        lib: Any = tnp if name == "transforms" else O
        self.unary: dict[str, Callable[[Any], Any]] = {
            n: getattr(lib, n) for n in ("sin", "cos", "exp", "log", "tanh", "sqrt")
        }
        self.unary["neg"] = lambda a: -a
        self.margins: list[float] = []  # the oracle's: how far each branch was from its threshold

    def derivative(self, mode: str, oracle_modes: tuple[str, ...], f: Any, at: Any) -> Any:
        if self.name == "transforms":
            return _t_derivative(mode, f, at)
        return _o_derivative(oracle_modes, f, at)

    def record_margin(self, v: Any, threshold: float) -> None:
        if self.name == "oracle":
            self.margins.append(abs(O.primal_float(v) - threshold))


_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "pow": lambda a, b: a**b,
}


def evaluate(e: Expr, env: tuple[Any, ...], be: Backend) -> Any:
    kind = e[0]
    if kind == "x":
        return env[e[1]]
    if kind == "c":
        return e[1]
    if kind == "u":
        return be.unary[e[1]](evaluate(e[2], env, be))
    if kind == "b":
        return _BINARY[e[1]](evaluate(e[2], env, be), evaluate(e[3], env, be))
    if kind == "let":
        return evaluate(e[2], (*env, evaluate(e[1], env, be)), be)
    if kind == "if":
        v = evaluate(e[1], env, be)
        be.record_margin(v, e[2])
        return evaluate(e[3] if v > e[2] else e[4], env, be)
    if kind == "d":
        _, mode, oracle_modes, body, at = e
        at_value = evaluate(at, env, be)
        return be.derivative(mode, oracle_modes, lambda y: evaluate(body, (*env, y), be), at_value)
    raise ValueError(f"unknown expression {e!r}")


def show(e: Expr, n: int = 1) -> str:
    """A readable form of a program whose environment has ``n`` variables ``x0..``."""
    kind = e[0]
    if kind == "x":
        return f"x{e[1]}"
    if kind == "c":
        return repr(e[1])
    if kind == "u":
        return f"{e[1]}({show(e[2], n)})"
    if kind == "b":
        sym = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "**"}[e[1]]
        return f"({show(e[2], n)} {sym} {show(e[3], n)})"
    if kind == "let":
        return f"(let x{n} = {show(e[1], n)} in {show(e[2], n + 1)})"
    if kind == "if":
        return f"({show(e[3], n)} if {show(e[1], n)} > {e[2]!r} else {show(e[4], n)})"
    _, mode, oracle_modes, body, at = e
    return f"{mode}[{'/'.join(oracle_modes)}](x{n} -> {show(body, n + 1)})({show(at, n)})"


# ---- random programs ----------------------------------------------------------------------
CONSTANTS = st.sampled_from([0.5, -0.75, 1.5, 2.0, -1.25, 0.3, 3.0])


def _let(value: Expr, n: int, make: Callable[[Expr], Expr]) -> Expr:
    """``make(v)`` with ``v`` bound to ``value`` (so ``value`` is computed once and shared)."""
    return ("let", value, make(("x", n)))


def _positive(draw: st.DrawFn, e: Expr, n: int) -> Expr:
    kind = draw(st.sampled_from(["square", "exp", "hypot"]))
    if kind == "square":
        return _let(e, n, lambda v: ("b", "add", ("b", "mul", v, v), ("c", 0.5)))
    if kind == "exp":
        return ("u", "exp", ("u", "tanh", e))
    return _let(e, n, lambda v: ("u", "sqrt", ("b", "add", ("b", "mul", v, v), ("c", 1.0))))


def _bounded(draw: st.DrawFn, e: Expr) -> Expr:
    return ("u", draw(st.sampled_from(["tanh", "sin"])), e)


@st.composite
def expressions(
    draw: st.DrawFn, n: int, depth: int, derivatives: int, outer: tuple[int, ...]
) -> Expr:
    """An expression over variables ``0..n-1``; ``derivatives`` inner derivatives at most.

    ``outer`` are the variables of enclosing derivatives: leaves prefer them, so that inner
    derivatives close over them.
    """
    kinds = ["leaf"] if depth <= 0 else ["leaf", "u", "u", "b", "b", "b", "let", "if"]
    if depth > 0 and derivatives > 0:
        kinds += ["d", "d"]
    kind = draw(st.sampled_from(kinds))
    if kind == "leaf":
        if draw(st.integers(0, 4)) == 0:
            return ("c", draw(CONSTANTS))
        pool = list(outer) if outer and draw(st.booleans()) else list(range(n))
        return ("x", draw(st.sampled_from(pool)))
    sub = expressions(n, depth - 1, derivatives, outer)
    if kind == "u":
        name = draw(st.sampled_from(["sin", "cos", "tanh", "exp", "log", "sqrt", "neg"]))
        e = draw(sub)
        if name in ("log", "sqrt"):
            e = _positive(draw, e, n)
        elif name == "exp":
            e = _bounded(draw, e)
        return ("u", name, e)
    if kind == "b":
        op = draw(st.sampled_from(["add", "sub", "mul", "div", "pow"]))
        a, b = draw(sub), draw(sub)
        if op == "div":
            b = _positive(draw, b, n)
            if draw(st.booleans()):
                b = ("u", "neg", b)
        elif op == "pow":
            flavour = draw(st.sampled_from(["traced", "integer", "real"]))
            if flavour == "traced":
                return ("b", "pow", _positive(draw, a, n), ("u", "tanh", b))
            if flavour == "integer":
                return ("b", "pow", a, ("c", draw(st.sampled_from([2.0, 3.0]))))
            return ("b", "pow", _positive(draw, a, n), ("c", draw(st.sampled_from([0.5, -1.5]))))
        return ("b", op, a, b)
    if kind == "let":
        value = draw(sub)
        body = draw(expressions(n + 1, depth - 1, derivatives, outer))
        return ("let", value, body)
    if kind == "if":
        cond = draw(sub)
        threshold = draw(st.sampled_from([-0.5, 0.0, 0.25, 1.0]))
        return ("if", cond, threshold, draw(sub), draw(sub))
    # an inner derivative, of a function of a new variable n that closes over 0..n-1
    mode, oracle_modes = draw(derivative_modes(max_order=1))
    body = draw(expressions(n + 1, depth - 1, derivatives - 1, (*outer, n)))
    at = draw(sub)
    return ("d", mode, oracle_modes, body, at)


@st.composite
def derivative_modes(draw: st.DrawFn, max_order: int) -> tuple[str, tuple[str, ...]]:
    """A transform (of order <= ``max_order``) and the oracle's modes for it."""
    choices = FIRST_ORDER + (SECOND_ORDER if max_order >= 2 else ())
    mode = draw(st.sampled_from(choices))
    oracle_modes = tuple(draw(st.sampled_from(["fwd", "rev"])) for _ in range(ORDER[mode]))
    return mode, oracle_modes


@st.composite
def programs(draw: st.DrawFn, inner: int = 1, force_confusion: bool = False) -> Expr:
    """A chain of derivatives of total order 1..4 around a random body.

    Variable 0 is the point; derivative ``j`` of the chain binds variable ``j`` and is taken
    at a function of the variables before it (usually the previous one).
    """
    order = draw(st.integers(1, 4))
    chain: list[tuple[str, tuple[str, ...]]] = []
    while sum(ORDER[m] for m, _ in chain) < order:
        chain.append(draw(derivative_modes(max_order=order - sum(ORDER[m] for m, _ in chain))))
    k = len(chain)
    outer = tuple(range(1, k + 1))
    if force_confusion:
        # an inner derivative (variable k+1) of a body that uses an outer derivative's variable
        j = draw(st.sampled_from(outer))
        mode, oracle_modes = draw(derivative_modes(max_order=1))
        inner_body = draw(expressions(k + 2, 2, 0, outer))
        op = draw(st.sampled_from(["add", "mul", "sub"]))
        inner_body = ("b", op, inner_body, ("b", "mul", ("x", j), ("x", k + 1)))
        at = draw(expressions(k + 1, 1, 0, outer))
        d = ("d", mode, oracle_modes, inner_body, at)
        rest = draw(expressions(k + 2, 2, 0, outer))
        body: Expr = ("let", d, ("b", "mul", ("x", k + 1), ("b", "add", rest, ("x", j))))
    else:
        body = draw(expressions(k + 1, 4, inner, outer))
    for j in range(k, 0, -1):  # wrap from the inside out
        mode, oracle_modes = chain[j - 1]
        at: Expr = ("x", j - 1)
        if j > 1 and draw(st.integers(0, 3)) == 0:
            at = ("b", "mul", ("x", j - 1), ("c", draw(CONSTANTS)))
        body = ("d", mode, oracle_modes, body, at)
    return body


# ---- running both ---------------------------------------------------------------------------
def run_oracle(program: Expr, x0: float) -> tuple[float, list[float]]:
    be = Backend("oracle")
    try:
        value = O.primal_float(evaluate(program, (x0,), be))
    except (OverflowError, ValueError, ZeroDivisionError):
        value = math.nan
    return value, be.margins


def run_transforms(program: Expr, x0: float) -> float:
    be = Backend("transforms")
    out = evaluate(program, (x0,), be)
    assert np.shape(out) == (), f"a scalar program gave shape {np.shape(out)}"
    return float(np.asarray(out))


RTOL = 1e-8


def check_program(program: Expr, x0: float) -> None:
    note(f"program: {show(program)}")
    note(f"x0 = {x0!r}")
    expected, margins = run_oracle(program, x0)
    # keep to programs the oracle computes well: finite, moderate, branches decided clearly
    assume(math.isfinite(expected) and abs(expected) < 1e6)
    assume(all(m > 1e-6 for m in margins))
    with np.errstate(all="raise"):
        actual = run_transforms(program, x0)
    assert current_traces() == ()
    note(f"oracle {expected!r}, transforms {actual!r}")
    assert abs(actual - expected) <= RTOL * max(1.0, abs(expected)), (
        f"transforms gave {actual!r}, the oracle {expected!r}, for {show(program)} at {x0!r}"
    )


POINTS = st.sampled_from([-1.3, -0.7, -0.2, 0.35, 0.8, 1.1, 1.7])


# ---- the oracle itself, against closed forms --------------------------------------------------
def _nest(modes: tuple[Callable[..., Any], ...], f: Callable[[Any], Any], x: float) -> Any:
    if len(modes) == 1:
        return modes[0](f, x)
    return modes[0](lambda a: _nest(modes[1:], f, a), x)


ALL_PAIRS = [(a, b) for a in (O.fwd, O.rev) for b in (O.fwd, O.rev)]


@pytest.mark.parametrize(
    "modes",
    [(a, b, c, d) for a, b in ALL_PAIRS for c, d in ALL_PAIRS],
    ids=lambda modes: "-".join(m.__name__ for m in modes),
)
def test_oracle_fourth_derivatives_closed_form(modes: tuple[Any, ...]) -> None:
    x = 0.7
    assert math.isclose(O.primal_float(_nest(modes, O.sin, x)), math.sin(x), rel_tol=1e-13)
    assert math.isclose(O.primal_float(_nest(modes, O.exp, x)), math.exp(x), rel_tol=1e-13)
    # d^4/dx^4 log x = -6 / x^4 ; d^4/dx^4 x^5 = 120 x
    assert math.isclose(O.primal_float(_nest(modes, O.log, x)), -6 / x**4, rel_tol=1e-12)
    assert math.isclose(O.primal_float(_nest(modes, lambda v: v**5.0, x)), 120 * x, rel_tol=1e-12)


@pytest.mark.parametrize("outer", [O.fwd, O.rev])
@pytest.mark.parametrize("inner", [O.fwd, O.rev])
def test_oracle_has_no_perturbation_confusion(outer: Any, inner: Any) -> None:
    # d/dx [x * d/dy (x + y)] = 1 (confusion gives 2);  d/dx [x * d/dy (x * y)] = 2x
    assert O.primal_float(outer(lambda x: x * inner(lambda y: x + y, 1.0), 2.0)) == 1.0
    value = outer(lambda x: x * inner(lambda y: x * y, 0.5), 3.0)
    assert math.isclose(O.primal_float(value), 6.0)
    # d/dx d/dy [sin(x y)] at (x, y) = (0.4, 0.9): cos(xy) - xy sin(xy)
    mixed = outer(lambda x: inner(lambda y: O.sin(x * y), 0.9), 0.4)
    xy = 0.36
    assert math.isclose(O.primal_float(mixed), math.cos(xy) - xy * math.sin(xy), rel_tol=1e-13)


def test_oracle_tag_identity_not_order() -> None:
    # two sibling derivatives, one inside the other's function, taken at the same point
    def f(x: Any) -> Any:
        a = O.rev(lambda y: y * x, 0.5)  # = x
        b = O.fwd(lambda y: y * y * x, 0.5)  # = x
        return a * b  # = x^2, derivative 2x

    for d in (O.fwd, O.rev):
        assert math.isclose(O.primal_float(d(f, 1.5)), 3.0)


def test_program_backends_agree_on_a_hand_written_program() -> None:
    # d/dx0 [ x1 * grad_y (x1 * y + sin(y)) at x1 ] at x0 = 0.8  =  d/dx (x^2 + x cos x)
    body: Expr = ("b", "add", ("b", "mul", ("x", 1), ("x", 2)), ("u", "sin", ("x", 2)))
    program: Expr = (
        "d",
        "jacrev",
        ("fwd",),
        ("b", "mul", ("x", 1), ("d", "grad", ("rev",), body, ("x", 1))),
        ("x", 0),
    )
    x = 0.8
    expected = 2 * x + math.cos(x) - x * math.sin(x)
    assert math.isclose(run_oracle(program, x)[0], expected, rel_tol=1e-13)
    assert math.isclose(run_transforms(program, x), expected, rel_tol=1e-13)


# ---- transforms against the oracle ------------------------------------------------------------
@SETTINGS
@given(program=programs(inner=1), x0=POINTS)
def test_random_nested_derivatives_match_oracle(program: Expr, x0: float) -> None:
    check_program(program, x0)


@SETTINGS
@given(program=programs(force_confusion=True), x0=POINTS)
def test_perturbation_confusion_programs_match_oracle(program: Expr, x0: float) -> None:
    check_program(program, x0)


@SETTINGS
@given(program=programs(inner=2), x0=POINTS)
def test_programs_with_several_inner_derivatives_match_oracle(program: Expr, x0: float) -> None:
    check_program(program, x0)
