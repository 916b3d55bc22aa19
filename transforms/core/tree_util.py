"""Pytrees: nested containers (tuple, list, dict, None, namedtuples, registered types) of
array leaves.

Transforms flatten their inputs and outputs to lists of leaves, act on the leaves, and
rebuild the same structure. ``None`` is an empty node (no leaves), as in JAX; dict children
are ordered by sorted key, so two dicts with the same keys flatten alike. Every namedtuple
class is a node (registered the first time one is flattened), as in JAX.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, overload

from ._types import Array

__all__ = [
    "PyTreeDef",
    "tree_flatten",
    "tree_unflatten",
    "tree_leaves",
    "tree_structure",
    "tree_map",
    "register_pytree_node",
    "register_dataclass",
]

T = TypeVar("T")
#: The type of a whole tree (``Params``, ``dict[str, Array]``): kept by flatten/unflatten.
Tree = TypeVar("Tree")

_Flatten = Callable[[Any], tuple[Iterable[Any], Hashable]]
_Unflatten = Callable[[Hashable, list[Any]], Any]


@dataclass(frozen=True)
class _NodeKind:
    flatten: _Flatten
    unflatten: _Unflatten


_REGISTRY: dict[type, _NodeKind] = {}


def register_pytree_node(
    node_type: type[T],
    flatten: Callable[[T], tuple[Iterable[Any], Hashable]],
    unflatten: Callable[[Hashable, list[Any]], T],
) -> None:
    """Make ``node_type`` a pytree node.

    Args:
        node_type: the container class.
        flatten: ``obj -> (children, aux)``; ``aux`` is hashable static data.
        unflatten: ``(aux, children) -> obj``.

    Example:
        >>> import transforms as T
        >>> class Point:
        ...     def __init__(self, x, y):
        ...         self.x, self.y = x, y
        >>> T.tree_util.register_pytree_node(
        ...     Point, lambda p: ((p.x, p.y), None), lambda _, xy: Point(*xy)
        ... )
        >>> g = T.grad(lambda p: p.x * p.y)(Point(2.0, 3.0))  # the gradient is a Point
        >>> g.x, g.y
        (array(3.), array(2.))
    """
    if node_type in _REGISTRY:
        raise ValueError(f"{node_type.__name__} is already registered as a pytree node")
    _REGISTRY[node_type] = _NodeKind(flatten, unflatten)


register_pytree_node(tuple, lambda t: (t, None), lambda _, c: tuple(c))
register_pytree_node(list, lambda t: (t, None), lambda _, c: list(c))
register_pytree_node(
    dict,
    lambda d: ([d[k] for k in sorted(d)], tuple(sorted(d))),
    lambda keys, c: dict(zip(keys, c, strict=True)),  # type: ignore[call-overload]
)
register_pytree_node(type(None), lambda _: ((), None), lambda _, __: None)


def _register_namedtuple(cls: type) -> _NodeKind:
    kind = _NodeKind(lambda t: (t, None), lambda _, children: cls(*children))
    _REGISTRY[cls] = kind
    return kind


def register_dataclass(
    nodetype: type[T],
    data_fields: Sequence[str] | None = None,
    meta_fields: Sequence[str] | None = None,
    drop_fields: Sequence[str] = (),
) -> type[T]:
    """Make a dataclass-like class a pytree node (JAX's ``jax.tree_util.register_dataclass``).

    Args:
        nodetype: the class; its constructor takes every field as a keyword.
        data_fields: the fields holding arrays (the leaves, differentiated); by default,
            for a dataclass, every field not marked ``field(metadata={"static": True})``.
        meta_fields: static fields (hashable, part of the structure); by default, for a
            dataclass, the fields marked static.
        drop_fields: dataclass fields left out of both (for ``init=False`` fields).

    Returns:
        ``nodetype`` itself, so that it works as a decorator.

    Example:
        >>> import dataclasses
        >>> import transforms as T
        >>> @T.tree_util.register_dataclass
        ... @dataclasses.dataclass
        ... class Params:
        ...     w: object
        ...     b: object
        ...     name: str = dataclasses.field(default="lin", metadata={"static": True})
        >>> T.grad(lambda p: p.w * p.b)(Params(2.0, 3.0))
        Params(w=array(3.), b=array(2.), name='lin')
    """
    if data_fields is None or meta_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(
                f"register_dataclass: {nodetype.__name__} is not a dataclass, so data_fields "
                "and meta_fields must both be given"
            )
        fields = [f for f in dataclasses.fields(nodetype) if f.name not in drop_fields]
        if data_fields is None:
            data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        if meta_fields is None:
            meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    data, meta = tuple(data_fields), tuple(meta_fields)
    if set(data) & set(meta):
        raise ValueError(
            f"register_dataclass: {nodetype.__name__}: fields {sorted(set(data) & set(meta))} "
            "are both data and meta fields"
        )

    def flatten(obj: T) -> tuple[list[Any], Hashable]:
        return [getattr(obj, n) for n in data], tuple(getattr(obj, n) for n in meta)

    def unflatten(aux: Hashable, children: list[Any]) -> T:
        fields = dict(zip(data, children, strict=True))
        fields.update(zip(meta, aux, strict=True))  # type: ignore[call-overload]
        return nodetype(**fields)

    register_pytree_node(nodetype, flatten, unflatten)
    return nodetype


@dataclass(frozen=True)
class PyTreeDef(Generic[Tree]):
    """The structure of a pytree: everything but its leaves. ``kind is None`` marks a leaf.

    Typed by the tree it describes: ``tree_unflatten(tree_structure(p), leaves)`` has ``p``'s
    type.
    """

    kind: type | None
    aux: Hashable
    children: tuple[PyTreeDef[Any], ...]
    num_leaves: int

    def unflatten(self, leaves: Iterable[Any]) -> Tree:
        """Rebuild the tree with ``leaves`` in place of the original ones."""
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"expected {self.num_leaves} leaves for {self}, got {len(leaves)}")
        it = iter(leaves)
        tree: Tree = self._build(it)
        return tree

    def _build(self, leaves: Any) -> Any:
        if self.kind is None:
            return next(leaves)
        kids = [child._build(leaves) for child in self.children]
        return _REGISTRY[self.kind].unflatten(self.aux, kids)

    def __str__(self) -> str:
        if self.kind is None:
            return "*"
        inner = ", ".join(str(c) for c in self.children)
        return f"{self.kind.__name__}({inner})"


_LEAF: PyTreeDef[Any] = PyTreeDef(None, None, (), 1)


def tree_flatten(tree: Tree) -> tuple[list[Any], PyTreeDef[Tree]]:
    """Split ``tree`` into its leaves (left to right) and its structure."""
    leaves: list[Any] = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree: Any, leaves: list[Any]) -> PyTreeDef[Any]:
    kind = _REGISTRY.get(type(tree))
    if kind is None:
        if not (isinstance(tree, tuple) and hasattr(type(tree), "_fields")):
            leaves.append(tree)
            return _LEAF
        kind = _register_namedtuple(type(tree))
    children, aux = kind.flatten(tree)
    defs = tuple(_flatten(c, leaves) for c in children)
    return PyTreeDef(type(tree), aux, defs, sum(d.num_leaves for d in defs))


def tree_unflatten(treedef: PyTreeDef[Tree], leaves: Iterable[Any]) -> Tree:
    """Inverse of ``tree_flatten``."""
    return treedef.unflatten(leaves)


def tree_leaves(tree: object) -> list[Any]:
    """The leaves of ``tree``, left to right."""
    return tree_flatten(tree)[0]


def tree_structure(tree: Tree) -> PyTreeDef[Tree]:
    """The structure of ``tree``."""
    return tree_flatten(tree)[1]


@overload
def tree_map(f: Callable[[Array], Array], tree: Tree, /) -> Tree: ...
@overload
def tree_map(f: Callable[[Array, Array], Array], tree: Tree, other: Tree, /) -> Tree: ...
@overload
def tree_map(
    f: Callable[[Array, Array, Array], Array], tree: Tree, second: Tree, third: Tree, /
) -> Tree: ...
@overload
def tree_map(
    f: Callable[..., Array], tree: Tree, second: Tree, third: Tree, fourth: Tree, /, *rest: Tree
) -> Tree: ...
def tree_map(f: Callable[..., Any], tree: Any, /, *rest: Any) -> Any:
    """Apply ``f`` leaf-wise to ``tree`` and trees of the same structure ``rest``.

    Typed for what it is for, a function of arrays to arrays: the result has the tree's
    type (``tree_map(lambda p, g: p - lr * g, params, grads)`` is a ``Params``). To collect
    other values per leaf (shapes, norms), use ``tree_leaves``.
    """
    leaves, treedef = tree_flatten(tree)
    others = [tree_flatten(r) for r in rest]
    for _, other_def in others:
        if other_def != treedef:
            raise ValueError(f"tree_map: structures differ: {treedef} and {other_def}")
    return treedef.unflatten(f(*xs) for xs in zip(leaves, *(o[0] for o in others), strict=True))
