"""A Taylor-series ODE integrator: each step's K derivatives of the solution from ``T.jet``.

For ``y' = f(y)`` the derivatives of the solution at a point follow from those of
``f(y(t))``: ``y^(k+1) = d^k/dt^k f(y(t))``. Starting from ``y0``, one ``jet`` call of
order k on the series found so far gives the next derivative, so K calls give the Taylor
polynomial of order K of ``y`` around ``t0``, and a step of size ``h`` evaluates it at ``h``
(the method of JAX's jet paper, Bettencourt et al. 2019). The error per step is
O(h**(K+1)): high orders allow long steps.

Checked against closed forms: the logistic equation ``y' = y (1 - y)`` (``y = 1 / (1 +
(1/y0 - 1) e^-t)``) and the harmonic oscillator ``(q, p)' = (p, -q)`` over many periods
(energy and phase); and the error must fall with the order, as the theory says.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np
from _cli import new_figure, parse_args, save

import transforms as T
import transforms.numpy as tnp

Field = Callable[[T.Array], T.Array]


def taylor_coefficients(f: Field, y0: np.ndarray, order: int) -> list[np.ndarray]:
    """The derivatives ``y(0), y'(0), ..., y^(order)(0)`` of the solution of ``y' = f(y)``."""
    derivs = [y0, np.asarray(f(y0))]
    for k in range(1, order):
        _, terms = T.jet(f, (y0,), (derivs[1:],))  # the k derivatives of f(y(t)) at 0
        derivs.append(np.asarray(terms[k - 1]))
    return derivs


def step(f: Field, y: np.ndarray, h: float, order: int) -> np.ndarray:
    """``y(t + h)`` from the Taylor polynomial of order ``order`` of the solution at ``t``."""
    derivs = taylor_coefficients(f, y, order)
    return sum(d * (h**k / math.factorial(k)) for k, d in enumerate(derivs))  # type: ignore[return-value]


def integrate(f: Field, y0: np.ndarray, t_end: float, steps: int, order: int) -> np.ndarray:
    """The states at ``t_end * i / steps``, ``i = 0..steps``."""
    h = t_end / steps
    ys = [y0]
    for _ in range(steps):
        ys.append(step(f, ys[-1], h, order))
    return np.stack(ys)


def logistic(y: T.Array) -> T.Array:
    return y * (1 - y)


def oscillator(y: T.Array) -> T.Array:
    return tnp.stack([y[1], -y[0]])


def main() -> None:
    args = parse_args(__doc__)
    t_end, steps = (10.0, 10) if args.quick else (20.0, 20)

    # the logistic equation: error against the closed form, falling with the order
    y0 = np.array([0.1])
    exact = 1 / (1 + (1 / y0[0] - 1) * math.exp(-t_end))
    orders = [2, 4, 6, 8, 10, 12]
    errors = [abs(integrate(logistic, y0, t_end, steps, k)[-1, 0] - exact) for k in orders]
    for k, e in zip(orders, errors, strict=True):
        print(f"logistic, order {k:2d}, {steps} steps of {t_end / steps:g}: error {e:.2e}")
    assert errors[-1] < 1e-10, errors
    assert all(b < a for a, b in itertools.pairwise(errors[:4])), errors

    # the harmonic oscillator over several periods: exact phase and energy
    periods = 2 if args.quick else 8
    t = 2 * math.pi * periods
    ys = integrate(oscillator, np.array([1.0, 0.0]), t, 8 * periods, 12)
    np.testing.assert_allclose(ys[-1], [1.0, 0.0], atol=1e-9)
    energy = 0.5 * np.sum(ys**2, axis=1)
    np.testing.assert_allclose(energy, 0.5, rtol=1e-9)
    print(f"oscillator, {periods} periods in {8 * periods} steps of order 12: end {ys[-1]}")

    figure = new_figure()
    ax = figure.add_subplot()
    ax.semilogy(orders, errors, "o-")
    ax.set_xlabel("order of the Taylor step")
    ax.set_ylabel(f"error at t = {t_end:g} (logistic, {steps} steps)")
    save(figure, args.figures, "taylor_ode.png")


if __name__ == "__main__":
    main()
