"""``python -m transforms``: the range of the library in one second, every result checked.

Each line computes a derivative with a transform — a gradient and a Hessian of a
logistic-regression loss (``hessian``, which is reverse over reverse, and forward over
reverse), a Hessian-vector product (reverse over forward), per-example gradients, a
custom JVP rule differentiated twice, a custom VJP, complex derivatives — and compares it
with its closed form, printing the largest error. Newton's method then uses the Hessian.
The exit code is 0 only if every comparison is within tolerance and Newton converges.
"""

from __future__ import annotations

import itertools
import sys
import time
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

import transforms as T
import transforms.numpy as tnp

F64 = npt.NDArray[np.float64]

N_SAMPLES, N_FEATURES, L2 = 200, 5, 1e-2
TOL = 1e-10  # closed forms: equal up to floating-point rounding


def make_data(seed: int = 0) -> tuple[F64, F64]:
    """Features ``X`` (n x d) and labels ``y`` in {-1, +1} drawn from a noisy linear model."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N_SAMPLES, N_FEATURES))
    w_true = rng.standard_normal(N_FEATURES)
    y = np.where(X @ w_true + 0.5 * rng.standard_normal(N_SAMPLES) > 0, 1.0, -1.0)
    return X, y


def example_loss(w: T.Array, x: T.Array, y: T.Array) -> T.Array:
    """The logistic loss of one example (or the mean over a batch), ``log(1 + exp(-y w.x))``."""
    return tnp.mean(tnp.logaddexp(0.0, -y * tnp.matmul(x, w)))


def make_loss(X: F64, y: F64) -> Callable[[T.Array], T.Array]:
    """``w -> mean(log(1 + exp(-y * X @ w))) + L2/2 * |w|^2``, differentiable in ``w``."""

    def loss(w: T.Array) -> T.Array:
        return example_loss(w, X, y) + 0.5 * L2 * tnp.sum(w * w)

    return loss


def sigmoid(z: F64) -> F64:
    return 1.0 / (1.0 + np.exp(-z))


def analytic_grad(X: F64, y: F64, w: F64) -> F64:
    return -X.T @ (y * sigmoid(-y * (X @ w))) / len(y) + L2 * w


def analytic_hessian(X: F64, y: F64, w: F64) -> F64:
    s = sigmoid(X @ w)
    return (X.T * (s * (1.0 - s))) @ X / len(y) + L2 * np.eye(len(w))


@T.custom_jvp
def softplus(x: T.Array) -> T.Array:
    return tnp.logaddexp(0.0, x)


@softplus.defjvp
def _softplus_jvp(
    primals: tuple[T.Array, ...], tangents: tuple[T.Array, ...]
) -> tuple[T.Array, T.Array]:
    (x,), (t,) = primals, tangents
    return softplus(x), t / (1 + tnp.exp(-x))  # sigmoid, written with tnp: it nests


@T.custom_vjp
def clip_gradient(x: T.Array) -> T.Array:
    return x


def _clip_fwd(x: T.Array) -> tuple[T.Array, None]:
    return x, None


def _clip_bwd(_: None, ct: T.Array) -> tuple[T.Array]:
    return (tnp.clip(ct, -1.0, 1.0),)


clip_gradient.defvjp(_clip_fwd, _clip_bwd)


def max_err(a: object, b: object) -> float:
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))))


def checks(X: F64, y: F64, w: F64) -> list[tuple[str, str, float]]:
    """``(what, how, max error against the closed form)`` for every demonstration."""
    loss = make_loss(X, y)
    g, H = analytic_grad(X, y, w), analytic_hessian(X, y, w)
    v = np.linspace(-1.0, 1.0, N_FEATURES)
    per_example = T.vmap(T.grad(example_loss), in_axes=(None, 0, 0))(w, X, y)
    per_example_exact = -(y * sigmoid(-y * (X @ w)))[:, None] * X
    points = np.array([-3.0, 0.0, 2.0])
    s = sigmoid(points)
    z = 1.0 + 2.0j
    return [
        ("gradient of a logistic loss", "grad", max_err(T.grad(loss)(w), g)),
        ("its Hessian", "hessian (rev over rev)", max_err(T.hessian(loss)(w), H)),
        (
            "the Hessian, forward over reverse",
            "jacfwd(jacrev)",
            max_err(T.jacfwd(T.jacrev(loss))(w), H),
        ),
        (
            "Hessian-vector product",
            "hvp (rev over fwd)",
            max_err(T.hvp(loss, (w,), (v,))[1][0], H @ v),
        ),
        (
            f"per-example gradients ({N_SAMPLES})",
            "vmap(grad)",
            max_err(per_example, per_example_exact),
        ),
        (
            "custom JVP rule: softplus'",
            "custom_jvp + vmap(grad)",
            max_err(T.vmap(T.grad(softplus))(points), s),
        ),
        (
            "custom JVP rule: softplus''",
            "grad of the rule",
            max_err(T.vmap(T.grad(T.grad(softplus)))(points), s * (1 - s)),
        ),
        (
            "custom VJP: clipped gradient of 5x",
            "custom_vjp",
            max_err(T.grad(lambda x: tnp.sum(5.0 * clip_gradient(x)))(points), np.ones(3)),
        ),
        (
            "d/dz sin(z) at 1+2i",
            "grad(holomorphic=True)",
            max_err(T.grad(tnp.sin, holomorphic=True)(z), np.cos(z)),
        ),
        (
            "gradient of |z|^2 at 1+2i",
            "grad: df/dx - i df/dy",
            max_err(T.grad(lambda z: tnp.abs(z) ** 2)(z), 2 * np.conj(z)),
        ),
    ]


def main() -> int:
    start = time.perf_counter()
    X, y = make_data()
    w0 = 0.3 * np.random.default_rng(1).standard_normal(N_FEATURES)
    print(f"transforms demo: each derivative against its closed form (tolerance {TOL:g})\n")
    print(f"{'what':<38}{'how':<26}{'max error':>10}")
    ok = True
    for what, how, err in checks(X, y, w0):
        passed = err <= TOL
        ok &= passed
        print(f"{what:<38}{how:<26}{err:>10.1e}  {'ok' if passed else 'FAIL'}")

    loss = make_loss(X, y)
    try:  # and against finite differences, in both modes, up to third order
        T.check_grads(loss, (w0,), order=3)
        print(f"{'finite differences, orders 1-3':<38}{'check_grads':<26}{'':>10}  ok")
    except AssertionError as err:
        ok = False
        print(f"check_grads FAILED: {err}")

    grad, hess = T.grad(loss), T.hessian(loss)
    w, losses = w0, [float(loss(w0))]
    for _ in range(6):
        w = w - np.linalg.solve(np.asarray(hess(w)), np.asarray(grad(w)))
        losses.append(float(loss(w)))
    decreasing = all(b <= a for a, b in itertools.pairwise(losses))
    gnorm = float(np.linalg.norm(analytic_grad(X, y, w)))
    converged = decreasing and gnorm < 1e-10
    ok &= converged
    print(
        f"\nNewton's method with the Hessian: loss {losses[0]:.6f} -> {losses[-1]:.12f}"
        f" in 6 steps, |grad| {gnorm:.1e}  {'ok' if converged else 'FAIL'}"
    )
    elapsed = time.perf_counter() - start
    print(f"\n{'all checks passed' if ok else 'SOME CHECKS FAILED'} ({elapsed:.2f} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
