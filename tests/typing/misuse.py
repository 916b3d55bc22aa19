"""Lines that must stay type errors, for mypy and pyright alike.

Each ``# type: ignore[code]`` marks one expected error: mypy (``--warn-unused-ignores``)
fails if the line stops being an error with that code, pyright (``reportUnnecessaryTypeIgnore
Comment``) fails if it stops being an error at all. Every line here fails at run time too.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import numpy.typing as npt

import transforms as T
import transforms.numpy as tnp
from transforms import Array


@dataclasses.dataclass(frozen=True)
class Params:
    w: Array
    b: Array


def loss(params: Params, X: Array, y: Array) -> Array:
    return tnp.mean((tnp.tanh(X @ params.w + params.b) - y) ** 2)


def loss_to_str(x: Array) -> str:
    return "not a number"


def loss_to_dict(x: Array) -> dict[str, Array]:
    return {"x": x}


def concrete_only(a: npt.NDArray[np.float64]) -> None: ...


def tnp_tanh(x: Array) -> Array:
    return tnp.tanh(x)


def tangent_only_jvp(t: Array) -> tuple[Array, Array]:
    return t, t


def autograd_style_jvp(t: Array, ans: Array, x: Array) -> Array:
    return t * (1 - ans**2)


def tanh_fwd(x: Array) -> tuple[Array, tuple[Array, Array]]:
    ans = tnp.tanh(x)
    return ans, (x, ans)


def bwd_of_other_residuals(ans: Array, ct: Array) -> tuple[Array]:
    return (ct * (1 - ans**2),)


params = Params(np.zeros(3), np.array(0.0))
X, y = np.ones((4, 3)), np.ones(4)
g = T.grad(loss)(params, X, y)
out, pullback = T.vjp(loss, params, X, y)
y_lin, f_jvp = T.linearize(loss, params, X, y)


def check_grads_modes() -> None:
    T.check_grads(loss, (params, X, y), modes="reverse")  # type: ignore[arg-type]


# wrong arguments to a transformed function
T.grad(loss)(params, X, "y")  # type: ignore[arg-type]
T.grad(loss)(params, X)  # type: ignore[call-arg]
T.vmap(loss)(params, X, y, y)  # type: ignore[call-arg]
T.jacfwd(loss, argnums=(0, 1))(params, X, y, 3)  # type: ignore[call-arg]
# ArrayLike is not a string
tnp.sin("x")  # type: ignore[arg-type]
tnp.sum(b"bytes")  # type: ignore[arg-type]
# a gradient needs a scalar array output
T.grad(loss_to_str)  # type: ignore[arg-type]
T.grad(loss_to_dict)  # type: ignore[arg-type]
# the gradient has the argument's type: a Params is not a dict, an Array has no .w
g["w"]  # type: ignore[index]
T.grad(loss, argnums=1)(params, X, y).w  # type: ignore[union-attr]
T.hessian(loss, argnums=(1, 2))(params, X, y)[0][1].w  # type: ignore[union-attr]
T.value_and_grad(loss)(params, X, y)[1].v  # type: ignore[attr-defined]
# typos in the NumPy namespace
tnp.sinn(X)  # type: ignore[attr-defined]
tnp.linalg.inverse(X)  # type: ignore[attr-defined]
tnp.fft.fftt(y)  # type: ignore[attr-defined]
# a primitive's result is an array, not Any
T.Primitive("my_square", np.square).bind(X).shap  # type: ignore[union-attr]
# NamedTuple results have their own fields
tnp.linalg.qr(X).U  # type: ignore[attr-defined]
tnp.linalg.svd(X, compute_uv=False).S  # type: ignore[union-attr]
# jvp, vjp, hvp, linearize: fun tied to its primals, tangents and cotangents typed
T.vjp(loss, params)  # type: ignore[arg-type]
T.vjp(tnp.sin, "x")  # type: ignore[arg-type]
pullback("x")  # type: ignore[arg-type]
pullback(np.ones(()))[0].v  # type: ignore[attr-defined]
T.jvp(loss, (params, X, y), (X, X, y))  # type: ignore[arg-type]
T.jvp(loss, (params, X), (params, X))  # type: ignore[arg-type]
T.jvp(tnp.sin, ("x",), ("x",))  # type: ignore[arg-type]
T.hvp(loss, (params, X, y), (params, X))  # type: ignore[arg-type]
f_jvp(params, X)  # type: ignore[call-arg]
f_jvp(X, X, y)  # type: ignore[arg-type]
# custom rules keep the function's signature; tree_map keeps the tree's type
T.custom_jvp(loss)(params, X)  # type: ignore[call-arg]
# a JVP rule takes (primals, tangents); a bwd takes the residuals its fwd returns
T.custom_jvp(tnp_tanh).defjvp(tangent_only_jvp)  # type: ignore[type-var, arg-type]
T.custom_jvp(tnp_tanh).defjvp(autograd_style_jvp)  # type: ignore[type-var, arg-type]
T.custom_vjp(tnp_tanh).defvjp(tanh_fwd, bwd_of_other_residuals)  # type: ignore[misc]
T.tree_util.tree_map(lambda p: p * 2, params).v  # type: ignore[attr-defined]
# a value that may be traced is not a concrete ndarray: np.asarray(g) says so, and checks
concrete_only(T.grad(loss, argnums=1)(params, X, y))  # type: ignore[arg-type]
_: Any = None
