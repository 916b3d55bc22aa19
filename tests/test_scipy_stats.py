"""``transforms.scipy.stats`` by value: SciPy's own results for every function (broadcast
shapes, points outside the support, invalid parameters, tails), float32 kept, derivatives
against autograd's ``autograd.scipy.stats`` and closed forms, exact zeros (never NaN)
outside the support, refusals where a derivative needs a function without a closed-form
derivative, vmap, and SciPy's errors. Every function's derivatives are also checked
against finite differences in every mode by its op-spec row (``specs_scipy_stats.py``).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest
import scipy.stats as ss
from op_specs import OP_SPECS
from scipy.special import digamma

import transforms as T
import transforms.scipy.stats as tss

# The distributions and their functions: every public function of every module.
CONTINUOUS = "norm t cauchy laplace logistic expon uniform gamma beta chi2".split()
DISCRETE = "poisson binom bernoulli nbinom".split()
MULTIVARIATE = ["dirichlet", "multivariate_normal"]
FUNCTIONS = [
    (dist, fname)
    for dist in CONTINUOUS + DISCRETE + MULTIVARIATE
    for fname in getattr(tss, dist).__all__
]

RNG = np.random.default_rng(20261203)
X = np.linspace(-3.0, 3.0, 13)[:, None]  # points along the first axis, parameters along the last
LOC = np.array([-0.5, 0.0, 0.75])
SCALE = np.array([[0.5], [2.0]])[:, :, None]  # a third axis: (2, 13, 3) results


def _continuous_arguments(dist: str) -> tuple[Any, ...]:
    """``(x, *shapes, loc, scale)`` that broadcast to ``(2, 13, 3)``: points inside and
    outside every support (x runs over [-3, 3] and loc < 1 <= loc + scale for some)."""
    shapes = {
        "t": (np.array([0.5, 3.0, 30.0]),),
        "gamma": (np.array([0.5, 1.0, 2.5]),),
        "chi2": (np.array([1.0, 2.0, 5.0]),),
        "beta": (np.array([0.5, 1.0, 2.5]), np.array([[3.0], [0.7]])[:, :, None]),
    }.get(dist, ())
    return (X, *shapes, LOC, SCALE)


K = np.array([-1.0, 0.0, 1.0, 2.0, 2.5, 3.0, 7.0, 40.0])[:, None]
DISCRETE_ARGUMENTS: dict[str, tuple[Any, ...]] = {
    "poisson": (K, np.array([0.0, 0.5, 3.0, 30.0]), 0),
    "binom": (K, np.array([0.0, 1.0, 3.0, 8.0]), np.array([[0.0], [0.3], [1.0]])[:, :, None]),
    "bernoulli": (K, np.array([0.0, 0.3, 1.0]), np.array([[0.0], [1.0]])[:, :, None]),
    "nbinom": (K, np.array([0.5, 1.0, 3.0, 8.5]), np.array([[0.2], [0.6], [1.0]])[:, :, None]),
}

_SIMPLEX = RNG.dirichlet([1.0, 2.0, 3.0], size=(4,)).T  # (3, 4): components first
_COV = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]])
MULTIVARIATE_ARGUMENTS: dict[str, list[tuple[Any, ...]]] = {
    "dirichlet": [
        (_SIMPLEX, np.array([1.0, 2.0, 3.0])),
        (_SIMPLEX[:2], np.array([0.5, 2.0, 3.0])),  # K - 1 components: the last is 1 - sum
        (_SIMPLEX[:, 0], np.array([1.5, 0.7, 3.0])),
        (np.array([0.0, 0.25, 0.75]), np.array([1.0, 2.0, 3.0])),  # x == 0 where alpha >= 1
    ],
    "multivariate_normal": [
        (RNG.normal(size=(4, 3)), np.array([0.5, -1.0, 0.0]), _COV),
        (RNG.normal(size=(2, 5, 3)), None, _COV),
        (RNG.normal(size=3), np.array([0.5, -1.0, 0.0]), np.array([1.0, 2.0, 0.5])),
        (RNG.normal(size=5), 1.0, 2.0),  # d == 1: five points
        (RNG.normal(size=(1, 3)), np.zeros(3), 1.5),  # squeezed as SciPy's
    ],
}


def _arguments(dist: str) -> list[tuple[Any, ...]]:
    if dist in MULTIVARIATE_ARGUMENTS:
        return MULTIVARIATE_ARGUMENTS[dist]
    if dist in DISCRETE_ARGUMENTS:
        return [DISCRETE_ARGUMENTS[dist]]
    return [_continuous_arguments(dist)]


# ---- every function has a row of the op-spec table --------------------------------------------
def test_every_function_has_a_row() -> None:
    stats = [s.name for s in OP_SPECS if s.name.startswith("scipy.stats.")]
    rows = {n.removeprefix("scipy.stats.").partition(":")[0] for n in stats}
    functions = {f"{dist}.{fname}" for dist, fname in FUNCTIONS}
    assert functions == rows, functions ^ rows


def test_the_tables_list_every_module() -> None:
    modules = {n for n in dir(tss) if not n.startswith("_")}
    assert modules == set(CONTINUOUS + DISCRETE + MULTIVARIATE)


# ---- values: SciPy's own ----------------------------------------------------------------------
@pytest.mark.parametrize(("dist", "fname"), FUNCTIONS)
def test_values_match_scipy(dist: str, fname: str) -> None:
    ours, theirs = getattr(getattr(tss, dist), fname), getattr(getattr(ss, dist), fname)
    for args in _arguments(dist):
        expected = np.asarray(theirs(*args))
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no warning SciPy does not give
            actual = np.asarray(ours(*args))
        assert actual.shape == expected.shape
        np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected))
        # (atol: the logarithm of a probability that rounds to 1 is 0 to ~1e-16)
        np.testing.assert_allclose(actual, expected, rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize(
    ("dist", "fname", "args"),
    [
        ("norm", "ppf", (np.array([0.0, 1e-10, 0.3, 1.0, 1.5]), 1.0, 2.0)),
        ("norm", "isf", (np.array([0.0, 1e-10, 0.3, 1.0, -0.5]), 1.0, 2.0)),
        ("norm", "logcdf", (np.array([-40.0, -10.0, 5.0, 40.0]),)),
        ("norm", "logsf", (np.array([-40.0, 10.0, 40.0]),)),
        ("logistic", "logcdf", (np.array([-800.0, -30.0, 30.0, 800.0]),)),
        ("laplace", "logsf", (np.array([-40.0, 0.0, 40.0]),)),
        ("expon", "logsf", (np.array([0.0, 50.0, 1e4]),)),
        ("gamma", "logsf", (np.array([0.5, 30.0]), 2.0)),
        ("poisson", "logsf", (np.array([0.0, 20.0]), 3.0)),
        ("beta", "logpdf", (np.array([0.0, 1.0]), np.array([[0.5], [1.0], [2.0]]), 1.0)),
        ("norm", "pdf", (1.0, 0.0, np.array([-1.0, 0.0, 1.0]))),  # scale <= 0: NaN
        ("t", "pdf", (1.0, np.array([-1.0, 0.0, 1.0]))),  # df <= 0: NaN
        ("gamma", "cdf", (1.0, np.array([-1.0, 0.0, 1.0]))),
        ("poisson", "pmf", (1.0, np.array([-1.0, 0.0, 1.0]))),
        ("binom", "pmf", (1.0, np.array([-1.0, 2.5, 3.0]), 0.5)),  # n a non-integer: NaN
        ("binom", "cdf", (1.0, 3.0, np.array([-0.1, 0.5, 1.1]))),
        ("nbinom", "pmf", (1.0, np.array([0.0, 2.5]), np.array([[0.0], [1.5]]))),
        ("poisson", "pmf", (3.0, 2.0, np.array([-1.0, 0.5, 1.0]))),  # loc of discrete ones
    ],
)
def test_tails_edges_and_invalid_parameters_match_scipy(
    dist: str, fname: str, args: tuple[Any, ...]
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SciPy warns at some invalid parameters
        expected = getattr(getattr(ss, dist), fname)(*args)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        actual = getattr(getattr(tss, dist), fname)(*args)
    np.testing.assert_allclose(actual, expected, rtol=1e-9, atol=0)


def test_cauchy_distribution_function_is_accurate_in_the_lower_tail() -> None:
    """``arctan2(1, -z) / pi`` keeps the tail SciPy's ``1/2 + arctan(z)/pi`` cancels away."""
    z = np.array([-1e3, -1e8, -1e12])
    np.testing.assert_allclose(tss.cauchy.cdf(z), np.arctan(-1 / z) / math.pi, rtol=1e-14)
    np.testing.assert_allclose(tss.cauchy.logsf(-z), np.log(np.arctan(-1 / z) / math.pi))


def test_log_distribution_functions_near_one_keep_the_complement() -> None:
    """``logcdf`` where ``cdf`` rounds to 1 is ``log1p(-sf)`` (``-sf`` to first order), not
    ``log(1.0) == 0`` (SciPy's generic ``log(cdf)``); likewise ``logsf``."""
    cases = [
        (tss.gamma.logcdf(40.0, 2.0), -ss.gamma.sf(40.0, 2.0)),
        (tss.poisson.logcdf(30.0, 2.0), -ss.poisson.sf(30.0, 2.0)),
        (tss.beta.logsf(1e-9, 2.0, 3.0), -ss.beta.cdf(1e-9, 2.0, 3.0)),
        (tss.t.logsf(-1e5, 3.0), -ss.t.cdf(-1e5, 3.0)),
        (tss.expon.logcdf(50.0), -math.exp(-50.0)),
        (tss.binom.logcdf(19.0, 40, 0.01), -ss.binom.sf(19.0, 40, 0.01)),
    ]
    for actual, expected in cases:
        np.testing.assert_allclose(actual, expected, rtol=1e-9)
    # the derivative is the same either way: pdf / cdf
    np.testing.assert_allclose(
        T.grad(tss.gamma.logcdf)(40.0, 2.0),
        ss.gamma.pdf(40.0, 2.0) / ss.gamma.cdf(40.0, 2.0),
        rtol=1e-12,
    )


def test_laplace_and_expon_log_tails_do_not_underflow() -> None:
    """Far in the tail, where ``log(sf)`` (SciPy's generic ``logsf``) is ``-inf``: the
    closed forms ``-log(2) - z`` and ``-z``."""
    np.testing.assert_allclose(tss.laplace.logsf(800.0), -math.log(2) - 800.0, rtol=1e-15)
    np.testing.assert_allclose(tss.laplace.logcdf(-800.0), -math.log(2) - 800.0, rtol=1e-15)
    assert tss.expon.logsf(1e4, 0.0, 2.0) == -5e3


# the Python-number parameters of each distribution in the float32 test
PARAMETERS: dict[str, tuple[Any, ...]] = {
    "t": (3.0,),
    "gamma": (2.0,),
    "chi2": (3.0,),
    "beta": (2.0, 3.0, -2.0, 4.0),
    "poisson": (2.5,),
    "binom": (4, 0.3),
    "bernoulli": (0.3,),
    "nbinom": (2.5, 0.4),
    "multivariate_normal": (np.zeros(2, np.float32), 2 * np.eye(2, dtype=np.float32)),
    "dirichlet": (np.array([1.0, 2.0, 3.0], np.float32),),
}


@pytest.mark.parametrize(("dist", "fname"), FUNCTIONS)
def test_float32_stays_float32(dist: str, fname: str) -> None:
    """float32 arrays with Python-number parameters give float32 (as JAX's distributions;
    SciPy's give float64), to float32's accuracy."""
    x = {
        "dirichlet": _SIMPLEX,
        "multivariate_normal": RNG.normal(size=(4, 2)),
        **dict.fromkeys(DISCRETE, np.array([0.0, 1.0, 3.0])),
    }.get(dist, np.linspace(-1.5, 1.5, 5))
    args = (x.astype(np.float32), *PARAMETERS.get(dist, ()))
    out = np.asarray(getattr(getattr(tss, dist), fname)(*args))
    assert out.dtype == np.float32, out.dtype
    expected = getattr(getattr(ss, dist), fname)(*args)
    np.testing.assert_allclose(out, expected, rtol=2e-5, atol=1e-30)


# ---- derivatives against autograd.scipy.stats --------------------------------------------------
def _autograd(dist: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # autograd's import may warn about NumPy's aliases
        import autograd.scipy.stats as ags
    return getattr(ags, dist)


# (distribution, function, arguments, the argnums both differentiate)
AUTOGRAD_CASES = [
    ("norm", f, (0.7, -0.3, 1.7), (0, 1, 2))
    for f in ("pdf", "logpdf", "cdf", "logcdf", "sf", "logsf")
] + [
    ("t", "pdf", (0.7, 3.5, -0.3, 1.7), (0, 1, 2, 3)),
    ("t", "logpdf", (0.7, 3.5, -0.3, 1.7), (0, 1, 2, 3)),
    ("gamma", "pdf", (1.3, 2.5), (0, 1)),
    ("gamma", "logpdf", (1.3, 2.5), (0, 1)),
    ("gamma", "cdf", (1.3, 2.5), (0,)),
    # (an integer df: autograd's derivative in x is 0 at a non-integer df; it has none in df,
    # nor second derivatives)
    ("chi2", "pdf", (1.3, 3.0), (0,)),
    ("chi2", "logpdf", (1.3, 3.0), (0,)),
    ("chi2", "cdf", (1.3, 3.0), (0,)),
    ("beta", "pdf", (0.3, 2.5, 1.5), (0, 1, 2)),
    ("beta", "logpdf", (0.3, 2.5, 1.5), (0, 1, 2)),
    ("beta", "cdf", (0.3, 2.5, 1.5), (0,)),
    ("poisson", "pmf", (3.0, 2.5), (1,)),
    ("poisson", "logpmf", (3.0, 2.5), (1,)),
    ("poisson", "cdf", (3.0, 2.5), (1,)),
    ("dirichlet", "logpdf", (np.array([0.2, 0.3, 0.5]), np.array([1.5, 2.0, 0.7])), (0, 1)),
    ("dirichlet", "pdf", (np.array([0.2, 0.3, 0.5]), np.array([1.5, 2.0, 0.7])), (0, 1)),
    (
        "multivariate_normal",
        "logpdf",
        (np.array([0.3, -1.0, 2.0]), np.array([0.5, -1.0, 0.0])),
        (0, 1),
    ),
    (
        "multivariate_normal",
        "pdf",
        (np.array([0.3, -1.0, 2.0]), np.array([0.5, -1.0, 0.0])),
        (0, 1),
    ),
]


@pytest.mark.parametrize(("dist", "fname", "args", "argnums"), AUTOGRAD_CASES)
def test_derivatives_match_autograd(
    dist: str, fname: str, args: tuple[Any, ...], argnums: tuple[int, ...]
) -> None:
    autograd = pytest.importorskip("autograd")  # a peer: the bench extra, not dev

    ours = getattr(getattr(tss, dist), fname)
    theirs = getattr(_autograd(dist), fname)
    if dist == "multivariate_normal":  # with its covariance
        ours = (lambda f: lambda x, m: f(x, m, _COV))(ours)
        theirs = (lambda f: lambda x, m: f(x, m, _COV))(theirs)
    for argnum in argnums:
        expected = autograd.grad(theirs, argnum)(*(np.asarray(a, float) for a in args))
        actual = T.grad(ours, argnums=argnum)(*args)
        np.testing.assert_allclose(actual, expected, rtol=1e-9, err_msg=f"argument {argnum}")
        if np.ndim(expected) == 0 and dist != "chi2":  # and the second derivative
            second = autograd.grad(autograd.grad(theirs, argnum), argnum)(*map(float, args))
            actual2 = T.grad(T.grad(ours, argnums=argnum), argnums=argnum)(*args)
            np.testing.assert_allclose(actual2, second, rtol=1e-8, err_msg=f"second {argnum}")


def test_multivariate_normal_covariance_derivative_along_symmetric_directions() -> None:
    """The derivative in ``cov`` is that of a symmetric matrix: any two gradients (autograd's,
    this one's) agree on every symmetric direction."""
    autograd = pytest.importorskip("autograd")  # a peer: the bench extra, not dev

    x, mean = np.array([0.3, -1.0, 2.0]), np.array([0.5, -1.0, 0.0])
    ours = T.grad(lambda c: tss.multivariate_normal.logpdf(x, mean, c))(_COV)
    theirs = autograd.grad(lambda c: _autograd("multivariate_normal").logpdf(x, mean, c))(_COV)
    for _ in range(3):
        s = RNG.normal(size=(3, 3))
        s = s + s.T
        np.testing.assert_allclose(np.sum(ours * s), np.sum(theirs * s), rtol=1e-10)
    # and the closed form, (cov^-1 r r^T cov^-1 - cov^-1) / 2 (symmetric)
    inv = np.linalg.inv(_COV)
    r = inv @ (x - mean)
    np.testing.assert_allclose(
        0.5 * (ours + ours.T), 0.5 * (np.outer(r, r) - inv), rtol=1e-10, atol=1e-14
    )


# ---- closed forms -------------------------------------------------------------------------------
def test_closed_form_derivatives() -> None:
    x, loc, scale = 1.3, -0.2, 0.8
    z = (x - loc) / scale
    # d/dscale norm.logpdf = (z**2 - 1) / scale; d/dloc = z / scale
    np.testing.assert_allclose(
        T.grad(tss.norm.logpdf, argnums=2)(x, loc, scale), (z * z - 1) / scale, rtol=1e-14
    )
    np.testing.assert_allclose(T.grad(tss.norm.logpdf, argnums=1)(x, loc, scale), z / scale)
    # the distribution functions' derivatives are the densities
    for dist, extra in [("t", (2.5,)), ("gamma", (1.5,)), ("beta", (2.0, 3.0)), ("chi2", (3.0,))]:
        module = getattr(tss, dist)
        u = 0.4
        np.testing.assert_allclose(
            T.grad(module.cdf)(u, *extra), module.pdf(u, *extra), rtol=1e-13, err_msg=dist
        )
        np.testing.assert_allclose(T.grad(module.sf)(u, *extra), -module.pdf(u, *extra), rtol=1e-13)
    for dist in ("norm", "cauchy", "laplace", "logistic", "expon", "uniform"):
        module = getattr(tss, dist)
        np.testing.assert_allclose(
            T.grad(module.cdf)(0.4, 0.1, 2.0), module.pdf(0.4, 0.1, 2.0), rtol=1e-13, err_msg=dist
        )
    # d/dmu poisson.cdf(k, mu) = -pmf(k, mu); d/dp binom.cdf(k, n, p) = -n pmf(k, n - 1, p)
    np.testing.assert_allclose(
        T.grad(tss.poisson.cdf, argnums=1)(3.5, 2.0), -ss.poisson.pmf(3, 2.0), rtol=1e-13
    )
    np.testing.assert_allclose(
        T.grad(tss.binom.cdf, argnums=2)(2.0, 5, 0.3), -5 * ss.binom.pmf(2, 4, 0.3), rtol=1e-13
    )
    # d/dp nbinom.cdf(k, n, p) = n p**(n-1) (1-p)**k / (k B(n, k+1))... = the beta density
    np.testing.assert_allclose(
        T.grad(tss.nbinom.cdf, argnums=2)(2.0, 2.5, 0.4), ss.beta.pdf(0.4, 2.5, 3.0), rtol=1e-13
    )
    # laplace's distribution function is smooth at loc: its derivative there is the density
    assert T.grad(tss.laplace.cdf)(0.0) == 0.5
    assert T.grad(tss.laplace.sf)(0.0) == -0.5


# ---- outside the support: exact zeros, never NaN ------------------------------------------------
@pytest.mark.parametrize(
    ("name", "f", "x"),
    [
        ("expon.logpdf", tss.expon.logpdf, -1.0),
        ("expon.cdf", tss.expon.cdf, -1.0),
        ("expon.logcdf", lambda x: tss.expon.logcdf(x), -1.0),
        ("gamma.cdf, a < 1", lambda x: tss.gamma.cdf(x, 0.5), -1.0),
        ("gamma.logpdf, a < 1", lambda x: tss.gamma.logpdf(x, 0.5), -1.0),
        ("beta.cdf below", lambda x: tss.beta.cdf(x, 0.5, 0.5), -0.5),
        ("beta.cdf above", lambda x: tss.beta.cdf(x, 0.5, 0.5), 1.5),
        ("beta.logsf above", lambda x: tss.beta.logsf(x, 0.5, 0.5), 1.5),
        ("uniform.logcdf below", tss.uniform.logcdf, -0.5),
        ("uniform.pdf above", tss.uniform.pdf, 1.5),
        ("poisson.logcdf below", lambda mu: tss.poisson.logcdf(-1.0, mu), 2.0),
        ("binom.logsf above", lambda p: tss.binom.logsf(5.0, 3, p), 0.3),
    ],
)
def test_derivatives_outside_the_support_are_zero(name: str, f: Any, x: float) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for order in (1, 2):
            g = f
            for _ in range(order):
                g = T.grad(g)
            assert g(x) == 0.0, (name, order)
        assert T.jvp(f, (x,), (1.0,))[1] == 0.0
        assert T.jacfwd(T.jacrev(f))(x) == 0.0


# ---- refusals: derivatives in the shape parameters of the distribution functions -------------
@pytest.mark.parametrize(
    ("name", "f", "args", "argnum", "refused"),
    [
        ("t.cdf in df", tss.t.cdf, (0.5, 3.0), 1, "stdtr"),
        ("t.logsf in df", tss.t.logsf, (0.5, 3.0), 1, "stdtr"),
        ("gamma.cdf in a", tss.gamma.cdf, (0.5, 2.0), 1, "gammainc"),
        ("gamma.sf in a", tss.gamma.sf, (0.5, 2.0), 1, "gammaincc"),
        ("chi2.cdf in df", tss.chi2.cdf, (0.5, 2.0), 1, "gammainc"),
        ("beta.cdf in a", tss.beta.cdf, (0.5, 2.0, 3.0), 1, "betainc"),
        ("beta.sf in b", tss.beta.sf, (0.5, 2.0, 3.0), 2, "betaincc"),
        ("binom.cdf in n", tss.binom.cdf, (1.0, 3.0, 0.3), 1, "betaincc"),
        ("nbinom.cdf in n", tss.nbinom.cdf, (1.0, 3.0, 0.3), 1, "betainc"),
        ("poisson.cdf in k", tss.poisson.cdf, (1.5, 2.0), 0, None),
    ],
)
def test_derivatives_without_a_closed_form_are_refused(
    name: str, f: Any, args: tuple[float, ...], argnum: int, refused: str | None
) -> None:
    if refused is None:  # piecewise constant in k: 0 (gammaincc's shape is floor(k) + 1)
        assert T.grad(f, argnums=argnum)(*args) == 0.0
        return
    for transform in (T.grad, T.jacfwd):
        with pytest.raises(T.NoRuleError, match=rf"'{refused}'.*not implemented"):
            transform(f, argnums=argnum)(*args)


# ---- vmap and broadcasting ----------------------------------------------------------------------
def test_vmap_over_data_and_parameters() -> None:
    x = np.linspace(0.1, 2.0, 4)
    a = np.array([0.5, 1.0, 2.0, 3.5])
    out = T.vmap(tss.gamma.logpdf)(x, a)
    np.testing.assert_allclose(out, ss.gamma.logpdf(x, a), rtol=1e-13)
    grads = T.vmap(T.grad(tss.gamma.logpdf, argnums=(0, 1)))(x, a)
    np.testing.assert_allclose(grads[0], (a - 1) / x - 1, rtol=1e-13)
    np.testing.assert_allclose(grads[1], np.log(x) - digamma(a), rtol=1e-13)
    xs = RNG.normal(size=(5, 3))
    np.testing.assert_allclose(
        T.vmap(lambda x: tss.multivariate_normal.logpdf(x, None, _COV))(xs),
        ss.multivariate_normal.logpdf(xs, None, _COV),
        rtol=1e-12,
    )
    u = RNG.uniform(0.5, 1.5, size=(4, 3))  # four points of three components, batched first
    simplex = u / u.sum(1, keepdims=True)
    alpha = np.array([1.5, 2.0, 0.7])
    np.testing.assert_allclose(
        T.vmap(lambda x: tss.dirichlet.logpdf(x, alpha))(simplex),
        ss.dirichlet.logpdf(simplex.T, alpha),
        rtol=1e-12,
    )


# ---- SciPy's errors ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: tss.dirichlet.logpdf(np.array([0.2, 0.3, 0.4]), [1.0, 2.0, 3.0]), "simplex"),
        (lambda: tss.dirichlet.logpdf(np.array([0.5, 0.5]), [1.0, 2.0, 3.0, 4.0]), "fewer"),
        (lambda: tss.dirichlet.logpdf(np.array([0.5, 0.5]), [1.0, -2.0]), "greater than 0"),
        (lambda: tss.dirichlet.logpdf(np.array([0.0, 1.0]), [0.5, 2.0]), "greater than zero"),
        (lambda: tss.dirichlet.logpdf(np.array([-0.5, 1.5]), [1.0, 2.0]), r"\[0, 1\]"),
        (lambda: tss.dirichlet.logpdf(np.array([0.5, 0.5]), [[1.0, 2.0]]), "one dimensional"),
        (lambda: tss.multivariate_normal.logpdf(np.zeros((2, 3)), np.zeros(2)), "last axis"),
        (lambda: tss.multivariate_normal.logpdf(np.zeros(2), np.zeros(3), np.eye(2)), "mean"),
    ],
)
def test_scipys_value_errors(call: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()


def test_multivariate_normal_refuses_a_covariance_that_is_not_positive_definite() -> None:
    cov = np.array([[1.0, 1.0], [1.0, 1.0]])  # singular
    with pytest.raises(np.linalg.LinAlgError, match=r"multivariate_normal.logpdf.*positive"):
        tss.multivariate_normal.logpdf(np.zeros(2), None, cov)
    with pytest.raises(np.linalg.LinAlgError, match=r"allow_singular=True, is not supported"):
        tss.multivariate_normal.logpdf(np.zeros(2), None, cov, allow_singular=True)


def test_dirichlet_under_vmap_over_alpha_equals_the_loop() -> None:
    # the shape check reads the traced shape (the concrete one holds the batch axis)
    x = np.array([[0.2, 0.8], [0.3, 0.7]])
    alpha = np.array([[1.5, 2.0], [2.0, 3.0]])
    expected = [ss.dirichlet.logpdf(x[i], alpha[i]) for i in range(2)]
    np.testing.assert_allclose(T.vmap(tss.dirichlet.logpdf)(x, alpha), expected, rtol=1e-12)
