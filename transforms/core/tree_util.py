"""Pytrees: nested containers (tuple, list, dict, None, namedtuples, registered types) of
array leaves.

Transforms flatten their inputs and outputs to lists of leaves, act on the leaves, and
rebuild the same structure. ``None`` is an empty node (no leaves), as in JAX; dict children
are ordered by sorted key, so two dicts with the same keys flatten alike. Every namedtuple
class is a node (registered the first time one is flattened), as in JAX.
"""

from __future__ import annotations

import dataclasses
import functools
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
    "tree_all",
    "tree_reduce",
    "tree_transpose",
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


def _node_kind(tree: object) -> _NodeKind | None:
    """How ``tree`` flattens, or None for a leaf; a namedtuple class is registered when first
    seen (a node in every transform, as in JAX)."""
    kind = _REGISTRY.get(type(tree))
    if kind is None and isinstance(tree, tuple) and hasattr(type(tree), "_fields"):
        cls = type(tree)
        kind = _REGISTRY[cls] = _NodeKind(lambda t: (t, None), lambda _, kids: cls(*kids))
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
        # (a fresh list: a registered type's unflatten may keep the one it is given; a bare
        # leaf, the commonest tree, keeps nothing, so its caller's list is read as it is)
        if self.kind is not None or type(leaves) is not list:
            leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"expected {self.num_leaves} leaves for {self}, got {len(leaves)}")
        if self.kind is None:
            tree: Tree = leaves[0]
        elif all(c is _LEAF for c in self.children):  # its children are its leaves
            tree = _REGISTRY[self.kind].unflatten(self.aux, leaves)
        else:
            tree = self._build(iter(leaves))
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


def tree_flatten(
    tree: Tree, is_leaf: Callable[[Any], bool] | None = None
) -> tuple[list[Any], PyTreeDef[Tree]]:
    """Split ``tree`` into its leaves (left to right) and its structure; a subtree for which
    ``is_leaf`` returns True is one leaf."""
    if is_leaf is None and type(tree) not in _REGISTRY and not isinstance(tree, tuple):
        return [tree], _LEAF  # a bare array: every transform flattens many
    leaves: list[Any] = []
    if is_leaf is not None:
        return leaves, _flatten_until(tree, leaves, is_leaf)
    return leaves, _flatten(tree, leaves)


# The structures of tuples, lists and dicts whose children are all leaves (the arguments of
# a call, a dict of parameters), shared: the transforms flatten the same few on every call,
# and building a PyTreeDef costs more than finding it. Bounded: a program with many shapes
# of such nodes stops adding to it.
_FLAT_NODES: dict[tuple[type, Hashable, int], PyTreeDef[Any]] = {}
_FLAT_NODES_MAX = 4096
_SHARED_KINDS = (tuple, list, dict)  # their aux: None, or a dict's sorted keys


def _flatten(tree: Any, leaves: list[Any]) -> PyTreeDef[Any]:
    kind = _node_kind(tree)
    if kind is None:
        leaves.append(tree)
        return _LEAF
    children, aux = kind.flatten(tree)
    defs = []
    nodes = False  # whether a child is a node
    for c in children:
        if type(c) in _REGISTRY or isinstance(c, tuple):  # a namedtuple not yet seen too
            defs.append(_flatten(c, leaves))
            nodes = True
        else:
            leaves.append(c)
            defs.append(_LEAF)
    if nodes:
        return PyTreeDef(type(tree), aux, tuple(defs), sum(d.num_leaves for d in defs))
    n = len(defs)
    if type(tree) not in _SHARED_KINDS:  # a registered type's aux may be anything
        return PyTreeDef(type(tree), aux, tuple(defs), n)
    key = (type(tree), aux, n)
    node = _FLAT_NODES.get(key)
    if node is None:
        node = PyTreeDef(type(tree), aux, tuple(defs), n)
        if len(_FLAT_NODES) < _FLAT_NODES_MAX:
            _FLAT_NODES[key] = node
    return node


def tree_unflatten(treedef: PyTreeDef[Tree], leaves: Iterable[Any]) -> Tree:
    """Inverse of ``tree_flatten``."""
    return treedef.unflatten(leaves)


def tree_leaves(tree: object, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of ``tree``, left to right."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Tree, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef[Tree]:
    """The structure of ``tree``."""
    return tree_flatten(tree, is_leaf)[1]


IsLeaf = Callable[[Any], bool] | None


@overload
def tree_map(f: Callable[[Array], Array], tree: Tree, /, *, is_leaf: IsLeaf = None) -> Tree: ...
@overload
def tree_map(
    f: Callable[[Array, Array], Array], tree: Tree, other: Tree, /, *, is_leaf: IsLeaf = None
) -> Tree: ...
@overload
def tree_map(
    f: Callable[[Array, Array, Array], Array],
    tree: Tree,
    second: Tree,
    third: Tree,
    /,
    *,
    is_leaf: IsLeaf = None,
) -> Tree: ...
@overload
def tree_map(
    f: Callable[..., Array],
    tree: Tree,
    second: Tree,
    third: Tree,
    fourth: Tree,
    /,
    *rest: Tree,
    is_leaf: IsLeaf = None,
) -> Tree: ...
def tree_map(f: Callable[..., Any], tree: Any, /, *rest: Any, is_leaf: IsLeaf = None) -> Any:
    """Apply ``f`` leaf-wise to ``tree`` and trees ``rest`` of the same structure (or with
    ``tree``'s structure as a prefix: a leaf of ``tree`` then receives a whole subtree of
    each of ``rest``, as in JAX); a subtree for which ``is_leaf`` returns True is one leaf.

    Typed for what it is for, a function of arrays to arrays: the result has the tree's
    type (``tree_map(lambda p, g: p - lr * g, params, grads)`` is a ``Params``). To collect
    other values per leaf (shapes, norms), use ``tree_leaves``.

    Example:
        >>> import transforms as T
        >>> params, grads = {"w": 1.0, "b": 2.0}, {"w": 10.0, "b": 0.0}
        >>> T.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)
        {'b': 2.0, 'w': 0.0}
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = [_flatten_up_to(treedef, r, "tree_map") for r in rest]
    return treedef.unflatten(f(*xs) for xs in zip(leaves, *others, strict=True))


# ---- more of JAX's tree utilities ----------------------------------------------------------
def _flatten_until(tree: Any, leaves: list[Any], is_leaf: Callable[[Any], bool]) -> PyTreeDef[Any]:
    """``_flatten`` that stops at the subtrees ``is_leaf`` accepts."""
    kind = None if is_leaf(tree) else _node_kind(tree)
    if kind is None:
        leaves.append(tree)
        return _LEAF
    children, aux = kind.flatten(tree)
    defs = tuple(_flatten_until(c, leaves, is_leaf) for c in children)
    return PyTreeDef(type(tree), aux, defs, sum(d.num_leaves for d in defs))


def _flatten_up_to(treedef: PyTreeDef[Any], tree: Any, caller: str) -> list[Any]:
    """The subtrees of ``tree`` at the leaves of ``treedef`` (which must be a prefix of
    ``tree``'s structure), left to right."""
    out: list[Any] = []

    def walk(d: PyTreeDef[Any], t: Any) -> None:
        if d.kind is None:
            out.append(t)
            return
        if type(t) is not d.kind:
            raise ValueError(
                f"{caller}: structures differ: expected a {d.kind.__name__} ({d}), got "
                f"{type(t).__name__}: {tree_structure(t)}"
            )
        children, aux = _REGISTRY[d.kind].flatten(t)
        children = list(children)
        if aux != d.aux or len(children) != len(d.children):
            raise ValueError(f"{caller}: structures differ: {d} and {tree_structure(t)}")
        for child_def, child in zip(d.children, children, strict=True):
            walk(child_def, child)

    walk(treedef, tree)
    return out


_MISSING: Any = object()


def tree_reduce(
    function: Callable[[T, Any], T],
    tree: Any,
    initializer: T = _MISSING,
    is_leaf: IsLeaf = None,
) -> T:
    """``functools.reduce(function, tree_leaves(tree), initializer)``, as ``jax.tree_util``.

    Example:
        >>> import operator
        >>> from transforms.tree_util import tree_reduce
        >>> tree_reduce(operator.add, {"a": 1, "b": (2, 3)})
        6
    """
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _MISSING:
        if not leaves:
            raise TypeError("tree_reduce: the tree has no leaves and no initializer was given")
        result: T = functools.reduce(function, leaves)
        return result
    return functools.reduce(function, leaves, initializer)


def tree_transpose(
    outer_treedef: PyTreeDef[Any], inner_treedef: PyTreeDef[Any], pytree_to_transpose: Any
) -> Any:
    """A tree of structure outer-of-inner turned into one of inner-of-outer (a list of dicts
    into a dict of lists), as ``jax.tree_util.tree_transpose``.

    Example:
        >>> from transforms.tree_util import tree_structure, tree_transpose
        >>> rows = [{"x": 1, "y": 2}, {"x": 3, "y": 4}]
        >>> tree_transpose(tree_structure([0, 0]), tree_structure({"x": 0, "y": 0}), rows)
        {'x': [1, 3], 'y': [2, 4]}
    """
    subtrees = _flatten_up_to(outer_treedef, pytree_to_transpose, "tree_transpose")
    columns: list[list[Any]] = [[] for _ in range(inner_treedef.num_leaves)]
    for subtree in subtrees:
        for column, leaf in zip(
            columns, _flatten_up_to(inner_treedef, subtree, "tree_transpose"), strict=True
        ):
            column.append(leaf)
    return inner_treedef.unflatten(outer_treedef.unflatten(column) for column in columns)


def tree_all(tree: Any, is_leaf: IsLeaf = None) -> bool:
    """Whether every leaf of ``tree`` is truthy (``jax.tree_util.tree_all``)."""
    return all(tree_leaves(tree, is_leaf))
