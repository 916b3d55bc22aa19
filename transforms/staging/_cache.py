"""The cache of specialisations: per argument signature, the recorded programs that apply.

The key of a call is what a recording depends on without guarding it: the argument tree's
structure, each array's type, shape and dtype, the value of every non-array leaf (a Python
scalar is specialised on, not traced: a traced one would change NumPy's type promotion),
and the static arguments. Under one key live up to ``max_specializations`` programs, each
with its guards; a call replays the first whose guards all hold (the one that applied
last is tried first). When none applies the call is recorded again and the new program
joins them; a program whose closed-over array was written into since (a ``stale`` miss)
is replaced rather than joined. At the bound, a warning names the guard that missed and
its source line, and calls whose guards all miss run eagerly from then on.

Thread-safe: the table and each entry's program tuple are replaced under a lock, never
mutated in place, so a call reads a consistent tuple without taking it; recordings run
outside the lock (each thread's trace stack is its own), so two threads that miss at once
may both record the same path: a harmless duplicate.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from transforms.core.tree_util import PyTreeDef

from ._program import Check, EnvCheck, Program

__all__ = ["Cache", "Entry", "Specialisation", "JitStats"]


@dataclass(frozen=True)
class Specialisation:
    """One recorded program, compiled: ``run(*traced_leaves)`` returns the output leaves;
    ``guards[k]`` is the guard a ``GuardMiss(k)`` names."""

    program: Program
    source: str
    run: Callable[..., tuple[Any, ...]]
    out_tree: PyTreeDef[Any]
    guards: tuple[Check | EnvCheck, ...]


@dataclass
class Entry:
    """The specialisations of one key; ``eager``: the bound was hit or the function cannot
    be recorded for this key (calls whose guards all miss run eagerly)."""

    programs: tuple[Specialisation, ...] = ()
    eager: bool = False


@dataclass
class JitStats:
    """What a jitted function has done so far (``Jitted.stats``).

    Attributes:
        records: recordings (the first call of each key, and one per guard miss).
        replays: calls answered by a recorded program.
        misses: guard misses (a program tried whose guard failed).
        eager: calls run eagerly (outer tracers, the bound, an unrecordable function).
        specializations: live programs over all keys.
    """

    records: int = 0
    replays: int = 0
    misses: int = 0
    eager: int = 0
    specializations: int = 0


@dataclass
class Cache:
    """The table of entries of one jitted function, and its counters."""

    entries: dict[Hashable, Entry] = field(default_factory=dict)
    stats: JitStats = field(default_factory=JitStats)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, what: str, n: int = 1) -> None:
        with self.lock:
            setattr(self.stats, what, getattr(self.stats, what) + n)

    def add(
        self, key: Hashable, spec: Specialisation, stale: tuple[Specialisation, ...], bound: int
    ) -> bool:
        """Add ``spec`` under ``key``, dropping ``stale`` ones; False if the bound is hit
        (the entry then turns eager)."""
        with self.lock:
            entry = self.entries.setdefault(key, Entry())
            kept = tuple(s for s in entry.programs if s not in stale)
            if len(kept) >= bound:
                entry.programs = kept
                entry.eager = True
                self._recount()
                return False
            entry.programs = (spec, *kept)
            self.stats.records += 1
            self._recount()
            return True

    def promote(self, key: Hashable, spec: Specialisation) -> None:
        """Try ``spec`` first from now on (it applied after another one missed)."""
        with self.lock:
            entry = self.entries.get(key)
            if entry is not None and spec in entry.programs and entry.programs[0] is not spec:
                entry.programs = (spec, *(s for s in entry.programs if s is not spec))

    def refuse(self, key: Hashable) -> None:
        with self.lock:
            self.entries.setdefault(key, Entry()).eager = True

    def _recount(self) -> None:
        self.stats.specializations = sum(len(e.programs) for e in self.entries.values())
