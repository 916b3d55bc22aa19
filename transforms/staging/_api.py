"""``jit``: record a function's primitives once, replay them as generated NumPy code.

The pieces: ``_environment`` (guards on what the function reads by name), ``_record`` (the
recording interpreter and its value guards), ``_program`` (the recorded program),
``_passes`` (common subexpressions, dead code, uniform constants, liveness), ``_codegen``
(Python source over NumPy calls; ``_scalar``: its 0-d ops on Python floats, ``_inplace``:
its writes into dying operands) and ``_cache`` (specialisations per argument signature).
This module ties them together: split the arguments, find or record a specialisation,
replay it, and fall back to eager execution wherever a replay could not be exact.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Generic, ParamSpec, TypeVar

import numpy as np

from transforms.core import Tracer, arrays, new_trace, no_scalars
from transforms.core.tree_util import PyTreeDef, tree_flatten

from ._cache import Cache, Entry, JitStats, Specialisation
from ._codegen import GuardMiss, generate
from ._environment import environment, unchanged
from ._passes import optimize
from ._program import Check, Const, EnvCheck, Operand, Program, Var
from ._record import RecordTrace, RecordTracer, Unrecordable, is_lazy

__all__ = ["jit", "Jitted", "Lowered", "JitWarning", "replayed"]

P = ParamSpec("P")
R = TypeVar("R")

_SCALARS = (bool, int, float, complex, str, type(None))


class JitWarning(UserWarning):
    """A jitted function runs eagerly for some calls (the bound of specialisations was hit,
    or the function does something a replay cannot repeat); the message says why."""


class Lowered:
    """The recorded program of one call, optimised, and the Python source generated for it.

    ``str(lowered)`` (or ``as_text()``) shows the program: its environment guards, its ops
    and value guards, its outputs; ``source`` is the generated function.
    """

    def __init__(self, program: Program, source: str) -> None:
        self.program = program
        self.source = source

    def as_text(self) -> str:
        return str(self.program)

    def __str__(self) -> str:
        return self.as_text()


def _scalar_key(leaf: object) -> Hashable:
    if type(leaf) is float:
        return (float, leaf.hex())  # -0.0 and NaN keyed exactly
    if type(leaf) is complex:
        return (complex, leaf.real.hex(), leaf.imag.hex())
    return (type(leaf), leaf)


def _array_like(leaf: object) -> bool:
    """An array of another library (Dask, CuPy, an ndarray subclass): never a constant."""
    return isinstance(leaf, np.ndarray) or any(
        hasattr(leaf, name) for name in ("__array__", "__array_namespace__", "__dlpack__")
    )


class _Identity:
    """An object in a cache key by identity (it is held, so its id stays its own): two equal
    objects have attributes of their own, each guarded."""

    __slots__ = ("obj",)

    def __init__(self, obj: object) -> None:
        self.obj = obj

    def __hash__(self) -> int:
        return id(self.obj)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Identity) and other.obj is self.obj


def _describe(guard: Check | EnvCheck) -> str:
    if isinstance(guard, Check):
        return f"{guard.kind}() of a value at {guard.where}"
    return f"the {guard.kind} of {guard.name}"


class Jitted(Generic[P, R]):
    """A jitted function (``jit(fun)``): call it as ``fun``; ``lower`` shows its program."""

    def __init__(
        self,
        fun: Callable[P, R],
        static_argnums: Sequence[int],
        static_argnames: Sequence[str],
        max_specializations: int,
        max_ops: int | None = None,
        warn: bool = True,
    ) -> None:
        self._fun = fun
        self._max_ops = max_ops
        self._warn = warn
        self._static_argnums = frozenset(static_argnums)
        self._static_argnames = frozenset(static_argnames)
        self._bound = max_specializations
        self._cache = Cache()
        self._name = getattr(fun, "__qualname__", type(fun).__name__)
        functools.update_wrapper(self, fun, updated=())  # (not a wrapped Jitted's state)

    def __get__(self, obj: object, objtype: type | None = None) -> Any:
        """As a method, a jitted function binds its instance, as a plain function does."""
        return self if obj is None else functools.partial(self, obj)  # type: ignore[arg-type]

    @property
    def stats(self) -> JitStats:
        """Counters of recordings, replays, guard misses and eager calls (a copy)."""
        with self._cache.lock:
            return JitStats(**vars(self._cache.stats))

    # ---- the call ------------------------------------------------------------------------
    def _split(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any], Hashable]:
        if not self._static_argnums and not self._static_argnames:
            return args, kwargs, ()
        n = len(args)
        nums = {i % n if -n <= i < n else i for i in self._static_argnums}
        static: tuple[tuple[int | str, Any], ...] = tuple(
            (i, args[i]) for i in sorted(nums) if i < n
        )
        static += tuple((k, kwargs[k]) for k in sorted(self._static_argnames) if k in kwargs)
        try:
            hash(static)
        except TypeError as error:
            raise ValueError(
                f"jit({self._name}): static arguments must be hashable (they key the cache); "
                f"got {error}. Pass a tuple instead of a list, or make the argument traced"
            ) from None
        dyn_args = tuple(None if i in nums else a for i, a in enumerate(args))
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self._static_argnames}
        return dyn_args, dyn_kwargs, static

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        if not kwargs and not self._static_argnums and all(type(a) is np.ndarray for a in args):
            # the commonest call, positional arrays only: keyed without flattening a tree
            arrays: tuple[np.ndarray[Any, Any], ...] = args  # type: ignore[assignment]
            key: Hashable = tuple((a.shape, a.dtype) for a in arrays)
            entry = self._cache.entries.get(key)
            first = None
            if entry is not None and entry.programs:
                spec = entry.programs[0]
                try:
                    flat = spec.run(*args)
                except GuardMiss as error:
                    self._cache.count("misses")
                    first = (spec, error)  # the full path tries the others, and records
                else:
                    self._cache.count("replays")
                    result: R = spec.out_tree.unflatten(list(flat))
                    return result
            return self._call(args, kwargs, key, first)  # type: ignore[no-any-return]
        return self._call(args, kwargs, None, None)  # type: ignore[no-any-return]

    def _call(
        self,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        key: Hashable,
        first: tuple[Specialisation, GuardMiss] | None,
    ) -> Any:
        """A call in full: the key (unless given), the specialisations (but ``first``, which
        missed already), a recording."""
        dyn_args, dyn_kwargs, static = self._split(args, kwargs)
        leaves, treedef = tree_flatten((dyn_args, dyn_kwargs))
        traced: list[Any] = []
        signature: list[Hashable] = []
        for leaf in leaves:
            kind = type(leaf)
            if kind is np.ndarray:
                traced.append(leaf)
                signature.append((leaf.shape, leaf.dtype))
            elif isinstance(leaf, np.generic):
                traced.append(leaf)
                signature.append(leaf.dtype)
            elif is_lazy(leaf):  # a Dask array: traced, keyed without reading a value (by
                # its chunks' text: an unknown size is NaN, which equals no other NaN)
                traced.append(leaf)
                signature.append((kind, leaf.dtype, str(leaf.chunks)))
            elif kind in _SCALARS:
                signature.append(_scalar_key(leaf))
            elif not isinstance(leaf, Tracer) and not _array_like(leaf):
                signature.append(_Identity(leaf))  # (a method's self): specialised on by
                # identity, its attributes guarded as the function's closure is
            else:  # a tracer of an outer transform, or an array of another library (CuPy)
                self._cache.count("eager")
                return self._fun(*args, **kwargs)
        if key is None:
            key = (treedef, static, tuple(signature))
        entry = self._cache.entries.get(key)
        stale: tuple[Specialisation, ...] = ()
        miss = first
        if first is not None and first[1].stale:
            stale = (first[0],)
        if entry is not None:
            for i, spec in enumerate(entry.programs):
                if first is not None and spec is first[0]:
                    continue
                try:
                    flat = spec.run(*traced)
                except GuardMiss as error:
                    self._cache.count("misses")
                    miss = (spec, error)
                    if error.stale:
                        stale += (spec,)
                    continue
                if i:
                    self._cache.promote(key, spec)
                self._cache.count("replays")
                return spec.out_tree.unflatten(list(flat))
            if entry.eager or (len(entry.programs) - len(stale) >= self._bound):
                self._give_up(key, entry, miss)
                return self._fun(*args, **kwargs)
        try:
            spec, result = self._record(args, kwargs, leaves, treedef)
        except Unrecordable as why:
            self._cache.refuse(key)
            self._cache.count("eager")
            if self._warn:
                warnings.warn(
                    f"jit({self._name}) runs eagerly for these arguments: {why}",
                    JitWarning,
                    stacklevel=2,
                )
            return self._fun(*args, **kwargs)
        self._cache.add(key, spec, stale, self._bound)
        return result

    def _give_up(
        self, key: Hashable, entry: Entry, miss: tuple[Specialisation, GuardMiss] | None
    ) -> None:
        self._cache.count("eager")
        if entry.eager:
            return
        self._cache.refuse(key)
        if not self._warn:
            return
        guard = "" if miss is None else _describe(miss[0].guards[miss[1].index])
        warnings.warn(
            f"jit({self._name}): {self._bound} specialisations recorded for these argument "
            f"shapes and none applies (the last guard to miss: {guard}); calls that no "
            "recorded program fits run eagerly from now on. Raise max_specializations, or "
            "make the value a static argument",
            JitWarning,
            stacklevel=3,
        )

    # ---- recording -----------------------------------------------------------------------
    def _record(
        self,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        leaves: list[Any],
        treedef: PyTreeDef[Any],
    ) -> tuple[Specialisation, Any]:
        objects = [
            leaf
            for leaf in leaves
            if type(leaf) is not np.ndarray
            and not isinstance(leaf, (np.generic, *_SCALARS))
            and not is_lazy(leaf)
        ]
        before, externals = environment(self._fun, objects)
        lazy = any(is_lazy(leaf) for leaf in leaves) or any(map(is_lazy, externals.values()))
        if lazy:
            arrays.hold()  # Dask's fallback that would compute is an error (released with
            # the trace, the outermost one)
        with new_trace(lambda level: RecordTrace(level, externals, self._max_ops)) as trace:
            inputs: list[Var] = []
            new_leaves: list[Any] = []
            for leaf in leaves:
                if type(leaf) is np.ndarray or isinstance(leaf, np.generic) or is_lazy(leaf):
                    tracer, var = trace.new(leaf)
                    inputs.append(var)
                    new_leaves.append(tracer)
                else:
                    new_leaves.append(leaf)
            dyn_args, dyn_kwargs = treedef.unflatten(new_leaves)
            call_args = tuple(
                a if i in self._static_argnums or i - len(args) in self._static_argnums else d
                for i, (a, d) in enumerate(zip(args, dyn_args, strict=True))
            )
            call_kwargs = {**kwargs, **dyn_kwargs}
            out = self._fun(*call_args, **call_kwargs)
            out_leaves, out_tree = tree_flatten(out)
            outputs: list[Operand] = []
            results: list[Any] = []
            for o in out_leaves:
                if isinstance(o, RecordTracer) and o._trace is trace:
                    outputs.append(o.node)
                    results.append(o.value if type(o.value) is np.ndarray else no_scalars(o.value))
                elif isinstance(o, Tracer):
                    raise Unrecordable("the function returns a value of another transform")
                else:
                    outputs.append(
                        trace.constant(o) if type(o) is np.ndarray else Const(o, "literal")
                    )
                    results.append(o)
        if not unchanged(before):
            raise Unrecordable("the function writes into an array it reads by name")
        # Bindings and lengths as the recording left them: a function that appends to a list
        # or rebinds a global does so once, at recording (docs/jit.md, "Side effects").
        env, _ = environment(self._fun, objects)
        program = optimize(Program(tuple(inputs), trace.instructions, tuple(outputs), env))
        source, run, guards = generate(program, self._name, lazy)
        spec = Specialisation(program, source, run, out_tree, tuple(guards))
        return spec, out_tree.unflatten(results)

    def lower(self, *args: P.args, **kwargs: P.kwargs) -> Lowered:
        """Record ``fun`` on these arguments and return the optimised program (not cached).

        Example:
            >>> import numpy as np
            >>> import transforms as T
            >>> import transforms.numpy as tnp
            >>> print(T.jit(T.grad(lambda x: tnp.sum(tnp.sin(x)))).lower(np.ones(3)))
            { lambda %1:float64[3] .
                guard binding global 'tnp'
                %3:float64[3] = cos %1:float64[3]
              in (%3:float64[3]) }
        """
        dyn_args, dyn_kwargs, _ = self._split(args, kwargs)
        leaves, treedef = tree_flatten((dyn_args, dyn_kwargs))
        if any(isinstance(leaf, Tracer) for leaf in leaves):
            raise TypeError(f"jit({self._name}).lower: the arguments must be concrete arrays")
        spec, _ = self._record(args, kwargs, leaves, treedef)
        return Lowered(spec.program, spec.source)


def jit(
    fun: Callable[P, R],
    *,
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
    max_specializations: int = 8,
) -> Jitted[P, R]:
    """``fun``, recorded once per argument signature and replayed as generated NumPy code.

    The first call with arrays of a given tree structure, shapes and dtypes (and given
    static arguments and Python scalars) runs ``fun`` under a recording interpreter below
    every transform ``fun`` opens, so a jitted ``grad``/``hessian``/``vmap`` replays as one
    flat NumPy program with no tracers. Python control flow on values is kept: each value
    that reached Python (``if x > 0``, ``int(n)``, ``.item()``) is a guard re-checked on
    replay, and a miss records another specialisation (up to ``max_specializations`` per
    signature, then a ``JitWarning`` and eager execution). Globals, closure cells and the
    arrays they hold are guarded too (see docs/jit.md): a replay is never stale. Called with
    tracers of an outer transform (``grad(jit(f))``), it runs ``fun`` eagerly under them.

    Args:
        fun: the function; its array arguments may be nested in tuples, lists and dicts.
        static_argnums: positions of arguments that key the cache instead of being traced
            (hashable values: shapes, flags, callables).
        static_argnames: names of keyword arguments treated the same way.
        max_specializations: the bound on programs recorded per argument signature.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> f = T.jit(T.grad(lambda x: tnp.sum(x ** 3) if tnp.sum(x) > 0 else tnp.sum(x)))
        >>> f(np.array([1.0, 2.0]))
        array([ 3., 12.])
        >>> f(np.array([-1.0, -2.0]))  # the guard misses: a second program is recorded
        array([1., 1.])
        >>> f.stats.records, f.stats.misses
        (2, 1)
    """
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
    if max_specializations < 1:
        raise ValueError("jit: max_specializations must be at least 1")
    return Jitted(fun, nums, names, max_specializations)


def replayed(fun: Callable[P, R], max_ops: int) -> Jitted[P, R]:
    """``fun`` jitted for a library's own use, quietly: where ``jit`` would warn and run
    eagerly (a program past ``max_ops`` operations, a value a replay cannot repeat, the
    bound of specialisations), it runs eagerly without a word, since the user asked for no
    jit of this function. ``transforms.lax`` replays with it the functions its rules derive
    (a loop's pullback: one op of the user's program, a replay of its own inside).
    """
    return Jitted(fun, (), (), 8, max_ops=max_ops, warn=False)
