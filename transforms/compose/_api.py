"""The user-facing derivative transforms, with JAX's names and signatures.

``jvp`` and ``vjp`` are the two primitives of this layer; ``grad`` and ``value_and_grad``
are ``vjp`` seeded with 1 on a scalar output.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Concatenate, Literal, ParamSpec, TypeAlias, TypeVar, TypeVarTuple, overload

import numpy as np

from transforms.core import Array, Tracer
from transforms.numpy._arithmetic import unit_seed
from transforms.numpy._define import dtype_of, shape_of
from transforms.reverse import Loan

from ._args import (
    ArrayFunction1,
    ArrayFunction2,
    ArrayFunction3,
    Leaf,
    check_callable,
    check_input_dtypes,
    check_output_dtype,
    normalize_argnums,
    partial_of,
    show_typed_signature,
)
from ._core_transforms import borrowable_constants, jvp_flat, vjp_flat

__all__ = [
    "Pullback",
    "grad",
    "hvp",
    "jvp",
    "value_and_grad",
    "vjp",
]

P = ParamSpec("P")
Ts = TypeVarTuple("Ts")
A0 = TypeVar("A0")
A1 = TypeVar("A1")
A2 = TypeVar("A2")
Aux = TypeVar("Aux")
Out = TypeVar("Out")

#: What ``vjp`` returns beside the output: output cotangent -> one cotangent per primal,
#: each of its primal's type (``Pullback[Array, Params, Array]``).
Pullback: TypeAlias = Callable[[Out], tuple[*Ts]]


@overload
def jvp(
    fun: Callable[[*Ts], Out],
    primals: tuple[*Ts],
    tangents: tuple[*Ts],
    has_aux: Literal[False] = False,
) -> tuple[Out, Out]: ...
@overload
def jvp(
    fun: Callable[[*Ts], tuple[Out, Aux]],
    primals: tuple[*Ts],
    tangents: tuple[*Ts],
    has_aux: Literal[True],
) -> tuple[Out, Out, Aux]: ...
@overload
def jvp(
    fun: Callable[..., Out],
    primals: list[Any],
    tangents: list[Any],
    has_aux: Literal[False] = False,
) -> tuple[Out, Out]: ...
@overload
def jvp(
    fun: Callable[..., tuple[Out, Aux]],
    primals: list[Any],
    tangents: list[Any],
    has_aux: Literal[True],
) -> tuple[Out, Out, Aux]: ...
@show_typed_signature
def jvp(
    fun: Callable[..., Any],
    primals: Sequence[Any],
    tangents: Sequence[Any],
    has_aux: bool = False,
) -> tuple[Any, ...]:
    """Forward mode: ``fun``'s value at ``primals`` and its derivative along ``tangents``.

    Args:
        fun: function of ``len(primals)`` positional array (pytree) arguments.
        primals: a tuple (typed argument by argument against ``fun``) or a list of them.
        tangents: same structure, shapes and dtypes as ``primals``.
        has_aux: ``fun`` returns ``(out, aux)``; ``aux`` is passed through undifferentiated.

    Returns:
        ``(out, tangent_out)``, or ``(out, tangent_out, aux)`` with ``has_aux``.

    Example:
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> T.jvp(tnp.sin, (0.0,), (1.0,))  # (sin 0, cos 0 * 1)
        (array(0.), array(1.))
    """
    check_callable(fun, "jvp")
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(
            "jvp: primals and tangents must be tuples or lists of arguments, got "
            f"{type(primals).__name__} and {type(tangents).__name__}; e.g. jvp(f, (x,), (t,))"
        )
    if len(primals) != len(tangents):
        raise TypeError(
            f"jvp: got {len(primals)} primal(s) but {len(tangents)} tangent(s); pass one "
            "tangent per primal"
        )
    out, tangent_out, aux = jvp_flat(fun, primals, tangents, has_aux)
    return (out, tangent_out, aux) if has_aux else (out, tangent_out)


@overload
def vjp(
    fun: Callable[[*Ts], Out], *primals: *Ts, has_aux: Literal[False] = False
) -> tuple[Out, Pullback[Out, *Ts]]: ...
@overload
def vjp(
    fun: Callable[[*Ts], tuple[Out, Aux]], *primals: *Ts, has_aux: Literal[True]
) -> tuple[Out, Pullback[Out, *Ts], Aux]: ...
@show_typed_signature
def vjp(fun: Callable[[*Ts], Any], *primals: *Ts, has_aux: bool = False) -> tuple[Any, ...]:
    """Reverse mode: ``fun``'s value at ``primals`` and its pullback.

    The pullback maps a cotangent of the output to the tuple of cotangents of ``primals``
    (each of its primal's structure, shapes and dtypes). It can be called many times, after
    ``vjp`` has returned, and under other transforms (it is itself differentiable).

    Example:
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> out, pullback = T.vjp(tnp.sin, 0.0)
        >>> pullback(1.0)  # (cos 0 * 1,)
        (array(1.),)
        >>> pullback(2.0)  # called again: no forward pass
        (array(2.),)
    """
    check_callable(fun, "vjp")
    out, pullback, aux = vjp_flat(fun, primals, has_aux)
    return (out, pullback, aux) if has_aux else (out, pullback)


def _scalar_seed(out: Any, transform: str, holomorphic: bool) -> Any:
    if isinstance(out, (tuple, list, dict)) or out is None:
        raise TypeError(
            f"{transform} requires a function with a single scalar array output, got a "
            f"{type(out).__name__}; use jacrev or vjp for pytree outputs"
        )
    if shape_of(out) != ():
        raise TypeError(
            f"{transform} requires a scalar output, got shape {shape_of(out)}; use jacrev "
            "for the full Jacobian or vjp for a vector-Jacobian product"
        )
    check_output_dtype(out, transform, holomorphic)
    return unit_seed(dtype_of(out))


def _value_and_grad(
    fun: Callable[..., Any],
    argnums: int | Sequence[int],
    has_aux: bool,
    transform: str,
    holomorphic: bool = False,
    reads: Callable[..., Any] | None = None,
) -> Callable[..., tuple[Any, Any]]:
    """``reads``: the user's function whose closed-over arrays the call may borrow, when
    ``fun`` wraps it (``hvp``)."""
    check_callable(fun, transform)
    named = fun if reads is None else reads

    @functools.wraps(fun)
    def value_and_grad_fun(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        nums = normalize_argnums(argnums, len(args), transform, TypeError)
        partial = partial_of(fun, args, kwargs, nums)
        primals = [args[n] for n in nums]
        check_input_dtypes(primals, nums, transform, holomorphic)
        bare = all(isinstance(p, _BARE) for p in primals)  # never borrowed (see ``Loan``)
        constants = borrowable_constants(named)
        if bare and not constants:
            out, aux, grads = _forward_backward(
                partial, primals, has_aux, transform, nums, holomorphic, None
            )
        else:  # the backward pass runs inside: inputs and constants may be borrowed
            with Loan(constants, inputs=not bare) as loan:
                out, aux, grads = _forward_backward(
                    partial, primals, has_aux, transform, nums, holomorphic, loan
                )
        grads = grads[0] if isinstance(argnums, int) else grads
        return ((out, aux) if has_aux else out), grads

    return value_and_grad_fun


_BARE = (np.ndarray, np.generic, Tracer, int, float, complex)
"""Arguments that are leaves themselves: the caller's own names for them cannot be counted,
so a ``Loan`` never borrows them."""


def _forward_backward(
    fun: Callable[..., Any],
    primals: list[Any],
    has_aux: bool,
    transform: str,
    nums: Sequence[int],
    holomorphic: bool,
    loan: Loan | None,
) -> tuple[Any, Any, Any]:
    """``(out, aux, grads)``: the forward pass and, before returning, the backward pass."""
    out, pullback, aux = vjp_flat(fun, primals, has_aux, transform, nums, loan=loan)
    grads = pullback.pull_checked([_scalar_seed(out, transform, holomorphic)])
    return (out, aux, grads) if loan is None else loan.settle((out, aux, grads))


# begin generated overloads: grad_decorator (python -m tools.overloads)
@overload
def grad(
    fun: None = None,
    *,
    argnums: Literal[0] = 0,
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[[Callable[Concatenate[A0, P], Leaf]], Callable[Concatenate[A0, P], A0]]: ...
@overload
def grad(
    fun: None = None,
    *,
    argnums: Literal[1],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[[Callable[Concatenate[A0, A1, P], Leaf]], Callable[Concatenate[A0, A1, P], A1]]: ...
@overload
def grad(
    fun: None = None,
    *,
    argnums: Literal[2],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[
    [Callable[Concatenate[A0, A1, A2, P], Leaf]], Callable[Concatenate[A0, A1, A2, P], A2]
]: ...
@overload
def grad(
    fun: None = None,
    *,
    argnums: tuple[Literal[0]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[[Callable[Concatenate[A0, P], Leaf]], Callable[Concatenate[A0, P], tuple[A0]]]: ...
@overload
def grad(
    fun: None = None,
    *,
    argnums: tuple[Literal[1]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[
    [Callable[Concatenate[A0, A1, P], Leaf]], Callable[Concatenate[A0, A1, P], tuple[A1]]
]: ...
@overload
def grad(
    fun: None = None,
    *,
    argnums: tuple[Literal[2]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[
    [Callable[Concatenate[A0, A1, A2, P], Leaf]], Callable[Concatenate[A0, A1, A2, P], tuple[A2]]
]: ...
@overload
def grad(
    fun: None = None,
    *,
    argnums: tuple[Literal[0], Literal[1]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[
    [Callable[Concatenate[A0, A1, P], Leaf]], Callable[Concatenate[A0, A1, P], tuple[A0, A1]]
]: ...
@overload
def grad(
    fun: None = None,
    *,
    argnums: tuple[Literal[0], Literal[2]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[
    [Callable[Concatenate[A0, A1, A2, P], Leaf]],
    Callable[Concatenate[A0, A1, A2, P], tuple[A0, A2]],
]: ...
@overload
def grad(
    fun: None = None,
    *,
    argnums: tuple[Literal[1], Literal[2]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[
    [Callable[Concatenate[A0, A1, A2, P], Leaf]],
    Callable[Concatenate[A0, A1, A2, P], tuple[A1, A2]],
]: ...
@overload
def grad(
    fun: None = None,
    *,
    argnums: tuple[Literal[0], Literal[1], Literal[2]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[
    [Callable[Concatenate[A0, A1, A2, P], Leaf]],
    Callable[Concatenate[A0, A1, A2, P], tuple[A0, A1, A2]],
]: ...
@overload
def grad(
    fun: None = None, *, argnums: Literal[0] = 0, has_aux: Literal[True], holomorphic: bool = False
) -> Callable[
    [Callable[Concatenate[A0, P], tuple[Leaf, Aux]]], Callable[Concatenate[A0, P], tuple[A0, Aux]]
]: ...
@overload
def grad(
    fun: None = None, *, argnums: Literal[1], has_aux: Literal[True], holomorphic: bool = False
) -> Callable[
    [Callable[Concatenate[A0, A1, P], tuple[Leaf, Aux]]],
    Callable[Concatenate[A0, A1, P], tuple[A1, Aux]],
]: ...
@overload
def grad(
    fun: None = None, *, argnums: Literal[2], has_aux: Literal[True], holomorphic: bool = False
) -> Callable[
    [Callable[Concatenate[A0, A1, A2, P], tuple[Leaf, Aux]]],
    Callable[Concatenate[A0, A1, A2, P], tuple[A2, Aux]],
]: ...
@overload
def grad(
    fun: None = None,
    *,
    argnums: tuple[Literal[0]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> Callable[
    [Callable[Concatenate[A0, P], tuple[Leaf, Aux]]],
    Callable[Concatenate[A0, P], tuple[tuple[A0], Aux]],
]: ...
@overload
def grad(
    fun: None = None,
    *,
    argnums: tuple[Literal[1]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> Callable[
    [Callable[Concatenate[A0, A1, P], tuple[Leaf, Aux]]],
    Callable[Concatenate[A0, A1, P], tuple[tuple[A1], Aux]],
]: ...
@overload
def grad(
    fun: None = None,
    *,
    argnums: tuple[Literal[2]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> Callable[
    [Callable[Concatenate[A0, A1, A2, P], tuple[Leaf, Aux]]],
    Callable[Concatenate[A0, A1, A2, P], tuple[tuple[A2], Aux]],
]: ...
@overload
def grad(
    fun: None = None,
    *,
    argnums: tuple[Literal[0], Literal[1]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> Callable[
    [Callable[Concatenate[A0, A1, P], tuple[Leaf, Aux]]],
    Callable[Concatenate[A0, A1, P], tuple[tuple[A0, A1], Aux]],
]: ...
@overload
def grad(
    fun: None = None,
    *,
    argnums: tuple[Literal[0], Literal[2]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> Callable[
    [Callable[Concatenate[A0, A1, A2, P], tuple[Leaf, Aux]]],
    Callable[Concatenate[A0, A1, A2, P], tuple[tuple[A0, A2], Aux]],
]: ...
@overload
def grad(
    fun: None = None,
    *,
    argnums: tuple[Literal[1], Literal[2]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> Callable[
    [Callable[Concatenate[A0, A1, A2, P], tuple[Leaf, Aux]]],
    Callable[Concatenate[A0, A1, A2, P], tuple[tuple[A1, A2], Aux]],
]: ...
@overload
def grad(
    fun: None = None,
    *,
    argnums: tuple[Literal[0], Literal[1], Literal[2]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> Callable[
    [Callable[Concatenate[A0, A1, A2, P], tuple[Leaf, Aux]]],
    Callable[Concatenate[A0, A1, A2, P], tuple[tuple[A0, A1, A2], Aux]],
]: ...
@overload
def grad(
    fun: None = None,
    *,
    argnums: int | Sequence[int],
    has_aux: bool = False,
    holomorphic: bool = False,
) -> Callable[[Callable[P, Leaf | tuple[Leaf, Any]]], Callable[P, Any]]: ...
# end generated overloads: grad_decorator (python -m tools.overloads)
# begin generated overloads: grad (python -m tools.overloads)
@overload
def grad(
    fun: Callable[Concatenate[Array, P], Leaf],
    argnums: Literal[0] = 0,
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> ArrayFunction1[Leaf, P, Array]: ...
@overload
def grad(
    fun: Callable[Concatenate[A0, P], Leaf],
    argnums: Literal[0] = 0,
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, P], A0]: ...
@overload
def grad(
    fun: Callable[Concatenate[Array, Array, P], Leaf],
    argnums: Literal[1],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> ArrayFunction2[Array, Leaf, P, Array]: ...
@overload
def grad(
    fun: Callable[Concatenate[A0, A1, P], Leaf],
    argnums: Literal[1],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, A1, P], A1]: ...
@overload
def grad(
    fun: Callable[Concatenate[Array, Array, Array, P], Leaf],
    argnums: Literal[2],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> ArrayFunction3[Array, Array, Leaf, P, Array]: ...
@overload
def grad(
    fun: Callable[Concatenate[A0, A1, A2, P], Leaf],
    argnums: Literal[2],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, A1, A2, P], A2]: ...
@overload
def grad(
    fun: Callable[Concatenate[Array, P], Leaf],
    argnums: tuple[Literal[0]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> ArrayFunction1[Leaf, P, tuple[Array]]: ...
@overload
def grad(
    fun: Callable[Concatenate[A0, P], Leaf],
    argnums: tuple[Literal[0]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, P], tuple[A0]]: ...
@overload
def grad(
    fun: Callable[Concatenate[Array, Array, P], Leaf],
    argnums: tuple[Literal[1]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> ArrayFunction2[Array, Leaf, P, tuple[Array]]: ...
@overload
def grad(
    fun: Callable[Concatenate[A0, A1, P], Leaf],
    argnums: tuple[Literal[1]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, A1, P], tuple[A1]]: ...
@overload
def grad(
    fun: Callable[Concatenate[Array, Array, Array, P], Leaf],
    argnums: tuple[Literal[2]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> ArrayFunction3[Array, Array, Leaf, P, tuple[Array]]: ...
@overload
def grad(
    fun: Callable[Concatenate[A0, A1, A2, P], Leaf],
    argnums: tuple[Literal[2]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, A1, A2, P], tuple[A2]]: ...
@overload
def grad(
    fun: Callable[Concatenate[Array, Array, P], Leaf],
    argnums: tuple[Literal[0], Literal[1]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> ArrayFunction2[Leaf, Leaf, P, tuple[Array, Array]]: ...
@overload
def grad(
    fun: Callable[Concatenate[A0, A1, P], Leaf],
    argnums: tuple[Literal[0], Literal[1]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, A1, P], tuple[A0, A1]]: ...
@overload
def grad(
    fun: Callable[Concatenate[Array, Array, Array, P], Leaf],
    argnums: tuple[Literal[0], Literal[2]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> ArrayFunction3[Leaf, Array, Leaf, P, tuple[Array, Array]]: ...
@overload
def grad(
    fun: Callable[Concatenate[A0, A1, A2, P], Leaf],
    argnums: tuple[Literal[0], Literal[2]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, A1, A2, P], tuple[A0, A2]]: ...
@overload
def grad(
    fun: Callable[Concatenate[Array, Array, Array, P], Leaf],
    argnums: tuple[Literal[1], Literal[2]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> ArrayFunction3[Array, Leaf, Leaf, P, tuple[Array, Array]]: ...
@overload
def grad(
    fun: Callable[Concatenate[A0, A1, A2, P], Leaf],
    argnums: tuple[Literal[1], Literal[2]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, A1, A2, P], tuple[A1, A2]]: ...
@overload
def grad(
    fun: Callable[Concatenate[Array, Array, Array, P], Leaf],
    argnums: tuple[Literal[0], Literal[1], Literal[2]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> ArrayFunction3[Leaf, Leaf, Leaf, P, tuple[Array, Array, Array]]: ...
@overload
def grad(
    fun: Callable[Concatenate[A0, A1, A2, P], Leaf],
    argnums: tuple[Literal[0], Literal[1], Literal[2]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, A1, A2, P], tuple[A0, A1, A2]]: ...
@overload
def grad(
    fun: Callable[Concatenate[Array, P], tuple[Leaf, Aux]],
    argnums: Literal[0] = 0,
    *,
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> ArrayFunction1[Leaf, P, tuple[Array, Aux]]: ...
@overload
def grad(
    fun: Callable[Concatenate[A0, P], tuple[Leaf, Aux]],
    argnums: Literal[0] = 0,
    *,
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, P], tuple[A0, Aux]]: ...
@overload
def grad(
    fun: Callable[Concatenate[Array, Array, P], tuple[Leaf, Aux]],
    argnums: Literal[1],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> ArrayFunction2[Array, Leaf, P, tuple[Array, Aux]]: ...
@overload
def grad(
    fun: Callable[Concatenate[A0, A1, P], tuple[Leaf, Aux]],
    argnums: Literal[1],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, A1, P], tuple[A1, Aux]]: ...
@overload
def grad(
    fun: Callable[Concatenate[Array, Array, Array, P], tuple[Leaf, Aux]],
    argnums: Literal[2],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> ArrayFunction3[Array, Array, Leaf, P, tuple[Array, Aux]]: ...
@overload
def grad(
    fun: Callable[Concatenate[A0, A1, A2, P], tuple[Leaf, Aux]],
    argnums: Literal[2],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, A1, A2, P], tuple[A2, Aux]]: ...
@overload
def grad(
    fun: Callable[Concatenate[Array, P], tuple[Leaf, Aux]],
    argnums: tuple[Literal[0]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> ArrayFunction1[Leaf, P, tuple[tuple[Array], Aux]]: ...
@overload
def grad(
    fun: Callable[Concatenate[A0, P], tuple[Leaf, Aux]],
    argnums: tuple[Literal[0]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, P], tuple[tuple[A0], Aux]]: ...
@overload
def grad(
    fun: Callable[Concatenate[Array, Array, P], tuple[Leaf, Aux]],
    argnums: tuple[Literal[1]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> ArrayFunction2[Array, Leaf, P, tuple[tuple[Array], Aux]]: ...
@overload
def grad(
    fun: Callable[Concatenate[A0, A1, P], tuple[Leaf, Aux]],
    argnums: tuple[Literal[1]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, A1, P], tuple[tuple[A1], Aux]]: ...
@overload
def grad(
    fun: Callable[Concatenate[Array, Array, Array, P], tuple[Leaf, Aux]],
    argnums: tuple[Literal[2]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> ArrayFunction3[Array, Array, Leaf, P, tuple[tuple[Array], Aux]]: ...
@overload
def grad(
    fun: Callable[Concatenate[A0, A1, A2, P], tuple[Leaf, Aux]],
    argnums: tuple[Literal[2]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, A1, A2, P], tuple[tuple[A2], Aux]]: ...
@overload
def grad(
    fun: Callable[Concatenate[Array, Array, P], tuple[Leaf, Aux]],
    argnums: tuple[Literal[0], Literal[1]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> ArrayFunction2[Leaf, Leaf, P, tuple[tuple[Array, Array], Aux]]: ...
@overload
def grad(
    fun: Callable[Concatenate[A0, A1, P], tuple[Leaf, Aux]],
    argnums: tuple[Literal[0], Literal[1]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, A1, P], tuple[tuple[A0, A1], Aux]]: ...
@overload
def grad(
    fun: Callable[Concatenate[Array, Array, Array, P], tuple[Leaf, Aux]],
    argnums: tuple[Literal[0], Literal[2]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> ArrayFunction3[Leaf, Array, Leaf, P, tuple[tuple[Array, Array], Aux]]: ...
@overload
def grad(
    fun: Callable[Concatenate[A0, A1, A2, P], tuple[Leaf, Aux]],
    argnums: tuple[Literal[0], Literal[2]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, A1, A2, P], tuple[tuple[A0, A2], Aux]]: ...
@overload
def grad(
    fun: Callable[Concatenate[Array, Array, Array, P], tuple[Leaf, Aux]],
    argnums: tuple[Literal[1], Literal[2]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> ArrayFunction3[Array, Leaf, Leaf, P, tuple[tuple[Array, Array], Aux]]: ...
@overload
def grad(
    fun: Callable[Concatenate[A0, A1, A2, P], tuple[Leaf, Aux]],
    argnums: tuple[Literal[1], Literal[2]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, A1, A2, P], tuple[tuple[A1, A2], Aux]]: ...
@overload
def grad(
    fun: Callable[Concatenate[Array, Array, Array, P], tuple[Leaf, Aux]],
    argnums: tuple[Literal[0], Literal[1], Literal[2]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> ArrayFunction3[Leaf, Leaf, Leaf, P, tuple[tuple[Array, Array, Array], Aux]]: ...
@overload
def grad(
    fun: Callable[Concatenate[A0, A1, A2, P], tuple[Leaf, Aux]],
    argnums: tuple[Literal[0], Literal[1], Literal[2]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, A1, A2, P], tuple[tuple[A0, A1, A2], Aux]]: ...
@overload
def grad(
    fun: Callable[P, Leaf | tuple[Leaf, Any]],
    argnums: int | Sequence[int],
    has_aux: bool = False,
    holomorphic: bool = False,
) -> Callable[P, Any]: ...
# end generated overloads: grad (python -m tools.overloads)
@show_typed_signature
def grad(
    fun: Callable[P, Any] | None = None,
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
) -> Any:
    """The gradient of a scalar-output ``fun`` with respect to the argument(s) ``argnums``.

    The gradient has the structure, shapes and dtypes of the differentiated argument(s):
    one for an int ``argnums``, a tuple for a sequence. ``holomorphic=True`` differentiates
    a complex function of complex inputs (the result is ``f'(z)``); otherwise the output
    must be real (complex inputs follow JAX's convention, see the README).

    Called without ``fun``, it is a decorator: ``@grad(argnums=1)``.

    Typed forms (the overloads): the returned function takes ``fun``'s parameters; for a
    literal ``argnums`` (an int or an increasing tuple of positions 0 to 2) its result is
    the differentiated argument's type (``grad(loss)(params, x)`` is a ``Params``), a tuple
    of them, or with ``has_aux=True`` the pair ``(gradient, aux)`` with the aux's own type.
    Any other ``argnums`` keeps the parameters and types the result ``Any``.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> T.grad(lambda x: tnp.sum(x ** 2))(np.array([1.0, 2.0]))
        array([2., 4.])
        >>> T.grad(lambda x, y: x * y, argnums=(0, 1))(3.0, 4.0)
        (array(4.), array(3.))
    """
    if fun is None:
        return functools.partial(grad, argnums=argnums, has_aux=has_aux, holomorphic=holomorphic)
    value_and_grad_fun = _value_and_grad(fun, argnums, has_aux, "grad", holomorphic)

    @functools.wraps(fun)
    def grad_fun(*args: Any, **kwargs: Any) -> Any:
        (value, grads) = value_and_grad_fun(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    return grad_fun


# begin generated overloads: value_and_grad (python -m tools.overloads)
@overload
def value_and_grad(
    fun: Callable[Concatenate[Array, P], Out],
    argnums: Literal[0] = 0,
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> ArrayFunction1[Leaf, P, tuple[Out, Array]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[A0, P], Out],
    argnums: Literal[0] = 0,
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, P], tuple[Out, A0]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[Array, Array, P], Out],
    argnums: Literal[1],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> ArrayFunction2[Array, Leaf, P, tuple[Out, Array]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[A0, A1, P], Out],
    argnums: Literal[1],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, A1, P], tuple[Out, A1]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[Array, Array, Array, P], Out],
    argnums: Literal[2],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> ArrayFunction3[Array, Array, Leaf, P, tuple[Out, Array]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[A0, A1, A2, P], Out],
    argnums: Literal[2],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, A1, A2, P], tuple[Out, A2]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[Array, P], Out],
    argnums: tuple[Literal[0]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> ArrayFunction1[Leaf, P, tuple[Out, tuple[Array]]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[A0, P], Out],
    argnums: tuple[Literal[0]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, P], tuple[Out, tuple[A0]]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[Array, Array, P], Out],
    argnums: tuple[Literal[1]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> ArrayFunction2[Array, Leaf, P, tuple[Out, tuple[Array]]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[A0, A1, P], Out],
    argnums: tuple[Literal[1]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, A1, P], tuple[Out, tuple[A1]]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[Array, Array, Array, P], Out],
    argnums: tuple[Literal[2]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> ArrayFunction3[Array, Array, Leaf, P, tuple[Out, tuple[Array]]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[A0, A1, A2, P], Out],
    argnums: tuple[Literal[2]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, A1, A2, P], tuple[Out, tuple[A2]]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[Array, Array, P], Out],
    argnums: tuple[Literal[0], Literal[1]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> ArrayFunction2[Leaf, Leaf, P, tuple[Out, tuple[Array, Array]]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[A0, A1, P], Out],
    argnums: tuple[Literal[0], Literal[1]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, A1, P], tuple[Out, tuple[A0, A1]]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[Array, Array, Array, P], Out],
    argnums: tuple[Literal[0], Literal[2]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> ArrayFunction3[Leaf, Array, Leaf, P, tuple[Out, tuple[Array, Array]]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[A0, A1, A2, P], Out],
    argnums: tuple[Literal[0], Literal[2]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, A1, A2, P], tuple[Out, tuple[A0, A2]]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[Array, Array, Array, P], Out],
    argnums: tuple[Literal[1], Literal[2]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> ArrayFunction3[Array, Leaf, Leaf, P, tuple[Out, tuple[Array, Array]]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[A0, A1, A2, P], Out],
    argnums: tuple[Literal[1], Literal[2]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, A1, A2, P], tuple[Out, tuple[A1, A2]]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[Array, Array, Array, P], Out],
    argnums: tuple[Literal[0], Literal[1], Literal[2]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> ArrayFunction3[Leaf, Leaf, Leaf, P, tuple[Out, tuple[Array, Array, Array]]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[A0, A1, A2, P], Out],
    argnums: tuple[Literal[0], Literal[1], Literal[2]],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, A1, A2, P], tuple[Out, tuple[A0, A1, A2]]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[Array, P], tuple[Out, Aux]],
    argnums: Literal[0] = 0,
    *,
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> ArrayFunction1[Leaf, P, tuple[tuple[Out, Aux], Array]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[A0, P], tuple[Out, Aux]],
    argnums: Literal[0] = 0,
    *,
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, P], tuple[tuple[Out, Aux], A0]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[Array, Array, P], tuple[Out, Aux]],
    argnums: Literal[1],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> ArrayFunction2[Array, Leaf, P, tuple[tuple[Out, Aux], Array]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[A0, A1, P], tuple[Out, Aux]],
    argnums: Literal[1],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, A1, P], tuple[tuple[Out, Aux], A1]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[Array, Array, Array, P], tuple[Out, Aux]],
    argnums: Literal[2],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> ArrayFunction3[Array, Array, Leaf, P, tuple[tuple[Out, Aux], Array]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[A0, A1, A2, P], tuple[Out, Aux]],
    argnums: Literal[2],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, A1, A2, P], tuple[tuple[Out, Aux], A2]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[Array, P], tuple[Out, Aux]],
    argnums: tuple[Literal[0]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> ArrayFunction1[Leaf, P, tuple[tuple[Out, Aux], tuple[Array]]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[A0, P], tuple[Out, Aux]],
    argnums: tuple[Literal[0]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, P], tuple[tuple[Out, Aux], tuple[A0]]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[Array, Array, P], tuple[Out, Aux]],
    argnums: tuple[Literal[1]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> ArrayFunction2[Array, Leaf, P, tuple[tuple[Out, Aux], tuple[Array]]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[A0, A1, P], tuple[Out, Aux]],
    argnums: tuple[Literal[1]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, A1, P], tuple[tuple[Out, Aux], tuple[A1]]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[Array, Array, Array, P], tuple[Out, Aux]],
    argnums: tuple[Literal[2]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> ArrayFunction3[Array, Array, Leaf, P, tuple[tuple[Out, Aux], tuple[Array]]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[A0, A1, A2, P], tuple[Out, Aux]],
    argnums: tuple[Literal[2]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, A1, A2, P], tuple[tuple[Out, Aux], tuple[A2]]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[Array, Array, P], tuple[Out, Aux]],
    argnums: tuple[Literal[0], Literal[1]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> ArrayFunction2[Leaf, Leaf, P, tuple[tuple[Out, Aux], tuple[Array, Array]]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[A0, A1, P], tuple[Out, Aux]],
    argnums: tuple[Literal[0], Literal[1]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, A1, P], tuple[tuple[Out, Aux], tuple[A0, A1]]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[Array, Array, Array, P], tuple[Out, Aux]],
    argnums: tuple[Literal[0], Literal[2]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> ArrayFunction3[Leaf, Array, Leaf, P, tuple[tuple[Out, Aux], tuple[Array, Array]]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[A0, A1, A2, P], tuple[Out, Aux]],
    argnums: tuple[Literal[0], Literal[2]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, A1, A2, P], tuple[tuple[Out, Aux], tuple[A0, A2]]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[Array, Array, Array, P], tuple[Out, Aux]],
    argnums: tuple[Literal[1], Literal[2]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> ArrayFunction3[Array, Leaf, Leaf, P, tuple[tuple[Out, Aux], tuple[Array, Array]]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[A0, A1, A2, P], tuple[Out, Aux]],
    argnums: tuple[Literal[1], Literal[2]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, A1, A2, P], tuple[tuple[Out, Aux], tuple[A1, A2]]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[Array, Array, Array, P], tuple[Out, Aux]],
    argnums: tuple[Literal[0], Literal[1], Literal[2]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> ArrayFunction3[Leaf, Leaf, Leaf, P, tuple[tuple[Out, Aux], tuple[Array, Array, Array]]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[A0, A1, A2, P], tuple[Out, Aux]],
    argnums: tuple[Literal[0], Literal[1], Literal[2]],
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> Callable[Concatenate[A0, A1, A2, P], tuple[tuple[Out, Aux], tuple[A0, A1, A2]]]: ...
@overload
def value_and_grad(
    fun: Callable[P, Leaf | tuple[Leaf, Any]],
    argnums: int | Sequence[int],
    has_aux: bool = False,
    holomorphic: bool = False,
) -> Callable[P, Any]: ...
# end generated overloads: value_and_grad (python -m tools.overloads)
@show_typed_signature
def value_and_grad(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
) -> Any:
    """Like ``grad``, but returns ``(value, gradient)`` from one forward pass.

    With ``has_aux=True`` the value is the pair ``(out, aux)``, as in JAX. Typed like
    ``grad``: the value has ``fun``'s return type, the gradient its argument's.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> T.value_and_grad(lambda x: tnp.sum(x ** 2))(np.array([1.0, 2.0]))
        (array(5.), array([2., 4.]))
    """
    return _value_and_grad(fun, argnums, has_aux, "value_and_grad", holomorphic)


@overload
def hvp(
    fun: Callable[[*Ts], Leaf], primals: tuple[*Ts], tangents: tuple[*Ts]
) -> tuple[Array, tuple[*Ts]]: ...
@overload
def hvp(
    fun: Callable[..., Leaf], primals: list[Any], tangents: list[Any]
) -> tuple[Array, tuple[Any, ...]]: ...
@show_typed_signature
def hvp(
    fun: Callable[..., Leaf], primals: Sequence[Any], tangents: Sequence[Any]
) -> tuple[Array, tuple[Any, ...]]:
    """Hessian-vector product of a scalar ``fun``: reverse over forward, the gradient of the
    directional derivative ``<grad fun, tangents>`` (one ``jvp`` inside one ``grad``).

    The Hessian is never built, and neither is the gradient, which forward over reverse
    (``jvp(grad(fun))``) would compute and discard: on ``sum(tanh(A @ x)**2)`` that is one
    product with ``A`` fewer, three in all, as in the closed form.

    Returns:
        ``(fun(*primals), H @ tangents)``: the value as a 0-d array, and the product as a
        tuple with one entry per primal, each of its primal's structure.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> value, (Hv,) = T.hvp(lambda x: tnp.sum(x**3), (np.array([1.0, 2.0]),), (np.ones(2),))
        >>> Hv  # diag(6 x) @ [1, 1]
        array([ 6., 12.])
    """
    positions = tuple(range(len(primals)))

    def directional(*xs: Any) -> tuple[Any, Any]:
        value, slope = jvp(fun, xs, tuple(tangents))
        return slope, value  # differentiate the slope; carry the value along as aux

    (_, value), products = _value_and_grad(directional, positions, True, "hvp", reads=fun)(*primals)
    return value, products
