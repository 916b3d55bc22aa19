"""The workloads of issue 7: what is timed, its NumPy floor, and the reference it must match.

Each workload's mathematics is written once against a NumPy-like namespace ``xp`` and run by
every backend (``backends.py``); the floor is plain NumPy with no derivative (or the closed
form of the derivative). Building an implementation (:meth:`Workload.build`) returns a
:class:`Case`: the zero-argument callable the worker times and the value it must reproduce,
checked before any timing so that a broken benchmark stops instead of printing nonsense.

- W1 chain: ``x = sin(x)*1.01 + 0.1`` 300 times on x of shape (10,), grad of the sum: 900
  tiny primitives, so the time per primitive is the interpreter's overhead.
- W2 MLP: tanh MLP 784 -> 256 -> 256 -> 10 on a batch of 128, mean softmax cross-entropy
  (stable logsumexp from max, exp, sum, log), grad w.r.t. all six parameters.
- W3 Hessian of ``sum(tanh(A@x)**2) + 0.5*sum(x**2)``, n = 10, 100, 300.
- W4 Jacobian of ``tanh(B@x)``, B 200 x 200, forward and reverse mode.
- W5 k-th derivative of ``sin(x)*exp(-x**2/4)`` at a scalar by nesting grad k times, k = 1..6.
- W6 Hessian-vector product of the W3 function at n = 1000.
- W7 sparse Jacobians and Hessians (issue 14): a 1-D stencil residual at n = 10^4, a 2-D
  5-point Laplacian residual on 100 x 100, the Hessian of a chained (Rosenbrock) objective at
  n = 10^4; floor: the derivative assembled by hand with ``scipy.sparse``; rows: the sparse
  transform's first call (detection and coloring included), its later calls, dense ``jacfwd``
  / ``hessian`` (transforms' only).
- W8 the k-th derivative of W5's function by Taylor mode (``jet``), k = 1..10, against
  nested ``grad`` (W5's way) and JAX's ``jet`` (eager).
"""

from __future__ import annotations

import gc
import itertools
import math
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from numpy.polynomial import Polynomial

import transforms as T
import transforms.numpy as tnp
from benchmarks.backends import load

F64 = npt.NDArray[np.float64]

CHAIN_STEPS = 300
CHAIN_SIZE = 10
MLP_SIZES = (784, 256, 256, 10)
MLP_BATCH = 128
HESSIAN_SIZES = (10, 100, 300)
JACOBIAN_SIZE = 200
NESTING_ORDERS = range(1, 7)
NESTING_POINT = 0.7
TAYLOR_ORDERS = range(1, 11)
HVP_SIZE = 1000
MEMORY_SIZE = 2000
MEMORY_CHUNK = 100
SPARSE_N = 10_000
SPARSE_GRID = 100
DENSE_CHUNK = 1000  # dense Jacobians of 10^4 x 10^4 pushed 1000 basis vectors at a time


@dataclass(frozen=True)
class Case:
    """A timed callable and what it must return (None: a floor, which computes no derivative)."""

    fn: Callable[[], object]
    expected: Any = None


@dataclass(frozen=True)
class Workload:
    """A workload: its cases, the NumPy floor, extra reference rows and the derivative.

    ``floor(case)`` and ``references[impl][1](case)`` are plain NumPy; ``derivative(backend,
    case)`` returns None when that library has no way to compute the case (autograd has no
    forward-mode Jacobian).
    """

    name: str
    title: str
    cases: tuple[str, ...]
    floor_label: str
    floor: Callable[[str], Case | None]  # None: the first case's floor serves
    derivative: Callable[[Any, str], Case | None]
    references: dict[str, tuple[str, Callable[[str], Case | None]]] = field(default_factory=dict)
    primitives: int | None = None  # primitives per call, for the time per primitive
    note: Callable[[], str] | None = None  # an untimed extra measurement, run once

    def build(self, impl: str, case: str) -> Case | None:
        """``impl`` is "numpy" (the floor), a reference's name, or a backend's name."""
        if impl == "numpy":
            return self.floor(case)
        if impl in self.references:
            return self.references[impl][1](case)
        return self.derivative(load(impl), case)


# ---- W1: a chain of 900 tiny primitives ------------------------------------------------------
def chain(xp: Any, x: Any) -> Any:
    for _ in range(CHAIN_STEPS):
        x = xp.sin(x) * 1.01 + 0.1
    return x


def _chain_input() -> F64:
    return np.linspace(-1.0, 1.0, CHAIN_SIZE)


def _chain_grad_exact(x: F64) -> F64:
    """d sum(chain(x)) / dx = prod_k 1.01 cos(x_k) along the chain (elementwise)."""
    g = np.ones_like(x)
    for _ in range(CHAIN_STEPS):
        g = g * 1.01 * np.cos(x)
        x = np.sin(x) * 1.01 + 0.1
    return g


def _w1_floor(case: str) -> Case:
    x = _chain_input()
    return Case(lambda: chain(np, x))


def _w1_untraced(case: str) -> Case:
    x = _chain_input()
    return Case(lambda: chain(tnp, x), chain(np, x))


def _w1(b: Any, case: str) -> Case:
    x = _chain_input()
    g, xb = b.grad(lambda x: b.xp.sum(chain(b.xp, x))), b.asarray(x)
    return Case(lambda: g(xb), _chain_grad_exact(x))


# ---- W2: tanh MLP, softmax cross-entropy -----------------------------------------------------
def mlp_loss(xp: Any, p: dict[str, Any], X: Any, Y: Any) -> Any:
    h = xp.tanh(xp.matmul(X, p["W1"]) + p["b1"])
    h = xp.tanh(xp.matmul(h, p["W2"]) + p["b2"])
    z = xp.matmul(h, p["W3"]) + p["b3"]
    m = xp.max(z, axis=1, keepdims=True)
    lse = xp.log(xp.sum(xp.exp(z - m), axis=1, keepdims=True)) + m
    return xp.sum(lse - xp.sum(Y * z, axis=1, keepdims=True)) / MLP_BATCH


def _mlp_data() -> tuple[dict[str, F64], F64, F64]:
    rng = np.random.default_rng(2)
    params = {}
    for i, (fan_in, fan_out) in enumerate(itertools.pairwise(MLP_SIZES), 1):
        params[f"W{i}"] = rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)
        params[f"b{i}"] = 0.1 * rng.standard_normal(fan_out)
    X = rng.standard_normal((MLP_BATCH, MLP_SIZES[0]))
    Y = np.eye(MLP_SIZES[-1])[rng.integers(0, MLP_SIZES[-1], MLP_BATCH)]  # one-hot labels
    return params, X, Y


def mlp_backprop(p: dict[str, F64], X: F64, Y: F64) -> dict[str, F64]:
    """The gradient by hand: what a tape could at best do, one forward and one backward."""
    h1 = np.tanh(X @ p["W1"] + p["b1"])
    h2 = np.tanh(h1 @ p["W2"] + p["b2"])
    z = h2 @ p["W3"] + p["b3"]
    e = np.exp(z - z.max(axis=1, keepdims=True))
    dz = (e / e.sum(axis=1, keepdims=True) - Y) / MLP_BATCH
    dh2 = (dz @ p["W3"].T) * (1 - h2**2)
    dh1 = (dh2 @ p["W2"].T) * (1 - h1**2)
    return {
        "W1": X.T @ dh1, "b1": dh1.sum(axis=0),
        "W2": h1.T @ dh2, "b2": dh2.sum(axis=0),
        "W3": h2.T @ dz, "b3": dz.sum(axis=0),
    }  # fmt: skip


def _w2_floor(case: str) -> Case:
    params, X, Y = _mlp_data()
    return Case(lambda: mlp_loss(np, params, X, Y))


def _w2_backprop(case: str) -> Case:
    params, X, Y = _mlp_data()
    return Case(lambda: mlp_backprop(params, X, Y), mlp_backprop(params, X, Y))


def _w2(b: Any, case: str) -> Case:
    params, X, Y = _mlp_data()
    pb = {k: b.asarray(v) for k, v in params.items()}
    Xb, Yb = b.asarray(X), b.asarray(Y)
    g = b.grad(lambda p: mlp_loss(b.xp, p, Xb, Yb))
    return Case(lambda: g(pb), mlp_backprop(params, X, Y))


# ---- W3 Hessian, W6 Hessian-vector product of sum(tanh(A@x)**2) + 0.5*sum(x**2) ---------------
def _quadratic_tanh(b: Any, A: Any) -> Callable[[Any], Any]:
    xp = b.xp
    return lambda x: xp.sum(xp.tanh(xp.matmul(A, x)) ** 2) + 0.5 * xp.sum(x**2)


def _size(case: str) -> int:
    return int(case.removeprefix("n="))


def _hessian_data(n: int) -> tuple[F64, F64]:
    rng = np.random.default_rng(n)
    return rng.standard_normal((n, n)) / np.sqrt(n), rng.standard_normal(n)


def _hessian_exact(A: F64, x: F64) -> F64:
    t = np.tanh(A @ x)
    H: F64 = A.T @ np.diag(2 * (1 - t**2) * (1 - 3 * t**2)) @ A + np.eye(len(x))
    return H


def _w3_floor(case: str) -> Case:
    A, x = _hessian_data(_size(case))
    return Case(lambda: _hessian_exact(A, x))


def _w3(b: Any, case: str) -> Case:
    A, x = _hessian_data(_size(case))
    h, xb = b.hessian(_quadratic_tanh(b, b.asarray(A))), b.asarray(x)
    return Case(lambda: h(xb), _hessian_exact(A, x))


def _hvp_data() -> tuple[F64, F64, F64]:
    rng = np.random.default_rng(11)
    A = rng.standard_normal((HVP_SIZE, HVP_SIZE)) / np.sqrt(HVP_SIZE)
    return A, rng.standard_normal(HVP_SIZE), rng.standard_normal(HVP_SIZE)


def _hvp_exact(A: F64, x: F64, v: F64) -> F64:
    t = np.tanh(A @ x)
    Hv: F64 = A.T @ (2 * (1 - t**2) * (1 - 3 * t**2) * (A @ v)) + v
    return Hv


def _w6_floor(case: str) -> Case:
    A, x, v = _hvp_data()
    return Case(lambda: _hvp_exact(A, x, v))


def _w6(b: Any, case: str) -> Case:
    A, x, v = _hvp_data()
    hvp, xb, vb = b.hvp(_quadratic_tanh(b, b.asarray(A))), b.asarray(x), b.asarray(v)
    return Case(lambda: hvp(xb, vb), _hvp_exact(A, x, v))


def _w6_copied(case: str) -> Case:
    """transforms with a second reference to the constant: ``hvp`` cannot prove it alone, so
    reverse mode copies it (8 MB) on every call instead of borrowing it (docs/sharp-bits.md):
    what borrowing saves."""
    A, x, v = _hvp_data()
    b = load("transforms")
    second = [A]  # kept alive by the timed closure below
    hvp = b.hvp(_quadratic_tanh(b, A))
    return Case(lambda: second and hvp(x, v), _hvp_exact(A, x, v))


# ---- W4: Jacobian of tanh(B@x) ---------------------------------------------------------------
def _jacobian_data() -> tuple[F64, F64]:
    rng = np.random.default_rng(7)
    n = JACOBIAN_SIZE
    return rng.standard_normal((n, n)) / np.sqrt(n), rng.standard_normal(n)


def _jacobian_exact(B: F64, x: F64) -> F64:
    """The floor as the vmap issue defines it: ``diag(1 - t**2) @ B``, ``t = tanh(B @ x)``."""
    J: F64 = np.diag(1 - np.tanh(B @ x) ** 2) @ B
    return J


def _w4_floor(case: str) -> Case:
    B, x = _jacobian_data()
    return Case(lambda: _jacobian_exact(B, x))


def _w4(b: Any, case: str) -> Case | None:
    transform = b.jacfwd if case == "jacfwd" else b.jacrev
    if transform is None:
        return None
    B, x = _jacobian_data()
    Bb = b.asarray(B)
    jac, xb = transform(lambda x: b.xp.tanh(b.xp.matmul(Bb, x))), b.asarray(x)
    return Case(lambda: jac(xb), _jacobian_exact(B, x))


def jacrev_peak_memory() -> str:
    """Peak traced memory of transforms' jacrev(tanh(B@x)), B 2000 x 2000, whole vs chunked."""
    rng = np.random.default_rng(3)
    n = MEMORY_SIZE
    B = rng.standard_normal((n, n)) / np.sqrt(n)
    x = rng.standard_normal(n)
    peaks = {}
    for label, chunk in (("whole basis", None), (f"chunk_size={MEMORY_CHUNK}", MEMORY_CHUNK)):
        jac = T.jacrev(lambda x: tnp.tanh(tnp.matmul(B, x)), chunk_size=chunk)
        gc.collect()
        tracemalloc.start()
        jac(x)
        peaks[label] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    parts = ", ".join(f"{k}: {v / 2**20:.0f} MiB" for k, v in peaks.items())
    return (
        f"transforms jacrev peak memory, tanh(B@x), B {n} x {n} "
        f"(the Jacobian itself is {n * n * 8 / 2**20:.0f} MiB): {parts}"
    )


# ---- W5: nested grad of a scalar function ----------------------------------------------------
def bump(xp: Any, x: Any) -> Any:
    return xp.sin(x) * xp.exp(-(x**2) / 4)


def bump_derivative(k: int, x: float) -> float:
    """The exact k-th derivative by Leibniz's rule: sin^(m) and (P_n e^(-x^2/4)) closed forms."""
    polys = [Polynomial([1.0])]  # (e^(-x^2/4))^(n) = P_n(x) e^(-x^2/4)
    for _ in range(k):
        polys.append(polys[-1].deriv() - Polynomial([0.0, 0.5]) * polys[-1])
    total = sum(
        math.comb(k, m) * math.sin(x + m * math.pi / 2) * polys[k - m](x) for m in range(k + 1)
    )
    return float(total * math.exp(-(x**2) / 4))


def _order(case: str) -> int:
    return int(case.removeprefix("k="))


def _w5_floor(case: str) -> Case | None:
    """One NumPy evaluation of f, the same floor for every order: timed once, with k=1."""
    if case != "k=1":
        return None
    x = np.array(NESTING_POINT)
    return Case(lambda: bump(np, x))


def _w5(b: Any, case: str) -> Case:
    k = _order(case)
    f: Callable[[Any], Any] = lambda x: bump(b.xp, x)
    for _ in range(k):
        f = b.grad(f)
    x = b.asarray(np.array(NESTING_POINT))
    return Case(lambda: f(x), np.array(bump_derivative(k, NESTING_POINT)))


# ---- jit rows (issue 32): transforms' jit and JAX's jit of the same derivative -------------
def _jit_of(peer: str) -> Callable[[Any], Any]:
    if peer == "jax":
        import jax

        def blocking(f: Callable[..., Any]) -> Callable[..., Any]:
            compiled = jax.jit(f)  # asynchronous: a call returns before its result exists
            return lambda *args: jax.block_until_ready(compiled(*args))

        return blocking
    return T.jit


def _jitted_backend(peer: str) -> Any:
    """The peer's backend whose grad and hessian are jitted (the outermost transform only)."""
    import dataclasses

    b, jit = load(peer), _jit_of(peer)
    return dataclasses.replace(
        b, grad=lambda f, **kw: jit(b.grad(f, **kw)), hessian=lambda f, **kw: jit(b.hessian(f))
    )


def _jit_rows(derivative: Callable[[Any, str], Case | None]) -> dict[str, Any]:
    return {
        "jit": ("transforms jit", lambda case: derivative(_jitted_backend("transforms"), case)),
        "jax-jit": ("JAX jit", lambda case: derivative(_jitted_backend("jax"), case)),
    }


def _w5_jitted(peer: str) -> Callable[[str], Case]:
    def build(case: str) -> Case:
        b, k = load(peer), _order(case)
        f: Callable[[Any], Any] = lambda x: bump(b.xp, x)
        for _ in range(k):
            f = b.grad(f)
        jitted, x = _jit_of(peer)(f), b.asarray(np.array(NESTING_POINT))
        return Case(lambda: jitted(x), np.array(bump_derivative(k, NESTING_POINT)))

    return build


# ---- W8: Taylor mode ----------------------------------------------------------------------------
def _w8(b: Any, case: str) -> Case | None:
    """All k derivatives in one ``jet`` pass (the k-th is returned), where the library has one."""
    if b.jet is None:
        return None
    k = _order(case)
    jet = b.jet
    f: Callable[[Any], Any] = lambda x: bump(b.xp, x)
    x = b.asarray(np.array(NESTING_POINT))
    series = [b.asarray(np.array(1.0))] + [b.asarray(np.array(0.0))] * (k - 1)
    return Case(
        lambda: jet(f, (x,), (series,))[1][k - 1], np.array(bump_derivative(k, NESTING_POINT))
    )


def _w8_nested(case: str) -> Case:
    """transforms' nested grad, W5's way, at every order of W8."""
    return _w5(load("transforms"), case)


# ---- W7: sparse Jacobians and Hessians ---------------------------------------------------------
def stencil_residual(u: Any) -> Any:
    """``-u'' + u^3 - 1`` by central differences, zero boundary values."""
    padded = tnp.concatenate([tnp.zeros(1), u, tnp.zeros(1)])
    return 2 * u - padded[:-2] - padded[2:] + u**3 - 1.0


def laplacian_residual(u: Any) -> Any:
    """The 5-point Laplacian of ``u`` on a 100 x 100 grid (zero boundary) plus ``exp(u)``."""
    grid = tnp.reshape(u, (SPARSE_GRID, SPARSE_GRID))
    p = tnp.pad(grid, 1)
    lap = p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * grid
    return tnp.ravel(lap + tnp.exp(grid))


def chained_objective(x: Any) -> Any:
    """The chained Rosenbrock function: a tridiagonal Hessian."""
    return tnp.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def _stencil_floor(u: F64) -> Any:
    import scipy.sparse

    off = -np.ones(len(u) - 1)
    return scipy.sparse.diags_array([off, 2 + 3 * u**2, off], offsets=[-1, 0, 1], format="csr")


def _laplacian_floor(u: F64) -> Any:
    import scipy.sparse

    n = SPARSE_GRID
    second = scipy.sparse.diags_array(
        [np.ones(n - 1), -2 * np.ones(n), np.ones(n - 1)], offsets=[-1, 0, 1]
    )
    eye = scipy.sparse.eye_array(n)
    lap = scipy.sparse.kron(second, eye) + scipy.sparse.kron(eye, second)
    return (lap + scipy.sparse.diags_array(np.exp(u))).tocsr()


def _chained_floor(x: F64) -> Any:
    import scipy.sparse

    diagonal = np.zeros_like(x)
    diagonal[:-1] += 1200 * x[:-1] ** 2 - 400 * x[1:] + 2
    diagonal[1:] += 200
    off = -400 * x[:-1]
    return scipy.sparse.diags_array([off, diagonal, off], offsets=[-1, 0, 1], format="csr")


SPARSE_CASES: dict[str, tuple[Callable[[Any], Any], Callable[[F64], Any], bool]] = {
    f"stencil n={SPARSE_N}": (stencil_residual, _stencil_floor, False),
    f"laplacian {SPARSE_GRID}x{SPARSE_GRID}": (laplacian_residual, _laplacian_floor, False),
    f"chained hessian n={SPARSE_N}": (chained_objective, _chained_floor, True),
}


def sparse_entries(a: Any) -> dict[str, F64]:
    """A sparse matrix as its canonical non-zero entries, comparable by ``check``."""
    coo = a.tocsr().tocoo()
    coo.eliminate_zeros()
    coo.sum_duplicates()
    order = np.lexsort((coo.col, coo.row))
    return {
        "rows": coo.row[order].astype(np.float64),
        "cols": coo.col[order].astype(np.float64),
        "data": coo.data[order].astype(np.float64),
    }


def _sparse_point() -> F64:
    return np.random.default_rng(14).uniform(0.5, 1.5, SPARSE_N)


def _w7_floor(case: str) -> Case:
    _, floor, _ = SPARSE_CASES[case]
    x = _sparse_point()
    return Case(lambda: floor(x))


def _w7_expected(case: str) -> dict[str, F64]:
    return sparse_entries(SPARSE_CASES[case][1](_sparse_point()))


def _w7_first(case: str) -> Case:
    f, _, hessian = SPARSE_CASES[case]
    make = T.sparse_hessian if hessian else T.sparse_jacobian
    x = _sparse_point()
    return Case(lambda: make(f)(x), _w7_expected(case))  # a new function: detects, colors


def _w7_dense(case: str) -> Case:
    import scipy.sparse

    f, _, hessian = SPARSE_CASES[case]
    dense = (T.hessian if hessian else T.jacfwd)(f, chunk_size=DENSE_CHUNK)
    x = _sparse_point()
    return Case(lambda: scipy.sparse.csr_array(dense(x)), _w7_expected(case))


def _w7(b: Any, case: str) -> Case | None:
    if b.name != "transforms":
        return None  # no peer computes sparse Jacobians
    f, _, hessian = SPARSE_CASES[case]
    fn = (T.sparse_hessian if hessian else T.sparse_jacobian)(f)
    x = _sparse_point()
    return Case(lambda: fn(x), _w7_expected(case))  # after the warm-up: reuse


WORKLOADS = {
    w.name: w
    for w in (
        Workload(
            "W1",
            f"grad of sum(chain(x)), chain = {CHAIN_STEPS} x (x = sin(x)*1.01 + 0.1), x of "
            f"shape ({CHAIN_SIZE},): {3 * CHAIN_STEPS} primitives",
            ("",),
            "NumPy forward chain",
            _w1_floor,
            _w1,
            {"tnp": ("transforms.numpy forward, untraced", _w1_untraced), **_jit_rows(_w1)},
            primitives=3 * CHAIN_STEPS,
        ),
        Workload(
            "W2",
            "grad of a tanh MLP's mean softmax cross-entropy w.r.t. its six parameters, "
            f"batch {MLP_BATCH}, {' -> '.join(map(str, MLP_SIZES))}",
            ("",),
            "NumPy forward pass",
            _w2_floor,
            _w2,
            {
                "backprop": ("NumPy hand-written backprop (tape floor)", _w2_backprop),
                **_jit_rows(_w2),
            },
        ),
        Workload(
            "W3",
            "hessian of sum(tanh(A@x)**2) + 0.5*sum(x**2), A n x n; floor: the closed form",
            tuple(f"n={n}" for n in HESSIAN_SIZES),
            "NumPy closed form",
            _w3_floor,
            _w3,
            _jit_rows(_w3),
        ),
        Workload(
            "W4",
            f"Jacobian of tanh(B@x), B {JACOBIAN_SIZE} x {JACOBIAN_SIZE}; floor: the closed form",
            ("jacfwd", "jacrev"),
            "NumPy closed form",
            _w4_floor,
            _w4,
            note=jacrev_peak_memory,
        ),
        Workload(
            "W5",
            "k-th derivative of sin(x)*exp(-x**2/4) at a scalar x by nesting grad k times; "
            "floor: NumPy evaluating f once",
            tuple(f"k={k}" for k in NESTING_ORDERS),
            "NumPy f(x)",
            _w5_floor,
            _w5,
            {
                "jit": ("transforms jit", _w5_jitted("transforms")),
                "jax-jit": ("JAX jit", _w5_jitted("jax")),
            },
        ),
        Workload(
            "W6",
            f"Hessian-vector product of the W3 function, n = {HVP_SIZE}; floor: the closed form",
            ("",),
            "NumPy closed form",
            _w6_floor,
            _w6,
            {"copied": ("transforms, A held twice (copied, not borrowed)", _w6_copied)},
        ),
        Workload(
            "W7",
            "sparse Jacobians and Hessians (coloring, compressed products); floor: assembled by "
            "hand with scipy.sparse",
            tuple(SPARSE_CASES),
            "hand-assembled scipy.sparse",
            _w7_floor,
            _w7,
            {
                "first": ("transforms sparse, first call (detection + coloring)", _w7_first),
                "dense": (f"transforms dense jacfwd/hessian (chunk_size={DENSE_CHUNK})", _w7_dense),
            },
        ),
        Workload(
            "W8",
            "k-th derivative of sin(x)*exp(-x**2/4) at a scalar x by Taylor mode (jet: all k "
            "orders in one pass); floor: NumPy evaluating f once",
            tuple(f"k={k}" for k in TAYLOR_ORDERS),
            "NumPy f(x)",
            _w5_floor,
            _w8,
            {"nested": ("transforms nested grad (W5's way)", _w8_nested)},
        ),
    )
}
