"""``transforms.scipy.integrate``: ``odeint``, differentiable in ``y0``, ``t`` and the extra
arguments of the dynamics, in every mode and nesting, and batched by ``vmap``.

The value is ``scipy.integrate.odeint``'s (LSODA at SciPy's tolerances), the dynamics
``func(y, t, *args)`` called with plain arrays inside the solver. The derivatives solve ODEs
too, with the same solver and tolerances — never by differentiating the solver's steps:

- forward mode (JVP): the forward sensitivity equations ``s' = f_y s + f_args dargs``,
  ``s(t0) = dy0 - f(y0, t0) dt0``, integrated with ``y``; the tangent at ``t_i`` is
  ``s(t_i) + f(y_i, t_i) dt_i``;
- reverse mode (VJP): the adjoint method, as JAX's ``odeint``: the augmented system
  ``y' = f``, ``a' = -a f_y``, ``c' = -a f_args`` integrated backwards from each ``t_i`` to
  ``t_{i-1}`` (restarting ``y`` from the forward solution at ``t_i``), the output's cotangent
  added to ``a`` at each time; ``a(t0)`` is the cotangent of ``y0``, ``c(t0)`` that of the
  argument, ``-a(t0) . f(y0, t0)`` and ``g_i . f(y_i, t_i)`` those of the times.

The Jacobian-vector products of ``func`` in these equations are ``transforms.jvp``/``vjp``
of it at plain arrays (so ``func`` must be written with ``transforms.numpy``, as anything
differentiated). Each augmented system is again an ``odeint`` call, so the rules nest
(``hessian``, ``jacfwd(jacrev)``); both modes are exact to the solver's tolerance (they
agree with finite differences of the solution to about ``rtol``). Each argument
differentiated in reverse mode takes its own backward solve. ``vmap`` solves each example
separately (each with its own steps), so a batched call equals the loop of calls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import scipy.integrate as _si

import transforms as T
import transforms.numpy as tnp
from transforms.core import ArrayLibraryError
from transforms.core.arrays import is_foreign, library_of
from transforms.core.tree_util import tree_flatten, tree_structure, tree_unflatten
from transforms.extend import (
    Primitive,
    cast_to,
    defbatch,
    defjvp_joint,
    defvjp_argnum,
    dtype_of,
    ndim_of,
    shape_of,
    to_front,
)
from transforms.sparsity import defsparsity, dense_rule
from transforms.taylor import deftaylor, ode_rule
from transforms.typing import Array, ArrayLike

__all__ = ["odeint"]

Dynamics = Callable[..., Any]


def _numpy_only(*values: Any) -> None:
    """SciPy's LSODA steps on NumPy arrays in this process: an array of another library (Dask)
    would be computed whole by ``np.asarray``, so it is refused."""
    for value in values:
        if is_foreign(value):
            raise ArrayLibraryError("scipy.integrate.odeint (SciPy's LSODA)", library_of(value))


def _odeint_impl(
    y0: Any, t: Any, *args: Any, func: Dynamics, rtol: float, atol: float, mxstep: int, hmax: float
) -> Any:
    _numpy_only(y0, t, *args)
    y0 = np.asarray(y0)
    shape = y0.shape

    def rhs(y: Any, time: Any) -> Any:
        return np.asarray(func(y.reshape(shape), time, *args), dtype=np.float64).ravel()

    out = _si.odeint(
        rhs,
        y0.astype(np.float64).ravel(),
        np.asarray(t, np.float64),
        rtol=rtol,
        atol=atol,
        mxstep=mxstep,
        hmax=hmax,
    )
    # integrated in float64 (scipy's LSODA), returned in y0's floating dtype as its
    # derivatives are (JAX's odeint keeps y0's dtype)
    dtype = y0.dtype if y0.dtype.kind == "f" else np.dtype(np.float64)
    return out.reshape((np.shape(t)[0], *shape)).astype(dtype, copy=False)


odeint_p = Primitive("odeint", _odeint_impl)


def _solve(z0: Any, t: Any, args: Sequence[Any], func: Dynamics, params: dict[str, Any]) -> Any:
    return odeint_p.bind(z0, t, *args, func=func, **params)


def _flat(*parts: Any) -> Any:
    return tnp.concatenate([tnp.ravel(tnp.asarray(p, dtype=np.float64)) for p in parts])


def _dynamics_at(func: Dynamics, ys: Any, t: Any, args: Sequence[Any]) -> Any:
    """``f(y_i, t_i)`` at every output time (differentiable in all three)."""
    return tnp.stack([func(ys[i], t[i], *args) for i in range(shape_of(t)[0])])


def _in(func: Dynamics, time: Any, args: Sequence[Any], positions: Sequence[int]) -> Any:
    """``(y, *args[positions]) -> func(y, time, *args)``: the dynamics as a function of the
    state and of the arguments being differentiated (the others held fixed)."""

    def g(y: Any, *selected: Any) -> Any:
        full = list(args)
        for i, value in zip(positions, selected, strict=True):
            full[i] = value
        return func(y, time, *full)

    return g


def _dot(a: Any, b: Any) -> Any:
    return tnp.sum(a * b)


# ---- forward mode: the sensitivity equations ------------------------------------------------
def _odeint_jvp(
    tangents: Sequence[Any], ans: Any, y0: Any, t: Any, *args: Any, func: Dynamics, **params: Any
) -> Any:
    dy0, dt, *dargs = tangents
    shape, n = shape_of(ans)[1:], int(np.prod(shape_of(ans)[1:], dtype=int))
    moving = [i for i, d in enumerate(dargs) if d is not None]
    k = len(args)

    def sensitivity(z: Any, time: Any, *rest: Any) -> Any:
        y, s = z[:n].reshape(shape), z[n:].reshape(shape)
        g = _in(func, time, rest[:k], moving)
        value, tangent = T.jvp(g, (y, *(rest[i] for i in moving)), (s, *rest[k:]))
        return np.concatenate([np.ravel(value), np.ravel(tangent)])

    s0 = tnp.zeros(shape) if dy0 is None else dy0
    if dt is not None:
        s0 = s0 - func(y0, t[0], *args) * dt[0]
    zs = _solve(_flat(y0, s0), t, (*args, *(dargs[i] for i in moving)), sensitivity, params)
    out = tnp.reshape(zs[:, n:], shape_of(ans))
    if dt is not None:
        out = out + _dynamics_at(func, ans, t, args) * tnp.reshape(dt, (-1,) + (1,) * len(shape))
    return cast_to(out, dtype_of(ans))


defjvp_joint(odeint_p, _odeint_jvp)


# ---- reverse mode: the adjoint method --------------------------------------------------------
def _backward(
    ans: Any, t: Any, args: Sequence[Any], ct: Any, func: Dynamics, params: dict[str, Any], wrt: int
) -> tuple[Any, Any]:
    """The adjoint ``a(t0)`` before ``ct[0]`` is added, and (for ``wrt`` >= 0) the cotangent
    ``c`` of ``args[wrt]``, by the augmented system integrated from each ``t_i`` back to
    ``t_{i-1}``."""
    shape = shape_of(ans)[1:]
    n = int(np.prod(shape, dtype=int))
    arg_shape = shape_of(args[wrt]) if wrt >= 0 else ()
    m = int(np.prod(arg_shape, dtype=int)) if wrt >= 0 else 0

    def adjoint(z: Any, time: Any, *primals: Any) -> Any:
        y, a = z[:n].reshape(shape), z[n : 2 * n].reshape(shape)
        selected = [wrt] if wrt >= 0 else []
        g = _in(func, time, primals, selected)
        value, pullback = T.vjp(g, y, *(primals[i] for i in selected))
        return np.concatenate([np.ravel(value), *(-np.ravel(c) for c in pullback(a))])

    a: Any = tnp.zeros(shape)
    c: Any = tnp.zeros(arg_shape)
    for i in range(shape_of(t)[0] - 1, 0, -1):
        a = a + ct[i]
        z0 = _flat(ans[i], a, c) if wrt >= 0 else _flat(ans[i], a)
        z = _solve(z0, tnp.stack([t[i], t[i - 1]]), args, adjoint, params)[1]
        a = tnp.reshape(z[n : 2 * n], shape)
        if wrt >= 0:
            c = tnp.reshape(z[2 * n : 2 * n + m], arg_shape)
    return a, c


def _odeint_vjp(
    argnum: int, ans: Any, y0: Any, t: Any, *args: Any, func: Dynamics, **params: Any
) -> Callable[[Any], Any]:
    operand = (y0, t, *args)[argnum]

    def pullback(ct: Any) -> Any:
        if argnum == 0:
            return _backward(ans, t, args, ct, func, params, -1)[0] + ct[0]
        if argnum == 1:
            a0 = _backward(ans, t, args, ct, func, params, -1)[0]
            first = -_dot(a0, func(y0, t[0], *args))
            rest = [_dot(ct[i], func(ans[i], t[i], *args)) for i in range(1, shape_of(t)[0])]
            return tnp.stack([first, *rest])
        return _backward(ans, t, args, ct, func, params, argnum - 2)[1]

    dtype = dtype_of(operand)  # the adjoint integrates in float64, as the values do
    return lambda ct: cast_to(pullback(ct), dtype)


defvjp_argnum(odeint_p, _odeint_vjp)


# ---- vmap: example by example ------------------------------------------------------------------
def _odeint_batch(values: Sequence[Any], dims: Sequence[int | None], **params: Any) -> Any:
    fronts = [to_front(v, d) for v, d in zip(values, dims, strict=True)]
    size = next(shape_of(v)[0] for v, d in zip(fronts, dims, strict=True) if d is not None)
    outs = [
        odeint_p.bind(
            *(v[b] if d is not None else v for v, d in zip(fronts, dims, strict=True)), **params
        )
        for b in range(size)
    ]
    return tnp.stack(outs), 0


defbatch(odeint_p, _odeint_batch)


def odeint(
    func: Dynamics,
    y0: ArrayLike,
    t: ArrayLike,
    *fargs: Any,
    args: tuple[Any, ...] = (),
    rtol: float = 1.49012e-8,
    atol: float = 1.49012e-8,
    mxstep: int = 0,
    hmax: float = 0.0,
) -> Array:
    """Differentiable ``scipy.integrate.odeint``: the solution of ``dy/dt = func(y, t, *args)``,
    ``y(t[0]) = y0``, at the times ``t`` (monotonic), shape ``(len(t), *y0.shape)``.

    The extra arguments of ``func`` come positionally, as JAX's ``odeint(func, y0, t, *args)``,
    or as SciPy's (and autograd's) ``args=(...)``; ``y0`` is an array of any shape (SciPy's
    must be 1-d), real. ``rtol``, ``atol``, ``mxstep`` (0: LSODA's default, 500) and ``hmax``
    (0: unbounded) are SciPy's, with SciPy's defaults, and apply to the derivatives' ODEs too.
    Differentiable in ``y0``, ``t`` and every array of ``args``, which may be pytrees (a dict
    of a network's parameters): ``func`` receives them as given. ``func`` is written with
    ``transforms.numpy`` and is called with plain arrays (see the module notes)."""
    if fargs and args:
        raise TypeError(
            "transforms.scipy.integrate.odeint: give func's extra arguments either "
            "positionally (odeint(func, y0, t, *args)) or as args=(...), not both"
        )
    leaves, treedef = tree_flatten(tuple(fargs or args))
    if treedef != tree_structure(tuple(leaves)):  # pytrees among the arguments: flat operands
        dynamics = func

        def func(y: Any, time: Any, *flat: Any) -> Any:
            return dynamics(y, time, *tree_unflatten(treedef, flat))

    extra = tuple(leaves)
    y0 = tnp.asarray(y0) if isinstance(y0, (list, tuple)) else y0
    t = tnp.asarray(t) if isinstance(t, (list, tuple)) else t
    if ndim_of(t) != 1 or shape_of(t)[0] == 0:
        raise ValueError(
            f"transforms.scipy.integrate.odeint: t must be a non-empty 1-d array of times "
            f"(got shape {shape_of(t)})"
        )
    for name, x in (("y0", y0), ("t", t), *((f"args[{i}]", a) for i, a in enumerate(extra))):
        if np.issubdtype(dtype_of(x), np.complexfloating):
            raise TypeError(
                f"transforms.scipy.integrate.odeint: {name} is complex; scipy.integrate.odeint "
                "integrates real systems (split a complex state into real and imaginary parts)"
            )
    return odeint_p.bind(y0, t, *extra, func=func, rtol=rtol, atol=atol, mxstep=mxstep, hmax=hmax)


# Sparsity patterns: dense (every output entry may depend on every input entry); Taylor
# rules derived from the JVP rules (exact; see docs/taylor.md).
for _primitive in (odeint_p,):
    defsparsity(_primitive, dense_rule)
    deftaylor(_primitive, ode_rule(_primitive))
