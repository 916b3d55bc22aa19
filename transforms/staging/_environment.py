"""What a jitted function reads by name, so that a replay is never stale.

JAX bakes closed-over arrays and globals into the compiled program; a jitted function here
must instead see the world as it is at each call. Before recording, the function's
environment is walked: the module globals its code names (its nested functions' code too),
its closure cells, a bound method's object, a ``functools.partial``'s arguments, and, through
each Python function, tuple, list or dict found there, what those hold in turn. Each slot
becomes a guard checked before every replay:

- a **binding** guard per global name, closure cell, object attribute and container entry:
  rebinding it (``W = new``, ``params["w"] = new``) is a miss, and the function is recorded
  again;
- a **length** guard per list and dict: a function iterating over one sees a new entry;
- a **bits** guard per array found: the recording may have consumed it through plain NumPy
  (``np.exp(W)`` computed once, or an ``if W[0] > 0``), so an in-place write into it makes
  the recording stale; a replay then records again (see ``_cache``: such a miss replaces
  its specialisation instead of adding one). An array that reaches a primitive directly is
  also read by reference (``Const`` of kind ``external``);
- a **name** guard per Dask array found: its bits are never read (that would compute it), but
  its graph's ``name`` changes with every item assignment (``X[0] = v``), and a rebinding is
  a binding miss, so together they are exact; it too is read by reference. An array of
  another foreign library (CuPy: written in place, its bits on a device) is not guarded: the
  function runs eagerly, with a ``JitWarning``.

What is not walked (modules, attributes reached through another object than a bound method's
``self``, the library's own functions) is a documented hole (docs/jit.md).
"""

from __future__ import annotations

import contextlib
import functools
import os
import types
from typing import Any

import numpy as np

from transforms.core import Tracer, arrays
from transforms.reverse._protect import _same_bytes

from ._program import EnvCheck
from ._record import Unrecordable, is_lazy

__all__ = ["environment", "unchanged"]

_MAX_SLOTS = 4096  # a function that reads more than this is guarded up to here (documented)
_MAX_DEPTH = 6
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # transforms/
_FOREIGN = ("numpy", "scipy", "builtins", "functools", "math")


def _ours(fn: types.FunctionType) -> bool:
    """A function of this library (a transform's wrapper): its globals are ours and never
    rebound, but its closure holds the user's function, which is walked."""
    return os.path.abspath(fn.__code__.co_filename).startswith(_PACKAGE)


class _Walk:
    def __init__(self) -> None:
        self.checks: list[EnvCheck] = []
        self.arrays: dict[int, Any] = {}
        self.seen: set[int] = set()
        self.tracer: Tracer | None = None  # a value of a live transform, read by name
        self.foreign: object = None  # an array of a library that cannot be guarded

    def full(self) -> bool:
        return len(self.checks) >= _MAX_SLOTS

    def value(self, value: object, name: str, depth: int) -> None:
        if id(value) in self.seen or depth > _MAX_DEPTH or self.full():
            return
        self.seen.add(id(value))
        if isinstance(value, Tracer):
            self.tracer = value
        elif type(value) is np.ndarray:
            self.arrays[id(value)] = value
            snapshot = value.copy()
            snapshot.flags.writeable = False
            self.checks.append(EnvCheck("bits", value, None, snapshot, name))
        elif is_lazy(value):
            self.arrays[id(value)] = value
            self.checks.append(EnvCheck("name", value, None, value.name, name))  # type: ignore[attr-defined]
        elif arrays.is_foreign(value):
            self.foreign = value
        elif isinstance(value, types.FunctionType):
            if _ours(value):
                for i, cell in enumerate(value.__closure__ or ()):
                    with contextlib.suppress(ValueError):  # (an empty cell)
                        self.value(cell.cell_contents, f"{name}.<closure {i}>", depth + 1)
            elif (value.__module__ or "").split(".")[0] not in _FOREIGN:
                self.function(value, depth + 1)
        elif isinstance(value, types.MethodType):
            self.value(value.__func__, name, depth)
            self.attributes(value.__self__, f"{name}.__self__", depth + 1)
        elif isinstance(value, functools.partial):
            self.value(value.func, name, depth)
            for i, arg in enumerate(value.args):
                self.value(arg, f"{name}.args[{i}]", depth + 1)
            for key, arg in value.keywords.items():
                self.value(arg, f"{name}.keywords[{key!r}]", depth + 1)
        elif type(value) is tuple:
            for i, item in enumerate(value):
                self.value(item, f"{name}[{i}]", depth + 1)
        elif type(value) is list:
            self.checks.append(EnvCheck("length", value, None, len(value), name))
            for i, item in enumerate(value):
                self.slot(value, i, item, f"{name}[{i}]", depth + 1)
        elif type(value) is dict:
            self.checks.append(EnvCheck("length", value, None, len(value), name))
            for key, item in list(value.items()):
                self.slot(value, key, item, f"{name}[{key!r}]", depth + 1)

    def slot(self, holder: Any, key: Any, value: object, name: str, depth: int) -> None:
        if self.full():
            return
        self.checks.append(EnvCheck("binding", holder, key, value, name))
        self.value(value, name, depth)

    def attributes(self, obj: object, name: str, depth: int) -> None:
        attrs = getattr(obj, "__dict__", None)
        if type(attrs) is dict and not isinstance(obj, types.ModuleType):
            for key, item in list(attrs.items()):
                self.slot(attrs, key, item, f"{name}.{key}", depth)

    def function(self, fn: types.FunctionType, depth: int) -> None:
        module = fn.__globals__
        for name in _global_names(fn.__code__):
            if name in module:
                self.slot(module, name, module[name], f"global {name!r}", depth)
        for cell, name in zip(fn.__closure__ or (), fn.__code__.co_freevars, strict=True):
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell: a name the enclosing scope assigns later
                continue
            self.slot(cell, None, value, f"closure variable {name!r}", depth)
        for i, default in enumerate(fn.__defaults__ or ()):
            self.value(default, f"default {i} of {fn.__qualname__}", depth)


def _global_names(code: types.CodeType) -> list[str]:
    names = list(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):  # a nested function, lambda or comprehension
            names += _global_names(const)
    return names


def environment(fun: object, objects: list[Any]) -> tuple[list[EnvCheck], dict[int, Any]]:
    """The guards on what ``fun`` reads by name, and on the attributes of ``objects`` (the
    arguments it is specialised on by identity, a method's ``self``), and the arrays found
    there (by id).

    Raises:
        Unrecordable: ``fun`` reads a tracer of a live transform by name (a closure over a
            value being differentiated): its Python decisions on it could not be guarded; or
            an array of a foreign library other than Dask.
    """
    walk = _Walk()
    walk.value(fun, getattr(fun, "__qualname__", "function"), 0)
    if not isinstance(fun, (types.FunctionType, types.MethodType, functools.partial)):
        walk.attributes(fun, "callable", 1)  # a callable object: its attributes
        call = vars(type(fun)).get("__call__")
        if isinstance(call, types.FunctionType):
            walk.value(call, "__call__", 1)
    for i, obj in enumerate(objects):
        walk.attributes(obj, f"argument object {i}", 1)
    if walk.tracer is not None:
        raise Unrecordable(
            f"the function reaches a value of an outer transform ({walk.tracer._trace.name}) "
            "by name: a closure over a traced value"
        )
    if walk.foreign is not None:
        raise Unrecordable(
            f"the function reads a {arrays.library_of(walk.foreign)} array by name, which "
            "cannot be guarded against writes without reading it back; pass it as an argument"
        )
    return walk.checks, walk.arrays


def unchanged(checks: list[EnvCheck]) -> bool:
    """Whether every array found still holds its snapshot's bits, and every Dask array its
    graph (after a recording: a function that writes into an array it reads by name cannot
    be replayed)."""
    return all(
        _same_bytes(c.holder, c.expected) if c.kind == "bits" else c.holder.name == c.expected
        for c in checks
        if c.kind in ("bits", "name")
    )
