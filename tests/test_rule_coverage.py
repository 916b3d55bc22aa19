"""Nothing differentiable goes without rules, and nothing goes without a row in the table.

- every primitive that a module of the library defines (``transforms.numpy`` and its
  submodules, ``compose``'s own, and every other namespace: the registry of all primitives
  knows them) is declared ``differentiable=False`` or has a rule in *every registered
  interpreter* (``transforms.core.interpreters()``: forward, reverse, batching, and whatever
  is added next) for every argument position: its static arity (a ufunc's ``nin``; three for
  ``where``) and every arity it is actually called with while the op-spec table is
  differentiated in every mode and nesting. Interpreters that evaluate non-differentiable
  primitives too (``vmap``) need their rule for those as well;
- every differentiable primitive of a NumPy-like namespace is reached by some row of the
  table, so a new primitive without a row fails here (``compose``'s and ``lax``'s
  primitives, which call the user's functions, are tested by the custom-rule and lax tests
  instead);
- every differentiable function of ``transforms.numpy.__all__`` and every tracer operator is
  named in some row's ``covers``; the non-differentiable ones are listed in
  ``op_specs.NONDIFFERENTIABLE`` and checked to carry no derivative.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections import defaultdict
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from op_specs import NONDIFFERENTIABLE, OP_SPECS, cases
from strategies import seeds, uniform_like

import transforms
import transforms as T
import transforms.nn
import transforms.numpy as tnp
import transforms.scipy
import transforms.scipy.integrate
import transforms.scipy.linalg
import transforms.scipy.signal
from transforms.core import Primitive, all_primitives, interpreters, operators


# ---- the primitives of the library ------------------------------------------------------------
def _import_library() -> None:
    """Import every module of the library (not the demo), so that all its primitives exist."""
    for info in pkgutil.walk_packages(transforms.__path__, prefix="transforms."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)


def _library_primitives() -> dict[str, Primitive]:
    """Every primitive a module of the library defined, by ``module:name``."""
    _import_library()
    found: dict[str, Primitive] = {}
    for p in all_primitives():
        if p.module.startswith("transforms."):
            key = f"{p.module}:{p.name}"
            while key in found:  # two primitives of one module may share a display name
                key += "'"
            found[key] = p
    return dict(sorted(found.items()))


PRIMITIVES = _library_primitives()
DIFFERENTIABLE = {name: p for name, p in PRIMITIVES.items() if p.differentiable}
# compose's and lax's primitives apply the user's functions: their rules are those of the
# functions, tested by the custom-rule and lax tests (tests/test_lax*.py) instead of a row.
NEEDS_ROW = {
    n: p
    for n, p in DIFFERENTIABLE.items()
    if not p.module.startswith(("transforms.compose", "transforms.lax"))
}
INTERPRETERS = {i.name: i for i in interpreters()}


def _static_arity(primitive: Primitive) -> int:
    impl = primitive.impl
    if isinstance(impl, np.ufunc):
        return int(impl.nin)
    if impl is np.where:
        return 3
    return 1


def test_primitives_and_interpreters_are_found() -> None:
    names = {p.name for p in PRIMITIVES.values()}
    assert {"add", "sin", "sum", "matmul", "reshape", "getitem", "where"} <= names, names
    assert {"custom_jvp_call", "custom_vjp_call", "stop_gradient"} <= names, names
    assert any(not p.differentiable for p in PRIMITIVES.values()), "comparisons are primitives"
    assert {"jvp", "vjp", "vmap"} <= set(INTERPRETERS), INTERPRETERS


# ---- which arities each primitive is called with while the table is differentiated ------------
def _exercise(spec: Any, data: st.DataObject) -> None:
    """Run a row in every mode and every second-order nesting (reaching the rules' rules)."""
    case = data.draw(cases(spec), label="case")
    rng = np.random.default_rng(data.draw(seeds(), label="seed"))
    xs, f = case.args, case.f
    ts = tuple(uniform_like(rng, x) for x in xs)
    out = np.asarray(f(*xs))
    w = uniform_like(rng, out).astype(out.dtype)

    def tangent(*a: Any) -> Any:
        return T.jvp(f, a, ts)[1]

    def cotangent(*a: Any) -> Any:
        return T.vjp(f, *a)[1](w)

    T.jvp(tangent, xs, ts)
    T.vjp(tangent, *xs)[1](w)
    T.jvp(cotangent, xs, ts)
    T.vjp(cotangent, *xs)[1](tuple(uniform_like(rng, x) for x in xs))


@pytest.fixture(scope="module")
def observed_arities() -> dict[Primitive, set[int]]:
    arities: dict[Primitive, set[int]] = defaultdict(set)
    original = Primitive.bind

    def recording_bind(self: Primitive, *args: Any, **params: Any) -> Any:
        arities[self].add(len(args))
        return original(self, *args, **params)

    @settings(
        max_examples=4,
        derandomize=True,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(data=st.data())
    def run(spec: Any, data: st.DataObject) -> None:
        _exercise(spec, data)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Primitive, "bind", recording_bind)
        patch.setattr(Primitive, "__call__", recording_bind)
        for spec in OP_SPECS:
            run(spec)
    return dict(arities)


@pytest.mark.parametrize("interpreter", sorted(INTERPRETERS))
@pytest.mark.parametrize("name", sorted(PRIMITIVES))
def test_primitive_has_a_rule_in_every_interpreter(
    name: str, interpreter: str, observed_arities: dict[Primitive, set[int]]
) -> None:
    primitive, interp = PRIMITIVES[name], INTERPRETERS[interpreter]
    if not (primitive.differentiable or interp.nondifferentiable):
        return  # a derivative interpreter evaluates it on primal values
    arity = max({_static_arity(primitive)} | observed_arities.get(primitive, set()))
    missing = [argnum for argnum in range(arity) if not interp.has_rule(primitive, argnum)]
    assert not missing, (
        f"{primitive!r} of {primitive.module} (arity {arity}) has no {interpreter} rule for "
        f"argument(s) {missing}: add one with {interp.define}"
    )


def test_arities_were_observed(observed_arities: dict[Primitive, set[int]]) -> None:
    """The recording saw the binary and ternary primitives with all their operands."""
    by_name = {p.name: a for p, a in observed_arities.items()}
    assert 2 in by_name["add"] and 2 in by_name["matmul"], by_name
    assert 3 in by_name["where"], by_name["where"]
    assert {1, 2, 3} <= by_name["stack"], by_name["stack"]


def test_every_differentiable_primitive_has_a_row(
    observed_arities: dict[Primitive, set[int]],
) -> None:
    unreached = sorted(n for n, p in NEEDS_ROW.items() if p not in observed_arities)
    assert not unreached, (
        f"differentiable primitives that no row of tests/op_specs.py reaches: {unreached}; "
        "add a row for each"
    )


# ---- every public function and every tracer operator has a row -------------------------------
SUBMODULES = {
    "fft": tnp.fft,
    "linalg": tnp.linalg,
    "scipy.special": transforms.scipy.special,
    "scipy.misc": transforms.scipy.misc,
    "scipy.linalg": transforms.scipy.linalg,
    "scipy.signal": transforms.scipy.signal,
    "scipy.integrate": transforms.scipy.integrate,
    "nn": transforms.nn,
}


def _public_functions() -> set[str]:
    """transforms' own callables in tnp.__all__ (not NumPy's constructors), and those of
    tnp.fft / tnp.linalg and the transforms.scipy modules as "fft.<name>", "linalg.<name>",
    "scipy.special.<name>"..."""
    names = {
        name
        for name in tnp.__all__
        if callable(getattr(tnp, name)) and getattr(tnp, name) is not getattr(np, name, None)
    }
    for prefix, module in SUBMODULES.items():
        names |= {f"{prefix}.{n}" for n in module.__all__ if callable(getattr(module, n))}
    return names


def _resolve(name: str) -> Any:
    """``tnp.<name>``, or ``tnp.fft.<name>`` / ``tnp.linalg.<name>`` / ``transforms.scipy.
    special.<name>``... for a dotted name."""
    module, _, attr = name.rpartition(".")
    return getattr(SUBMODULES[module] if module else tnp, attr)


COVERED = {name for spec in OP_SPECS for name in spec.covers}


def test_every_differentiable_function_has_a_row() -> None:
    differentiable = _public_functions() - set(NONDIFFERENTIABLE)
    missing = sorted(differentiable - COVERED)
    assert not missing, (
        f"functions of transforms.numpy with no row in tests/op_specs.py: {missing}; add a "
        "row (or list the function in NONDIFFERENTIABLE if it carries no derivative)"
    )


def test_every_tracer_operator_has_a_row() -> None:
    differentiable_ops = {k for k in operators if k not in NONDIFFERENTIABLE}
    assert {"add", "matmul", "getitem", "transpose", "sum"} <= differentiable_ops
    missing = sorted(k for k in differentiable_ops if f"op:{k}" not in COVERED)
    assert not missing, f"tracer operators with no row in tests/op_specs.py: {missing}"


def test_covers_name_real_functions_and_operators() -> None:
    public = set(tnp.__all__) | _public_functions()
    unknown = sorted(
        name
        for name in COVERED
        if not (name in public or (name.startswith("op:") and name[3:] in operators))
    )
    assert not unknown, f"op_specs rows cover names that do not exist: {unknown}"
    stale = sorted(set(NONDIFFERENTIABLE) - _public_functions())
    assert not stale, f"NONDIFFERENTIABLE lists names transforms.numpy does not define: {stale}"


# ---- the non-differentiable functions really carry no derivative ------------------------------
_X = np.array([[-1.5, 0.5, 2.0], [0.25, -0.75, 1.0]])
_T = np.array([[0.3, -0.2, 0.7], [1.1, 0.4, -0.6]])
_OTHER = np.array([0.5, 0.5, -0.75])  # 0.5 * _X + _OTHER has no zero (floor_divide)


def _argument_recipes(arity: int) -> list[tuple[str, Any]]:
    """Ways to feed a traced float ``a`` to a non-differentiable function of ``arity``
    arguments, tried in order: floats, a flat vector (searchsorted), integers (bitwise ops)."""

    def second(a: Any) -> Any:
        return 0.5 * a + _OTHER

    def ints(a: Any) -> Any:
        return tnp.astype(a * 4.0, np.int64)

    if arity == 1:
        return [("floats", lambda a: (a,)), ("integers", lambda a: (ints(a),))]
    return [
        ("floats", lambda a: (a, second(a))),
        ("flat floats", lambda a: (tnp.ravel(a), tnp.ravel(second(a)))),
        ("integers", lambda a: (ints(a), ints(second(a)))),
    ]


# how to call a non-differentiable function whose arguments the recipes below cannot make:
# static parameters (one_hot's num_classes), non-negative integers (bincount), sorted bins
_CALLS: dict[str, Any] = {
    "nn.one_hot": lambda f: functools.partial(f, num_classes=4),
    "bincount": lambda f: lambda x: f(tnp.ravel(x * x)),
    "digitize": lambda f: lambda x, bins: f(x, tnp.sort(tnp.ravel(bins))),
}


@pytest.mark.parametrize("name", sorted(NONDIFFERENTIABLE))
def test_nondifferentiable_function_carries_no_derivative(name: str) -> None:
    fn = _CALLS.get(name, lambda f: f)(_resolve(name))
    errors = []
    for recipe, make in _argument_recipes(NONDIFFERENTIABLE[name]):
        try:
            expected = fn(*make(_X))  # on plain arrays: NumPy's own value
            break
        except (TypeError, ValueError, ArithmeticError, Warning) as e:
            errors.append(f"{recipe}: {type(e).__name__}: {e}")
    else:
        pytest.fail(f"{name}: no argument recipe works; tried {errors}")

    def apply(a: Any) -> Any:
        return fn(*make(a))

    out, t_out = T.jvp(apply, (_X,), (_T,))
    np.testing.assert_equal(out, expected, err_msg=f"{name} ({recipe}) under jvp")
    nonzero = [leaf for leaf in T.tree_util.tree_flatten(t_out)[0] if np.any(np.asarray(leaf))]
    assert not nonzero, f"{name} ({recipe}): non-zero tangent {t_out}"
    out, _ = T.vjp(apply, _X)
    np.testing.assert_equal(out, expected, err_msg=f"{name} ({recipe}) under vjp")

    # used as a factor, it is a constant: d/dx (x * h(x)) = h(x) * t
    if not (isinstance(expected, np.ndarray) and expected.dtype.kind in "biuf"):
        return
    try:
        if np.broadcast_shapes(expected.shape, _X.shape) != _X.shape:
            return
    except ValueError:  # an index list, a flattened result...: not a factor of x
        return
    _, t_prod = T.jvp(lambda a: tnp.multiply(a, apply(a)), (_X,), (_T,))
    np.testing.assert_allclose(t_prod, expected * _T, rtol=1e-15, atol=0)
    ct = np.array([[1.0, -2.0, 0.5], [0.25, 3.0, -1.0]])
    (grad,) = T.vjp(lambda a: tnp.multiply(a, apply(a)), _X)[1](ct)
    np.testing.assert_allclose(grad, expected * ct, rtol=1e-15, atol=0)


def test_astype_to_integer_carries_no_derivative() -> None:
    x = np.array([-1.5, 0.5, 2.25])
    t = np.array([0.3, -0.2, 0.7])
    out, t_out = T.jvp(lambda a: tnp.astype(a, np.int64), (x,), (t,))
    np.testing.assert_array_equal(out, np.array([-1, 0, 2]))
    assert not np.any(np.asarray(t_out))
    _, t_prod = T.jvp(lambda a: tnp.multiply(a, tnp.astype(a, np.int64)), (x,), (t,))
    np.testing.assert_allclose(t_prod, np.array([-1.0, 0.0, 2.0]) * t, rtol=1e-15, atol=0)
    (grad,) = T.vjp(lambda a: tnp.multiply(a, tnp.astype(a, np.int64)), x)[1](np.ones(3))
    np.testing.assert_allclose(grad, np.array([-1.0, 0.0, 2.0]), rtol=1e-15, atol=0)
