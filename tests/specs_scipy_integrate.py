"""Op-spec rows of ``transforms.scipy.integrate`` (joined into ``OP_SPECS`` by ``op_specs.py``).

``odeint`` is solved at tight tolerances (``1e-11``) in these rows so that finite differences
of the solution (step ``1e-5``) measure its derivative, not the solver's error: linear
dynamics ``y' = a y / 2`` (in ``y0`` and the matrix ``a``), nonlinear time-dependent ones of
a state of any shape (in ``y0`` and a parameter of the state's shape), and differentiable
times (``t`` built increasing from its argument)."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st
from op_specs import OpSpec
from strategies import SMALL, Shape, shapes

import transforms.numpy as tnp
from transforms.scipy.integrate import odeint

TIMES = np.array([0.0, 0.4, 1.0])
TIGHT = {"rtol": 1e-11, "atol": 1e-11}
LOOSE = {"rtol": 1e-4, "atol": 1e-5, "eps": 1e-5}


def _linear(y: Any, t: Any, a: Any) -> Any:
    return a @ y * 0.5


def _nonlinear(y: Any, t: Any, p: Any) -> Any:
    return tnp.sin(p * y) + t * tnp.cos(y)


def _forced(y: Any, t: Any) -> Any:
    return -y + tnp.sin(3.0 * t)


@st.composite
def _linear_shapes(draw: st.DrawFn) -> tuple[Shape, Shape]:
    n = draw(st.integers(1, 3))
    return (n,), (n, n)


SPECS: tuple[OpSpec, ...] = (
    OpSpec(
        "scipy.integrate.odeint",
        lambda y0, a: odeint(_linear, y0, TIMES, a, **TIGHT),
        _linear_shapes(),
        covers=("scipy.integrate.odeint",),
        **LOOSE,
    ),
    OpSpec(
        "scipy.integrate.odeint:nonlinear",
        lambda y0, p: odeint(_nonlinear, y0, TIMES, args=(p,), **TIGHT),
        shapes(max_dims=2, min_side=1, max_side=2).map(lambda s: (s, s)),
        domain=SMALL,
        covers=("scipy.integrate.odeint",),
        **LOOSE,
    ),
    OpSpec(
        "scipy.integrate.odeint:times",
        lambda y0, x: odeint(_forced, y0, tnp.cumsum(0.2 + x * x), **TIGHT),
        st.integers(1, 3).map(lambda k: ((2,), (k,))),
        domain=SMALL,
        covers=("scipy.integrate.odeint",),
        **LOOSE,
    ),
)

NONDIFFERENTIABLE: dict[str, int] = {}
