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
    expected_out = _leaves(g(t0))
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
