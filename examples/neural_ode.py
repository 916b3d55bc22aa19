"""A neural ODE: ``dz/dt = g(z; theta)`` with a small network, integrated by RK4 in ``tnp``.

Data come from a known system, a damped oscillator ``dz/dt = A z`` (a spiral in the
plane). The network's trajectory from the same start is integrated with a
fixed-step classical Runge-Kutta scheme written with ``transforms.numpy``, and the loss (its
distance to the observed trajectory) is differentiated through every solver step
("discretise, then optimise"). The gradient is checked against finite differences and
training must fit the trajectory. The same loss with the adaptive solver of
``transforms.scipy.integrate.odeint``, differentiated by the adjoint method ("optimise, then
discretise"), gives the same gradient to the discretisation error of RK4.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from _cli import parse_args

import transforms as T
import transforms.numpy as tnp
from transforms.scipy.integrate import odeint

Params = dict[str, T.Array]
TRUE_A = np.array([[-0.1, 1.0], [-1.0, -0.1]])


def rk4(g: Callable[[T.Array], T.Array], z0: T.Array, dt: float, steps: int) -> T.Array:
    """The states at times 0, dt, ..., steps * dt (classical fourth-order Runge-Kutta)."""
    states = [z0]
    z = z0
    for _ in range(steps):
        k1 = g(z)
        k2 = g(z + 0.5 * dt * k1)
        k3 = g(z + 0.5 * dt * k2)
        k4 = g(z + dt * k3)
        z = z + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        states.append(z)
    return tnp.stack(states)


def network(params: Params, z: T.Array) -> T.Array:
    h = tnp.tanh(params["w0"] @ z + params["b0"])
    return params["w1"] @ h + params["b1"]


def main() -> None:
    args = parse_args(__doc__)
    rng = np.random.default_rng(0)
    z0, dt, steps = np.array([2.0, 0.0]), 0.1, 15 if args.quick else 40
    observed = rk4(lambda z: TRUE_A @ z, z0, dt, steps)

    width = 16
    params: Params = {
        "w0": 0.5 * rng.standard_normal((width, 2)),
        "b0": np.zeros(width),
        "w1": 0.1 * rng.standard_normal((2, width)),
        "b1": np.zeros(2),
    }

    def loss(params: Params) -> T.Array:
        trajectory = rk4(lambda z: network(params, z), z0, dt, steps)
        return tnp.mean(tnp.sum((trajectory - observed) ** 2, axis=1))

    grads = T.grad(loss)(params)
    direction = {k: rng.standard_normal(np.shape(v)) for k, v in params.items()}
    h = 1e-6
    plus = loss({k: v + h * direction[k] for k, v in params.items()})
    minus = loss({k: v - h * direction[k] for k, v in params.items()})
    exact = sum(float(np.sum(grads[k] * direction[k])) for k in params)
    assert np.isclose(exact, (plus - minus) / (2 * h), rtol=1e-6), (exact, (plus - minus) / 2 / h)
    print(f"gradient through {steps} RK4 steps agrees with finite differences")

    times = dt * np.arange(steps + 1)

    def ode_loss(params: Params) -> T.Array:
        trajectory = odeint(lambda z, t, p: network(p, z), z0, times, params)
        return tnp.mean(tnp.sum((trajectory - observed) ** 2, axis=1))

    adjoint = T.grad(ode_loss)(params)
    gap = np.sqrt(sum(np.sum((adjoint[k] - grads[k]) ** 2) for k in params))
    size = np.sqrt(sum(np.sum(grads[k] ** 2) for k in params))
    assert gap < 1e-3 * size, (gap, size)
    print(f"the adjoint method's gradient (odeint) agrees with RK4's to {gap / size:.1e}")

    value_and_grad = T.value_and_grad(loss)
    m = {k: np.zeros_like(v) for k, v in params.items()}
    s = {k: np.zeros_like(v) for k, v in params.items()}
    losses = []
    for step in range(1, (40 if args.quick else 400) + 1):
        value, grads = value_and_grad(params)
        losses.append(float(value))
        for k in params:  # Adam
            m[k] = 0.9 * m[k] + 0.1 * grads[k]
            s[k] = 0.999 * s[k] + 0.001 * grads[k] ** 2
            params[k] = params[k] - 0.02 * (m[k] / (1 - 0.9**step)) / (
                np.sqrt(s[k] / (1 - 0.999**step)) + 1e-8
            )
    print(f"trajectory loss: {losses[0]:.4f} -> {losses[-1]:.2e}")
    assert losses[-1] < (0.5 if args.quick else 0.01) * losses[0]


if __name__ == "__main__":
    main()
