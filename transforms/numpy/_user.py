"""Primitives made from a user's NumPy function, autograd-style, with pytree arguments.

``primitive(fun)`` makes ``fun`` a primitive whose rules the user gives with ``defjvp``,
``defvjp`` and ``defbatch``. Its arguments may be pytrees (tuples, lists, dicts, registered
nodes) of arrays: the call flattens them, so every leaf is an operand that the interpreters
see, and the rules receive the structure back — one rule per top-level argument, whose
tangent or cotangent has that argument's structure, as in JAX. (A tracer hidden in a
container passed to a plain ``Primitive.bind`` would reach the implementation unseen, its
derivative dropped; ``bind`` refuses that, and this is the way to do it instead.)

``defjvp``/``defvjp``/``defbatch`` here are the public ones: on a primitive of ``primitive``
they adapt the per-argument rules to its flat operands; on any other primitive they register
the rules as given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from transforms import batching, forward, reverse
from transforms.core import NoRuleError, Primitive, Tracer
from transforms.core.tree_util import PyTreeDef, tree_flatten

from ._shape import zeros_like

__all__ = ["FunctionPrimitive", "primitive", "defjvp", "defvjp", "defbatch"]


class FunctionPrimitive(Primitive):
    """A primitive made by :func:`primitive`: called with pytree arguments, bound flat.

    ``p(*args, **kwargs)`` flattens ``args`` into leaves (the operands) and binds them with
    their structure as the parameter ``treedef``; keyword arguments are static parameters,
    passed to the function and to every rule.
    """

    __slots__ = ("fun",)

    def __init__(self, fun: Callable[..., Any]) -> None:
        self.fun = fun
        super().__init__(
            getattr(fun, "__name__", "primitive"),
            self._apply,
            module=getattr(fun, "__module__", None) or "",
        )

    def _apply(self, *leaves: Any, treedef: PyTreeDef[Any], **kwargs: Any) -> Any:
        return self.fun(*treedef.unflatten(leaves), **kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        leaves, treedef = tree_flatten(args)
        return self.bind(*leaves, treedef=treedef, **kwargs)


def primitive(fun: Callable[..., Any]) -> FunctionPrimitive:
    """Make ``fun`` (a NumPy implementation) a primitive, autograd-style; give it rules with
    ``defjvp``/``defvjp`` (and ``defbatch`` for ``vmap``).

    Its arguments may be pytrees of arrays: each rule receives the arguments with their
    structure, and the tangent (or returns the cotangent) of its own argument with that
    argument's structure.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> @T.primitive
        ... def log1p(x):
        ...     return np.log1p(x)
        >>> T.defjvp(log1p, lambda t, ans, x: t / (1 + x))
        >>> T.defvjp(log1p, lambda ans, x: lambda ct: ct / (1 + x))
        >>> T.grad(log1p)(1.0)
        array(0.5)
    """
    return FunctionPrimitive(fun)


def _spans(treedef: PyTreeDef[Any]) -> list[tuple[int, int, PyTreeDef[Any]]]:
    """For each top-level argument: its first leaf, one past its last, its structure."""
    spans, start = [], 0
    for child in treedef.children:
        spans.append((start, start + child.num_leaves, child))
        start += child.num_leaves
    return spans


def _owner(treedef: PyTreeDef[Any], leaf: int) -> tuple[int, int, PyTreeDef[Any]]:
    """The top-level argument that leaf ``leaf`` belongs to: its position, first leaf, tree."""
    for argnum, (start, stop, tree) in enumerate(_spans(treedef)):
        if start <= leaf < stop:
            return argnum, start, tree
    raise IndexError(f"leaf {leaf} is not among the {treedef.num_leaves} leaves of {treedef}")


def _is_numeric(leaf: Any) -> bool:
    return isinstance(leaf, (np.ndarray, np.generic, Tracer, int, float, complex))


def _filled(tangents: Sequence[Any], leaves: Sequence[Any]) -> list[Any]:
    """Zero tangents for the leaves no tracer of this transform occupies."""
    return [
        zeros_like(leaf) if t is None and _is_numeric(leaf) else t
        for t, leaf in zip(tangents, leaves, strict=True)
    ]


def defjvp(prim: Primitive, *rules: forward.JVPRule | None) -> None:
    """Define the JVP of ``prim`` one argument at a time: ``rule(t, ans, *args, **kwargs)``
    returns the tangent of ``ans`` for the tangent ``t`` of that argument; ``None`` declares
    the output independent of it.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> cube = T.primitive(lambda x: x**3)
        >>> T.defjvp(cube, lambda t, ans, x: 3 * x**2 * t)
        >>> T.jvp(cube, (2.0,), (1.0,))
        (array(8.), array(12.))
    """
    if not isinstance(prim, FunctionPrimitive):
        forward.defjvp(prim, *rules)
        return
    name = prim.name

    def joint(
        tangents: Sequence[Any], ans: Any, *leaves: Any, treedef: PyTreeDef[Any], **kw: Any
    ) -> Any:
        args = treedef.unflatten(leaves)
        out = None
        for argnum, (start, stop, tree) in enumerate(_spans(treedef)):
            ts = tangents[start:stop]
            if all(t is None for t in ts):
                continue
            if argnum >= len(rules):
                raise NoRuleError(name, "jvp", argnum, "transforms.defjvp")
            rule = rules[argnum]
            if rule is None:
                continue
            t_arg = tree.unflatten(_filled(ts, leaves[start:stop]))
            term = rule(t_arg, ans, *args, **kw)
            out = term if out is None else out + term
        return out

    forward.defjvp_joint(prim, joint)


class _Last:
    """A one-entry memo: the value computed for the very same key objects."""

    __slots__ = ("key", "value")

    def __init__(self) -> None:
        self.key: tuple[Any, ...] = ()
        self.value: Any = None

    def get(self, key: tuple[Any, ...], compute: Callable[[], Any]) -> Any:
        if len(key) != len(self.key) or any(a is not b for a, b in zip(key, self.key, strict=True)):
            self.key, self.value = key, compute()
        return self.value


def defvjp(prim: Primitive, *makers: reverse.VJPMaker | None) -> None:
    """Define the VJP of ``prim``, one maker per positional argument:
    ``maker(ans, *args, **kwargs)`` runs at forward time and returns ``ct -> cotangent``,
    with the argument's structure, shapes and dtypes (``None`` declares a zero cotangent).

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> cube = T.primitive(lambda x: x**3)
        >>> T.defvjp(cube, lambda ans, x: lambda ct: 3 * x**2 * ct)
        >>> T.grad(cube)(2.0)
        array(12.)
    """
    if not isinstance(prim, FunctionPrimitive):
        reverse.defvjp(prim, *makers)
        return
    name = prim.name
    pullbacks = _Last()  # every leaf of one argument shares its maker's pullback ...
    results = _Last()  # ... and each cotangent's result

    def maker(
        j: int, ans: Any, *leaves: Any, treedef: PyTreeDef[Any], **kw: Any
    ) -> reverse.Pullback:
        argnum, start, tree = _owner(treedef, j)
        if argnum >= len(makers):
            raise NoRuleError(name, "vjp", argnum, "transforms.defvjp")
        arg_maker = makers[argnum]
        if arg_maker is None:
            return lambda ct: zeros_like(leaves[j])
        made = arg_maker

        def make() -> reverse.Pullback:
            return made(ans, *treedef.unflatten(leaves), **kw)

        pullback = pullbacks.get((argnum, ans, *leaves), make)

        def leaf_pullback(ct: Any) -> Any:
            flat = results.get(
                (pullback, ct), lambda: _cotangent_leaves(name, argnum, tree, pullback(ct))
            )
            return flat[j - start]

        return leaf_pullback

    reverse.defvjp_argnum(prim, maker)


def _cotangent_leaves(name: str, argnum: int, tree: PyTreeDef[Any], ct: Any) -> list[Any]:
    leaves, got = tree_flatten(ct)
    if got != tree:
        raise TypeError(
            f"the VJP rule of primitive '{name}' for argument {argnum} returned a cotangent of "
            f"structure {got}; it must have the argument's structure {tree}"
        )
    return leaves


def defbatch(prim: Primitive, rule: batching.BatchRule) -> None:
    """Define how ``prim`` acts on batched operands: ``rule(args, dims, **kwargs)`` gets the
    arguments with their batch axes still in them and, with the arguments' structure, each
    leaf's batch axis (``None``: not batched), and returns ``(out, out_dim)``.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> cube = T.primitive(lambda x: x**3)
        >>> T.defbatch(cube, lambda args, dims: (cube(*args), dims[0]))
        >>> T.vmap(cube)(np.array([1.0, 2.0]))
        array([1., 8.])
    """
    if not isinstance(prim, FunctionPrimitive):
        batching.defbatch(prim, rule)
        return

    def flat_rule(
        values: Sequence[Any], dims: Sequence[int | None], *, treedef: PyTreeDef[Any], **kw: Any
    ) -> tuple[Any, Any]:
        return rule(treedef.unflatten(values), treedef.unflatten(dims), **kw)

    batching.defbatch(prim, flat_rule)
