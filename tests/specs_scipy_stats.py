"""Op-spec rows of ``transforms.scipy.stats`` (joined into ``OP_SPECS`` by ``op_specs.py``): one
row per function of every distribution, named ``scipy.stats.<distribution>.<function>``
(``test_scipy_stats.py`` checks that every public function has one).

The functions are composites (no primitive of their own): the rows check that the
compositions differentiate right, in the data and in every parameter the function is
differentiable in. Those arguments are drawn inside the support, which the location is kept
below (``x - loc > 0``; and ``< scale`` for the bounded supports); parameters a function is
not differentiable in (the shapes of the distribution functions, refused; counts ``k`` and
the trials ``n`` of ``binom``, integers) are drawn as scalars or as arrays that broadcast
against the arguments. ``covers`` stays empty: the coverage test of ``test_rule_coverage.py``
knows the NumPy-like namespaces, these modules are checked by their row names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import hypothesis.extra.numpy as hnp
import numpy as np
from hypothesis import strategies as st
from op_specs import OpSpec
from strategies import POSITIVE, REAL, Domain, Shape, mutually_broadcastable, shapes

import transforms.numpy as tnp
import transforms.scipy.stats as tss

Params = dict[str, Any]
ParamsFor = Callable[[tuple[Shape, ...]], st.SearchStrategy[Params]]

LOC = Domain("loc", -0.5, 0.5)  # unbounded supports
OFF_LOC = Domain("off_loc", 0.6, 2.0, signed=True)  # away from laplace's kink at loc
LOC_BELOW = Domain("loc_below", -0.4, -0.05)  # below every x of the half-line supports
ABOVE_ZERO = Domain("above_zero", 0.3, 2.5)  # x of the half-line supports
SCALE = Domain("scale", 0.5, 2.0)
UNIT_SCALE = Domain("unit_scale", 1.0, 2.0)  # x - loc < 1 <= scale: inside [loc, loc + scale]
INSIDE_UNIT = Domain("inside_unit", 0.1, 0.45)  # x of the bounded supports
SHAPE = Domain("shape", 0.7, 3.0)  # t's df, gamma's a, beta's a and b, chi2's df
PROBABILITY = Domain("probability", 0.15, 0.85)
CONCENTRATION = Domain("concentration", 0.7, 3.0)

CONTINUOUS = ("pdf", "logpdf", "cdf", "logcdf", "sf", "logsf")
DISCRETE = ("pmf", "logpmf", "cdf", "logcdf", "sf", "logsf")
DENSITIES = {"pdf", "logpdf", "pmf", "logpmf"}


def _row(name: str, fn: Callable[..., Any], domain: tuple[Domain, ...], **kw: Any) -> OpSpec:
    kw.setdefault("shapes", mutually_broadcastable(len(domain)))
    return OpSpec(f"scipy.stats.{name}", fn, domain=domain, **kw)


# ---- parameters: scalars, or arrays that broadcast against the arguments ----------------------
def _broadcasting(**values: tuple[st.SearchStrategy[Any], type]) -> ParamsFor:
    """Each named parameter a scalar of its strategy, or an array (of its dtype) of a
    trailing part of the first argument's shape (which broadcasts against every argument)."""

    def params(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
        shape = arg_shapes[0]
        kept = st.integers(0, len(shape)).map(lambda k: shape[len(shape) - k :])

        def one(v: st.SearchStrategy[Any], dtype: type) -> st.SearchStrategy[Any]:
            return st.one_of(v, kept.flatmap(lambda s: hnp.arrays(dtype, s, elements=v)))

        return st.fixed_dictionaries({name: one(*v) for name, v in values.items()})

    return params


_SHAPE_VALUES = (st.floats(0.7, 3.0), np.float64)
_COUNTS = (st.integers(0, 6), np.int64)


# ---- continuous distributions with loc and scale ----------------------------------------------
def _continuous(dist: str, n_shapes: int, support: str, **kw: Any) -> list[OpSpec]:
    """The six rows of a location-scale distribution with ``n_shapes`` shape parameters:
    the densities differentiated in (x, shapes..., loc, scale), the distribution functions
    in (x, loc, scale) with the shapes as parameters (refused, tested by value); ``kw`` for
    the distribution functions' rows."""
    module = getattr(tss, dist)
    x, loc, scale = {
        "real": (REAL, LOC, SCALE),
        "off_loc": (OFF_LOC, LOC, SCALE),
        "half_line": (ABOVE_ZERO, LOC_BELOW, SCALE),
        "unit": (INSIDE_UNIT, LOC_BELOW, UNIT_SCALE),
    }[support]
    shape_names = ("s0", "s1")[:n_shapes]
    rows = []
    for fname in CONTINUOUS:
        f = getattr(module, fname)
        if fname in DENSITIES:
            rows.append(_row(f"{dist}.{fname}", f, (x, *(SHAPE,) * n_shapes, loc, scale)))
        else:
            rows.append(
                _row(
                    f"{dist}.{fname}",
                    lambda x, loc, scale, f=f, **s: f(x, *(s[k] for k in shape_names), loc, scale),
                    (x, loc, scale),
                    params=_broadcasting(**dict.fromkeys(shape_names, _SHAPE_VALUES)),
                    **kw,
                )
            )
    return rows


# ---- discrete distributions: k (and binom's n) as parameters ---------------------------------
def _discrete(
    dist: str, domains: tuple[Domain, ...], fixed: dict[str, tuple[st.SearchStrategy[Any], type]]
) -> list[OpSpec]:
    """The six rows of a discrete distribution, differentiated in its real parameters (in the
    order of ``domains``), with ``k`` and the parameters in ``fixed`` drawn."""
    module = getattr(tss, dist)
    rows = []
    for fname in DISCRETE:
        f = getattr(module, fname)
        rows.append(
            _row(
                f"{dist}.{fname}",
                lambda *args, f=f, k, **fixed: f(k, *fixed.values(), *args),
                domains,
                params=_broadcasting(k=_COUNTS, **fixed),
            )
        )
    return rows


_BITS = (st.integers(0, 1), np.int64)


def _bernoulli(fname: str) -> Callable[..., Any]:
    f = getattr(tss.bernoulli, fname)
    if fname in ("sf", "logsf"):
        return lambda p, k: f(0 * k, p)
    return lambda p, k: f(k, p)


def _binom(fname: str) -> Callable[..., Any]:
    """``n + k`` trials (``k`` inside ``0..n``), one more for the survival function."""
    f = getattr(tss.binom, fname)
    extra = 1 if fname in ("sf", "logsf") else 0
    return lambda p, k, n: f(k, n + k + extra, p)


def _nbinom(fname: str) -> Callable[..., Any]:
    f = getattr(tss.nbinom, fname)
    if fname in DENSITIES:
        return lambda n, p, k: f(k, n, p)
    return lambda p, k, n: f(k, n, p)


# ---- dirichlet and multivariate_normal ---------------------------------------------------------
@st.composite
def _simplex_shapes(draw: st.DrawFn) -> tuple[Shape, Shape]:
    """``(x.shape, alpha.shape)``: ``K`` components along ``x``'s first axis, then points."""
    k = draw(st.integers(2, 4))
    return (k, *draw(shapes(max_dims=2, min_side=1))), (k,)


def _on_simplex(u: Any, drop_last: bool = False) -> Any:
    """Positive ``u`` normalized along the first axis (all ``K`` components, or ``K - 1``)."""
    x = u / tnp.sum(u, 0, keepdims=True)
    return x[:-1] if drop_last else x


@st.composite
def _gaussian_shapes(draw: st.DrawFn) -> tuple[Shape, Shape, Shape]:
    """``(x.shape, mean.shape, a.shape)`` for ``cov = a a^T + I`` of dimension ``d``."""
    d = draw(st.integers(1, 3))
    return (*draw(shapes(max_dims=2, min_side=1)), d), (d,), (d, d)


def _gaussian(fname: str) -> Callable[..., Any]:
    f = getattr(tss.multivariate_normal, fname)
    return lambda x, mean, a: f(x, mean, a @ a.T + np.eye(a.shape[0]))


SPECS: tuple[OpSpec, ...] = (
    *_continuous("norm", 0, "real"),
    _row("norm.ppf", tss.norm.ppf, (PROBABILITY, LOC, SCALE)),
    _row("norm.isf", tss.norm.isf, (PROBABILITY, LOC, SCALE)),
    *_continuous("cauchy", 0, "real"),
    *_continuous("laplace", 0, "off_loc"),
    *_continuous("logistic", 0, "real"),
    # SciPy's stdtr is accurate to ~1e-11 only (near t = 0): longer steps for its FD
    *_continuous("t", 1, "real", eps=1e-4),
    *_continuous("expon", 0, "half_line"),
    *_continuous("gamma", 1, "half_line"),
    *_continuous("chi2", 1, "half_line"),
    *_continuous("uniform", 0, "unit"),
    *_continuous("beta", 2, "unit"),
    *_discrete("poisson", (POSITIVE,), {}),
    *(  # k in the support, and, for the survival function, below its top (sf == 0 above)
        _row(f"bernoulli.{f}", _bernoulli(f), (PROBABILITY,), params=_broadcasting(k=_BITS))
        for f in DISCRETE
    ),
    *(
        _row(f"binom.{f}", _binom(f), (PROBABILITY,), params=_broadcasting(k=_COUNTS, n=_COUNTS))
        for f in DISCRETE
    ),
    *(
        _row(f"nbinom.{f}", _nbinom(f), (SHAPE, PROBABILITY), params=_broadcasting(k=_COUNTS))
        for f in DISCRETE
        if f in DENSITIES
    ),
    *(
        _row(
            f"nbinom.{f}",
            _nbinom(f),
            (PROBABILITY,),
            params=_broadcasting(k=_COUNTS, n=_SHAPE_VALUES),
        )
        for f in DISCRETE
        if f not in DENSITIES
    ),
    *(
        _row(
            f"dirichlet.{f}",
            lambda u, alpha, f=f: getattr(tss.dirichlet, f)(_on_simplex(u), alpha),
            (POSITIVE, CONCENTRATION),
            shapes=_simplex_shapes(),
        )
        for f in ("pdf", "logpdf")
    ),
    _row(
        "dirichlet.logpdf:k_minus_1",
        lambda u, alpha: tss.dirichlet.logpdf(_on_simplex(u, drop_last=True), alpha),
        (POSITIVE, CONCENTRATION),
        shapes=_simplex_shapes(),
    ),
    *(
        _row(
            f"multivariate_normal.{f}", _gaussian(f), (REAL, REAL, REAL), shapes=_gaussian_shapes()
        )
        for f in ("pdf", "logpdf")
    ),
)

NONDIFFERENTIABLE: dict[str, int] = {}
