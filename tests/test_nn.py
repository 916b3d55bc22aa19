"""``transforms.nn`` against ``jax.nn`` (values and derivatives, kinks included), closed forms,
and the one softmax family shared with ``transforms.numpy`` and ``transforms.scipy.special``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.special as sp

import transforms as T
import transforms.nn as nn
import transforms.numpy as tnp
import transforms.scipy.special as tsp

# every kink of every activation, both sides of it, and the tails
X = np.array([-40.0, -7.0, -6.0, -3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 6.0, 7.0, 40.0])

ELEMENTWISE = [
    "celu",
    "elu",
    "gelu",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "hard_tanh",
    "leaky_relu",
    "log_sigmoid",
    "relu",
    "relu6",
    "selu",
    "sigmoid",
    "silu",
    "soft_sign",
    "softplus",
    "swish",
]


@pytest.fixture(scope="module")
def jax_nn() -> Any:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


def _jax_grads(jax: Any, f: Any, x: np.ndarray) -> np.ndarray:
    return np.array([float(jax.grad(f)(v)) for v in x])


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_values_and_derivatives_are_jaxs_at_kinks_and_tails(jax_nn: Any, name: str) -> None:
    ours, theirs = getattr(nn, name), getattr(jax_nn.nn, name)
    np.testing.assert_allclose(ours(X), np.asarray(theirs(X)), rtol=1e-14, atol=1e-15)
    grads = np.array([T.grad(ours)(v) for v in X])
    # atol: the tanh form of gelu cancels in 1 + tanh(u) far in its lower tail (x = -7)
    np.testing.assert_allclose(grads, _jax_grads(jax_nn, theirs, X), rtol=1e-13, atol=1e-13)
    x = X[X != 0] if name == "soft_sign" else X  # |x|'(0): ours 0 (autograd's), JAX's 1
    second = np.array([T.grad(T.grad(ours))(v) for v in x])
    expected = _jax_grads(jax_nn, jax_nn.grad(theirs), x)
    np.testing.assert_allclose(second, expected, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("approximate", [True, False])
def test_gelu_both_forms_are_jaxs(jax_nn: Any, approximate: bool) -> None:
    def theirs(v: Any) -> Any:
        return jax_nn.nn.gelu(v, approximate=approximate)

    # XLA's tanh and NumPy's differ by an ulp, which 1 + tanh(u) magnifies in the lower tail
    np.testing.assert_allclose(
        nn.gelu(X, approximate), np.asarray(theirs(X)), rtol=1e-13, atol=1e-13
    )
    grads = np.array([T.grad(lambda v: nn.gelu(v, approximate))(v) for v in X])
    # atol: the tanh form of gelu cancels in 1 + tanh(u) far in its lower tail (x = -7)
    np.testing.assert_allclose(grads, _jax_grads(jax_nn, theirs, X), rtol=1e-13, atol=1e-13)


def test_kink_derivatives_are_jaxs_closed_forms() -> None:
    """Without JAX: the one-sided choices jax.nn documents (relu'(0) = 0, relu6'(6) = 0,
    hard_tanh'(+-1) = 1, leaky_relu'(0) = 1, celu'(0) = 1)."""

    def d(f: Any, v: float) -> float:
        return float(T.grad(f)(v))

    assert [d(nn.relu, v) for v in (-1.0, 0.0, 1.0)] == [0.0, 0.0, 1.0]
    assert [d(nn.relu6, v) for v in (0.0, 3.0, 6.0, 7.0)] == [0.0, 1.0, 0.0, 0.0]
    assert [d(nn.hard_tanh, v) for v in (-1.5, -1.0, 1.0, 1.5)] == [0.0, 1.0, 1.0, 0.0]
    assert d(nn.leaky_relu, 0.0) == 1.0 and d(nn.leaky_relu, -1.0) == 0.01
    assert d(nn.celu, 0.0) == 1.0 and d(nn.elu, 0.0) == 1.0  # alpha * exp(0)
    assert d(nn.soft_sign, 0.0) == 1.0
    assert float(T.grad(T.grad(nn.relu))(2.0)) == 0.0


def test_float32_is_kept() -> None:
    x = np.array([-1.0, 0.5, 7.0], np.float32)
    for name in ELEMENTWISE:
        f = getattr(nn, name)
        assert f(x).dtype == np.float32, name
        assert T.grad(lambda v, f=f: tnp.sum(f(v)))(x).dtype == np.float32, name


def test_tails_are_finite_and_silent() -> None:
    big = np.array([-1000.0, 1000.0])
    with np.errstate(all="raise"):
        np.testing.assert_array_equal(nn.sigmoid(big), [0.0, 1.0])
        np.testing.assert_allclose(nn.log_sigmoid(big), [-1000.0, 0.0])
        np.testing.assert_array_equal(T.grad(lambda v: tnp.sum(nn.elu(v)))(big), [0.0, 1.0])


# ---- softmax family with jax.nn's axis=-1 and where -------------------------------------------
Z = np.array([[0.5, -np.inf, 3.0, 1.0], [1000.0, 1.0, 2.0, -2.0]])
MASK = np.array([[True, True, False, True], [False, True, True, True]])


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("axis", [-1, 0, None, (0, 1)])
def test_softmax_family_values_are_jaxs(jax_nn: Any, fn: str, axis: Any) -> None:
    ours, theirs = getattr(nn, fn), getattr(jax_nn.nn, fn)
    np.testing.assert_allclose(ours(Z, axis), np.asarray(theirs(Z, axis)), rtol=1e-14)
    np.testing.assert_allclose(
        ours(Z, axis, where=MASK), np.asarray(theirs(Z, axis, where=MASK)), rtol=1e-14
    )


def test_softmax_where_derivatives_are_jaxs(jax_nn: Any) -> None:
    x = np.array([[0.5, 2.0, 3.0, 1.0], [0.1, 1.0, 2.0, -2.0]])
    w = np.array([1.0, -2.0, 0.5, 3.0])

    def loss(f: Any, s: Any) -> Any:
        return lambda v: s.sum(s.where(MASK, f(v, where=MASK), 0.0) * w)

    for name in ("softmax", "log_softmax"):
        ours = T.grad(loss(getattr(nn, name), tnp))(x)
        theirs = jax_nn.grad(loss(getattr(jax_nn.nn, name), jax_nn.numpy))(x)
        np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-13, atol=1e-16)
        assert np.all(ours[~MASK] == 0)


def test_standardize_is_jaxs(jax_nn: Any) -> None:
    x = np.array([[0.5, 2.0, 3.0, 1.0], [0.1, 1.0, 2.0, -2.0]])
    for algorithm in ("fast", "stable"):
        for axis in (-1, 0, None):
            ours = nn.standardize(x, axis, algorithm=algorithm)
            theirs = jax_nn.nn.standardize(x, axis, algorithm=algorithm)
            np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-13)
    m, v = np.array([0.5]), np.array([[2.0], [3.0]])
    np.testing.assert_allclose(
        nn.standardize(x, mean=m, variance=v, epsilon=0.1),
        np.asarray(jax_nn.nn.standardize(x, mean=m, variance=v, epsilon=0.1)),
        rtol=1e-14,
    )
    where = np.array([[True, False, True, True], [True, True, False, True]])
    for algorithm in ("fast", "stable"):
        ours = nn.standardize(x, where=where, algorithm=algorithm)
        theirs = jax_nn.nn.standardize(x, where=where, algorithm=algorithm)
        np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-13)
    g = T.grad(lambda v: tnp.sum(nn.standardize(v, where=where) * x))(x)
    jg = jax_nn.grad(lambda v: jax_nn.numpy.sum(jax_nn.nn.standardize(v, where=where) * x))(x)
    np.testing.assert_allclose(g, np.asarray(jg), rtol=1e-10)
    with pytest.raises(ValueError, match="standardize: unknown algorithm 'exact'"):
        nn.standardize(x, algorithm="exact")


def test_glu_is_jaxs(jax_nn: Any) -> None:
    x = np.arange(12.0).reshape(3, 4) / 5 - 1
    for axis in (-1, 1):
        np.testing.assert_allclose(nn.glu(x, axis), np.asarray(jax_nn.nn.glu(x, axis)), 1e-14)
    with pytest.raises(ValueError, match="glu: axis 0 of x has size 3, which is odd"):
        nn.glu(x, 0)


def test_one_hot_is_jaxs(jax_nn: Any) -> None:
    idx = np.array([[0, 2], [-1, 3]])
    for axis in (-1, 0, 1, -2):
        theirs = np.asarray(jax_nn.nn.one_hot(idx, 3, axis=axis))
        np.testing.assert_array_equal(nn.one_hot(idx, 3, axis=axis), theirs)
    assert nn.one_hot(idx, 3).dtype == np.float64
    assert nn.one_hot(idx, 3, dtype=np.int8).dtype == np.int8


def test_one_hot_under_vmap_and_as_a_constant_factor() -> None:
    idx = np.array([[0, 2], [1, 1]])
    out = T.vmap(lambda i: nn.one_hot(i, 3))(idx)
    np.testing.assert_array_equal(out, np.eye(3)[idx])
    # a cross-entropy: the one-hot targets carry no derivative
    logits = np.array([[0.5, 1.0, -1.0], [2.0, 0.0, 0.0]])
    labels = np.array([2, 0])

    def xent(z: Any) -> Any:
        return -tnp.sum(nn.one_hot(labels, 3) * nn.log_softmax(z))

    np.testing.assert_allclose(T.grad(xent)(logits), sp.softmax(logits, -1) - np.eye(3)[labels])


def test_activations_batch_under_vmap() -> None:
    x = np.array([[-1.0, 0.0, 2.0], [7.0, -3.0, 0.5]])
    for name in ELEMENTWISE:
        f = getattr(nn, name)
        np.testing.assert_allclose(T.vmap(f)(x), f(x), rtol=1e-15, err_msg=name)
    np.testing.assert_allclose(T.vmap(nn.softmax)(x), sp.softmax(x, -1), rtol=1e-15)


# ---- the one logsumexp ------------------------------------------------------------------------
def test_one_implementation_of_the_softmax_family() -> None:
    assert nn.logsumexp is tsp.logsumexp is tnp.logsumexp
    assert tsp.softmax is tnp._reductions.softmax and tsp.log_softmax is tnp._reductions.log_softmax
    assert nn.softplus is tsp.softplus


LOGSUMEXP_CASES: list[tuple[np.ndarray, dict[str, Any]]] = [
    # the dominant entry has b == 0: the others' sum, not -inf (tnp.logsumexp's old bug)
    (np.array([5.0, 0.0, 1.0]), {"b": np.array([0.0, 2.0, 1.0])}),
    (np.array([[1000.0, 0.0], [1.0, 2.0]]), {"b": np.array([[0.0, 1.0], [1.0, 0.0]]), "axis": 1}),
    (np.array([1.0, 0.0]), {"b": np.array([0.0, 0.0])}),  # every b == 0: -inf
    (np.array([1.0, 0.0]), {"b": np.array([0.0, 0.0]), "return_sign": True}),
    (np.array([0.0, np.log(3.0), -np.inf]), {}),
    (np.array([-np.inf, -np.inf]), {}),
    (np.arange(24.0).reshape(2, 3, 4) / 7, {"axis": (0, 2), "keepdims": True}),
    (np.arange(24.0).reshape(2, 3, 4) / 7, {"axis": (-1, 0)}),
    (np.array([1.0, 2.0]), {"b": np.array([1.0, -3.0]), "return_sign": True}),
    (np.array([[1.0, 2.0], [0.0, 0.5]]), {"b": [[1.0, -3.0], [2.0, 0.0]], "return_sign": True}),
    (np.array(2.0), {"keepdims": True}),
    (np.zeros((0, 3)), {"axis": 0}),
]


@pytest.mark.parametrize("case", range(len(LOGSUMEXP_CASES)))
def test_numpy_logsumexp_is_scipys(case: int) -> None:
    a, kw = LOGSUMEXP_CASES[case]
    with np.errstate(divide="ignore"):
        ours, theirs = tnp.logsumexp(a, **kw), sp.logsumexp(a, **kw)
    pairs = zip(ours, theirs, strict=True) if kw.get("return_sign") else [(ours, theirs)]
    for o, t in pairs:
        assert np.shape(o) == np.shape(t)
        np.testing.assert_allclose(o, t, rtol=1e-14, atol=0)


def test_numpy_logsumexp_of_zero_scales_is_minus_inf_as_jaxs() -> None:
    """SciPy gives NaN here (its 0 * exp(1000 - 0) overflows); the sum is 0: -inf, as JAX."""
    with np.errstate(divide="ignore"):
        assert tnp.logsumexp(np.array([1000.0, 0.0]), b=np.zeros(2)) == -np.inf


def test_numpy_logsumexp_derivatives_with_zero_scales() -> None:
    a, b = np.array([5.0, 0.0, 1.0]), np.array([0.0, 2.0, 1.0])
    out = sp.logsumexp(a, b=b)
    ga, gb = T.grad(tnp.logsumexp, argnums=(0, 2))(a, None, b)
    np.testing.assert_allclose(ga, b * np.exp(a - out), rtol=1e-15)  # 0 at the b == 0 entry
    np.testing.assert_allclose(gb, np.exp(a - out), rtol=1e-15)  # also where b == 0
    hess = T.hessian(lambda a: tnp.logsumexp(a, b=b))(a)
    p = b * np.exp(a - out)
    np.testing.assert_allclose(hess, np.diag(p) - np.outer(p, p), rtol=1e-14, atol=1e-17)


def test_stop_gradient_is_one_primitive() -> None:
    from transforms.compose._custom import stop_gradient_p

    assert stop_gradient_p is tnp._elementwise.stop_gradient_p
    assert float(T.grad(lambda x: x * T.stop_gradient(x))(3.0)) == 3.0
    out, t = T.jvp(lambda x: T.stop_gradient({"a": x})["a"] * x, (2.0,), (1.0,))
    assert (float(out), float(t)) == (4.0, 2.0)
