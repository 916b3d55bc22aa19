"""A researcher's module, as a user writes it: checked by ``mypy --strict`` and pyright strict.

Registered dataclass parameters, a TypedDict aux, ``argnums`` tuples, ``has_aux``, Jacobians
and Hessians of several arguments, pytree primals to ``jvp``/``vjp``/``hvp``, ``linearize``,
custom rules as decorators, ``tree_map``, linalg and fft, results handed to NumPy and SciPy.
It must type-check with no error and no cast; each ``assert_type`` states what a user sees,
and ``tests/test_typing.py`` runs the module and checks every one against the value.
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Hashable, Iterable
from typing import Any, TypedDict, assert_type

import numpy as np
import numpy.typing as npt
import scipy.optimize

import transforms as T
import transforms.numpy as tnp
from transforms import Array


@dataclasses.dataclass(frozen=True)
class Params:
    w: Array
    b: Array


def _flatten(p: Params) -> tuple[Iterable[Array], Hashable]:
    return (p.w, p.b), None


def _unflatten(_: Hashable, children: list[Any]) -> Params:
    return Params(*children)


T.tree_util.register_pytree_node(Params, _flatten, _unflatten)


class Stats(TypedDict):
    residual: Array
    max_error: Array


def predict(params: Params, X: Array) -> Array:
    return tnp.tanh(X @ params.w + params.b)


def loss(params: Params, X: Array, y: Array) -> Array:
    err = predict(params, X) - y
    return tnp.mean(err * err)


def loss_with_stats(params: Params, X: Array, y: Array) -> tuple[Array, Stats]:
    err = predict(params, X) - y
    return tnp.mean(err * err), {"residual": err, "max_error": tnp.max(tnp.abs(err))}


rng = np.random.default_rng(0)
X = rng.standard_normal((8, 3))
y = rng.standard_normal(8)
params = Params(w=0.1 * rng.standard_normal(3), b=np.array(0.1))
direction = Params(w=np.ones(3), b=np.array(1.0))

# ---- gradients: the differentiated argument's own type, argnums tuples, has_aux ----------
assert_type(T.grad(loss)(params, X, y), Params)
assert_type(T.grad(loss, argnums=2)(params, X, y), Array)
g_params, g_X = T.grad(loss, argnums=(0, 1))(params, X, y)
assert_type(g_params, Params)
assert_type(g_X, Array)
(g_params2, g_y), stats = T.grad(loss_with_stats, argnums=(0, 2), has_aux=True)(params, X, y)
assert_type(g_params2, Params)
assert_type(g_y, Array)
assert_type(stats, Stats)
assert_type(stats["max_error"], Array)
value, g_value = T.value_and_grad(loss)(params, X, y)
assert_type(value, Array)
assert_type(g_value, Params)
(value2, stats2), (g_w, g_X2) = T.value_and_grad(loss_with_stats, argnums=(0, 1), has_aux=True)(
    params, X, y
)
assert_type(stats2, Stats)
assert_type(g_X2, Array)


def grads_by(argnums: tuple[int, ...]) -> object:
    grads = T.grad(loss, argnums=argnums)(params, X, y)
    assert_type(grads, Any)  # argnums not a literal: the honest fallback, never a wrong type
    return grads


grads_by((0, 1))


@T.grad(has_aux=True)
def grad_with_stats(params: Params, X: Array, y: Array) -> tuple[Array, Stats]:
    return loss_with_stats(params, X, y)


@T.grad(argnums=1)
def saliency(params: Params, X: Array, y: Array) -> Array:
    return loss(params, X, y)


@T.grad(argnums=(1, 2))
def data_gradients(params: Params, X: Array, y: Array) -> Array:
    return loss(params, X, y)


assert_type(grad_with_stats(params, X, y), tuple[Params, Stats])
assert_type(saliency(params, X, y), Array)
assert_type(data_gradients(params, X, y), tuple[Array, Array])


# ---- tree utilities: an SGD step keeps the parameters' type ----------------------------
def sgd(params: Params, grads: Params, lr: float) -> Params:
    return T.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)


assert_type(sgd(params, g_params, 0.1), Params)
assert_type(T.tree_util.tree_map(lambda p: 0.9 * p, params), Params)
leaves, treedef = T.tree_util.tree_flatten(params)
assert_type(T.tree_util.tree_unflatten(treedef, leaves), Params)
assert_type(T.tree_util.tree_structure(params), T.tree_util.PyTreeDef[Params])
norm2 = sum(float(tnp.sum(leaf * leaf)) for leaf in T.tree_util.tree_leaves(g_params))

# ---- Jacobians and Hessians of several arguments ---------------------------------------
J_params, J_X = T.jacrev(predict, argnums=(0, 1))(params, X)
assert_type(J_params, Params)
assert_type(J_X, Array)
assert_type(T.jacfwd(predict, argnums=1)(params, X), Array)
assert_type(T.jacfwd(predict)(params, X), Params)
(H_XX, H_Xy), (H_yX, H_yy) = T.hessian(loss, argnums=(1, 2))(params, X, y)
assert_type(H_Xy, Array)
assert_type(T.hessian(loss, argnums=2)(params, X, y), Array)

# ---- pytree primals to jvp, vjp, hvp and linearize -------------------------------------
out, out_dot = T.jvp(loss, (params, X, y), (direction, np.zeros_like(X), np.zeros_like(y)))
assert_type(out, Array)
assert_type(out_dot, Array)
out3, out_dot3, stats3 = T.jvp(
    loss_with_stats, (params, X, y), (direction, np.ones_like(X), np.ones_like(y)), has_aux=True
)
assert_type(stats3, Stats)
out4, pullback = T.vjp(loss, params, X, y)
ct_params, ct_X, ct_y = pullback(np.ones(()))
assert_type(ct_params, Params)
assert_type(ct_X, npt.NDArray[np.float64])  # each cotangent has its primal's type
out5, pullback5, stats5 = T.vjp(loss_with_stats, params, X, y, has_aux=True)
assert_type(pullback5(np.ones(()))[0], Params)
assert_type(stats5, Stats)


def loss_at_params(p: Params) -> Array:
    return loss(p, X, y)


hv_value, (Hv,) = T.hvp(loss_at_params, (params,), (direction,))
assert_type(hv_value, Array)
assert_type(Hv, Params)
y_lin, predict_jvp = T.linearize(predict, params, X)
assert_type(y_lin, Array)
assert_type(predict_jvp(direction, np.zeros_like(X)), Array)
y_sin, sin_pullback = T.vjp(tnp.sin, X)  # a NumPy function: an ArrayLike parameter
assert_type(sin_pullback(np.ones_like(X))[0], npt.NDArray[np.float64])


def predict_at(w: Array) -> Array:
    return predict(Params(w, params.b), X)


def predict_and_stats(w: Array) -> tuple[Array, Stats]:
    return loss_with_stats(Params(w, params.b), X, y)


y_jet, (dy, d2y) = T.jet(predict_at, (params.w,), ([direction.w, np.zeros(3)],))
assert_type(y_jet, Array)  # Taylor mode: an array output and its derivatives, a list
assert_type(dy, Array)
assert_type(T.jet(predict_and_stats, (params.w,), ([direction.w],))[0], tuple[Array, Stats])


# ---- custom rules, as decorators -------------------------------------------------------
@T.custom_jvp
def softplus(x: Array) -> Array:
    return tnp.log1p(tnp.exp(x))


@softplus.defjvp
def softplus_jvp(primals: tuple[Array, ...], tangents: tuple[Array, ...]) -> tuple[Array, Array]:
    (x,), (t,) = primals, tangents
    return softplus(x), t / (1 + tnp.exp(-x))


@T.custom_vjp
def clip_gradient(x: Array) -> Array:
    return x


def clip_fwd(x: Array) -> tuple[Array, None]:
    return x, None


def clip_bwd(_: None, ct: Array) -> tuple[Array]:
    return (tnp.clip(ct, -1.0, 1.0),)


clip_gradient.defvjp(clip_fwd, clip_bwd)
assert_type(softplus(X), Array)
assert_type(softplus_jvp((X,), (X,)), tuple[Array, Array])  # the rule keeps its arrays


def _scaled_tanh(scale: float, x: Array) -> Array:
    return scale * tnp.tanh(x)


scaled_tanh = T.custom_jvp(_scaled_tanh, nondiff_argnums=(0,))


@scaled_tanh.defjvp  # a static argument first: the rule takes it first too
def scaled_tanh_jvp(
    scale: float, primals: tuple[Array, ...], tangents: tuple[Array, ...]
) -> tuple[Array, Array]:
    (x,), (t,) = primals, tangents
    return scaled_tanh(scale, x), scale * t * (1 - tnp.tanh(x) ** 2)


assert_type(scaled_tanh_jvp(2.0, (y,), (y,)), tuple[Array, Array])


def scaled_total(x: Array) -> Array:
    return tnp.sum(scaled_tanh(2.0, x))


assert_type(T.grad(scaled_total)(y), Array)


@T.custom_vjp  # residuals of fwd's type reach bwd: a bwd of other residuals is an error
def normalize(v: Array) -> Array:
    return v / tnp.linalg.norm(v)


def normalize_fwd(v: Array) -> tuple[Array, tuple[Array, Array]]:
    n = tnp.linalg.norm(v)
    return v / n, (v / n, n)


def normalize_bwd(res: tuple[Array, Array], ct: Array) -> tuple[Array]:
    u, n = res
    return ((ct - u * tnp.sum(u * ct)) / n,)


normalize.defvjp(normalize_fwd, normalize_bwd)


def first_direction(v: Array) -> Array:
    return normalize(v)[0]


assert_type(T.grad(first_direction)(y), Array)


def smooth_total(x: Array) -> Array:
    return tnp.sum(softplus(clip_gradient(x)))


assert_type(T.grad(smooth_total)(y), Array)
g_lambda = T.grad(lambda x: tnp.sum(softplus(x)))(y)  # a lambda: Array (pyright), Any (mypy)
g_w_lambda, g_X_lambda = T.grad(lambda w, X_: loss(Params(w, params.b), X_, y), argnums=(0, 1))(
    params.w, X
)
assert_type(T.grad(smooth_total)(0.5), Array)  # a differentiated Array may be a number
assert_type(T.grad(T.grad(tnp.sin))(0.5), Array)  # nests; tnp.sin takes an ArrayLike
assert_type(T.jacfwd(tnp.sin)(y), Array)
assert_type(T.stop_gradient(params), Params)
assert_type(T.stop_gradient(X), npt.NDArray[np.float64])

# ---- a primitive's bind is typed by the primitive: an array, or a tuple of them -----------
square_p = T.Primitive("my_square", np.square)
assert_type(square_p.bind(X), Array)


def _halves(a: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.float64], ...]:
    return a / 2, a / 2


halves_p = T.Primitive("my_halves", _halves, multiple_results=True)
assert_type(halves_p.bind(X), tuple[Array, ...])

# ---- linalg, fft, reductions: arrays, and NamedTuple results with their field names -----
gram = X.T @ X
U, S, Vh = tnp.linalg.svd(X, full_matrices=False)
assert_type(tnp.linalg.svd(X, full_matrices=False).S, Array)
assert_type(tnp.linalg.svd(X, compute_uv=False), Array)
assert_type(tnp.linalg.qr(X).Q, Array)
assert_type(tnp.linalg.qr(X, mode="r"), Array)
assert_type(tnp.linalg.slogdet(gram).logabsdet, Array)
assert_type(tnp.linalg.norm(X), Array)
assert_type(tnp.linalg.eigh(gram).eigenvalues, Array)
Q, R = tnp.linalg.qr(X)  # every factor an Array, unpacked or by name, as NumPy names them
assert_type(Q, Array)
assert_type(R, Array)
assert_type(tnp.linalg.qr(X, mode="complete").R, Array)
assert_type(tnp.linalg.qr(X, mode="raw"), tuple[Array, Array])
assert_type(U, Array)
assert_type(Vh, Array)
w_eig, v_eig = tnp.linalg.eigh(gram)
assert_type(v_eig, Array)
assert_type(tnp.linalg.eig(gram).eigenvectors, Array)
assert_type(tnp.linalg.slogdet(gram).sign, Array)
x_ls, residuals_ls, rank_ls, s_ls = tnp.linalg.lstsq(X, y)
assert_type(x_ls, Array)
assert_type(residuals_ls, Array)
assert_type(rank_ls, Array)
assert_type(tnp.linalg.lstsq(X, y).s, Array)
assert_type(tnp.fft.rfft(y), Array)
assert_type(tnp.logsumexp(y), Array)
assert_type(tnp.logsumexp(y, return_sign=True), tuple[Array, Array])
assert_type(tnp.max(y), Array)


def log_volume(a: Array) -> Array:
    return tnp.linalg.slogdet(a).logabsdet


assert_type(T.grad(log_volume)(gram), Array)
assert_type(T.hessian(log_volume)(gram), Array)
assert_type(T.laplacian(log_volume)(gram), Array)
assert_type(T.hessian_diag(log_volume)(gram), Array)
assert_type(T.hessian_trace(log_volume, method="hutchinson", key=0, num_samples=3)(gram), Array)
assert_type(T.derivative(tnp.tanh, order=3)(0.5), Array)
assert_type(T.jacrev(log_volume, memory_budget=10**6)(gram), Array)
T.check_grads(loss, (params, X, y), order=2, modes="rev")

# ---- results go on to NumPy and SciPy without casts ------------------------------------
np.savez(io.BytesIO(), g_X=g_X, g_w=g_params.w, H=H_XX)
np.testing.assert_allclose(T.grad(loss)(params, X, y).w, g_params.w)
history: list[npt.NDArray[np.float64]] = [np.asarray(g_X)]  # concrete: np.asarray, no copy


def objective(w: npt.NDArray[np.float64]) -> float:
    return float(loss(Params(w, params.b), X, y))


def objective_grad(w: npt.NDArray[np.float64]) -> Array:
    return T.grad(loss)(Params(w, params.b), X, y).w


result = scipy.optimize.minimize(objective, params.w, jac=objective_grad, method="BFGS")
