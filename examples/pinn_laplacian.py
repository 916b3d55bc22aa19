"""A physics-informed network: the Laplacian of a network, and a Poisson problem solved with it.

The network ``u(x, y) = x (1 - x) y (1 - y) N(x, y)`` vanishes on the unit square's
boundary; training makes ``-Laplacian(u) = f`` hold at collocation points, for
``f = 2 pi^2 sin(pi x) sin(pi y)`` whose solution is ``sin(pi x) sin(pi y)``. The
Laplacian is ``T.laplacian`` of the network (one collapsed Taylor pass, no Hessian),
``vmap``-ped over the points, and the training gradient differentiates through it (reverse
over the Taylor pass). The Laplacian is checked against ``trace(T.hessian)`` and a
finite-difference stencil, and training must lower the residual loss (and, in the full
run, bring u within 1% of the solution). With ``--figures``, it draws the solution, its
error and the loss curve.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from _cli import new_figure, parse_args, save

import transforms as T
import transforms.numpy as tnp

Params = dict[str, T.Array]
SIDE = 21  # the evaluation grid: SIDE x SIDE points


def u(params: Params, p: T.Array) -> T.Array:
    """The network at one point ``p = (x, y)``: a scalar."""
    h = tnp.tanh(params["w0"] @ p + params["b0"])
    h = tnp.tanh(params["w1"] @ h + params["b1"])
    x, y = p[0], p[1]
    return x * (1 - x) * y * (1 - y) * (params["w2"] @ h + params["b2"])


laplacian = T.laplacian(u, argnums=1)  # the sum of d^2u/dx^2 and d^2u/dy^2 at (params, p)


def source(points: np.ndarray) -> np.ndarray:
    return 2 * np.pi**2 * np.sin(np.pi * points[:, 0]) * np.sin(np.pi * points[:, 1])


def residual_loss(params: Params, points: T.Array, f: T.Array) -> T.Array:
    lap = T.vmap(laplacian, in_axes=(None, 0))(params, points)
    return tnp.mean((lap + f) ** 2)


def main() -> None:
    args = parse_args(__doc__)
    rng = np.random.default_rng(0)
    width = 16
    params: Params = {
        "w0": rng.standard_normal((width, 2)),
        "b0": np.zeros(width),
        "w1": rng.standard_normal((width, width)) / np.sqrt(width),
        "b1": np.zeros(width),
        "w2": rng.standard_normal(width) / np.sqrt(width),
        "b2": np.zeros(()),
    }

    p, h = np.array([0.3, 0.6]), 1e-4
    e = np.eye(2) * h
    stencil = sum(u(params, p + d) + u(params, p - d) for d in e) - 4 * u(params, p)
    assert np.isclose(laplacian(params, p), stencil / h**2, rtol=1e-5), "Laplacian != stencil"
    hessian_trace = np.trace(T.hessian(u, argnums=1)(params, p))
    assert np.isclose(laplacian(params, p), hessian_trace, rtol=1e-12), "Laplacian != trace"
    print(f"Laplacian at {p}: {float(laplacian(params, p)):.6f} (trace(hessian), stencil agree)")

    points = rng.uniform(0, 1, (64, 2))
    f = source(points)
    value_and_grad = T.value_and_grad(residual_loss)
    m = {k: np.zeros_like(v) for k, v in params.items()}
    s = {k: np.zeros_like(v) for k, v in params.items()}
    steps, lr = (60 if args.quick else 500), 1e-2
    losses = []
    for step in range(1, steps + 1):
        loss, grads = value_and_grad(params, points, f)
        losses.append(float(loss))
        for k in params:  # Adam
            m[k] = 0.9 * m[k] + 0.1 * grads[k]
            s[k] = 0.999 * s[k] + 0.001 * grads[k] ** 2
            params[k] = params[k] - lr * (m[k] / (1 - 0.9**step)) / (
                np.sqrt(s[k] / (1 - 0.999**step)) + 1e-8
            )
    print(f"residual loss: {losses[0]:.2f} -> {losses[-1]:.4f} in {steps} steps")
    assert losses[-1] < 0.5 * losses[0]

    grid = np.stack(np.meshgrid(np.linspace(0, 1, SIDE), np.linspace(0, 1, SIDE)), -1).reshape(
        -1, 2
    )
    exact = np.sin(np.pi * grid[:, 0]) * np.sin(np.pi * grid[:, 1])
    approx = np.asarray(T.vmap(u, in_axes=(None, 0))(params, grid))
    error = np.linalg.norm(approx - exact) / np.linalg.norm(exact)
    print(f"relative L2 error of u against sin(pi x) sin(pi y): {error:.1e}")
    if not args.quick:
        assert error < 0.01, error
    if args.figures is not None:
        draw(approx, exact, losses, args.figures)


def draw(approx: np.ndarray, exact: np.ndarray, losses: list[float], folder: Path) -> None:
    """The learned solution, its error against the exact one, and the loss curve."""
    figure = new_figure(11.0, 3.4)
    axes = figure.subplots(1, 3)
    n = SIDE
    extent = (0.0, 1.0, 0.0, 1.0)
    image = axes[0].imshow(approx.reshape(n, n), origin="lower", extent=extent, cmap="viridis")
    figure.colorbar(image, ax=axes[0])
    axes[0].set_title("learned u(x, y)")
    scale = float(np.max(np.abs(approx - exact)))  # a colour scale centred on zero
    error = axes[1].imshow(
        (approx - exact).reshape(n, n),
        origin="lower",
        extent=extent,
        cmap="RdBu_r",
        vmin=-scale,
        vmax=scale,
    )
    figure.colorbar(error, ax=axes[1])
    axes[1].set_title("u - sin(pi x) sin(pi y)")
    axes[2].semilogy(losses)
    axes[2].set_xlabel("Adam step")
    axes[2].set_title("residual loss mean((Lap u + f)^2)")
    save(figure, folder, "pinn_poisson.png")


if __name__ == "__main__":
    main()
