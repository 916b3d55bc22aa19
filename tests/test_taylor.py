"""Taylor mode (``T.jet``): every op-spec row against nested ``jvp`` in t, closed forms,
JAX's convention, dtypes, compositions with the other transforms, errors."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from op_specs import OP_SPECS, OpSpec, cases
from random_programs import Program, programs
from strategies import seeds

import transforms as T
import transforms.numpy as tnp
from transforms.core.tree_util import tree_flatten

specs = pytest.mark.parametrize("spec", OP_SPECS, ids=lambda s: s.name)


def _curve(xs: tuple[Any, ...], series: list[list[np.ndarray]]) -> Callable[[Any], list[Any]]:
    """``t -> [x_i(t)]`` with ``x_i(t) = x_i + sum_k s_ik t**k / k!``."""

    def at(t: Any) -> list[Any]:
        return [
            x + sum(s * (t**k / math.factorial(k)) for k, s in enumerate(terms, start=1))
            for x, terms in zip(xs, series, strict=True)
        ]

    return at


def _nested_derivative(g: Callable[[Any], Any], t: Any, k: int) -> Any:
    """The k-th derivative of ``g`` at ``t`` by nesting ``jvp`` k times (the reference)."""
    if k == 0:
        return g(t)
    return T.jvp(lambda s: _nested_derivative(g, s, k - 1), (t,), (np.ones_like(t),))[1]


def _leaves(tree: Any) -> list[np.ndarray]:
    return [np.asarray(x) for x in tree_flatten(tree)[0]]


def _check_row(spec: OpSpec, data: st.DataObject, order: int) -> None:
    case = data.draw(cases(spec), label="case")
    rng = np.random.default_rng(data.draw(seeds(), label="seed"))
    xs = case.args
    series = [[rng.uniform(-1, 1, x.shape) for _ in range(order)] for x in xs]
    out, series_out = T.jet(case.f, xs, series)
    curve = _curve(xs, series)

    def g(t: Any) -> Any:
        return case.f(*curve(t))

    t0 = np.zeros(())
    expected_out = _leaves(case.f(*xs))
    for a, e in zip(_leaves(out), expected_out, strict=True):
        np.testing.assert_allclose(a, e, rtol=1e-12, atol=1e-12, err_msg=f"{case} primal")
    flat = _leaves(series_out)  # a list of ``order`` terms per output leaf, in leaf order
    terms = [flat[i : i + order] for i in range(0, len(flat), order)]
    for k in range(1, order + 1):
        expected = _leaves(_nested_derivative(g, t0, k))
        actual = [leaf_terms[k - 1] for leaf_terms in terms]
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert a.shape == e.shape, f"{case}: order {k} leaf {i} shape {a.shape} vs {e.shape}"
            scale = max(1.0, float(np.max(np.abs(e), initial=0.0)))
            np.testing.assert_allclose(
                a, e, rtol=1e-7, atol=1e-9 * scale, err_msg=f"{case}: order {k}, leaf {i}"
            )


_FEW = settings(max_examples=2, suppress_health_check=list(HealthCheck), deadline=None)


@specs
@_FEW
@given(data=st.data())
def test_jet_matches_nested_jvp_order_4(spec: OpSpec, data: st.DataObject) -> None:
    _check_row(spec, data, 4)


@specs
@settings(max_examples=1, suppress_health_check=list(HealthCheck), deadline=None)
@given(data=st.data())
def test_jet_matches_nested_jvp_order_6(spec: OpSpec, data: st.DataObject) -> None:
    _check_row(spec, data, 6)


# ---- closed forms and JAX's convention -------------------------------------------------------
def test_series_are_derivatives_not_taylor_coefficients() -> None:
    """JAX's convention: x(t) = x0 + x1 t + x2 t**2 / 2!; out[k-1] = d^k/dt^k f(x(t)) at 0."""
    # f(x) = x**3 along x(t) = 2 + t + t**2 (x1 = 1, x2 = 2): f(x(t)) = (2 + t + t**2)**3
    # = 8 + 12 t + 18 t**2 + 13 t**3 + ...: derivatives 12, 36, 78
    y, ys = T.jet(lambda x: x**3, (2.0,), ([1.0, 2.0, 0.0],))
    assert float(y) == 8.0
    np.testing.assert_allclose([float(v) for v in ys], [12.0, 36.0, 78.0], rtol=1e-14)


def test_closed_forms_of_every_order() -> None:
    x0 = 0.7
    k = 8
    seed = [1.0] + [0.0] * (k - 1)
    cases_: list[tuple[Callable[[Any], Any], Callable[[int], float]]] = [
        (tnp.exp, lambda n: math.exp(x0)),
        (tnp.sin, lambda n: math.sin(x0 + n * math.pi / 2)),
        (tnp.cos, lambda n: math.cos(x0 + n * math.pi / 2)),
        (tnp.log, lambda n: (-1) ** (n - 1) * math.factorial(n - 1) / x0**n),
        (tnp.sqrt, lambda n: math.prod(0.5 - i for i in range(n)) * x0 ** (0.5 - n)),
        (lambda x: x**2.5, lambda n: math.prod(2.5 - i for i in range(n)) * x0 ** (2.5 - n)),
        (lambda x: 1 / x, lambda n: (-1) ** n * math.factorial(n) / x0 ** (n + 1)),
        (lambda x: tnp.exp(2 * x), lambda n: 2**n * math.exp(2 * x0)),
        (tnp.sinh, lambda n: math.cosh(x0) if n % 2 else math.sinh(x0)),
        (tnp.log1p, lambda n: (-1) ** (n - 1) * math.factorial(n - 1) / (1 + x0) ** n),
    ]
    for f, d in cases_:
        _, ys = T.jet(f, (x0,), (seed,))
        expected = [d(n) for n in range(1, k + 1)]
        np.testing.assert_allclose([float(v) for v in ys], expected, rtol=1e-11, err_msg=str(f))


def test_integer_power_is_exact_at_zero() -> None:
    _, ys = T.jet(lambda x: x**3, (0.0,), ([1.0, 0.0, 0.0, 0.0],))
    np.testing.assert_array_equal([float(v) for v in ys], [0.0, 0.0, 6.0, 0.0])


def test_matches_jax_jet() -> None:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    from jax.experimental.jet import jet as jax_jet

    x = np.array([0.3, -1.2, 0.8])
    series = ([np.array([1.0, 0.5, -0.2]), np.array([0.1, 0.0, 0.3]), np.zeros(3)],)
    mine = T.jet(
        lambda x: tnp.sum(tnp.sin(x) * tnp.exp(-(x**2) / 4)) / tnp.cosh(x[0]), (x,), series
    )
    ref = jax_jet(
        lambda x: jnp.sum(jnp.sin(x) * jnp.exp(-(x**2) / 4)) / jnp.cosh(x[0]), (x,), series
    )
    np.testing.assert_allclose(mine[0], ref[0], rtol=1e-13)
    np.testing.assert_allclose(np.array(mine[1]), np.array(ref[1]), rtol=1e-11)


def test_pytree_output_gives_a_tree_of_lists_and_zero_terms() -> None:
    x = np.array([1.0, 2.0])
    out, series = T.jet(lambda x: {"a": x * x, "c": np.ones(2)}, (x,), ([np.ones(2), np.zeros(2)],))
    np.testing.assert_array_equal(out["a"], [1.0, 4.0])
    np.testing.assert_array_equal(series["a"][0], [2.0, 4.0])
    np.testing.assert_array_equal(series["a"][1], [2.0, 2.0])
    assert [s.tolist() for s in series["c"]] == [[0.0, 0.0], [0.0, 0.0]]


def test_float32_keeps_its_dtype() -> None:
    x = np.array([0.5, 1.5], dtype=np.float32)
    s = [np.ones(2, np.float32), np.zeros(2, np.float32), np.zeros(2, np.float32)]
    for f in (tnp.exp, tnp.sin, tnp.log, tnp.sqrt, tnp.tanh, lambda x: x**2.5 / (1 + x)):
        out, ys = T.jet(f, (x,), (s,))
        assert out.dtype == np.float32 and all(v.dtype == np.float32 for v in ys), f


# ---- conveniences -----------------------------------------------------------------------------
def test_derivatives_and_directional_derivatives() -> None:
    ds = T.derivatives(lambda x: tnp.sin(x) * tnp.exp(-(x**2) / 4), 6)(0.3)
    g: Callable[[Any], Any] = lambda x: tnp.sin(x) * tnp.exp(-(x**2) / 4)
    for k in range(7):
        np.testing.assert_allclose(ds[k], g(0.3), rtol=1e-12)
        g = T.grad(g)
    x, v = np.array([1.0, 2.0]), np.array([0.5, -1.0])
    f = lambda x: tnp.sum(tnp.exp(x[0] * x[1]))
    dd = T.directional_derivatives(f, 3)(x, v)
    h = lambda t: f(x + t * v)
    for k in range(1, 4):
        np.testing.assert_allclose(dd[k - 1], _nested_derivative(h, np.zeros(()), k), rtol=1e-12)
    with pytest.raises(ValueError, match="order must be a positive integer"):
        T.derivatives(tnp.sin, 0)


# ---- composition ------------------------------------------------------------------------------
def _third(f: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda x: T.jet(f, (x,), ([np.ones_like(x), np.zeros_like(x), np.zeros_like(x)],))[1][2]


def test_grad_of_a_function_using_jet() -> None:
    x = 0.4
    expected = T.grad(T.grad(T.grad(T.grad(tnp.tanh))))(x)
    np.testing.assert_allclose(T.grad(_third(tnp.tanh))(x), expected, rtol=1e-12)


def test_vmap_of_jet() -> None:
    xs = np.array([0.1, 0.5, 1.3])
    out = T.vmap(_third(lambda x: tnp.sin(x) * tnp.exp(x)))(xs)
    d3 = T.grad(T.grad(T.grad(lambda x: tnp.sin(x) * tnp.exp(x))))
    np.testing.assert_allclose(out, [d3(x) for x in xs], rtol=1e-12)


def test_jet_of_a_function_calling_grad() -> None:
    f = lambda x: tnp.sin(x) * x**2
    _, ys = T.jet(T.grad(f), (0.7,), ([1.0, 0.0, 0.0],))
    g = T.grad(f)
    for k in range(3):
        g = T.grad(g)
        np.testing.assert_allclose(ys[k], g(0.7), rtol=1e-12)


def test_jet_under_jacfwd_and_perturbation_safety() -> None:
    x = np.array([0.3, 0.9])
    jac = T.jacfwd(_third(lambda x: tnp.exp(x) * tnp.cos(x)))(x)
    d4 = T.grad(T.grad(T.grad(T.grad(lambda x: tnp.exp(x) * tnp.cos(x)))))
    np.testing.assert_allclose(jac, np.diag([d4(v) for v in x]), rtol=1e-12, atol=1e-14)

    # d/dx [ d/dy (x * y) at y ] is 1, not 2 (the inner jet must not see the outer x)
    def inner(x: Any) -> Any:
        return T.jet(lambda y: x * y, (1.0,), ([1.0],))[1][0]

    assert float(T.grad(inner)(2.0)) == 1.0


def test_custom_rules_checkpoint_and_stop_gradient() -> None:
    @T.custom_jvp
    def f(x: Any) -> Any:
        return tnp.sin(x)

    @f.defjvp
    def f_jvp(primals: Any, tangents: Any) -> Any:
        (x,), (t,) = primals, tangents
        return f(x), tnp.cos(x) * t

    ys = T.jet(f, (0.5,), ([1.0, 0.0, 0.0, 0.0],))[1]
    np.testing.assert_allclose(
        [float(v) for v in ys], T.derivatives(tnp.sin, 4)(0.5)[1:], rtol=1e-12
    )
    ys = T.jet(T.checkpoint(lambda x: tnp.exp(tnp.sin(x))), (0.5,), ([1.0, 0.0, 0.0],))[1]
    ref = T.jet(lambda x: tnp.exp(tnp.sin(x)), (0.5,), ([1.0, 0.0, 0.0],))[1]
    np.testing.assert_allclose(np.array(ys), np.array(ref), rtol=1e-12)
    ys = T.jet(lambda x: x * T.stop_gradient(x), (3.0,), ([1.0, 0.0],))[1]
    assert [float(v) for v in ys] == [3.0, 0.0]


def test_user_primitive_without_a_taylor_rule_uses_its_jvp() -> None:
    cube_p = T.Primitive("my_cube", lambda x: x**3)
    T.defjvp(cube_p, lambda t, ans, x: 3 * x**2 * t)
    ys = T.jet(cube_p.bind, (2.0,), ([1.0, 0.0, 0.0, 0.0],))[1]
    assert [float(v) for v in ys] == [12.0, 12.0, 6.0, 0.0]


# ---- errors -----------------------------------------------------------------------------------
def test_errors_name_jet_and_the_fix() -> None:
    with pytest.raises(TypeError, match="jet: primals and series must be tuples"):
        T.jet(tnp.sin, 1.0, [1.0])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="one list of terms per primal"):
        T.jet(tnp.add, (1.0, 2.0), ([1.0],))
    with pytest.raises(ValueError, match="inconsistent lengths"):
        T.jet(tnp.add, (1.0, 2.0), ([1.0], [1.0, 2.0]))
    with pytest.raises(ValueError, match="term 0 of series 0 has shape"):
        T.jet(tnp.sin, (np.ones(2),), ([np.ones(3)],))
    with pytest.raises(TypeError, match="dtype float32 but its primal has dtype float64"):
        T.jet(tnp.sin, (np.ones(2),), ([np.ones(2, np.float32)],))


# ---- hypothesis-random compositions -----------------------------------------------------------
@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(program=programs(max_nodes=6), seed=seeds())
def test_random_programs_match_nested_jvp(program: Program, seed: int) -> None:
    rng = np.random.default_rng(seed)
    xs = program.examples[0]
    order = 3
    series = [[rng.uniform(-1, 1, np.shape(x)) for _ in range(order)] for x in xs]
    _, series_out = T.jet(program, xs, series)
    curve = _curve(xs, series)
    flat = _leaves(series_out)
    terms = [flat[i : i + order] for i in range(0, len(flat), order)]
    for k in range(1, order + 1):
        expected = _leaves(_nested_derivative(lambda t: program(*curve(t)), np.zeros(()), k))
        for i, (leaf, e) in enumerate(zip(terms, expected, strict=True)):
            scale = max(1.0, float(np.max(np.abs(e), initial=0.0)))
            np.testing.assert_allclose(
                leaf[k - 1], e, rtol=1e-7, atol=1e-9 * scale, err_msg=f"order {k}, leaf {i}"
            )


def test_custom_linear_solve_and_custom_root() -> None:
    a = np.array([[3.0, 1.0], [0.5, 2.0]])
    v, w = np.array([1.0, -1.0]), np.array([0.5, 2.0])

    def rhs(s: Any) -> Any:
        return tnp.sin(s) * v + s**2 * w

    def solved(s: Any) -> Any:
        return T.custom_linear_solve(
            lambda z: a @ z, rhs(s), lambda matvec, b: np.linalg.solve(a, b)
        )

    series = ([1.0, 0.3, -0.2, 0.1],)
    ys = T.jet(solved, (0.4,), series)[1]
    ref = T.jet(lambda s: tnp.linalg.solve(a, rhs(s)), (0.4,), series)[1]
    np.testing.assert_allclose(np.array(ys), np.array(ref), rtol=1e-12)

    def sqrt_by_newton(c: Any) -> Any:  # the root of x**2 - c, by a solver jet never sees
        def solve(f: Any, x0: Any) -> Any:
            x = x0
            for _ in range(60):
                x = x - f(x) / (2 * x)
            return x

        return T.custom_root(lambda x: x**2 - c, 1.0, solve, lambda g, y: y / g(1.0))

    c = 2.0
    ys = T.jet(sqrt_by_newton, (c,), ([1.0, 0.0, 0.0],))[1]
    expected = T.derivatives(tnp.sqrt, 3)(c)[1:]
    np.testing.assert_allclose([float(v) for v in ys], [float(e) for e in expected], rtol=1e-10)


# ---- the rules' plain-array paths against their general path and the reference ---------------
def _traced_terms(f: Callable[..., Any], xs: tuple[Any, ...], series: list[list[Any]]) -> Any:
    """``jet``'s terms with every primal a tracer of an outer ``jvp`` (zero tangents): the
    rules then take their general path, written with differentiable operations."""
    zeros = tuple(np.zeros_like(x) for x in xs)
    return T.jvp(lambda *p: T.jet(f, p, series)[1], xs, zeros)[0]


def _reference_terms(
    f: Callable[..., Any], xs: tuple[Any, ...], series: list[list[Any]], order: int
) -> list[Any]:
    curve = _curve(xs, series)
    g = lambda t: f(*curve(t))
    return [_nested_derivative(g, np.zeros(()), k) for k in range(1, order + 1)]


def _check_paths(f: Callable[..., Any], xs: tuple[Any, ...], order: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    series = [[rng.uniform(-1, 1, np.shape(x)) for _ in range(order)] for x in xs]
    plain = T.jet(f, xs, series)[1]
    expected = _reference_terms(f, xs, series, order)
    for k, (p, t, e) in enumerate(zip(plain, _traced_terms(f, xs, series), expected, strict=True)):
        assert np.shape(p) == np.shape(e), f"order {k + 1}: shape {np.shape(p)} vs {np.shape(e)}"
        np.testing.assert_allclose(p, e, rtol=1e-10, atol=1e-12, err_msg=f"order {k + 1}")
        np.testing.assert_allclose(t, p, rtol=1e-13, atol=1e-14, err_msg=f"order {k + 1}")


_C21 = np.array([[0.5], [-2.0]])


@pytest.mark.parametrize(
    ("f", "shapes"),
    [
        (lambda x, y: x * y, ((2, 1), (3,))),
        (lambda x, y: x * y, ((), (2, 3))),
        (lambda x, y: x * y, ((2, 3), ())),
        (lambda x, y: x * y, ((2, 3), (2, 3))),
        (lambda x: x * _C21, ((3,),)),
        (lambda x: _C21 * x, ((3,),)),
        (lambda x: 2.5 * x, ((),)),
        (lambda x: (x * x) * x, ((2,),)),
    ],
    ids=["2x1*3", "0d*2x3", "2x3*0d", "same", "3*const2x1", "const2x1*3", "number*0d", "cube"],
)
def test_multiply_broadcasts_series_of_any_rank(f: Callable[..., Any], shapes: Any) -> None:
    xs = tuple(np.random.default_rng(1).uniform(-1, 1, s) for s in shapes)
    _check_paths(f, xs, 5)


@pytest.mark.parametrize(
    ("f", "shapes"),
    [
        (lambda x, y: x + y, ((2, 1), (3,))),
        (lambda x, y: x - y, ((), (2, 3))),
        (lambda x: x + _C21, ((3,),)),
        (lambda x: _C21 - x, ((3,),)),
        (lambda x: -x, ((2, 3),)),
        (lambda x: -x, ((),)),
        (lambda x: x / _C21, ((3,),)),
        (lambda x: x / 4, ((),)),
        (lambda x, y: tnp.where(_C21 > 0, x, y), ((3,), ())),
        (lambda x: tnp.real(x * (1 + 2j)) + tnp.imag(tnp.conj(x * 1j)), ((2,),)),
    ],
    ids=[
        "2x1+3",
        "0d-2x3",
        "3+const",
        "const-3",
        "neg",
        "neg0d",
        "3/const",
        "0d/4",
        "where",
        "re-im",
    ],
)
def test_elementwise_linear_maps_broadcast_series_of_any_rank(
    f: Callable[..., Any], shapes: Any
) -> None:
    """The linear elementwise rules on plain stacks (NumPy broadcasting the stacks given
    their primal's rank) against the batching rules' path and the reference."""
    xs = tuple(np.random.default_rng(4).uniform(-1, 1, s) for s in shapes)
    _check_paths(f, xs, 4)


@pytest.mark.parametrize("x0", [0.0, -1.3, 0.6])
def test_integer_powers_match_the_closed_form(x0: float) -> None:
    """``(x0 + t)**n`` has k-th derivative ``n!/(n-k)! x0**(n-k)``: exactly 0 for k > n."""
    order = 8
    seed = [1.0] + [0.0] * (order - 1)
    for n in range(1, 17):
        _, ys = T.jet(lambda x, n=n: x**n, (x0,), (seed,))
        expected = [math.perm(n, k) * x0 ** (n - k) if k <= n else 0.0 for k in range(1, order + 1)]
        np.testing.assert_allclose([float(v) for v in ys], expected, rtol=1e-13, err_msg=f"{n}")
        assert all(float(v) == 0.0 for v in ys[n:]), n
    _check_paths(lambda x: x**5, (np.array([0.3, -0.8]),), 6)


_RECURRENCES = [
    tnp.sin,
    tnp.cos,
    tnp.exp,
    tnp.log,
    tnp.sqrt,
    lambda x: x**2.5,
    lambda x: 1 / x,
    lambda x: tnp.sin(x) * x**3,
    lambda x: tnp.exp(-(x**2) / 4) / (1 + x),
]
_RECURRENCE_IDS = ["sin", "cos", "exp", "log", "sqrt", "pow2.5", "recip", "sin*cube", "bump/(1+x)"]


@pytest.mark.parametrize("f", _RECURRENCES, ids=_RECURRENCE_IDS)
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("shape", [(2, 3), ()], ids=["2x3", "0d"])
def test_recurrences_on_plain_arrays(
    f: Callable[[Any], Any], dtype: Any, shape: tuple[int, ...]
) -> None:
    """The recurrences on plain stacks (n-d: NumPy per order; 0-d: Python numbers) against
    the general path (traced terms) and nested jvp, real and complex."""
    rng = np.random.default_rng(2)
    x = (rng.uniform(0.2, 1.5, shape) + (0.5j if dtype is np.complex128 else 0)).astype(dtype)
    order = 6
    series = [
        [
            (rng.uniform(-1, 1, x.shape) * (1 + 1j)).astype(dtype)
            if dtype is np.complex128
            else rng.uniform(-1, 1, x.shape)
            for _ in range(order)
        ]
    ]
    plain = T.jet(f, (x,), series)[1]
    expected = _reference_terms(f, (x,), series, order)
    traced = _traced_terms(f, (x,), series)
    for k, (p, t, e) in enumerate(zip(plain, traced, expected, strict=True)):
        assert p.dtype == dtype and p.shape == x.shape
        np.testing.assert_allclose(p, e, rtol=1e-10, atol=1e-12, err_msg=f"order {k + 1}")
        np.testing.assert_allclose(t, p, rtol=1e-13, atol=1e-14, err_msg=f"order {k + 1}")


@pytest.mark.parametrize("f", [tnp.sin, tnp.cos])
def test_zero_d_sin_cos_are_the_real_recurrences_to_the_bit(f: Callable[[Any], Any]) -> None:
    """Real 0-d terms recur on Python numbers: the operations of the traced path, so the
    terms equal its bits."""
    rng = np.random.default_rng(5)
    x = np.array(0.9)
    series = [[rng.uniform(-1, 1, ()) for _ in range(7)]]
    plain = T.jet(f, (x,), series)[1]
    traced = _traced_terms(f, (x,), series)
    np.testing.assert_array_equal(np.array(plain), np.array(traced))


@pytest.mark.parametrize("f", [tnp.sin, tnp.cos])
@pytest.mark.parametrize(
    ("x0", "terms"),
    [(0.0, [1.0, 0.0, 0.0, 0.0]), (0.5, [1e200, 0.0, 0.0]), (2.0, [-1e200, 0.0, 0.0])],
    ids=["zeros", "overflow", "overflow-negative"],
)
def test_zero_d_sin_cos_equal_the_array_path_at_zeros_and_overflow(
    f: Callable[[Any], Any], x0: float, terms: list[float]
) -> None:
    """A scalar's series and a 1-element array's are the same numbers, infinities and the
    signs of zeros included (a complex e^{ix} recurrence once made NaNs of the infinities on
    the scalar path only: the real part of ``1j * z`` is ``0 * z.real - z.imag``, NaN for an
    infinite ``z.real``)."""
    scalar = np.array(T.jet(f, (np.array(x0),), ([np.array(t) for t in terms],))[1])
    with np.errstate(over="ignore"):  # (the array path's vecdot warns of the overflow)
        array = T.jet(f, (np.array([x0]),), ([np.array([t]) for t in terms],))[1]
    np.testing.assert_array_equal(scalar, np.array(array)[:, 0])
    np.testing.assert_array_equal(np.signbit(scalar), np.signbit(np.array(array)[:, 0]))
    assert not np.isnan(scalar).any()


@pytest.mark.parametrize("f", _RECURRENCES, ids=_RECURRENCE_IDS)
@pytest.mark.parametrize("shape", [(2, 3), ()], ids=["2x3", "0d"])
def test_recurrences_in_float32(f: Callable[[Any], Any], shape: tuple[int, ...]) -> None:
    """float32 in, float32 out, the float64 values to float32's precision (0-d terms recur
    in double precision, n-d ones in float32)."""
    rng = np.random.default_rng(3)
    x = rng.uniform(0.2, 1.5, shape)
    series = [rng.uniform(-1, 1, shape) for _ in range(6)]
    y, ys = T.jet(f, (x.astype(np.float32),), ([s.astype(np.float32) for s in series],))
    ys64 = T.jet(f, (x,), (series,))[1]
    assert y.dtype == np.float32 and all(v.dtype == np.float32 and v.shape == shape for v in ys)
    for k, (v, e) in enumerate(zip(ys, ys64, strict=True)):
        scale = max(1.0, float(np.max(np.abs(e))))
        np.testing.assert_allclose(v, e, rtol=1e-4, atol=1e-5 * scale, err_msg=f"order {k + 1}")


@pytest.mark.parametrize(
    "f", [tnp.log, tnp.sqrt, lambda x: x**2.5, lambda x: 1 / x, lambda x: x / x]
)
def test_recurrences_at_a_zero_divisor(f: Callable[[Any], Any]) -> None:
    """At 0, a 0-d series has NumPy's infs and nans (no Python ZeroDivisionError), those of
    the same point in an n-d array."""
    seed = [1.0, 0.5, 0.0, 0.0]
    with np.errstate(all="ignore"):
        scalar = T.jet(f, (0.0,), (seed,))[1]
        array = T.jet(f, (np.zeros(2),), ([np.full(2, v) for v in seed],))[1]
    for k, (s, a) in enumerate(zip(scalar, array, strict=True)):
        np.testing.assert_array_equal(s, a[0], err_msg=f"order {k + 1}")


def test_zero_d_recurrences_under_grad_and_around_jvp() -> None:
    """A 0-d jet inside grad (its terms traced) and around jvp, against nested grad."""
    bump = lambda x: tnp.sin(x) * tnp.exp(-(x**2) / 4) / (1 + x)
    g2 = T.grad(T.grad(bump))
    g3 = T.grad(g2)
    g4 = T.grad(g3)
    third = lambda x: T.jet(bump, (x,), ([1.0, 0.0, 0.0],))[1][2]
    np.testing.assert_allclose(T.grad(third)(0.7), g4(0.7), rtol=1e-11)
    first = lambda x: T.jvp(bump, (x,), (1.0,))[1]
    ys = T.jet(first, (0.7,), ([1.0, 0.0, 0.0],))[1]
    np.testing.assert_allclose([float(v) for v in ys], [g2(0.7), g3(0.7), g4(0.7)], rtol=1e-11)
