"""User-defined derivative rules (``custom_jvp``, ``custom_vjp``) and ``stop_gradient``: each
is a primitive whose rules call the user's functions.

Every rule here is written with transforms (``jvp_flat``, ``vjp_flat``, ``vmap``) and
``transforms.numpy``, so a custom rule is itself differentiable and batchable:
``grad(grad(f))``, ``jvp(grad(f))`` and ``vmap(grad(f))`` all go through it.

The missing direction is derived, not refused:

- reverse mode of a ``custom_jvp`` function transposes its JVP rule (the rule is linear in
  the tangents: the VJP is the reverse-mode derivative of ``t -> <ct, jvp(t)>``);
- forward mode of a ``custom_vjp`` function transposes its bwd rule the same way, which JAX
  refuses to do. A bwd written in raw NumPy cannot be transposed and says so.

Transposing is exact only for a rule linear in what is transposed: the trace of the linear
map is marked ``transposing`` (``core.Trace``), so control flow on those values (``bool()``,
comparisons, ``.item()``) raises ``ConcretizationTypeError`` naming the function, instead of
a derivative traced at one branch.

Pytree arguments and outputs are flattened here: the primitives see leaves (both are
multiple-results primitives, one result per output leaf), the user's rules the trees. The
function runs before any rule in every mode (an interpreter binds the primitive on the
primal values first; sparsity detection runs the function itself) and records its output's
structure, shapes and dtypes (``_Output``): every rule's output is checked against that
record, so a rule whose output does not match is a ``TypeError`` naming the function and
the mismatch, never a tangent broadcast into a wrong shape.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any, Generic, ParamSpec, TypeVar, overload

import numpy as np

import transforms.numpy as tnp
from transforms.batching import defbatch, is_batched
from transforms.core import (
    DerivativeDroppedError,
    Primitive,
    Tracer,
    TracerBoolConversionError,
    Transposing,
)
from transforms.core.tree_util import PyTreeDef, tree_flatten, tree_map
from transforms.forward import defjvp_joint
from transforms.numpy import zeros_like
from transforms.numpy._define import dtype_of, shape_of
from transforms.numpy._elementwise import stop_gradient_p
from transforms.reverse import defvjp_argnum
from transforms.sparsity import defsparsity_inline

from ._closure_guard import guarded, owner_and_above
from ._core_transforms import vjp_flat
from ._vmap import vmap

__all__ = ["custom_jvp", "custom_vjp", "stop_gradient"]

P = ParamSpec("P")
R = TypeVar("R")
Tree = TypeVar("Tree")

# The rules' signatures, for the checkers. A JVP rule takes the primals and the tangents (a
# tuple each, one entry per non-static argument), after the static ``nondiff_argnums``
# arguments, and returns ``(primal_out, tangent_out)``, both of the function's result type;
# a bwd rule takes the residuals of its fwd and the output's cotangent, after the static
# arguments. Each is typed by its arity, without and with up to three static arguments (a
# rule with more takes them as ``*static``): a tangent-only rule, or a bwd whose residuals
# are not fwd's, is then a type error, and ``defjvp`` gives back a rule typed by its result.
Primals = TypeVar("Primals", bound=Sequence[Any])
Tangents = TypeVar("Tangents", bound=Sequence[Any])
Residuals = TypeVar("Residuals")
S1 = TypeVar("S1")
S2 = TypeVar("S2")
S3 = TypeVar("S3")


def _split(args: Sequence[Any], nondiff: tuple[int, ...]) -> tuple[list[Any], list[Any]]:
    static = [args[i] for i in nondiff]
    dynamic = [a for i, a in enumerate(args) if i not in nondiff]
    return static, dynamic


def _merge(static: Sequence[Any], dynamic: Sequence[Any], nondiff: tuple[int, ...]) -> list[Any]:
    out: list[Any] = []
    s, d = iter(static), iter(dynamic)
    for i in range(len(static) + len(dynamic)):
        out.append(next(s) if i in nondiff else next(d))
    return out


def _inner(a: Sequence[Any], b: Sequence[Any]) -> Any:
    """``sum(a * b)`` over pairs: the (bilinear) pairing under which VJP transposes JVP."""
    total: Any = 0
    for x, y in zip(a, b, strict=True):
        total = total + tnp.sum(x * y)
    return total


def _transpose(
    linear: Callable[[list[Any]], Sequence[Any]],
    zeros: Sequence[Any],
    against: Sequence[Any],
    transposing: Transposing,
) -> list[Any]:
    """``L^T`` applied to ``against`` for a linear ``L`` of several leaves ``u``: the gradient
    of ``<L(u), against>`` with respect to each leaf (at ``u = zeros``: the value does not
    matter, ``L`` is linear).

    That holds only if ``L`` is linear, which a user's rule may not be: control flow on the
    values of ``u`` (a convergence loop) would be traced at ``u = zeros`` only. The trace is
    marked ``transposing``, so any such read of ``u`` is refused, naming the rule.
    """

    def pairing(*u: Any) -> Any:
        u[0]._trace.transposing = transposing
        return _inner(linear(list(u)), against)

    out, pullback, _ = vjp_flat(pairing, zeros, False, "transpose")
    return list(pullback(tnp.ones_like(out)))


_EXACT_TOOLS = (
    "T.custom_root for a root or fixed point, T.custom_linear_solve for a linear solve: "
    "their derivatives are exact in every mode and under vmap"
)


def _per_example_error(name: str, rule: str, variable: str, fix: str) -> TracerBoolConversionError:
    return TracerBoolConversionError(
        f"{name}: its {rule} branches on the {variable} with Python control flow, which cannot "
        f"run per example when the {variable}s are batched (vmap, jacfwd, jacrev, hessian "
        f"batch them). Fix: {fix}"
    )


def _require_arity(rule: Callable[..., Any], count: int, owner: str, expected: str) -> None:
    """Refuse, when it is defined, a rule that cannot take its ``count`` positional arguments
    (a tangent-only JVP rule, say), rather than at its first use, deep in a transform. A
    callable whose signature cannot be read (a builtin) is taken as it is."""
    try:
        signature = inspect.signature(rule)
    except (TypeError, ValueError):
        return
    try:
        signature.bind(*range(count))
    except TypeError:
        name = getattr(rule, "__name__", type(rule).__name__)
        raise TypeError(
            f"{owner}: its {expected}; {name}{signature} cannot take {count} positional arguments"
        ) from None


def _static_first(nondiff: tuple[int, ...], then: str) -> str:
    count = len(nondiff)
    return f"the {count} static argument(s) (nondiff_argnums) first, then {then}" if count else then


# ---- the output record --------------------------------------------------------------------
Aval = tuple[tuple[int, ...], np.dtype[Any]]

_WEAK = (int, float, complex)  # Python numbers: weakly typed, any dtype of their kind fits


def _aval(x: Any) -> Aval:
    return shape_of(x), dtype_of(x)


def _fits(x: Any, aval: Aval) -> bool:
    """Whether ``x`` can stand for a value of ``aval``: the same shape, and for an inexact
    dtype the same dtype (a Python number: any of its kind, ``0.0`` fits ``float32``)."""
    shape, dtype = aval
    if shape_of(x) != shape:
        return False
    if dtype.kind not in "fc":  # an integer or boolean output carries no derivative
        return True
    if type(x) in _WEAK:
        return bool(np.can_cast(type(x), dtype, "same_kind"))
    return dtype_of(x) == dtype


def _describe(tree: PyTreeDef[Any], avals: Sequence[Aval]) -> str:
    leaves = ", ".join(f"{dtype}{list(shape)}" for shape, dtype in avals)
    return f"{tree} of [{leaves}]"


def _pair(value: Any, what: str) -> tuple[Any, Any]:
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise TypeError(f"{what}, got {type(value).__name__}: {value!r}")
    return value[0], value[1]


class _Output:
    """The output of one call of a custom function: its structure, shapes and dtypes.

    The function records them when it runs, which in every mode is before any rule runs
    (an interpreter binds the primitive on its primal values first; sparsity detection runs
    the function itself). A run under ``vmap`` sees per-example values, as every rule does:
    the record is what the user's code sees. Every output of a rule is checked against it.
    """

    __slots__ = ("avals", "name", "tree")

    def __init__(self, name: str) -> None:
        self.name = name  # "custom_jvp function f"
        self.tree: PyTreeDef[Any] | None = None
        self.avals: list[Aval] = []

    def record(self, out: Any) -> tuple[Any, ...]:
        """The leaves of the function's output ``out``, recording what they are."""
        leaves, self.tree = tree_flatten(out)
        self.avals = [_aval(x) for x in leaves]
        return tuple(leaves)

    def unflatten(self, leaves: Sequence[Any]) -> Any:
        assert self.tree is not None, "the function runs before any rule and before the result"
        return self.tree.unflatten(leaves)

    def leaves_of(self, out: Any, what: str) -> list[Any]:
        """The leaves of a rule's ``out`` (``what`` names it), which must match the output."""
        leaves, tree = tree_flatten(out)
        if tree != self.tree or not all(map(_fits, leaves, self.avals)):
            assert self.tree is not None, "the function runs before any rule"
            raise TypeError(
                f"{self.name}: {what} must have the structure, shapes and dtypes of its "
                f"output, {_describe(self.tree, self.avals)}; got "
                f"{_describe(tree, [_aval(x) for x in leaves])}"
            )
        return leaves


# ---- custom_jvp ----------------------------------------------------------------------------
def _custom_jvp_impl(*args: Any, fun: Callable[..., Any], **_: Any) -> Any:
    return fun(*args)


custom_jvp_call_p = Primitive("custom_jvp_call", _custom_jvp_impl, multiple_results=True)


def _custom_jvp_rule(
    tangents: Sequence[Any], ans: Any, *args: Any, jvp: Any, name: str, **_: Any
) -> Any:
    filled = [zeros_like(a) if t is None else t for t, a in zip(tangents, args, strict=True)]
    try:
        return jvp(list(args), filled)
    except TracerBoolConversionError as err:
        if not any(is_batched(t) for t in filled):
            raise
        fix = f"use {_EXACT_TOOLS}; or differentiate in reverse mode (grad, vjp)"
        raise _per_example_error(f"custom_jvp function {name}", "JVP rule", "tangent", fix) from err


def _custom_jvp_vjp(argnum: int, ans: Any, *args: Any, jvp: Any, name: str, **_: Any) -> Any:
    def tangent_map(t: list[Any]) -> Any:
        tangents = [zeros_like(a) for a in args]
        tangents[argnum] = t[0]
        return jvp(list(args), tangents)

    transposing = Transposing(
        f"reverse mode (grad, vjp, jacrev, hessian) of custom_jvp function {name} transposes "
        "its JVP rule",
        "tangent",
        f"use {_EXACT_TOOLS}; or define the function with T.custom_vjp, whose bwd rule "
        "reverse mode uses as written; or differentiate in forward mode only (jvp, jacfwd; "
        "T.jacfwd(T.jacfwd(f)) for a Hessian)",
    )
    zero = [zeros_like(args[argnum])]
    return lambda cts: _transpose(tangent_map, zero, cts, transposing)[0]


def _custom_jvp_batch(
    values: Any, dims: Any, *, fun: Any, jvp: Any, name: str
) -> tuple[Any, tuple[int, ...]]:
    axes = tuple(dims)
    batched_fun = vmap(fun, in_axes=axes)
    batched_jvp = vmap(lambda p, t: jvp(p, t), in_axes=(list(axes), list(axes)))
    out = custom_jvp_call_p.bind(*values, fun=batched_fun, jvp=batched_jvp, name=name)
    return out, (0,) * len(out)


defjvp_joint(custom_jvp_call_p, _custom_jvp_rule)
defvjp_argnum(custom_jvp_call_p, _custom_jvp_vjp)
defbatch(custom_jvp_call_p, _custom_jvp_batch)
defsparsity_inline(custom_jvp_call_p)  # the primal function's pattern


class custom_jvp(Generic[P, R]):
    """A function with a user-defined JVP rule (JAX's ``jax.custom_jvp``).

    Example:
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> @T.custom_jvp
        ... def log1pexp(x):
        ...     return tnp.log(1 + tnp.exp(x))
        >>> @log1pexp.defjvp
        ... def log1pexp_jvp(primals, tangents):
        ...     (x,), (t,) = primals, tangents
        ...     return log1pexp(x), t / (1 + tnp.exp(-x))  # sigmoid(x), written with tnp
        >>> T.grad(log1pexp)(0.0)
        array(0.5)
        >>> T.grad(T.grad(log1pexp))(0.0)  # the rule is differentiated too: sigmoid'(0)
        array(0.25)

    The rule receives ``(primals, tangents)`` (tuples, one entry per non-static argument;
    static ``nondiff_argnums`` arguments come first, positionally) and returns
    ``(primal_out, tangent_out)``, both of the function's result type (the type
    ``defjvp`` gives the rule back with, for a type checker). It must be linear in the
    tangents and written with ``transforms.numpy``; reverse mode transposes it.

    Arguments and the output may be pytrees (a tuple, a dict...): the rule receives the
    argument trees and returns ``primal_out`` and ``tangent_out`` of the output's structure,
    each leaf of the output's shape and dtype (else a ``TypeError`` naming the mismatch).

    Example:
        >>> @T.custom_jvp
        ... def polar(r, theta):
        ...     return {"x": r * tnp.cos(theta), "y": r * tnp.sin(theta)}
        >>> @polar.defjvp
        ... def polar_jvp(primals, tangents):
        ...     (r, theta), (dr, dtheta) = primals, tangents
        ...     c, s = tnp.cos(theta), tnp.sin(theta)
        ...     return polar(r, theta), {"x": c * dr - r * s * dtheta, "y": s * dr + r * c * dtheta}
        >>> T.grad(lambda r: polar(r, 0.0)["x"] + 3 * polar(r, 0.0)["y"])(2.0)
        array(1.)
    """

    def __init__(self, fun: Callable[P, R], nondiff_argnums: Sequence[int] = ()) -> None:
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp: Callable[..., tuple[Any, Any]] | None = None
        self.__name__: str = getattr(fun, "__name__", "custom_jvp function")
        functools.update_wrapper(self, fun)

    @overload
    def defjvp(
        self, jvp: Callable[[Primals, Tangents], tuple[R, R]]
    ) -> Callable[[Primals, Tangents], tuple[R, R]]: ...
    @overload
    def defjvp(
        self, jvp: Callable[[S1, Primals, Tangents], tuple[R, R]]
    ) -> Callable[[S1, Primals, Tangents], tuple[R, R]]: ...
    @overload
    def defjvp(
        self, jvp: Callable[[S1, S2, Primals, Tangents], tuple[R, R]]
    ) -> Callable[[S1, S2, Primals, Tangents], tuple[R, R]]: ...
    @overload
    def defjvp(
        self, jvp: Callable[[S1, S2, S3, Primals, Tangents], tuple[R, R]]
    ) -> Callable[[S1, S2, S3, Primals, Tangents], tuple[R, R]]: ...
    def defjvp(self, jvp: Callable[..., tuple[Any, Any]]) -> Callable[..., tuple[Any, Any]]:
        """Register the JVP rule; returns it, so it works as a decorator.

        A rule that cannot take ``(primals, tangents)`` (after the static arguments) is a
        ``TypeError`` here, and a type error for mypy and pyright.
        """
        _require_arity(
            jvp,
            len(self.nondiff_argnums) + 2,
            f"custom_jvp function {self.__name__}",
            "JVP rule takes "
            + _static_first(self.nondiff_argnums, "(primals, tangents), a tuple each")
            + ", and returns (primal_out, tangent_out)",
        )
        self.jvp = jvp
        return jvp

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        if kwargs:
            raise TypeError(f"custom_jvp function {self.__name__}: pass arguments positionally")
        if self.jvp is None:
            raise TypeError(
                f"custom_jvp function {self.__name__} has no JVP rule: decorate one with "
                f"@{self.__name__}.defjvp"
            )
        static, dynamic = _split(args, self.nondiff_argnums)
        leaves, tree = tree_flatten(tuple(dynamic))  # pytree arguments: the rules see trees
        nondiff = self.nondiff_argnums
        output = _Output(f"custom_jvp function {self.__name__}")
        forbidden = owner_and_above(leaves)
        fun = guarded(self.fun, forbidden, output.name)
        rule = guarded(self.jvp, forbidden, f"the JVP rule of {output.name}")

        def call(*xs: Any) -> tuple[Any, ...]:
            return output.record(fun(*_merge(static, tree.unflatten(xs), nondiff)))

        def jvp(primals: list[Any], tangents: list[Any]) -> tuple[Any, ...]:
            pair = rule(*static, tree.unflatten(primals), tree.unflatten(tangents))
            primal_out, tangent_out = _pair(
                pair, f"{output.name}: its JVP rule must return (primal_out, tangent_out)"
            )
            output.leaves_of(primal_out, "the primal output of its JVP rule")
            return tuple(output.leaves_of(tangent_out, "the tangent output of its JVP rule"))

        out = custom_jvp_call_p.bind(*leaves, fun=call, jvp=jvp, name=self.__name__)
        return output.unflatten(out)  # type: ignore[no-any-return]


# ---- custom_vjp ----------------------------------------------------------------------------
class _Residuals:
    """Per-call memo: the fwd rule runs once however many arguments need a pullback.

    Each nested reverse-mode level sees different arguments (tracers of the level below),
    so the residuals are reused only for the very same arguments.
    """

    __slots__ = ("args", "value")

    def __init__(self) -> None:
        self.args: tuple[Any, ...] = ()
        self.value: Any = None

    def get(self, fwd: Callable[..., tuple[Any, Any]], args: tuple[Any, ...]) -> Any:
        same = len(args) == len(self.args) and all(
            a is b for a, b in zip(args, self.args, strict=True)
        )
        if not same:
            # Residuals are read in a later backward pass: plain arrays among them (which may
            # be the user's own, e.g. a closed-over constant) are kept as read-only copies.
            self.args, self.value = args, tree_map(_frozen, fwd(*args)[1])
        return self.value


def _frozen(leaf: Any) -> Any:
    if not isinstance(leaf, np.ndarray):
        return leaf
    copy = leaf.copy()
    copy.flags.writeable = False
    return copy


def _is_none(x: Any) -> bool:
    return x is None


def _flat_cotangents(name: str, cts: Any, args: Sequence[Any]) -> tuple[Any, ...]:
    """A bwd rule's cotangents (a tuple or list, one tree per argument) as one per leaf of
    the arguments. ``None`` is a zero for its whole subtree (an argument, or any part of
    one, as in JAX) and stays ``None``: whoever calls bwd knows the argument's zeros.

    As in JAX, a cotangent tree not of its argument's structure is a ``TypeError``, a leaf
    not of its argument leaf's shape a ``ValueError``; and a complex cotangent for a real
    argument (JAX passes it on) is refused too: no real gradient is complex."""
    if not isinstance(cts, (tuple, list)) or len(cts) != len(args):
        got = f"{len(cts)} cotangent(s)" if isinstance(cts, (tuple, list)) else repr(cts)
        raise TypeError(
            f"custom_vjp bwd of {name} returned {got} for {len(args)} differentiable "
            "argument(s): return a tuple with one cotangent per argument (None for zeros)"
        )
    flat: list[Any] = []
    for i, (ct, arg) in enumerate(zip(cts, args, strict=True)):
        arg_leaves, arg_tree = tree_flatten(arg)
        ct_leaves, ct_tree = tree_flatten(ct, is_leaf=_is_none)
        start = len(flat)
        if not _up_to(ct_tree, arg_tree, iter(ct_leaves), flat):
            raise TypeError(
                f"custom_vjp bwd of {name} returned a cotangent of structure "
                f"{tree_flatten(ct)[1]} for argument {i} of structure {arg_tree}; return "
                "one of the argument's structure (or None for zeros)"
            )
        for k, (c, a) in enumerate(zip(flat[start:], arg_leaves, strict=True)):
            if c is None:
                continue
            (shape, dtype), (ct_shape, ct_dtype) = _aval(a), _aval(c)
            if ct_shape != shape or (np.iscomplexobj(c) and not np.iscomplexobj(a)):
                raise ValueError(
                    f"custom_vjp bwd of {name} returned a cotangent of shape and dtype "
                    f"{ct_dtype}{list(ct_shape)} for leaf {k} of argument {i}, of "
                    f"{dtype}{list(shape)}: return one of the argument's shape (complex "
                    "only for a complex argument)"
                )
    return tuple(flat)


def _up_to(
    ct_tree: PyTreeDef[Any], arg_tree: PyTreeDef[Any], ct_leaves: Any, out: list[Any]
) -> bool:
    """Append to ``out`` the cotangent of each leaf of ``arg_tree`` (``None`` for those under
    a ``None`` of ``ct_tree``); whether the structures match."""
    if ct_tree.kind is None:
        ct = next(ct_leaves)
        if ct is None:
            out.extend([None] * arg_tree.num_leaves)
            return True
        out.append(ct)
        return arg_tree.kind is None
    same_node = ct_tree.kind is arg_tree.kind and ct_tree.aux == arg_tree.aux
    if not same_node or len(ct_tree.children) != len(arg_tree.children):
        return False
    return all(
        _up_to(c, a, ct_leaves, out)
        for c, a in zip(ct_tree.children, arg_tree.children, strict=True)
    )


def _custom_vjp_impl(*args: Any, fun: Callable[..., Any], **_: Any) -> Any:
    return fun(*args)


custom_vjp_call_p = Primitive("custom_vjp_call", _custom_vjp_impl, multiple_results=True)


def _custom_vjp_maker(
    argnum: int, ans: Any, *args: Any, fwd: Any, bwd: Any, memo: _Residuals, name: str, **_: Any
) -> Any:
    residuals = memo.get(fwd, args)

    def pullback(cts: Any) -> Any:
        try:
            return _or_zeros(bwd(residuals, cts)[argnum], args[argnum])
        except TracerBoolConversionError as err:
            if not any(is_batched(ct) for ct in cts):
                raise
            fix = f"use {_EXACT_TOOLS}; or differentiate with grad or vjp (one cotangent)"
            raise _per_example_error(
                f"custom_vjp function {name}", "bwd rule", "cotangent", fix
            ) from err

    return pullback


def _or_zeros(ct: Any, like: Any) -> Any:
    """A ``None`` cotangent from a user's bwd is a zero of the argument's shape and dtype."""
    return zeros_like(like) if ct is None else ct


def _custom_vjp_jvp(
    tangents: Sequence[Any], ans: Any, *args: Any, fwd: Any, bwd: Any, name: str, **_: Any
) -> Any:
    if not ans:
        return None  # an output with no leaves: no tangent to push
    residuals = fwd(*args)[1]
    live = [(t, i) for i, t in enumerate(tangents) if t is not None]
    transposing = Transposing(
        f"forward mode (jvp, jacfwd) of custom_vjp function {name} transposes its bwd rule",
        "cotangent",
        f"use {_EXACT_TOOLS}; or define the function with T.custom_jvp, whose rule forward "
        "mode uses as written; or differentiate in reverse mode only (grad, vjp)",
    )
    try:
        return tuple(
            _transpose(
                lambda cts: [_or_zeros(bwd(residuals, cts)[i], args[i]) for _, i in live],
                [zeros_like(a) for a in ans],
                [t for t, _ in live],
                transposing,
            )
        )
    except DerivativeDroppedError as err:
        raise TypeError(
            f"forward mode of custom_vjp function {name} transposes its bwd rule, which must "
            "be written with transforms.numpy (it is linear in the cotangent); this bwd calls "
            "raw NumPy on a traced value and cannot be transposed"
        ) from err


def _custom_vjp_batch(
    values: Any, dims: Any, *, fun: Any, fwd: Any, bwd: Any, memo: _Residuals, name: str
) -> tuple[Any, tuple[int, ...]]:
    axes = tuple(dims)
    batched_fun = vmap(fun, in_axes=axes)
    batched_fwd = vmap(fwd, in_axes=axes)  # out and residuals with the batch axis first

    def batched_bwd(residuals: Any, cts: Any) -> tuple[Any, ...]:
        # Per-example cotangents come with the batch axis first: an unbatched argument gets
        # their sum, a batched one its own batch axis back.
        cts_in = vmap(bwd, in_axes=(0, 0))(residuals, cts)
        return tuple(
            None if c is None else (tnp.sum(c, axis=0) if d is None else tnp.moveaxis(c, 0, d))
            for c, d in zip(cts_in, axes, strict=True)
        )

    out = custom_vjp_call_p.bind(
        *values, fun=batched_fun, fwd=batched_fwd, bwd=batched_bwd, memo=_Residuals(), name=name
    )
    return out, (0,) * len(out)


defjvp_joint(custom_vjp_call_p, _custom_vjp_jvp)
defvjp_argnum(custom_vjp_call_p, _custom_vjp_maker)
defbatch(custom_vjp_call_p, _custom_vjp_batch)
defsparsity_inline(custom_vjp_call_p)


class custom_vjp(Generic[P, R]):
    """A function with user-defined reverse-mode rules (JAX's ``jax.custom_vjp``).

    ``fwd(*args) -> (out, residuals)`` runs on the forward pass; ``bwd(residuals, ct)``
    returns a tuple with one cotangent per non-static argument (static
    ``nondiff_argnums`` arguments come first in ``bwd``'s arguments). Forward mode
    (``jvp``, ``jacfwd``) transposes ``bwd``, so write it with
    ``transforms.numpy`` and without control flow on the cotangent (which is refused: use
    ``custom_root`` / ``custom_linear_solve`` for iterative solves).

    Arguments and the output may be pytrees: ``fwd``'s ``out`` has the output's structure,
    shapes and dtypes (else a ``TypeError``), ``bwd`` receives ``ct`` of that structure
    (zeros for an output that is not used) and returns, per argument, a cotangent tree of
    the argument's structure (``None`` for zeros, of the whole argument or of any part).

    Example:
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> @T.custom_vjp
        ... def clip_gradient(x):
        ...     return x
        >>> clip_gradient.defvjp(lambda x: (x, None), lambda _, ct: (tnp.clip(ct, -1, 1),))
        >>> T.grad(lambda x: 5 * clip_gradient(x))(2.0)  # the cotangent 5 is clipped to 1
        array(1.)
    """

    def __init__(self, fun: Callable[P, R], nondiff_argnums: Sequence[int] = ()) -> None:
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd: Callable[..., tuple[Any, Any]] | None = None
        self.bwd: Callable[..., tuple[Any, ...]] | None = None
        self.__name__: str = getattr(fun, "__name__", "custom_vjp function")
        functools.update_wrapper(self, fun)

    @overload
    def defvjp(
        self,
        fwd: Callable[P, tuple[R, Residuals]],
        bwd: Callable[[Residuals, R], tuple[Any, ...]],
    ) -> None: ...
    @overload
    def defvjp(
        self,
        fwd: Callable[P, tuple[R, Residuals]],
        bwd: Callable[[S1, Residuals, R], tuple[Any, ...]],
    ) -> None: ...
    @overload
    def defvjp(
        self,
        fwd: Callable[P, tuple[R, Residuals]],
        bwd: Callable[[S1, S2, Residuals, R], tuple[Any, ...]],
    ) -> None: ...
    @overload
    def defvjp(
        self,
        fwd: Callable[P, tuple[R, Residuals]],
        bwd: Callable[[S1, S2, S3, Residuals, R], tuple[Any, ...]],
    ) -> None: ...
    def defvjp(
        self, fwd: Callable[..., tuple[Any, Any]], bwd: Callable[..., tuple[Any, ...]]
    ) -> None:
        """Register the forward-pass and backward-pass rules.

        A ``bwd`` that cannot take ``(residuals, ct)`` (after the static arguments) is a
        ``TypeError`` here; for mypy and pyright, so is one whose residuals are not of the
        type ``fwd`` returns.
        """
        _require_arity(
            bwd,
            len(self.nondiff_argnums) + 2,
            f"custom_vjp function {self.__name__}",
            "bwd rule takes "
            + _static_first(self.nondiff_argnums, "(residuals, ct)")
            + " and returns one cotangent per non-static argument",
        )
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        if kwargs:
            raise TypeError(f"custom_vjp function {self.__name__}: pass arguments positionally")
        if self.fwd is None or self.bwd is None:
            raise TypeError(
                f"custom_vjp function {self.__name__} has no rules: call "
                f"{self.__name__}.defvjp(fwd, bwd)"
            )
        static, dynamic = _split(args, self.nondiff_argnums)
        leaves, tree = tree_flatten(tuple(dynamic))  # pytree arguments: the rules see trees
        nondiff, name = self.nondiff_argnums, self.__name__
        output = _Output(f"custom_vjp function {name}")
        forbidden = owner_and_above(leaves)
        fun = guarded(self.fun, forbidden, output.name)
        fwd_rule = guarded(self.fwd, forbidden, f"the fwd rule of {output.name}")
        bwd_rule = guarded(self.bwd, forbidden, f"the bwd rule of {output.name}")

        def call(*xs: Any) -> tuple[Any, ...]:
            return output.record(fun(*_merge(static, tree.unflatten(xs), nondiff)))

        def fwd(*xs: Any) -> tuple[tuple[Any, ...], Any]:
            out, residuals = _pair(
                fwd_rule(*_merge(static, tree.unflatten(xs), nondiff)),
                f"{output.name}: its fwd rule must return (out, residuals)",
            )
            return tuple(output.leaves_of(out, "the output of its fwd rule")), residuals

        def bwd(residuals: Any, cts: Sequence[Any]) -> tuple[Any, ...]:
            cts_in = bwd_rule(*static, residuals, output.unflatten(cts))
            return _flat_cotangents(name, cts_in, dynamic)

        out = custom_vjp_call_p.bind(
            *leaves, fun=call, fwd=fwd, bwd=bwd, memo=_Residuals(), name=name
        )
        return output.unflatten(out)  # type: ignore[no-any-return]


# ---- stop_gradient --------------------------------------------------------------------------
# The primitive lives in the numpy layer (``transforms.numpy._elementwise``), whose composites use
# it too; this is its pytree-wide public form.


def stop_gradient(x: Tree) -> Tree:
    """``x`` itself (an array or a pytree of them), with no derivative flowing through it in
    any mode or nesting.

    Example:
        >>> import transforms as T
        >>> T.grad(lambda x: x * T.stop_gradient(x))(3.0)  # d/dx of x * c at c = x
        array(3.)
    """
    if isinstance(x, (np.ndarray, Tracer)):
        return stop_gradient_p.bind(x)  # type: ignore[return-value]
    return tree_map(stop_gradient_p.bind, x)
