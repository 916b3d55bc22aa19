"""User-style code checked by ``mypy --strict`` in CI: the transforms keep the user's types.

Each ``assert_type`` line states what a user sees; each ``# type: ignore[...]`` line must be
an error (``warn_unused_ignores`` fails CI if it stops being one).
"""

from __future__ import annotations

from typing import assert_type

import numpy as np
import numpy.typing as npt
import scipy.sparse

import transforms as T
import transforms.numpy as tnp
from transforms import Array


def loss(w: Array, x: Array) -> Array:
    return tnp.sum(tnp.tanh(x @ w) ** 2)


def loss_aux(w: Array, x: Array) -> tuple[Array, dict[str, Array]]:
    y = tnp.tanh(x @ w)
    return tnp.sum(y**2), {"y": y}


w: npt.NDArray[np.float64] = np.ones(3)
x: npt.NDArray[np.float64] = np.ones((4, 3))

# grad keeps the parameters and returns the differentiated argument's type
assert_type(T.grad(loss)(w, x), Array)
assert_type(T.grad(loss_aux, has_aux=True)(w, x), tuple[Array, dict[str, Array]])
assert_type(T.grad(loss, argnums=1)(w, x), Array)
assert_type(T.grad(loss, argnums=(0, 1))(w, x), tuple[Array, Array])
assert_type(T.value_and_grad(loss)(w, x), tuple[Array, Array])
assert_type(
    T.value_and_grad(loss_aux, has_aux=True)(w, x),
    tuple[tuple[Array, dict[str, Array]], Array],
)


# decorator factories: no functools.partial needed
@T.grad(argnums=1)
def loss_x(w: Array, x: Array) -> Array:
    return tnp.sum(x @ w)


assert_type(loss_x(w, x), Array)

# Jacobians, Hessians, vmap keep the parameters
assert_type(T.jacfwd(loss)(w, x), Array)
assert_type(T.jacrev(loss)(w, x), Array)
assert_type(T.hessian(loss)(w, x), Array)
assert_type(T.vmap(loss, in_axes=(None, 0))(w, x), Array)
assert_type(T.jacrev(loss_aux, has_aux=True)(w, x), tuple[Array, dict[str, Array]])

# jvp / vjp
out, t_out = T.jvp(tnp.sin, (w,), (w,))
assert_type(out, Array)
y, pullback = T.vjp(loss, w, x)
assert_type(y, Array)
assert_type(pullback(np.ones(())), tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]])


# custom rules keep the function's signature
@T.custom_jvp
def softplus(x: Array) -> Array:
    return tnp.log(1 + tnp.exp(x))


assert_type(softplus(w), Array)

# wrong arguments are type errors
T.grad(loss)(w, "not an array")  # type: ignore[arg-type]
T.grad(loss)(w)  # type: ignore[call-arg]
T.vmap(loss)(w, x, x)  # type: ignore[call-arg]
softplus("x")  # type: ignore[arg-type]


# pytree arguments: the gradient has the argument's type
def mlp_loss(params: dict[str, Array], x: Array) -> Array:
    return tnp.sum(tnp.tanh(x @ params["w"] + params["b"]))


params: dict[str, Array] = {"w": np.ones(3), "b": np.zeros(())}
assert_type(T.grad(mlp_loss)(params, x), dict[str, Array])

# sparse Jacobians and Hessians keep the parameters: SciPy's csr_array, or a SparseMatrix
# (traced non-zeros) under an outer transform
assert_type(T.jacobian_sparsity(loss)(w, x), scipy.sparse.csr_array)
assert_type(T.hessian_sparsity(loss)(w, x), scipy.sparse.csr_array)
assert_type(T.sparse_jacobian(loss)(w, x), scipy.sparse.csr_array | T.SparseMatrix)
assert_type(T.sparse_hessian(loss, argnums=1)(w, x), scipy.sparse.csr_array | T.SparseMatrix)
T.sparse_jacobian(loss)(w, x, 3)  # type: ignore[call-arg]

# jit keeps the signature (ParamSpec) and the result type of the function it compiles
assert_type(T.jit(loss)(w, x), Array)
assert_type(T.jit(T.grad(loss))(w, x), Array)
assert_type(T.jit(loss_aux, static_argnums=1)(w, x), tuple[Array, dict[str, Array]])
assert_type(T.jit(T.hessian(loss)).lower(w, x).as_text(), str)
T.jit(loss)(w, x, 3)  # type: ignore[call-arg]
