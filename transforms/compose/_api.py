"""The user-facing derivative transforms, with JAX's names and signatures.

``jvp`` and ``vjp`` are the two primitives of this layer; ``grad`` and ``value_and_grad``
are ``vjp`` seeded with 1 on a scalar output.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Concatenate, Literal, ParamSpec, Protocol, TypeVar, overload

from transforms.core import Array, ArrayLike
from transforms.numpy._arithmetic import unit_seed
from transforms.numpy._define import dtype_of, shape_of

from ._args import check_input_dtypes, check_output_dtype, normalize_argnums, partial_of
from ._core_transforms import jvp_flat, vjp_flat

__all__ = [
    "GradAuxDecorator",
    "GradDecorator",
    "GradTupleDecorator",
    "Pullback",
    "grad",
    "hvp",
    "jvp",
    "value_and_grad",
    "vjp",
]

P = ParamSpec("P")
A = TypeVar("A")
Aux = TypeVar("Aux")
Out = TypeVar("Out")


class Pullback(Protocol):
    """The function returned by ``vjp``: output cotangent -> tuple of input cotangents.

    The cotangent has the output's structure, shapes and dtypes; each input cotangent has
    its primal's (a pytree primal gives a pytree, typed here as ``Array``).
    """

    def __call__(self, ct: object, /) -> tuple[Array, ...]: ...


@overload
def jvp(
    fun: Callable[..., Out],
    primals: Sequence[ArrayLike],
    tangents: Sequence[ArrayLike],
    has_aux: Literal[False] = False,
) -> tuple[Out, Out]: ...
@overload
def jvp(
    fun: Callable[..., tuple[Out, Aux]],
    primals: Sequence[ArrayLike],
    tangents: Sequence[ArrayLike],
    has_aux: Literal[True],
) -> tuple[Out, Out, Aux]: ...
def jvp(
    fun: Callable[..., Any],
    primals: Sequence[ArrayLike],
    tangents: Sequence[ArrayLike],
    has_aux: bool = False,
) -> tuple[Any, ...]:
    """Forward mode: ``fun``'s value at ``primals`` and its derivative along ``tangents``.

    Args:
        fun: function of ``len(primals)`` positional array (pytree) arguments.
        primals: a tuple or list of the arguments.
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
    fun: Callable[..., Out], *primals: ArrayLike, has_aux: Literal[False] = False
) -> tuple[Out, Pullback]: ...
@overload
def vjp(
    fun: Callable[..., tuple[Out, Aux]], *primals: ArrayLike, has_aux: Literal[True]
) -> tuple[Out, Pullback, Aux]: ...
def vjp(fun: Callable[..., Any], *primals: ArrayLike, has_aux: bool = False) -> tuple[Any, ...]:
    """Reverse mode: ``fun``'s value at ``primals`` and its pullback.

    The pullback maps a cotangent of the output to the tuple of cotangents of ``primals``.
    It can be called many times, after ``vjp`` has returned, and under other transforms
    (it is itself differentiable).

    Example:
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> out, pullback = T.vjp(tnp.sin, 0.0)
        >>> pullback(1.0)  # (cos 0 * 1,)
        (array(1.),)
        >>> pullback(2.0)  # called again: no forward pass
        (array(2.),)
    """
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
) -> Callable[..., tuple[Any, Any]]:
    @functools.wraps(fun)
    def value_and_grad_fun(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        nums = normalize_argnums(argnums, len(args), transform)
        partial = partial_of(fun, args, kwargs, nums)
        primals = [args[n] for n in nums]
        check_input_dtypes(primals, nums, transform, holomorphic)
        out, pullback, aux = vjp_flat(partial, primals, has_aux, transform, nums)
        grads = pullback(_scalar_seed(out, transform, holomorphic))
        grads = grads[0] if isinstance(argnums, int) else grads
        return ((out, aux) if has_aux else out), grads

    return value_and_grad_fun


class GradDecorator(Protocol):
    """What ``grad(argnums=...)`` returns: a decorator from a scalar function to its gradient."""

    def __call__(self, fun: Callable[P, ArrayLike], /) -> Callable[P, Array]: ...


class GradTupleDecorator(Protocol):
    """What ``grad(argnums=(i, j, ...))`` returns."""

    def __call__(self, fun: Callable[P, ArrayLike], /) -> Callable[P, tuple[Array, ...]]: ...


class GradAuxDecorator(Protocol):
    """What ``grad(has_aux=True)`` returns."""

    def __call__(
        self, fun: Callable[P, tuple[ArrayLike, Aux]], /
    ) -> Callable[P, tuple[Array, Aux]]: ...


@overload
def grad(
    fun: None = None,
    *,
    argnums: int = 0,
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> GradDecorator: ...
@overload
def grad(
    fun: None = None,
    *,
    argnums: Sequence[int],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> GradTupleDecorator: ...
@overload
def grad(
    fun: None = None,
    *,
    argnums: int = 0,
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> GradAuxDecorator: ...
@overload
def grad(  # type: ignore[overload-overlap]
    fun: Callable[Concatenate[A, P], ArrayLike],
    argnums: Literal[0] = 0,
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[Concatenate[A, P], A]: ...
@overload
def grad(
    fun: Callable[Concatenate[A, P], tuple[ArrayLike, Aux]],
    argnums: Literal[0] = 0,
    *,
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> Callable[Concatenate[A, P], tuple[A, Aux]]: ...
@overload
def grad(
    fun: Callable[P, ArrayLike],
    argnums: int,
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[P, Array]: ...
@overload
def grad(
    fun: Callable[P, ArrayLike],
    argnums: Sequence[int],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[P, tuple[Array, ...]]: ...
def grad(
    fun: Callable[..., Any] | None = None,
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


@overload
def value_and_grad(  # type: ignore[overload-overlap]
    fun: Callable[Concatenate[A, P], Out],
    argnums: Literal[0] = 0,
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[Concatenate[A, P], tuple[Out, A]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[A, P], tuple[Out, Aux]],
    argnums: Literal[0] = 0,
    *,
    has_aux: Literal[True],
    holomorphic: bool = False,
) -> Callable[Concatenate[A, P], tuple[tuple[Out, Aux], A]]: ...
@overload
def value_and_grad(
    fun: Callable[P, Out], argnums: int, has_aux: Literal[False] = False, holomorphic: bool = False
) -> Callable[P, tuple[Out, Array]]: ...
@overload
def value_and_grad(
    fun: Callable[P, Out],
    argnums: Sequence[int],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
) -> Callable[P, tuple[Out, tuple[Array, ...]]]: ...
def value_and_grad(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
) -> Callable[..., Any]:
    """Like ``grad``, but returns ``(value, gradient)`` from one forward pass.

    With ``has_aux=True`` the value is the pair ``(out, aux)``, as in JAX.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> T.value_and_grad(lambda x: tnp.sum(x ** 2))(np.array([1.0, 2.0]))
        (array(5.), array([2., 4.]))
    """
    return _value_and_grad(fun, argnums, has_aux, "value_and_grad", holomorphic)


def hvp(
    fun: Callable[..., ArrayLike], primals: Sequence[ArrayLike], tangents: Sequence[ArrayLike]
) -> tuple[Array, tuple[Array, ...]]:
    """Hessian-vector product of a scalar ``fun``: reverse over forward, the gradient of the
    directional derivative ``<grad fun, tangents>`` (one ``jvp`` inside one ``grad``).

    The Hessian is never built, and neither is the gradient, which forward over reverse
    (``jvp(grad(fun))``) would compute and discard: on ``sum(tanh(A @ x)**2)`` that is one
    product with ``A`` fewer, three in all, as in the closed form.

    Returns:
        ``(fun(*primals), H @ tangents)``, the product as a tuple with one entry per primal.

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
        value, slope = jvp(fun, xs, tangents)
        return slope, value  # differentiate the slope; carry the value along as aux

    (_, value), products = _value_and_grad(directional, positions, True, "hvp")(*primals)
    return value, products
