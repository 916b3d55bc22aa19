"""Second-order optimisation: trust-region Newton with ``hessian``, Newton-CG with ``hvp``.

The chained Rosenbrock function is minimised from (-1.2, ..., -1.2) twice: in 6
dimensions by a trust-region method whose subproblem uses the exact Hessian
(``T.hessian``, reverse over reverse), and in many dimensions by a truncated Newton method
(Steihaug's conjugate gradients) that only ever asks for Hessian-vector products
(``T.hvp``), never the Hessian. Both must reach the minimiser (1, ..., 1); the Hessian is
checked against finite differences of the gradient, and scipy's ``trust-exact`` given the
same derivatives must agree.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.optimize
from _cli import parse_args

import transforms as T
import transforms.numpy as tnp


def rosenbrock(x: T.Array) -> T.Array:
    return tnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


grad = T.grad(rosenbrock)
hessian = T.hessian(rosenbrock)


def hvp(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    return np.asarray(T.hvp(rosenbrock, (x,), (v,))[1][0])


def subproblem(g: np.ndarray, H: np.ndarray, radius: float) -> np.ndarray:
    """The step minimising g.p + p.H.p/2 with |p| <= radius: the Newton step when H is
    positive definite and the step fits, else (H + lam I) p = -g with |p| = radius."""
    eigenvalues, vectors = np.linalg.eigh(H)
    gq = vectors.T @ g

    def step(lam: float) -> np.ndarray:
        p: np.ndarray = -vectors @ (gq / (eigenvalues + lam))
        return p

    if eigenvalues[0] > 0 and np.linalg.norm(step(0.0)) <= radius:
        return step(0.0)
    lo = max(0.0, -eigenvalues[0]) + 1e-12  # |step(lam)| decreases in lam above this
    hi = lo + np.linalg.norm(g) / radius + 1.0
    for _ in range(100):  # bisection on |step(lam)| = radius
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if np.linalg.norm(step(mid)) > radius else (lo, mid)
    return step(hi)


Step = Callable[[np.ndarray, np.ndarray, float], tuple[np.ndarray, float]]  # (step, decrease)


def trust_region(x: np.ndarray, steps: int, make_step: Step) -> np.ndarray:
    """The basic trust-region loop: accept a step if the model predicted the decrease."""
    radius = 1.0
    for _ in range(steps):
        g = np.asarray(grad(x))
        if np.linalg.norm(g) < 1e-10:
            break
        p, predicted = make_step(x, g, radius)
        actual = float(rosenbrock(x)) - float(rosenbrock(x + p))
        ratio = actual / predicted if predicted > 0 else 0.0
        if ratio < 0.25:
            radius *= 0.25
        elif ratio > 0.75 and np.isclose(np.linalg.norm(p), radius):
            radius *= 2.0
        if ratio > 0.1:
            x = x + p
    return x


def exact_step(x: np.ndarray, g: np.ndarray, radius: float) -> tuple[np.ndarray, float]:
    H = np.asarray(hessian(x))
    p = subproblem(g, H, radius)
    return p, -(g @ p + 0.5 * p @ H @ p)


def steihaug_step(x: np.ndarray, g: np.ndarray, radius: float) -> tuple[np.ndarray, float]:
    """Conjugate gradients on H p = -g, stopped at the trust-region boundary or at negative
    curvature: each iteration costs one Hessian-vector product."""
    p, r = np.zeros_like(g), g.copy()
    d = -r
    for _ in range(len(g)):
        Hd = hvp(x, d)
        curvature = d @ Hd
        if curvature <= 0 or np.linalg.norm(p + (r @ r) / curvature * d) >= radius:
            # go to the boundary along d: |p + tau d| = radius
            a, b, c = d @ d, 2 * p @ d, p @ p - radius**2
            p = p + (-b + np.sqrt(b * b - 4 * a * c)) / (2 * a) * d
            break
        alpha = (r @ r) / curvature
        p, r_new = p + alpha * d, r + alpha * Hd
        if np.linalg.norm(r_new) < 1e-10 * np.linalg.norm(g):
            break
        d, r = -r_new + (r_new @ r_new) / (r @ r) * d, r_new
    return p, -(g @ p + 0.5 * p @ hvp(x, p))


def main() -> None:
    args = parse_args(__doc__)
    rng = np.random.default_rng(0)

    # The Hessian is the derivative of the gradient: compare with its central differences.
    x = rng.uniform(-1.0, 1.0, 5)
    H, h = np.asarray(hessian(x)), 1e-6
    fd = np.stack(
        [(np.asarray(grad(x + h * e)) - np.asarray(grad(x - h * e))) / (2 * h) for e in np.eye(5)]
    )
    assert np.allclose(H, fd, rtol=1e-6, atol=1e-4), np.max(np.abs(H - fd))
    v = rng.standard_normal(5)
    assert np.allclose(hvp(x, v), H @ v, rtol=1e-12), "hvp disagrees with hessian @ v"

    n = 6
    x0 = np.full(n, -1.2)
    x_exact = trust_region(x0, 200, exact_step)
    print(f"trust region, exact Hessian (n={n}): |x - 1| = {np.linalg.norm(x_exact - 1):.1e}")
    assert np.allclose(x_exact, 1.0, atol=1e-8), x_exact

    def value(x: np.ndarray) -> float:  # SciPy takes floats and plain arrays
        return float(rosenbrock(x))

    def gradient(x: np.ndarray) -> np.ndarray:
        return np.asarray(grad(x))

    def hess(x: np.ndarray) -> np.ndarray:
        return np.asarray(hessian(x))

    scipy_result = scipy.optimize.minimize(
        value, x0, jac=gradient, hess=hess, method="trust-exact", options={"gtol": 1e-10}
    )
    print(f"scipy trust-exact, same derivatives: {scipy_result.nit} iterations")
    assert scipy_result.success and np.allclose(scipy_result.x, x_exact, atol=1e-8)

    n = 50 if args.quick else 200
    x_cg = trust_region(np.full(n, -1.2), 2000, steihaug_step)
    gnorm = np.linalg.norm(np.asarray(grad(x_cg)))
    print(
        f"Newton-CG with hvp only (n={n}): |x - 1| = {np.linalg.norm(x_cg - 1):.1e},"
        f" |grad| = {gnorm:.1e}"
    )
    assert np.allclose(x_cg, 1.0, atol=1e-6), np.max(np.abs(x_cg - 1))
    print("converged to the minimiser")


if __name__ == "__main__":
    main()
