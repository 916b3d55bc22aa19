"""``transforms.scipy.special`` by value: SciPy's values, closed-form derivatives at special
points and of every order, the conventions at the edges, refusals, raw SciPy on traced
values, ``vmap``, and the ``scipy`` extra. (Derivatives in general: the op-spec rows of
``specs_scipy_special.py``.)"""

from __future__ import annotations

import math
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.special as sp
from scipy.integrate import quad

import transforms as T
import transforms.numpy as tnp
import transforms.scipy.misc as tsm
import transforms.scipy.special as tsp

EULER = 0.5772156649015329  # Euler-Mascheroni: -digamma(1)
X = np.array([0.3, 0.7, 1.2, 1.9])  # inside every function's real domain (see ARGUMENTS)
P = np.array([0.15, 0.4, 0.6, 0.85])  # probabilities


def derivative(f: Callable[[Any], Any], order: int) -> Callable[[Any], Any]:
    """The ``order``-th derivative of an elementwise ``f``, alternating reverse and forward
    mode (``grad`` of a sum, then ``jvp`` along ones), so every level runs the rules' rules."""
    for k in range(order):
        if k % 2 == 0:
            f = T.grad(lambda x, g=f: tnp.sum(g(x)))
        else:
            f = (lambda g: lambda x: T.jvp(g, (x,), (np.ones_like(x),))[1])(f)
    return f


# ---- values: SciPy's own ------------------------------------------------------------------
# The arguments each function is evaluated at (orders and shapes first, as SciPy takes them).
ARGUMENTS: dict[str, tuple[Any, ...]] = {
    **{n: (X,) for n in "erf erfc erfcx erfi dawsn ndtr log_ndtr expit log_expit".split()},
    **{n: (X,) for n in "softplus gamma gammaln digamma psi rgamma i0 i1 i0e i1e".split()},
    **{n: (X,) for n in "k0 k1 k0e k1e j0 j1 y0 y1 exp10 exp2 expm1 log1p cosm1".split()},
    **{n: (X,) for n in "cbrt exprel entr sinc".split()},
    "erfinv": (P - 0.5,),
    "erfcinv": (2 * P,),
    "ndtri": (P,),
    "logit": (P,),
    "gammasgn": (np.array([-2.5, -1.5, 0.5, 3.0]),),
    "round": (np.array([-1.5, 0.5, 2.5, 1.2]),),
    "sindg": (np.array([-90.0, 30.0, 180.0, 225.0]),),
    "cosdg": (np.array([-90.0, 60.0, 180.0, 225.0]),),
    "tandg": (np.array([-45.0, 30.0, 180.0, 60.0]),),
    "cotdg": (np.array([45.0, 30.0, 90.0, 135.0]),),
    "radian": (np.array([180.0, 90.0]), np.array([[30.0], [0.0]]), 15.0),
    "powm1": (X + 0.5, np.array([1e-12, -0.5, 2.0, 0.25])),
    "xlogy": (np.array([0.0, 0.5, -1.0, 2.0]), X),
    "xlog1py": (np.array([0.0, 0.5, -1.0, 2.0]), X - 0.5),
    "rel_entr": (X, X[::-1]),
    "kl_div": (X, X[::-1]),
    "polygamma": (np.array([0, 1, 2, 3]), X),
    "multigammaln": (X + 2, 3),
    "beta": (X, X[::-1]),
    "betaln": (X, X[::-1]),
    "gammainc": (X[::-1] + 0.5, X),
    "gammaincc": (X[::-1] + 0.5, X),
    "betainc": (X + 0.5, X[::-1], P),
    "betaincc": (X + 0.5, X[::-1], P),
    "stdtr": (X[::-1] + 0.5, 2 * X - 1.5),
    **{n: (np.array([-1.5, 0.0, 0.5, 2.0]), X) for n in "iv ive kv kve jv yv".split()},
    "jn": (np.array([0, 1, 2, 3]), X - 1.0),
    "yn": (np.array([0, 1, 2, 3]), X),
    "logsumexp": (np.array([[0.5, -np.inf, 3.0], [1000.0, 1.0, 2.0]]),),
    "softmax": (np.array([[0.5, -np.inf, 3.0], [1000.0, 1.0, 2.0]]),),
    "log_softmax": (np.array([[0.5, -np.inf, 3.0], [1000.0, 1.0, 2.0]]),),
}


def test_every_function_has_arguments_for_its_value_test() -> None:
    assert set(ARGUMENTS) == set(tsp.__all__), set(ARGUMENTS) ^ set(tsp.__all__)


# SciPy's dtype where it is not the input's: a float64 constant added to a float32 result
DTYPE_KEPT = {"multigammaln"}


@pytest.mark.parametrize("name", sorted(tsp.__all__))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_values_are_scipys(name: str, dtype: Any) -> None:
    args = tuple(
        a.astype(dtype) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a
        for a in ARGUMENTS[name]
    )
    ours, theirs = getattr(tsp, name)(*args), getattr(sp, name)(*args)
    assert np.shape(ours) == np.shape(theirs)
    expected_dtype = dtype if name in DTYPE_KEPT else np.asarray(theirs).dtype
    assert np.asarray(ours).dtype == expected_dtype
    tight = 1e-14 if dtype == np.float64 else 1e-6
    np.testing.assert_allclose(ours, theirs, rtol=tight, atol=0)
    # and the same on a traced value (its x, or its only array)
    i = 0 if name == "multigammaln" else len(args) - 1
    x = np.asarray(args[i], dtype)

    def at(v: Any) -> Any:
        return getattr(tsp, name)(*args[:i], v, *args[i + 1 :])

    traced, _ = T.jvp(at, (x,), (np.zeros_like(x),))
    np.testing.assert_allclose(traced, theirs, rtol=tight, atol=0)


LOGSUMEXP_CASES: list[tuple[Any, dict[str, Any]]] = [
    (np.array([1.0, 2.0, 3.0]), {}),
    (np.array(2.5), {}),
    (np.array(2.5), {"keepdims": True}),
    (np.array([[0.5, -np.inf], [-np.inf, -np.inf]]), {"axis": 1}),
    (np.array([[0.5, 2.0], [3.0, -1.0]]), {"axis": (0, 1), "keepdims": True}),
    (np.array([[0.5, 2.0], [3.0, -1.0]]), {"axis": -1, "b": np.array([2.0, 0.5])}),
    (np.array([1000.0, 0.0, 1.0]), {"b": np.array([0.0, 1.0, 2.0])}),  # b == 0 dominates
    (np.array([1.0, 2.0]), {"b": np.array([1.0, -1.0])}),  # a negative sum: NaN
    (np.array([1.0, 2.0]), {"b": np.array([1.0, -1.0]), "return_sign": True}),
    (np.array([1.0, 2.0]), {"b": np.array([-1.0, 1.0]), "return_sign": True}),
    (np.array([1.0, 2.0]), {"b": np.array([0.0, 0.0]), "return_sign": True}),
    (np.array([[1.0, 2.0], [0.5, 1.5]]), {"b": np.array([[1.0], [-3.0]]), "return_sign": True}),
    (np.zeros((2, 0)), {"axis": 1}),
    (np.zeros((0, 3)), {"axis": 1, "return_sign": True}),
    (np.array([1, 2, 3]), {}),
    (np.array([1.0, 2.0], np.float32), {"b": np.array([0.5, 1.0], np.float32)}),
]


@pytest.mark.parametrize("case", range(len(LOGSUMEXP_CASES)))
def test_logsumexp_values_are_scipys(case: int) -> None:
    a, kw = LOGSUMEXP_CASES[case]
    with np.errstate(invalid="ignore"):
        ours, theirs = tsp.logsumexp(a, **kw), sp.logsumexp(a, **kw)
    for o, t in zip(*(r if kw.get("return_sign") else (r,) for r in (ours, theirs)), strict=True):
        assert np.shape(o) == np.shape(t) and np.asarray(o).dtype == np.asarray(t).dtype
        np.testing.assert_allclose(o, t, rtol=1e-14, atol=0)
    assert tsm.logsumexp is tsp.logsumexp


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1)])
def test_softmax_values_are_scipys(axis: Any) -> None:
    x = np.array([[0.5, -np.inf, 3.0], [1000.0, 1.0, 2.0]])
    np.testing.assert_array_equal(tsp.softmax(x, axis), sp.softmax(x, axis))
    np.testing.assert_array_equal(tsp.log_softmax(x, axis), sp.log_softmax(x, axis))


def test_multigammaln_checks_its_arguments_as_scipy_does() -> None:
    with pytest.raises(ValueError, match=r"d should be a positive integer"):
        tsp.multigammaln(3.0, 2.5)
    with pytest.raises(ValueError, match=r"a > 0\.5"):
        tsp.multigammaln(np.array([3.0, 0.9]), 3)
    with pytest.raises(ValueError, match=r"a > 0\.5"):
        T.grad(lambda a: tsp.multigammaln(a, 4))(1.5)


# ---- derivatives of every order in closed form ----------------------------------------------
def _hermite_erf(n: int) -> Callable[[Any], Any]:
    """``d^n erf / dx^n = (-1)^(n-1) 2/sqrt(pi) H_{n-1}(x) exp(-x^2)``."""
    return lambda x: (
        (-1) ** (n - 1) * 2 / math.sqrt(math.pi) * sp.eval_hermite(n - 1, x) * (np.exp(-x * x))
    )


EXPREL_POINTS = np.array([-1.5, -0.26, -0.24, 1e-9, 0.1, 0.249, 0.251, 1.5])


def _exprel_derivative(n: int) -> Callable[[Any], Any]:
    def integral(x: float) -> float:
        return float(quad(lambda t: t**n * math.exp(x * t), 0.0, 1.0, epsabs=0, epsrel=1e-13)[0])

    return np.vectorize(integral)


CLOSED_FORMS: list[tuple[str, Callable[[Any], Any], int, Callable[[Any], Any], Any]] = [
    # (label, function, order, the derivative of that order, points)
    *((f"erf^{n}", tsp.erf, n, _hermite_erf(n), X - 1) for n in (1, 2, 3, 4)),
    *((f"erfc^{n}", tsp.erfc, n, lambda x, n=n: -_hermite_erf(n)(x), X - 1) for n in (1, 3)),
    ("ndtr'", tsp.ndtr, 1, lambda x: np.exp(-x * x / 2) / math.sqrt(2 * math.pi), X - 1),
    ("ndtr''", tsp.ndtr, 2, lambda x: -x * np.exp(-x * x / 2) / math.sqrt(2 * math.pi), X - 1),
    *(
        (f"gammaln^{n}", tsp.gammaln, n, lambda x, n=n: sp.polygamma(n - 1, x), X)
        for n in (1, 2, 3, 4)
    ),
    *((f"digamma^{n}", tsp.digamma, n, lambda x, n=n: sp.polygamma(n, x), X) for n in (1, 2, 3)),
    ("gammaln' between poles", tsp.gammaln, 1, sp.digamma, -X / 2 - 1),
    ("gamma''", tsp.gamma, 2, lambda x: sp.gamma(x) * (sp.digamma(x) ** 2 + sp.polygamma(1, x)), X),
    ("rgamma'", tsp.rgamma, 1, lambda x: -sp.digamma(x) / sp.gamma(x), X),
    ("polygamma(2)''", lambda x: tsp.polygamma(2, x), 2, lambda x: sp.polygamma(4, x), X),
    (
        "expit'''",
        tsp.expit,
        3,
        lambda x: (s := sp.expit(x)) * (1 - s) * (1 - 6 * s * (1 - s)),
        X - 1,
    ),
    ("logit''", tsp.logit, 2, lambda p: (2 * p - 1) / (p * (1 - p)) ** 2, P),
    ("log_expit''", tsp.log_expit, 2, lambda x: -sp.expit(x) * sp.expit(-x), X - 1),
    ("softplus''", tsp.softplus, 2, lambda x: sp.expit(x) * sp.expit(-x), X - 1),
    ("erfinv'", tsp.erfinv, 1, lambda y: 1 / _hermite_erf(1)(sp.erfinv(y)), P - 0.5),
    ("erfcinv'", tsp.erfcinv, 1, lambda y: -1 / _hermite_erf(1)(sp.erfcinv(y)), 2 * P),
    ("ndtri'", tsp.ndtri, 1, lambda p: math.sqrt(2 * math.pi) * np.exp(sp.ndtri(p) ** 2 / 2), P),
    # d/dx of the inverse's derivative, 1/f'(g): -f''(g) g' / f'(g)^2 = g * g'^2 for ndtri
    ("ndtri''", tsp.ndtri, 2, lambda p: sp.ndtri(p) * 2 * math.pi * np.exp(sp.ndtri(p) ** 2), P),
    (
        "log_ndtr'",
        tsp.log_ndtr,
        1,
        lambda x: math.sqrt(2 / math.pi) / sp.erfcx(-x / math.sqrt(2)),
        X * 10 - 3,
    ),
    ("erfcx'", tsp.erfcx, 1, lambda x: 2 * x * sp.erfcx(x) - 2 / math.sqrt(math.pi), X - 1),
    ("dawsn'", tsp.dawsn, 1, lambda x: 1 - 2 * x * sp.dawsn(x), X - 1),
    ("erfi'", tsp.erfi, 1, lambda x: 2 / math.sqrt(math.pi) * np.exp(x * x), X - 1),
    ("entr''", tsp.entr, 2, lambda x: -1 / x, X),
    ("exp10''", tsp.exp10, 2, lambda x: math.log(10) ** 2 * 10**x, X),
    ("cosm1'''", tsp.cosm1, 3, np.sin, X),
    ("sindg''", tsp.sindg, 2, lambda x: -((math.pi / 180) ** 2) * sp.sindg(x), X * 100),
    ("tandg'", tsp.tandg, 1, lambda x: math.pi / 180 / sp.cosdg(x) ** 2, X * 40),
    ("cotdg'", tsp.cotdg, 1, lambda x: -math.pi / 180 / sp.sindg(x) ** 2, X * 40 + 10),
    # exprel's n-th derivative is the integral of t^n e^(x t) over [0, 1], by quadrature;
    # both sides of the switch to its Taylor polynomial at |x| = 1/4
    *((f"exprel^{n}", tsp.exprel, n, _exprel_derivative(n), EXPREL_POINTS) for n in (1, 2, 3)),
]


@pytest.mark.parametrize("label", [c[0] for c in CLOSED_FORMS])
def test_derivatives_of_every_order_in_closed_form(label: str) -> None:
    _, f, order, expected, x = next(c for c in CLOSED_FORMS if c[0] == label)
    np.testing.assert_allclose(derivative(f, order)(x), expected(x), rtol=1e-11, atol=1e-14)


BESSEL_DERIVATIVES = [
    # (ours, order v or None for a fixed-order function, SciPy's n-th derivative, points)
    (tsp.jv, 2.5, lambda v, x, n: sp.jvp(v, x, n), X),
    (tsp.jv, -1.5, lambda v, x, n: sp.jvp(v, x, n), X),
    (tsp.jn, 3, lambda v, x, n: sp.jvp(v, x, n), X - 1),
    (tsp.yv, 0.5, lambda v, x, n: sp.yvp(v, x, n), X),
    (tsp.yn, 2, lambda v, x, n: sp.yvp(v, x, n), X),
    (tsp.iv, 1.5, lambda v, x, n: sp.ivp(v, x, n), X),
    (tsp.iv, 2, lambda v, x, n: sp.ivp(v, x, n), X - 1),
    (tsp.kv, 0.5, lambda v, x, n: sp.kvp(v, x, n), X),
    (tsp.kv, 3, lambda v, x, n: sp.kvp(v, x, n), X),
    (tsp.j0, None, lambda v, x, n: sp.jvp(0, x, n), X - 1),
    (tsp.j1, None, lambda v, x, n: sp.jvp(1, x, n), X - 1),
    (tsp.y0, None, lambda v, x, n: sp.yvp(0, x, n), X),
    (tsp.y1, None, lambda v, x, n: sp.yvp(1, x, n), X),
    (tsp.i0, None, lambda v, x, n: sp.ivp(0, x, n), X - 1),
    (tsp.i1, None, lambda v, x, n: sp.ivp(1, x, n), X - 1),
    (tsp.k0, None, lambda v, x, n: sp.kvp(0, x, n), X),
    (tsp.k1, None, lambda v, x, n: sp.kvp(1, x, n), X),
]


@pytest.mark.parametrize("case", range(len(BESSEL_DERIVATIVES)))
@pytest.mark.parametrize("order", [1, 2, 3])
def test_bessel_derivatives_of_every_order_are_scipys(case: int, order: int) -> None:
    fn, v, expected, x = BESSEL_DERIVATIVES[case]
    f = fn if v is None else (lambda x: fn(v, x))
    np.testing.assert_allclose(
        derivative(f, order)(x), expected(0 if v is None else v, x, order), rtol=1e-10, atol=1e-13
    )


@pytest.mark.parametrize(
    ("scaled", "plain", "scale"),
    [
        (tsp.i0e, lambda x: sp.ivp(0, x, 1), lambda x: np.exp(-abs(x))),
        (tsp.i1e, lambda x: sp.ivp(1, x, 1), lambda x: np.exp(-abs(x))),
        (lambda x: tsp.ive(1.5, x), lambda x: sp.ivp(1.5, x, 1), lambda x: np.exp(-abs(x))),
        (tsp.k0e, lambda x: sp.kvp(0, x, 1), np.exp),
        (tsp.k1e, lambda x: sp.kvp(1, x, 1), np.exp),
        (lambda x: tsp.kve(0.5, x), lambda x: sp.kvp(0.5, x, 1), np.exp),
    ],
)
def test_scaled_bessel_derivatives(scaled: Any, plain: Any, scale: Any) -> None:
    """``(f e^s)' = f' e^s + f (e^s)'``, with ``s = -|x|`` or ``x``."""
    x = X if scale is np.exp else np.concatenate([-X, X])
    value = np.asarray(scaled(x)) / scale(x)  # the unscaled function
    d_scale = -np.sign(x) * scale(x) if scale is not np.exp else scale(x)
    np.testing.assert_allclose(
        derivative(scaled, 1)(x), plain(x) * scale(x) + value * d_scale, rtol=1e-11, atol=1e-14
    )


# ---- special points ---------------------------------------------------------------------------
SPECIAL_POINTS: list[tuple[str, Callable[[Any], Any], int, float, float]] = [
    ("erf'(0)", tsp.erf, 1, 0.0, 2 / math.sqrt(math.pi)),
    ("erf''(0)", tsp.erf, 2, 0.0, 0.0),
    ("erfinv'(0)", tsp.erfinv, 1, 0.0, math.sqrt(math.pi) / 2),
    ("erfinv'''(0)", tsp.erfinv, 3, 0.0, math.pi**1.5 / 4),
    ("ndtri'(1/2)", tsp.ndtri, 1, 0.5, math.sqrt(2 * math.pi)),
    ("ndtri'''(1/2)", tsp.ndtri, 3, 0.5, (2 * math.pi) ** 1.5),
    ("gamma'(1)", tsp.gamma, 1, 1.0, -EULER),
    ("gamma''(1)", tsp.gamma, 2, 1.0, EULER**2 + math.pi**2 / 6),
    ("gammaln''(1)", tsp.gammaln, 2, 1.0, math.pi**2 / 6),
    ("digamma'(1)", tsp.digamma, 1, 1.0, math.pi**2 / 6),
    ("digamma''(1)", tsp.digamma, 2, 1.0, -2 * 1.2020569031595942),  # -2 zeta(3)
    ("expit'(0)", tsp.expit, 1, 0.0, 0.25),
    ("expit'''(0)", tsp.expit, 3, 0.0, -0.125),
    ("logit'(1/2)", tsp.logit, 1, 0.5, 4.0),
    ("log_expit'(0)", tsp.log_expit, 1, 0.0, 0.5),
    ("j0'(0)", tsp.j0, 1, 0.0, 0.0),
    ("j0''(0)", tsp.j0, 2, 0.0, -0.5),
    ("j1'(0)", tsp.j1, 1, 0.0, 0.5),
    ("i0''(0)", tsp.i0, 2, 0.0, 0.5),
    ("i1'(0)", tsp.i1, 1, 0.0, 0.5),
    ("i0e'(0), the kink", tsp.i0e, 1, 0.0, 0.0),
    ("i1e'(0), the kink", tsp.i1e, 1, 0.0, 0.5),
    ("entr'(1)", tsp.entr, 1, 1.0, -1.0),
    ("exprel'(0)", tsp.exprel, 1, 0.0, 0.5),
    ("exprel''(0)", tsp.exprel, 2, 0.0, 1 / 3),
    ("exprel'''(0)", tsp.exprel, 3, 0.0, 0.25),
    ("cosm1''(0)", tsp.cosm1, 2, 0.0, -1.0),
    ("gammainc(1, x)' at 0", lambda x: tsp.gammainc(1.0, x), 1, 0.0, 1.0),
    ("gammainc(2, x)' at 0", lambda x: tsp.gammainc(2.0, x), 1, 0.0, 0.0),
    ("gammainc(1, x)'' at 0", lambda x: tsp.gammainc(1.0, x), 2, 0.0, -1.0),
    ("gammaincc(1, x)' at 2", lambda x: tsp.gammaincc(1.0, x), 1, 2.0, -math.exp(-2.0)),
    ("betainc(1, 3, x)' at 0", lambda x: tsp.betainc(1.0, 3.0, x), 1, 0.0, 3.0),
    ("betainc(2, 1, x)' at 1/2", lambda x: tsp.betainc(2.0, 1.0, x), 1, 0.5, 1.0),
    ("betaincc(2, 1, x)' at 1/2", lambda x: tsp.betaincc(2.0, 1.0, x), 1, 0.5, -1.0),
    ("stdtr(1, t)' at 1: Cauchy", lambda t: tsp.stdtr(1.0, t), 1, 1.0, 0.5 / math.pi),
    ("stdtr(1, t)'' at 1", lambda t: tsp.stdtr(1.0, t), 2, 1.0, -0.5 / math.pi),
    ("betainc(1, 1, x)'' at 1/2", lambda x: tsp.betainc(1.0, 1.0, x), 2, 0.5, 0.0),
    ("multigammaln(a, 1)' at 1", lambda a: tsp.multigammaln(a, 1), 1, 1.0, -EULER),
    ("expit'(40): not 0", tsp.expit, 1, 40.0, math.exp(-40.0) / (1 + math.exp(-40.0)) ** 2),
    ("expit'(-40)", tsp.expit, 1, -40.0, math.exp(-40.0) / (1 + math.exp(-40.0)) ** 2),
    ("log_expit'(40): not 0", tsp.log_expit, 1, 40.0, math.exp(-40.0) / (1 + math.exp(-40.0))),
    # ndtr(x) underflows: the derivative is phi/Phi = sqrt(2/pi) / erfcx(-x/sqrt 2) ~ -x
    (
        "log_ndtr'(-40)",
        tsp.log_ndtr,
        1,
        -40.0,
        math.sqrt(2 / math.pi) / sp.erfcx(40 / math.sqrt(2)),
    ),
    (
        "log_ndtr'(-1e3)",
        tsp.log_ndtr,
        1,
        -1e3,
        math.sqrt(2 / math.pi) / sp.erfcx(1e3 / math.sqrt(2)),
    ),
    ("radian'", lambda d: tsp.radian(d, 30.0, 0.0), 1, 180.0, math.pi / 180),
]


@pytest.mark.parametrize("label", [c[0] for c in SPECIAL_POINTS])
def test_derivatives_at_special_points(label: str) -> None:
    _, f, order, x, expected = next(c for c in SPECIAL_POINTS if c[0] == label)
    got = derivative(f, order)(np.array([x]))
    np.testing.assert_allclose(got, [expected], rtol=1e-13, atol=1e-15)


def test_radian_is_linear_in_its_three_arguments() -> None:
    assert tsp.radian(180.0, 0.0, 0.0) == pytest.approx(math.pi, rel=1e-15)
    grads = T.grad(tsp.radian, argnums=(0, 1, 2))(180.0, 30.0, 15.0)
    np.testing.assert_allclose(grads, [math.pi / 180, math.pi / 10800, math.pi / 648000], 1e-15)


# ---- xlogy and relatives at x == 0 ----------------------------------------------------------
def test_xlogy_at_zero_follows_scipy_and_jax() -> None:
    assert tsp.xlogy(0.0, 0.0) == 0.0 and tsp.xlog1py(0.0, -1.0) == 0.0
    gx, gy = T.grad(tsp.xlogy, argnums=(0, 1))(0.0, 2.0)
    assert gx == pytest.approx(math.log(2.0)) and gy == 0.0
    with np.errstate(divide="ignore"):
        gx, gy = T.grad(tsp.xlogy, argnums=(0, 1))(0.0, 0.0)
    assert gx == -np.inf and gy == 0.0  # JAX: log(0) in x; 0 in y (xlogy(0, y) == 0)
    # the y-derivative keeps its x-derivative 1/y at x == 0: the mixed second derivative
    for hess in (T.hessian, lambda f: T.jacfwd(T.jacrev(f))):  # reverse and forward over reverse
        hessian = hess(lambda v: tsp.xlogy(v[0], v[1]))(np.array([0.0, 2.0]))
        np.testing.assert_allclose(hessian, [[0.0, 0.5], [0.5, 0.0]], rtol=1e-15)
        hessian = hess(lambda v: tsp.xlog1py(v[0], v[1]))(np.array([0.0, 1.0]))
        np.testing.assert_allclose(hessian, [[0.0, 0.5], [0.5, 0.0]], rtol=1e-15)


def test_entropies_at_the_edge_of_their_domain() -> None:
    assert tsp.entr(0.0) == 0.0 and tsp.rel_entr(0.0, 1.0) == 0.0
    with np.errstate(divide="ignore"):
        assert T.grad(tsp.entr)(0.0) == np.inf  # -log(0) - 1
    np.testing.assert_allclose(T.grad(tsp.kl_div, argnums=(0, 1))(2.0, 1.0), [math.log(2), -1])


# ---- logsumexp: exact at -inf, b == 0, signs -----------------------------------------------
def test_logsumexp_derivatives_are_exact_at_neg_inf_entries() -> None:
    a = np.array([0.0, np.log(3.0), -np.inf])
    np.testing.assert_array_equal(T.grad(tsp.logsumexp)(a), [0.25, 0.75, 0.0])
    hessian = T.hessian(tsp.logsumexp)(a)
    np.testing.assert_allclose(hessian[:2, :2], [[0.1875, -0.1875], [-0.1875, 0.1875]], 1e-15)
    assert np.all(hessian[2] == 0) and np.all(hessian[:, 2] == 0)
    (g,) = T.vjp(lambda a: tsp.log_softmax(a), a)[1](np.array([1.0, 0.0, 0.0]))
    np.testing.assert_allclose(g, [0.75, -0.75, 0.0], rtol=1e-15)
    g = T.jacrev(tsp.softmax)(a)
    assert np.all(g[2] == 0) and np.all(g[:, 2] == 0)


def test_logsumexp_derivative_in_b_where_b_is_zero() -> None:
    a, b = np.array([1000.0, 0.0, 1.0]), np.array([0.0, 1.0, 2.0])
    out = sp.logsumexp(a, b=b)
    ga, gb = T.grad(tsp.logsumexp, argnums=(0, 2))(a, None, b)
    np.testing.assert_allclose(ga, [0.0, *(b[1:] * np.exp(a[1:] - out))], rtol=1e-15)
    assert gb[0] > 1e307  # exp(1000 - out): the true derivative overflows
    a = np.array([0.5, 0.0, 1.0])
    out = sp.logsumexp(a, b=b)
    gb = T.grad(lambda b: tsp.logsumexp(a, b=b))(b)
    np.testing.assert_allclose(gb, np.exp(a - out), rtol=1e-15)


def test_logsumexp_return_sign() -> None:
    a, b = np.array([1.0, 2.0]), np.array([1.0, -1.0])
    out, sign = tsp.logsumexp(a, b=b, return_sign=True)
    assert sign == -1.0 and out == pytest.approx(math.log(math.e**2 - math.e))
    g = T.grad(lambda a: tsp.logsumexp(a, b=b, return_sign=True)[0])(a)
    s = math.e - math.e**2
    np.testing.assert_allclose(g, [math.e / s, -(math.e**2) / s], rtol=1e-14)
    assert T.grad(lambda a: tsp.logsumexp(a, b=b, return_sign=True)[1])(a).tolist() == [0, 0]


# ---- refusals and zero derivatives in orders and shape parameters ----------------------------
@pytest.mark.parametrize(
    ("name", "f", "argnum"),
    [
        ("gammainc", tsp.gammainc, 0),
        ("gammaincc", tsp.gammaincc, 0),
        ("betainc", lambda a, b, x: tsp.betainc(a, b, x), 0),
        ("betainc", lambda a, b, x: tsp.betainc(a, b, x), 1),
        ("betaincc", lambda a, b, x: tsp.betaincc(a, b, x), 0),
        ("betaincc", lambda a, b, x: tsp.betaincc(a, b, x), 1),
        ("stdtr", tsp.stdtr, 0),
        ("iv", tsp.iv, 0),
        ("ive", tsp.ive, 0),
        ("kv", tsp.kv, 0),
        ("kve", tsp.kve, 0),
        ("jv", tsp.jv, 0),
        ("jv", tsp.jn, 0),
        ("yv", tsp.yv, 0),
    ],
)
def test_derivatives_in_shapes_and_orders_are_refused(name: str, f: Any, argnum: int) -> None:
    args = (1.5, 2.0, 0.5)[: 3 if name.startswith("betainc") else 2]
    for transform in (T.grad, T.jacfwd):
        with pytest.raises(T.NoRuleError, match=rf"'{name}'.*argument {argnum}.*not implemented"):
            transform(f, argnums=argnum)(*args)
    # differentiating in x alone is fine, with the refused argument traced by vmap
    batch = np.array([1.5, 2.5])
    T.vmap(T.grad(f, argnums=len(args) - 1), in_axes=(0,) + (None,) * (len(args) - 1))(
        batch, *args[1:]
    )


def test_integer_orders_have_derivative_zero() -> None:
    """``polygamma``'s order, as in JAX; ``yn``'s, which SciPy truncates to an integer."""
    assert T.grad(lambda n: tsp.polygamma(n, 1.5))(2.0) == 0.0
    assert T.grad(lambda n: tsp.yn(n, 1.5))(2.0) == 0.0


# ---- float32 is kept --------------------------------------------------------------------------
@pytest.mark.parametrize("f", [tsp.digamma, tsp.y1, tsp.i1, tsp.k1e, tsp.gamma, tsp.exprel])
def test_float32_stays_float32_at_every_order(f: Any) -> None:
    x = np.array([0.5, 1.5], np.float32)
    for order in (1, 2, 3):
        assert derivative(f, order)(x).dtype == np.float32


# ---- raw SciPy on traced values -----------------------------------------------------------------
def test_raw_scipy_ufuncs_dispatch_to_their_twins() -> None:
    x = np.array([0.3, -1.2])
    g = T.grad(lambda x: tnp.sum(sp.expit(x) * sp.gammaln(x + 2)))(x)
    expected = T.grad(lambda x: tnp.sum(tsp.expit(x) * tsp.gammaln(x + 2)))(x)
    np.testing.assert_array_equal(g, expected)
    np.testing.assert_allclose(T.vmap(T.grad(sp.erf))(x), 2 / math.sqrt(math.pi) * np.exp(-x * x))
    np.testing.assert_allclose(T.jvp(lambda x: sp.jv(1.0, x), (x,), (np.ones(2),))[1], sp.jvp(1, x))


def test_raw_scipy_without_a_twin_names_scipy() -> None:
    with pytest.raises(TypeError, match=r"SciPy's 'airy'.*transforms\.scipy\.special"):
        T.grad(lambda x: tnp.sum(sp.airy(x)[0]))(np.array([0.5]))
    with pytest.raises(AttributeError, match=r"transforms\.scipy\.special has no 'airy'"):
        tsp.airy


def test_scipys_python_functions_on_traced_values_raise() -> None:
    """SciPy's functions written in Python convert their input to an array first: that is
    refused (never a dropped derivative); the twins here are what to call."""
    with pytest.raises(T.DerivativeDroppedError):
        T.grad(sp.logsumexp)(np.array([0.5, 1.0]))
    with pytest.raises(T.DerivativeDroppedError):
        T.grad(lambda x: tnp.sum(sp.polygamma(1, x)))(np.array([0.5, 1.0]))


# ---- vmap ----------------------------------------------------------------------------------------
def test_vmap_over_orders_shapes_and_scales() -> None:
    v, x = np.array([0.0, 0.5, 2.0]), np.array([0.7, 1.1, 1.9])
    np.testing.assert_allclose(T.vmap(tsp.jv)(v, x), sp.jv(v, x))
    np.testing.assert_allclose(T.vmap(T.grad(tsp.jv, argnums=1))(v, x), sp.jvp(v, x))
    np.testing.assert_allclose(
        T.vmap(T.grad(tsp.gammainc, argnums=1), in_axes=(None, 0))(1.5, x),
        x**0.5 * np.exp(-x) / math.gamma(1.5),
    )
    a, b = np.array([[0.5, 1.0, -np.inf], [2.0, 0.0, 1.0]]), np.array([1.0, 0.0, 2.0])
    per_row = T.vmap(lambda a: tsp.logsumexp(a, b=b))(a)
    np.testing.assert_allclose(per_row, sp.logsumexp(a, axis=1, b=b), rtol=1e-15)
    grads = T.vmap(T.grad(lambda a, b: tsp.logsumexp(a, b=b), argnums=1), in_axes=(0, None))(a, b)
    np.testing.assert_allclose(grads, np.exp(a - sp.logsumexp(a, axis=1, b=b)[:, None]), 1e-15)
    np.testing.assert_allclose(T.vmap(tsp.softmax)(a), sp.softmax(a, axis=1))
    np.testing.assert_allclose(
        T.vmap(lambda a: tsp.multigammaln(a, 3))(x + 2), sp.multigammaln(x + 2, 3), rtol=1e-14
    )


# ---- packaging: the scipy extra ---------------------------------------------------------------
def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)


def test_import_transforms_does_not_import_scipy() -> None:
    result = _run(
        "import sys, transforms, transforms.numpy\n"
        "assert 'transforms.scipy' not in sys.modules, 'transforms.scipy was imported'\n"
        "assert 'scipy' not in sys.modules, 'scipy was imported'\n"
    )
    assert result.returncode == 0, result.stderr


def test_transforms_scipy_without_scipy_names_the_extra() -> None:
    result = _run(
        "import sys\n"
        "sys.modules['scipy'] = None  # as if SciPy were not installed\n"
        "import transforms as T, transforms.numpy as tnp\n"
        "assert T.grad(tnp.sin)(0.0) == 1.0  # transforms itself works without SciPy\n"
        "try:\n"
        "    import transforms.scipy.special\n"
        "except ImportError as e:\n"
        "    print(e)\n"
        "else:\n"
        "    raise SystemExit('no ImportError')\n"
    )
    assert result.returncode == 0, result.stderr
    assert 'pip install "transforms[scipy]"' in result.stdout, result.stdout
