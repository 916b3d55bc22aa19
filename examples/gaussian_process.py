"""Gaussian-process regression: hyperparameters by maximum likelihood with ``scipy.optimize``.

The negative log marginal likelihood of an RBF-kernel GP,
``y^T K^-1 y / 2 + log det K / 2 + n log(2 pi) / 2`` with ``K = s^2 exp(-|x - x'|^2 / 2l^2)
+ noise^2 I``, is written with ``tnp.linalg.cholesky`` and ``tnp.linalg.solve`` in terms
of log-hyperparameters; ``T.value_and_grad`` feeds L-BFGS-B (``jac=True``). The gradient
is checked against central differences, the optimum must have a (near) zero gradient and a
lower likelihood loss than the start, and the figure shows the posterior with its band.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.optimize
from _cli import new_figure, parse_args, save

import transforms as T
import transforms.numpy as tnp


def kernel(a: T.Array, b: T.Array, log_amp: T.Array, log_len: T.Array) -> T.Array:
    sq = (a[:, None] - b[None, :]) ** 2
    return tnp.exp(2 * log_amp) * tnp.exp(-0.5 * sq / tnp.exp(2 * log_len))


def neg_log_likelihood(theta: T.Array, x: T.Array, y: T.Array) -> T.Array:
    """``theta = (log amplitude, log length scale, log noise)``."""
    n = x.shape[0]
    K = kernel(x, x, theta[0], theta[1]) + (tnp.exp(2 * theta[2]) + 1e-8) * np.eye(n)
    L = tnp.linalg.cholesky(K)
    z = tnp.linalg.solve(L, y)  # L z = y, so y^T K^-1 y = |z|^2
    return 0.5 * tnp.sum(z**2) + tnp.sum(tnp.log(tnp.diagonal(L))) + 0.5 * n * math.log(2 * math.pi)


def posterior(
    theta: np.ndarray, x: np.ndarray, y: np.ndarray, grid: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Posterior mean and standard deviation of f at ``grid`` (plain NumPy values)."""
    K = np.asarray(kernel(x, x, theta[0], theta[1])) + np.exp(2 * theta[2]) * np.eye(len(x))
    Ks = np.asarray(kernel(grid, x, theta[0], theta[1]))
    mean = Ks @ np.linalg.solve(K, y)
    var = np.exp(2 * theta[0]) - np.sum(Ks * np.linalg.solve(K, Ks.T).T, axis=1)
    return mean, np.sqrt(np.maximum(var, 0.0))


def main() -> None:
    args = parse_args(__doc__)
    rng = np.random.default_rng(1)
    n = 15 if args.quick else 40
    x = np.sort(rng.uniform(-3.0, 3.0, n))
    y = np.sin(2.0 * x) + 0.3 * x + 0.15 * rng.standard_normal(n)

    value_and_grad = T.value_and_grad(neg_log_likelihood)
    theta0 = np.array([0.0, 0.5, -1.0])
    _, g0 = value_and_grad(theta0, x, y)
    h = 1e-6
    fd = [
        (neg_log_likelihood(theta0 + h * e, x, y) - neg_log_likelihood(theta0 - h * e, x, y))
        / (2 * h)
        for e in np.eye(3)
    ]
    assert np.allclose(g0, fd, rtol=1e-6, atol=1e-7), (g0, fd)
    print(f"gradient at the start: {np.round(g0, 4)} (central differences agree)")

    def objective(t: np.ndarray) -> tuple[float, np.ndarray]:
        value, grad = value_and_grad(t, x, y)
        return float(value), np.asarray(grad)

    result = scipy.optimize.minimize(
        objective,
        theta0,
        jac=True,
        method="L-BFGS-B",
    )
    amp, length, noise = np.exp(result.x)
    start = float(neg_log_likelihood(theta0, x, y))
    print(f"L-BFGS-B: {result.nit} iterations, loss {start:.3f} -> {result.fun:.3f}")
    print(f"amplitude {amp:.3f}, length scale {length:.3f}, noise {noise:.3f} (true 0.15)")
    assert result.success and result.fun < start
    assert np.linalg.norm(result.jac) < 1e-4, result.jac
    assert 0.05 < noise < 0.4, "the fitted noise level is far from the generating one"

    grid = np.linspace(-4.0, 4.0, 200)
    mean, std = posterior(result.x, x, y, grid)
    figure = new_figure()
    ax = figure.add_subplot()
    ax.fill_between(grid, mean - 2 * std, mean + 2 * std, alpha=0.25, label="mean ± 2 std")
    ax.plot(grid, mean, label="posterior mean")
    ax.plot(grid, np.sin(2.0 * grid) + 0.3 * grid, "k--", lw=1, label="true function")
    ax.plot(x, y, "o", ms=4, color="C3", label="observations")
    ax.set(xlabel="x", title=f"GP posterior, hyperparameters fitted by L-BFGS-B (n={n})")
    ax.legend(loc="upper left", fontsize="small")
    save(figure, args.figures, "gp_posterior.png")


if __name__ == "__main__":
    main()
