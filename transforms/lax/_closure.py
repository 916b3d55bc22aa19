"""Closure conversion: the traced values a construct's functions read by name, made operands.

A construct's primitive applies its rules to values one level below the transform that
applies them, so a function that closes over a value of that transform (Newton's step
closing over ``a``, the argument of a ``jit``-ted function or a parameter being
differentiated) cannot be bound as it is: a rule would meet the tracer itself, and a recorded
op would replay the recording's value. Converted, the function takes those values as
operands of the primitive after its own, and every run (the primal one, each rule's, each
replay) rebuilds the user's functions with the values it is given in their place: the rules
then differentiate and batch with respect to them as with any operand.

What is converted is what a function reads by name through objects that can be rebuilt
without running user code: its closure cells, its defaults, and through each of them, Python
functions (their cells and defaults in turn), ``functools.partial`` objects and tuples,
lists and dicts. A traced value reached any other way (a module global, an attribute of an
object, a callable object's state) is not: the construct's guard (``_construct._Guarded``)
still meets it on the first run and the construct runs its algorithm instead, exactly.

The rebuilt objects are copies: a function that writes into a converted cell (``nonlocal``)
or converted list or dict would write into the copy, not the user's object, so the guard
checks after the first run that each still holds what was put in (``Rebuilt.intact``) and
refuses the binding otherwise.
"""

from __future__ import annotations

import contextlib
import functools
import operator
import types
from collections.abc import Sequence
from typing import Any

from transforms.core import Tracer

__all__ = ["Closure", "Converted", "Rebuilt"]

# How deep the walk follows references (a function in a cell of a function in a list ...):
# a traced value deeper than this is left to the guard (exact, not converted).
_MAX_DEPTH = 24


class Closure:
    """The live traced values ``fun`` reads by name (``values``, each once, in the order
    found) and the objects that reach them, which ``rebuild`` copies with other values in
    their place.

    Args:
        fun: the function to convert (a construct's algorithm, whose cells hold the user's
            functions).
    """

    __slots__ = ("_children", "_nodes", "fun", "values")

    def __init__(self, fun: object) -> None:
        self.fun = fun
        self.values: list[Tracer] = []
        self._nodes: dict[int, Any] = {}
        self._children: dict[int, list[int]] = {}
        self._walk(fun, 0)
        marked = self._reaching() if self.values else set()
        # (held, so that no id is reused while this object lives)
        self._nodes = {key: self._nodes[key] for key in marked}
        self._children.clear()

    def _walk(self, value: object, depth: int) -> None:
        key = id(value)
        if key in self._nodes or depth > _MAX_DEPTH:
            return
        if isinstance(value, Tracer):
            if value._trace.alive:  # (a finished or held trace's tracer: left to the guard)
                self._nodes[key] = value
                self.values.append(value)
            return
        parts = _parts(value)
        if parts is None:
            return
        self._nodes[key] = value
        self._children[key] = [id(p) for p in parts]
        for part in parts:
            self._walk(part, depth + 1)

    def _reaching(self) -> set[int]:
        """The ids of the walked objects from which a converted value is reachable."""
        parents: dict[int, list[int]] = {}
        for key, children in self._children.items():
            for child in children:
                parents.setdefault(child, []).append(key)
        marked = {id(v) for v in self.values}
        todo = list(marked)
        while todo:
            for parent in parents.get(todo.pop(), ()):
                if parent not in marked:
                    marked.add(parent)
                    todo.append(parent)
        return marked

    def rebuild(self, values: Sequence[Any]) -> Rebuilt:
        """``fun`` with ``values`` in place of ``self.values``: every object on a path to one
        of them copied, everything else shared with the original."""
        return Rebuilt(self, values)


class Rebuilt:
    """One rebuilt copy of a ``Closure``'s function (``fun``), and what was put in its
    mutable copies (cells, lists, dicts), to check that the function did not write there."""

    __slots__ = ("_cells", "_closure", "_dicts", "_lists", "_memo", "fun")

    def __init__(self, closure: Closure, values: Sequence[Any]) -> None:
        self._closure = closure
        self._memo: dict[int, Any] = {
            id(old): new for old, new in zip(closure.values, values, strict=True)
        }
        self._cells: list[tuple[types.CellType, object]] = []
        self._lists: list[tuple[list[Any], list[Any]]] = []
        self._dicts: list[tuple[dict[Any, Any], dict[Any, Any]]] = []
        olds = [old for old in closure._nodes.values() if isinstance(old, types.CellType)]
        news = [self._new_cell(old) for old in olds]
        for old, new in zip(olds, news, strict=True):  # filled once every cell exists (a
            with contextlib.suppress(ValueError):  # function may hold itself; an empty cell
                new.cell_contents = self._copy(old.cell_contents)  # stays empty)
                self._cells.append((new, new.cell_contents))
        self.fun = self._copy(closure.fun)

    def _new_cell(self, old: types.CellType) -> types.CellType:
        new = types.CellType()
        self._memo[id(old)] = new
        return new

    def _copy(self, value: Any) -> Any:
        key, nodes = id(value), self._closure._nodes
        if key not in nodes or nodes[key] is not value:
            return value  # reaches no converted value
        if key in self._memo:
            return self._memo[key]
        copy: Any
        if isinstance(value, types.FunctionType):
            copy = self._function(value)
        elif isinstance(value, functools.partial):
            copy = functools.partial(
                self._copy(value.func),
                *(self._copy(a) for a in value.args),
                **{k: self._copy(v) for k, v in value.keywords.items()},
            )
        elif isinstance(value, list):
            copy = self._memo[key] = []
            copy.extend(self._copy(v) for v in value)
            self._lists.append((copy, list(copy)))
        elif isinstance(value, dict):
            copy = self._memo[key] = {}
            copy.update((k, self._copy(v)) for k, v in value.items())
            self._dicts.append((copy, dict(copy)))
        else:  # a tuple (see ``_parts``)
            copy = tuple(self._copy(v) for v in value)
        self._memo[key] = copy
        return copy

    def _function(self, fn: types.FunctionType) -> types.FunctionType:
        closure = None if fn.__closure__ is None else tuple(map(self._copy, fn.__closure__))
        defaults = None if fn.__defaults__ is None else tuple(map(self._copy, fn.__defaults__))
        copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, defaults, closure)
        copy.__qualname__, copy.__doc__ = fn.__qualname__, fn.__doc__
        copy.__dict__.update(fn.__dict__)
        if fn.__kwdefaults__ is not None:
            copy.__kwdefaults__ = {k: self._copy(v) for k, v in fn.__kwdefaults__.items()}
        return copy

    def intact(self) -> bool:
        """Whether every copied cell, list and dict still holds what was put in (the function
        wrote into none of them)."""
        for cell, kept in self._cells:
            try:
                if cell.cell_contents is not kept:
                    return False
            except ValueError:  # emptied (``del`` of a ``nonlocal``)
                return False
        for items, kept_items in self._lists:
            if len(items) != len(kept_items) or not all(map(operator.is_, items, kept_items)):
                return False
        for entries, kept_entries in self._dicts:
            if entries.keys() != kept_entries.keys():
                return False
            if not all(entries[k] is kept_entries[k] for k in kept_entries):
                return False
        return True


def _parts(value: object) -> list[object] | None:
    """What ``value`` holds that the walk follows, or ``None`` for an object it does not
    rebuild (see the module docs)."""
    if isinstance(value, types.FunctionType):
        parts: list[object] = list(value.__closure__ or ())
        parts.extend(value.__defaults__ or ())
        parts.extend((value.__kwdefaults__ or {}).values())
        return parts
    if isinstance(value, types.CellType):
        try:
            return [value.cell_contents]
        except ValueError:  # an empty cell: a name the enclosing scope assigns later
            return []
    if type(value) is functools.partial:
        return [value.func, *value.args, *value.keywords.values()]
    if type(value) is tuple or type(value) is list:
        return list(value)
    if type(value) is dict:
        return list(value.values())
    return None


class Converted:
    """A function of ``n`` operands and then a closure's values: the closure's function
    rebuilt with the values given, applied to the operands."""

    __slots__ = ("closure", "n")

    def __init__(self, closure: Closure, n: int) -> None:
        self.closure = closure
        self.n = n

    def __call__(self, *xs: Any) -> Any:
        return self.closure.rebuild(xs[self.n :]).fun(*xs[: self.n])

    def checked(self, *xs: Any) -> tuple[Any, bool]:
        """The call, and whether it wrote into none of its rebuilt cells, lists and dicts."""
        rebuilt = self.closure.rebuild(xs[self.n :])
        out = rebuilt.fun(*xs[: self.n])
        return out, rebuilt.intact()
