"""NaN-safe derivatives (``transforms.nansafe``): a structural zero times a non-finite partial
contributes nothing, in every mode and every pairing; a computed zero keeps IEEE arithmetic.

The reference for the first family is the rewriting JAX's FAQ recommends (the "double
where": the untaken branch evaluated at a safe point), differentiated as usual: it is exact
and finite, and the naive program must now give the same numbers. The second family is
separable sums at a singular point, whose Hessian is diagonal: every pairing of modes must
put exact zeros off the diagonal. The third pins what must stay NaN: a zero that is a value
(``2 * sqrt(x)`` at 0), not structure, where a NaN-safe zero would be a wrong derivative.
Under a user's ``vmap`` each example's derivative must equal the unbatched one.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import transforms as T
import transforms.numpy as tnp


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    with warnings.catch_warnings():  # the forward pass overflows on purpose
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


HESSIANS: dict[str, Callable[[Callable[..., Any]], Callable[..., Any]]] = {
    "hessian": T.hessian,
    "jacfwd(jacrev)": lambda f: T.jacfwd(T.jacrev(f)),
    "jacrev(jacfwd)": lambda f: T.jacrev(T.jacfwd(f)),
    "jacfwd(jacfwd)": lambda f: T.jacfwd(T.jacfwd(f)),
    "jacrev(jacrev)": lambda f: T.jacrev(T.jacrev(f)),
    "jacfwd(grad)": lambda f: T.jacfwd(T.grad(f)),
}

GRADIENTS: dict[str, Callable[[Callable[..., Any]], Callable[..., Any]]] = {
    "grad": T.grad,
    "jacfwd": T.jacfwd,
    "jacrev": T.jacrev,
    "vjp": lambda f: lambda x: T.vjp(f, x)[1](np.ones(()))[0],
    "jvp basis": lambda f: (
        lambda x: np.array([T.jvp(f, (x,), (np.eye(len(x))[i],))[1] for i in range(len(x))])
    ),
    "linearize": lambda f: (
        lambda x: np.array([T.linearize(f, x)[1](np.eye(len(x))[i]) for i in range(len(x))])
    ),
}


# ---- the examples ------------------------------------------------------------------


def _overflowing(x: Any) -> Any:
    return tnp.sum(tnp.where(x < 1, x**2, tnp.exp(2000 * x)))


@pytest.mark.parametrize("mode", GRADIENTS)
def test_the_untaken_branch_that_overflows_gives_no_nan_to_the_gradient(mode: str) -> None:
    x = np.array([0.5, 0.25])
    np.testing.assert_array_equal(GRADIENTS[mode](_overflowing)(x), [1.0, 0.5])


@pytest.mark.parametrize("mode", HESSIANS)
def test_the_untaken_branch_that_overflows_gives_no_nan_to_the_hessian(mode: str) -> None:
    x = np.array([0.5, 0.25])
    np.testing.assert_array_equal(HESSIANS[mode](_overflowing)(x), np.diag([2.0, 2.0]))


@pytest.mark.parametrize("mode", HESSIANS)
@pytest.mark.parametrize(
    ("name", "h", "d2"),
    [
        ("sqrt", tnp.sqrt, lambda x: -0.25 * x**-1.5),
        ("log", tnp.log, lambda x: -(x**-2.0)),
        ("reciprocal", lambda x: 1 / x, lambda x: 2 * x**-3.0),
    ],
)
def test_a_separable_sum_at_a_singular_point_has_exact_zeros_off_the_diagonal(
    mode: str, name: str, h: Callable[[Any], Any], d2: Callable[[Any], Any]
) -> None:
    x = np.array([0.0, 1.0, 4.0])
    H = HESSIANS[mode](lambda x: tnp.sum(h(x)))(x)
    off = ~np.eye(3, dtype=bool)
    np.testing.assert_array_equal(H[off], 0.0)
    with np.errstate(divide="ignore"):
        np.testing.assert_allclose(np.diag(H)[1:], d2(x[1:]), rtol=1e-12)
    assert not np.isfinite(H[0, 0])  # the singular point itself: not a number to invent


@pytest.mark.parametrize("mode", ["hessian", "jacfwd(jacrev)", "jacfwd(jacfwd)"])
def test_a_large_hessian_is_looked_at_whole(mode: str) -> None:
    """A derivative of more than ``nansafe._SHORT`` elements is looked at by ``max`` (any
    layout: jacfwd's rows come transposed), not by a dot product: its NaNs are found."""
    n = 80  # 6,400 elements
    x = np.linspace(0.0, 2.0, n)
    H = HESSIANS[mode](lambda x: tnp.sum(tnp.sqrt(x)))(x)
    off = ~np.eye(n, dtype=bool)
    np.testing.assert_array_equal(H[off], 0.0)
    np.testing.assert_allclose(np.diag(H)[1:], -0.25 * x[1:] ** -1.5, rtol=1e-12)


@pytest.mark.parametrize("layout", ["C", "F", "strided", "0-d"])
@pytest.mark.parametrize("size", [3, 5000])
def test_has_nan_sees_one_nan_in_any_layout(layout: str, size: int) -> None:
    from transforms.nansafe import has_nan

    base = np.ones((size, 4))
    views = {
        "C": base,
        "F": np.asfortranarray(base),
        "strided": base[::2, ::3],
        "0-d": np.array(1.0),
    }
    v = views[layout].copy(order="K") if layout != "strided" else views[layout]
    assert not has_nan([v])
    v[(-1,) * v.ndim] = np.nan
    assert has_nan([v])
    assert has_nan([np.float64(np.nan)]) and not has_nan([np.zeros((0, 3)), np.float32(2.0)])


def test_a_zero_cotangent_weight_on_an_infinite_derivative_contributes_nothing() -> None:
    x = np.array([0.0, 1.0])
    (ct,) = T.vjp(tnp.sqrt, x)[1](np.array([0.0, 1.0]))
    np.testing.assert_array_equal(ct, [0.0, 0.5])
    _, t = T.jvp(tnp.sqrt, (x,), (np.array([0.0, 1.0]),))
    np.testing.assert_array_equal(t, [0.0, 0.5])


@pytest.mark.parametrize("k", [2, 3, 4])
def test_nested_grads_through_an_overflowing_branch(k: int) -> None:
    def f(x: Any) -> Any:
        return tnp.where(x < 1, x**3, tnp.exp(2000 * x))

    g: Callable[..., Any] = f
    for _ in range(k):
        g = T.grad(g)
    exact = {2: 6 * 0.5, 3: 6.0, 4: 0.0}[k]
    assert g(0.5) == exact


def test_hvp_through_an_overflowing_branch() -> None:
    x = np.array([0.5, 0.25])
    _, (hv,) = T.hvp(_overflowing, (x,), (np.array([1.0, -1.0]),))
    np.testing.assert_array_equal(hv, [2.0, -2.0])


# ---- a computed zero is not structure: the derivative stays NaN, as every peer's ------------


def test_a_computed_zero_times_an_infinite_partial_stays_nan() -> None:
    # d/dx sqrt(x)**2 = 1 at 0 (from the right), d/dx cbrt(x**3) = 1: a NaN-safe zero would
    # be a wrong number; NaN says the chain rule met a singular point.
    assert np.isnan(T.grad(lambda x: tnp.sqrt(x) ** 2)(0.0))
    assert np.isnan(T.jvp(lambda x: tnp.cbrt(x**3), (0.0,), (1.0,))[1])
    assert np.isnan(T.hessian(lambda x: tnp.sum(tnp.sqrt(x) ** 2))(np.array([0.0, 1.0]))[0, 0])


def test_a_rule_the_structural_pass_cannot_follow_keeps_the_plain_answer() -> None:
    # fft's cotangent goes through a dense transform: which elements are live is not
    # followed, so the derivative is the one IEEE arithmetic gives (as the peers').
    def f(x: Any) -> Any:
        y = tnp.where(x < 1, x, tnp.exp(2000 * x))
        return tnp.sum(tnp.real(tnp.fft.fft(y)))

    g = T.grad(f)(np.array([0.5, 0.25]))  # exact: [2, 0] (the sum is 2 * y[0])
    assert np.isnan(g[0]) and g[1] == 0.0


# ---- the family: naive programs against the double-where rewriting -------------------------

#: (name, a branch that is not finite (or has no finite derivative) at the points it does
#: not take, below 0.5, and those points)
_BAD: list[tuple[str, Callable[[Any], Any], st.SearchStrategy[float]]] = [
    ("exp overflow", lambda x: tnp.exp(-2000 * x), st.floats(-2.0, -0.4)),
    ("log of a negative", lambda x: tnp.log(x - 0.5), st.floats(-2.0, 0.45)),
    ("sqrt of a negative", lambda x: tnp.sqrt(x - 0.5), st.floats(-2.0, 0.45)),
    ("a pole", lambda x: 1 / (x - 0.25), st.just(0.25)),
    ("arcsin outside", lambda x: tnp.arcsin(2 - 2 * x), st.floats(-2.0, 0.45)),
]


def _programs(bad: Callable[[Any], Any]) -> tuple[Any, Any]:
    def naive(x: Any) -> Any:
        return tnp.sum(tnp.where(x < 0.5, tnp.sin(x) * x**2, bad(x)) * tnp.cos(x))

    def rewritten(x: Any) -> Any:  # the untaken branch never sees a point it blows up at
        inside = tnp.where(x < 0.5, 1.0, x)
        return tnp.sum(tnp.where(x < 0.5, tnp.sin(x) * x**2, bad(inside)) * tnp.cos(x))

    return naive, rewritten


@settings(max_examples=40, deadline=None)
@given(
    bad=st.sampled_from(_BAD),
    mode=st.sampled_from([*sorted(HESSIANS), "grad", "jacfwd", "jacrev"]),
    data=st.data(),
)
def test_naive_programs_equal_their_double_where_rewriting(
    bad: tuple[str, Callable[[Any], Any], st.SearchStrategy[float]],
    mode: str,
    data: st.DataObject,
) -> None:
    _, branch, untaken = bad
    singular = data.draw(st.lists(untaken, min_size=1, max_size=3), label="singular points")
    taken = data.draw(st.lists(st.floats(0.55, 1.4), max_size=2), label="bad branch taken")
    x = np.array(singular + taken)
    naive, rewritten = _programs(branch)
    transform = {**HESSIANS, "grad": T.grad, "jacfwd": T.jacfwd, "jacrev": T.jacrev}[mode]
    expected = transform(rewritten)(x)
    assert np.isfinite(expected).all()
    np.testing.assert_allclose(transform(naive)(x), expected, rtol=1e-13, atol=0)


# ---- under a user's vmap: per-example derivatives are NaN-safe as without it ----------------

#: per-example derivatives of a function of a vector: (name, the derivative of ``f`` at ``x``)
PER_EXAMPLE: dict[str, Callable[[Callable[..., Any]], Callable[..., Any]]] = {
    "grad": T.grad,
    "jacfwd": T.jacfwd,
    "jacrev": T.jacrev,
    "vjp": lambda f: lambda x: T.vjp(f, x)[1](np.ones(()))[0],
    "jvp": lambda f: lambda x: T.jvp(f, (x,), (np.array([1.0, -1.0]),))[1],
    **HESSIANS,
}

#: examples of ``_overflowing``: each has a point below 1 (the overflowing branch untaken)
_EXAMPLES = np.array([[0.5, 0.25], [0.1, 0.75], [-0.5, 0.0]])


@pytest.mark.parametrize("mode", PER_EXAMPLE)
def test_per_example_derivatives_under_vmap_equal_the_unbatched_ones(mode: str) -> None:
    d = PER_EXAMPLE[mode](_overflowing)
    expected = np.stack([d(x) for x in _EXAMPLES])
    assert np.isfinite(expected).all()
    np.testing.assert_array_equal(T.vmap(d)(_EXAMPLES), expected)


@pytest.mark.parametrize("mode", ["grad", "hessian", "jacrev"])
def test_vmap_of_vmap_in_axes_and_out_axes(mode: str) -> None:
    d = PER_EXAMPLE[mode](_overflowing)
    xs = np.stack([_EXAMPLES, _EXAMPLES[::-1] * 0.5])  # (2, 3, 2): two batches of three
    expected = np.stack([[d(x) for x in batch] for batch in xs])
    np.testing.assert_array_equal(T.vmap(T.vmap(d))(xs), expected)
    np.testing.assert_array_equal(T.vmap(d, in_axes=1)(_EXAMPLES.T), expected[0])
    np.testing.assert_array_equal(
        T.vmap(d, out_axes=-1)(_EXAMPLES), np.moveaxis(expected[0], 0, -1)
    )


def test_a_pytree_argument_with_an_unbatched_part() -> None:
    def f(p: dict[str, Any], scale: Any) -> Any:
        x, w = p["x"], p["w"]
        return scale * tnp.sum(tnp.where(x < 1, w * x**2, tnp.exp(2000 * x)))

    params = {"x": _EXAMPLES, "w": np.array([2.0, 3.0])}
    got = T.vmap(T.grad(f), in_axes=({"x": 0, "w": None}, None))(params, 0.5)
    for i, x in enumerate(_EXAMPLES):
        one = T.grad(f)({"x": x, "w": params["w"]}, 0.5)
        np.testing.assert_array_equal(got["x"][i], one["x"])
        np.testing.assert_array_equal(got["w"][i], one["w"])
    np.testing.assert_array_equal(got["x"][0], [1.0, 0.75])  # 0.5 * 2 w x


def test_a_vmap_over_seeds_is_a_jacobian_built_by_hand() -> None:
    x = np.array([0.5, 0.25])
    elementwise = lambda x: tnp.where(x < 1, x**2, tnp.exp(2000 * x))
    (rows,) = T.vmap(T.vjp(elementwise, x)[1])(np.eye(2))
    np.testing.assert_array_equal(rows, np.diag([1.0, 0.5]))
    at_zero = np.array([0.0, 1.0])  # sqrt's infinite derivative meets the seeds' zeros
    columns = T.vmap(lambda v: T.jvp(lambda x: tnp.sum(tnp.sqrt(x)), (at_zero,), (v,))[1])
    got = columns(np.eye(2))
    assert np.isinf(got[0]) and got[1] == 0.5


@settings(max_examples=25, deadline=None)
@given(
    bad=st.sampled_from(_BAD),
    mode=st.sampled_from(["grad", "hessian", "jacfwd", "jacrev(jacfwd)"]),
    data=st.data(),
)
def test_naive_programs_under_vmap_equal_their_double_where_rewriting(
    bad: tuple[str, Callable[[Any], Any], st.SearchStrategy[float]],
    mode: str,
    data: st.DataObject,
) -> None:
    _, branch, untaken = bad
    point = st.one_of(untaken, st.floats(0.55, 1.4))
    rows = data.draw(st.lists(st.lists(point, min_size=2, max_size=2), min_size=1, max_size=3))
    xs = np.array(rows)
    naive, rewritten = _programs(branch)
    transform = {**HESSIANS, "grad": T.grad, "jacfwd": T.jacfwd}[mode]
    expected = T.vmap(transform(rewritten))(xs)
    assert np.isfinite(expected).all()
    np.testing.assert_allclose(T.vmap(transform(naive))(xs), expected, rtol=1e-13, atol=0)


def test_a_computed_zero_under_vmap_stays_nan() -> None:
    g = T.vmap(T.grad(lambda x: tnp.sqrt(x) ** 2))(np.array([0.0, 4.0]))
    assert np.isnan(g[0]) and g[1] == 1.0
    H = T.vmap(T.hessian(lambda x: tnp.sum(tnp.sqrt(x) ** 2)))(np.array([[0.0, 1.0]]))
    assert np.isnan(H[0, 0, 0]) and H[0, 1, 1] == 0.0


def test_a_nan_in_a_primal_output_is_left_alone_and_nothing_is_run_again() -> None:
    calls = []

    def f(x: Any) -> Any:
        calls.append(x)
        return tnp.log(x), T.grad(lambda x: tnp.sum(x**2))(x)

    xs = np.array([[-1.0, 1.0], [2.0, 3.0]])
    logs, grads = T.vmap(f)(xs)
    np.testing.assert_array_equal(logs, np.log(xs))  # (NaN where the log of -1 is)
    np.testing.assert_array_equal(grads, 2 * xs)
    assert len(calls) == 1  # no derivative met a NaN: the batch ran once


def test_where_examples_are_not_run_again_a_nan_stays_and_no_number_is_wrong() -> None:
    """Under a ``T.jit`` recording, and with arguments traced by an outer transform, the
    examples are not run again: IEEE's NaN may stay, every other element is exact."""
    d = T.grad(_overflowing)
    exact = np.stack([d(x) for x in _EXAMPLES])
    recorded = T.jit(T.vmap(d))(_EXAMPLES)
    number = ~np.isnan(recorded)
    np.testing.assert_array_equal(recorded[number], exact[number])
    _, traced = T.jvp(lambda s: T.vmap(d)(s * _EXAMPLES), (1.0,), (1.0,))  # d/ds at s = 1:
    direct = np.stack([T.jvp(lambda s, x=x: d(s * x), (1.0,), (1.0,))[1] for x in _EXAMPLES])
    number = ~np.isnan(traced)  # (the Hessian's diagonal times x)
    np.testing.assert_array_equal(traced[number], direct[number])
