"""Argument plumbing shared by the transforms: argnums, input checks, pytree leaves."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Sequence
from typing import Any, ParamSpec, Protocol, TypeAlias, TypeVar

import numpy as np

from transforms.core import Array, Scalar, Tracer, arrays
from transforms.core.tree_util import PyTreeDef, tree_flatten, tree_structure
from transforms.numpy._define import dtype_of

__all__ = [
    "ArrayFunction1",
    "ArrayFunction2",
    "ArrayFunction3",
    "Leaf",
    "show_typed_signature",
    "normalize_argnums",
    "check_callable",
    "partial_of",
    "flatten_inputs",
    "as_input",
    "check_differentiable",
    "check_input_dtypes",
    "check_output_dtype",
]

#: One array (or number): what a differentiated function returns, and what its output must
#: be for a Jacobian to have its argument's type.
Leaf: TypeAlias = Array | Scalar

P = ParamSpec("P")
R_co = TypeVar("R_co", covariant=True)
X0 = TypeVar("X0", contravariant=True)
X1 = TypeVar("X1", contravariant=True)
X2 = TypeVar("X2", contravariant=True)


class ArrayFunction1(Protocol[X0, P, R_co]):
    """What a transform of a function of arrays returns: ``(x0, *P) -> R_co``.

    The transforms' first overloads take ``Callable[Concatenate[Array, ..., P], ...]``, so
    that a lambda's parameters are typed ``Array`` (pyright); a differentiated one may then
    be a number too (``Leaf``: the transform makes it an array). They return these Protocols
    rather than a ``Callable`` because mypy, which sees a lambda as untyped, then falls back
    to ``Any`` instead of an untyped callable that ``--strict`` refuses to call.
    """

    def __call__(self, x0: X0, /, *args: P.args, **kwargs: P.kwargs) -> R_co: ...


class ArrayFunction2(Protocol[X0, X1, P, R_co]):
    """``(x0, x1, *P) -> R_co``, as ``ArrayFunction1``."""

    def __call__(self, x0: X0, x1: X1, /, *args: P.args, **kwargs: P.kwargs) -> R_co: ...


class ArrayFunction3(Protocol[X0, X1, X2, P, R_co]):
    """``(x0, x1, x2, *P) -> R_co``, as ``ArrayFunction1``."""

    def __call__(self, x0: X0, x1: X1, x2: X2, /, *args: P.args, **kwargs: P.kwargs) -> R_co: ...


F = TypeVar("F", bound=Callable[..., Any])


def show_typed_signature(fun: F) -> F:
    """Give ``fun`` (an overloaded transform) the signature of its main typed form, the
    first overload that takes a function and is not the lambda form, so that ``help()`` and
    ``inspect.signature`` show what a checker sees, not the implementation's ``Any``s. The
    other forms are ``typing.get_overloads(fun)``."""
    for overload in typing.get_overloads(fun):
        signature = inspect.signature(overload)
        first = next(iter(signature.parameters.values()))
        if first.annotation != "None" and "ArrayFunction" not in signature.return_annotation:
            fun.__dict__["__signature__"] = signature
            return fun
    raise TypeError(f"{fun.__name__} has no typed overload to show")


def normalize_argnums(
    argnums: int | Sequence[int],
    nargs: int,
    transform: str,
    out_of_range: type[Exception] = ValueError,
) -> tuple[int, ...]:
    """``argnums`` as a tuple of non-negative positions, checked against ``nargs``.

    The exception types are JAX's: an argnums out of range is a ``TypeError`` for ``grad``
    and ``value_and_grad`` (``out_of_range``) and a ``ValueError`` for the Jacobians.
    """
    if not isinstance(argnums, (int, tuple, list)):
        raise TypeError(f"{transform}: argnums must be an int or a tuple of ints, got {argnums!r}")
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums:
        raise ValueError(f"{transform}: argnums must name at least one argument")
    out = []
    for n in nums:
        if not isinstance(n, int):
            raise TypeError(f"{transform}: argnums must be ints, got {n!r}")
        if not -nargs <= n < nargs:
            raise out_of_range(
                f"{transform}: argnums {n} is out of range for a function called with "
                f"{nargs} positional argument(s)"
            )
        out.append(n % nargs)
    return tuple(out)


def check_callable(fun: object, transform: str) -> None:
    """A transform of something that is not a function fails at once (a ``TypeError``, as
    JAX's ``Expected a callable value``), not at its first call."""
    if not callable(fun):
        raise TypeError(
            f"{transform}: expected a callable value (the function to transform), got "
            f"{type(fun).__name__} {fun!r}"
        )


def partial_of(
    fun: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any], argnums: Sequence[int]
) -> Callable[..., Any]:
    """``fun`` as a function of the arguments at ``argnums`` only, the others held fixed
    (``fun`` itself when nothing is: every argument differentiated, in order)."""
    if not kwargs and tuple(argnums) == tuple(range(len(args))):
        return fun

    def partial(*diff_args: Any) -> Any:
        full = list(args)
        for n, value in zip(argnums, diff_args, strict=True):
            full[n] = value
        return fun(*full, **kwargs)

    return partial


def flatten_inputs(
    primals: Sequence[Any], transform: str, positions: Sequence[int] | None = None
) -> tuple[list[Any], PyTreeDef[Any]]:
    """The checked leaves of the arguments to differentiate, and their structure.

    ``positions`` are the arguments' positions in the user's call (``argnums``), so that an
    error names the argument the user wrote.
    """
    if len(primals) == 1:  # one argument, usually a bare array or tracer: no tree to walk
        x = primals[0]
        if (type(x) is np.ndarray and x.dtype.kind in "fc") or _is_inexact_tracer(x):
            return [x], _ONE_LEAF
    flat, tree = tree_flatten(tuple(primals))
    if all(x.dtype.kind in "fc" if type(x) is np.ndarray else _is_inexact_tracer(x) for x in flat):
        return flat, tree  # the common case: nothing to convert, no error to name
    positions = range(len(primals)) if positions is None else positions
    names = [
        f"argument {pos}"
        for pos, p in zip(positions, primals, strict=True)
        for _ in tree_flatten(p)[0]
    ]
    return [as_input(x, transform, name) for x, name in zip(flat, names, strict=True)], tree


_ONE_LEAF = tree_structure((0.0,))  # a tuple of one leaf: one argument that is an array


def _is_inexact_tracer(x: Any) -> bool:
    """A tracer of a float or complex value (an input of a nested transform: as is)."""
    return isinstance(x, Tracer) and dtype_of(x).kind in "fc"


def as_input(x: Any, transform: str, where: str) -> Any:
    """A leaf to differentiate with respect to: a float/complex array (or tracer)."""
    if not isinstance(x, (Tracer, np.ndarray, np.generic, int, float, complex)):
        if arrays.is_foreign(x):  # a Dask or CuPy array: kept in its library
            arrays.hold()
            check_differentiable(x, transform, where)
            return x
        if not isinstance(x, (list, tuple)) and np.asarray(x).dtype == object:
            raise TypeError(
                f"{transform}: {where} is a {type(x).__name__} instance, neither an array nor "
                "a pytree node. Register its class: transforms.tree_util.register_dataclass("
                f"{type(x).__name__}, data_fields=[...], meta_fields=[...]) for a dataclass "
                "(usable as a decorator), or transforms.tree_util.register_pytree_node("
                f"{type(x).__name__}, flatten, unflatten) for any class"
            )
    if not isinstance(x, Tracer):
        x = np.asarray(x)
    check_differentiable(x, transform, where)
    return x


def check_differentiable(x: Any, transform: str, where: str) -> None:
    dtype = dtype_of(x) if not isinstance(x, np.ndarray) else x.dtype
    if dtype.kind not in "fc":  # np.inexact's kinds (a kind test: no issubdtype per leaf)
        raise TypeError(
            f"{transform} requires float or complex inputs, but {where} has dtype {dtype}; "
            "convert it, e.g. x.astype(float), or leave it out of argnums"
        )


def check_input_dtypes(
    primals: Sequence[Any],
    positions: Sequence[int],
    transform: str,
    holomorphic: bool,
    forward: bool = False,
) -> None:
    """``holomorphic=True`` needs complex inputs (JAX's contract). A ``forward`` Jacobian
    (one tangent per real basis direction: jacfwd, hessian) of complex inputs needs it too:
    without it, each complex input's imaginary direction would be dropped, silently, and
    the result would disagree with jacrev's (JAX's TypeError)."""
    if not holomorphic:
        if forward:
            _refuse_complex_inputs(primals, positions, transform)
        return
    for pos, p in zip(positions, primals, strict=True):
        for leaf in tree_flatten(p)[0]:
            if not np.issubdtype(dtype_of(leaf), np.complexfloating):
                raise TypeError(
                    f"{transform}(holomorphic=True) requires complex inputs, but argument "
                    f"{pos} has dtype {dtype_of(leaf)}; convert it with x.astype(complex)"
                )


def _refuse_complex_inputs(
    primals: Sequence[Any], positions: Sequence[int], transform: str
) -> None:
    for pos, p in zip(positions, primals, strict=True):
        for leaf in tree_flatten(p)[0]:
            dtype = dtype_of(leaf)
            if dtype.kind == "c":
                raise TypeError(
                    f"{transform} requires real inputs unless holomorphic=True, but argument "
                    f"{pos} has dtype {dtype}: its Jacobian pushes one tangent per real "
                    "direction and would drop each complex input's imaginary direction. Fix: "
                    f"{transform}(..., holomorphic=True) for a holomorphic function; otherwise "
                    "pass the real and imaginary parts as separate real inputs, or use jvp "
                    "(or jacrev, for a real output) directly"
                )


def check_output_dtype(out: Any, transform: str, holomorphic: bool) -> None:
    """Real outputs without ``holomorphic``; complex outputs with it."""
    dtype = dtype_of(out)
    if dtype.kind == ("c" if holomorphic else "f"):  # (kind tests: no issubdtype per call)
        return
    if holomorphic and not np.issubdtype(dtype, np.complexfloating):
        raise TypeError(
            f"{transform}(holomorphic=True) requires a complex output, got dtype {dtype}"
        )
    if not holomorphic and not np.issubdtype(dtype, np.floating):
        raise TypeError(
            f"{transform} requires a real floating output, got dtype {dtype}; for a "
            "holomorphic function pass holomorphic=True, otherwise use vjp"
        )
