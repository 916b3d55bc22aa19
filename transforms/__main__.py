"""``python -m transforms``: derivatives of a logistic-regression loss, checked three ways.

The loss is written once with ``transforms.numpy``. Its gradient (``grad``) and Hessian
(``jacfwd(jacrev(...))`` and ``hessian``) are compared with central finite differences and
with the closed forms of logistic regression, then used for a few Newton steps. The exit
code is 0 only if every comparison is within tolerance and the loss decreases.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

import transforms as T
import transforms.numpy as tnp

F64 = npt.NDArray[np.float64]

N_SAMPLES, N_FEATURES, L2 = 200, 5, 1e-2
FD_TOL = 1e-6  # finite differences: truncation and rounding limit them to ~1e-8
EXACT_TOL = 1e-10  # closed forms: equal up to floating-point rounding


def make_data(seed: int = 0) -> tuple[F64, F64]:
    """Features ``X`` (n x d) and labels ``y`` in {-1, +1} drawn from a noisy linear model."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N_SAMPLES, N_FEATURES))
    w_true = rng.standard_normal(N_FEATURES)
    y = np.where(X @ w_true + 0.5 * rng.standard_normal(N_SAMPLES) > 0, 1.0, -1.0)
    return X, y


def make_loss(X: F64, y: F64) -> Callable[[T.Array], T.Array]:
    """``w -> mean(log(1 + exp(-y * X @ w))) + L2/2 * |w|^2``, differentiable in ``w``."""

    def loss(w: T.Array) -> T.Array:
        margins = y * tnp.matmul(X, w)
        return tnp.mean(tnp.log(1.0 + tnp.exp(-margins))) + 0.5 * L2 * tnp.sum(w * w)

    return loss


def sigmoid(z: F64) -> F64:
    return 1.0 / (1.0 + np.exp(-z))


def analytic_grad(X: F64, y: F64, w: F64) -> F64:
    return -X.T @ (y * sigmoid(-y * (X @ w))) / len(y) + L2 * w


def analytic_hessian(X: F64, y: F64, w: F64) -> F64:
    s = sigmoid(X @ w)
    return (X.T * (s * (1.0 - s))) @ X / len(y) + L2 * np.eye(len(w))


def fd_grad(f: Callable[[F64], float], w: F64, h: float = 1e-5) -> F64:
    """Central differences of ``f``: ``(f(w + h e_i) - f(w - h e_i)) / 2h``."""
    e = np.eye(len(w)) * h
    return np.array([(f(w + e[i]) - f(w - e[i])) / (2 * h) for i in range(len(w))])


def fd_hessian(f: Callable[[F64], float], w: F64, h: float = 1e-4) -> F64:
    """Central second differences of ``f`` (four evaluations per entry)."""
    e = np.eye(len(w)) * h
    d = len(w)
    return np.array(
        [
            [
                (f(w + e[i] + e[j]) - f(w + e[i] - e[j]) - f(w - e[i] + e[j]) + f(w - e[i] - e[j]))
                / (4 * h * h)
                for j in range(d)
            ]
            for i in range(d)
        ]
    )


def max_err(a: object, b: F64) -> float:
    return float(np.max(np.abs(np.asarray(a) - b)))


def main() -> int:
    X, y = make_data()
    loss = make_loss(X, y)

    def value(w: F64) -> float:
        return float(np.asarray(loss(w)))  # on a plain array: no tracing, a plain NumPy value

    w0 = 0.3 * np.random.default_rng(1).standard_normal(N_FEATURES)

    grad = T.grad(loss)
    hess_fwd_rev = T.jacfwd(T.jacrev(loss))
    hess = T.hessian(loss)
    g, H1, H2 = np.asarray(grad(w0)), np.asarray(hess_fwd_rev(w0)), np.asarray(hess(w0))
    fd_g, fd_H = fd_grad(value, w0), fd_hessian(value, w0)
    an_g, an_H = analytic_grad(X, y, w0), analytic_hessian(X, y, w0)

    print(
        f"transforms demo: logistic regression, {N_SAMPLES} samples x {N_FEATURES} features,"
        f" L2 = {L2:g}"
    )
    print(
        f"loss(w0) = {value(w0):.6f}    (tolerances: finite diff {FD_TOL:g},"
        f" closed form {EXACT_TOL:g})"
    )
    checks = [
        ("grad", "finite differences", max_err(g, fd_g), FD_TOL),
        ("grad", "closed form", max_err(g, an_g), EXACT_TOL),
        ("jacfwd(jacrev)", "finite differences", max_err(H1, fd_H), FD_TOL),
        ("jacfwd(jacrev)", "closed form", max_err(H1, an_H), EXACT_TOL),
        ("hessian", "finite differences", max_err(H2, fd_H), FD_TOL),
        ("hessian", "closed form", max_err(H2, an_H), EXACT_TOL),
    ]
    shapes_ok = g.shape == (N_FEATURES,) and H1.shape == H2.shape == (N_FEATURES, N_FEATURES)
    ok = shapes_ok
    print(f"\n{'derivative':<16}{'vs':<20}{'max abs error':>14}")
    for name, against, err, tol in checks:
        passed = err <= tol
        ok &= passed
        print(f"{name:<16}{against:<20}{err:>14.2e}  {'ok' if passed else 'FAIL'}")
    if not shapes_ok:
        print(f"FAIL: shapes grad {g.shape}, jacfwd(jacrev) {H1.shape}, hessian {H2.shape}")

    print("\nNewton's method, w <- w - H(w)^-1 grad(w):")
    w, losses = w0, [value(w0)]
    print(f"  step 0  loss {losses[0]:.12f}  |grad| {np.linalg.norm(g):.2e}")
    for step in range(1, 7):
        w = w - np.linalg.solve(np.asarray(hess(w)), np.asarray(grad(w)))
        losses.append(value(w))
        gnorm = np.linalg.norm(np.asarray(grad(w)))
        print(f"  step {step}  loss {losses[-1]:.12f}  |grad| {gnorm:.2e}")
    decreasing = all(b <= a for a, b in itertools.pairwise(losses))
    converged = bool(np.linalg.norm(analytic_grad(X, y, w)) < 1e-8)
    ok &= decreasing and converged
    if not (decreasing and converged):
        print(f"FAIL: loss decreasing {decreasing}, gradient below 1e-8 {converged}")

    print("\nall checks passed" if ok else "\nSOME CHECKS FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
