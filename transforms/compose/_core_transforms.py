"""``jvp`` and ``vjp``: each opens one trace, runs ``fun`` on tracers, and reads the result.

Everything else in ``compose`` (grad, Jacobians, Hessians) is built by nesting these two.
Zero tangents and cotangents are materialised only here, at the boundary, with the shape
and dtype of the value they belong to.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from transforms import nansafe
from transforms.batching import BatchTracer
from transforms.core import Trace, Tracer, arrays, current_traces, new_trace
from transforms.core.tree_util import PyTreeDef, tree_flatten, tree_unflatten
from transforms.forward import JVPTrace, JVPTracer
from transforms.nansafe import has_nan
from transforms.numpy import zeros_like
from transforms.numpy._arithmetic import is_unit_seed
from transforms.numpy._define import dtype_of, shape_of
from transforms.reverse import Entry, Loan, VJPTrace, backward, closed_over

from ._args import flatten_inputs

__all__ = ["jvp_flat", "vjp_flat", "strip", "FlatPullback", "borrowable_constants"]


def borrowable_constants(fun: Callable[..., Any]) -> list[np.ndarray[Any, Any]]:
    """The arrays ``fun`` reads by name that a closed call may borrow (``Loan``): none under
    another ``vjp``, whose own backward pass reads them after this call has given them back,
    so that it copies them anyway (borrowing them here would only add the bookkeeping)."""
    for trace in current_traces():
        if isinstance(trace, VJPTrace):
            return []
    return closed_over(fun)


def strip(tree: Any, trace: Trace[Any]) -> Any:
    """``tree`` with the tracers of ``trace`` replaced by their primal values (for ``aux``),
    as arrays like every other result (a traced reduction's primal is a NumPy scalar)."""
    if tree is None:  # no aux: the common case
        return None
    leaves, treedef = tree_flatten(tree)
    return treedef.unflatten(_array(leaf.primal) if trace.owns(leaf) else leaf for leaf in leaves)


def _array(x: Any) -> Any:
    """A result leaf as an array: NumPy's ufuncs return 0-d results as scalars (``np.float64``);
    the transforms always return arrays, as JAX does. The shared unit seed of ``grad`` is
    never handed out (a derivative that is exactly the seed gets its own copy)."""
    if isinstance(x, np.generic):
        return np.asarray(x)
    return x.copy() if is_unit_seed(x) else x


def _split_aux(out: Any, has_aux: bool, transform: str) -> tuple[Any, Any]:
    if not has_aux:
        return out, None
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError(
            f"{transform}(..., has_aux=True) needs the function to return a pair "
            f"(output, aux), got {type(out).__name__}"
        )
    return out[0], out[1]


def jvp_flat(
    fun: Callable[..., Any],
    primals: Sequence[Any],
    tangents: Sequence[Any],
    has_aux: bool,
    transform: str = "jvp",
    positions: Sequence[int] | None = None,
    checked: bool = False,
) -> tuple[Any, Any, Any]:
    """Push ``tangents`` through ``fun(*primals)``: ``(out, tangent_out, aux)`` as trees.

    ``checked``: the primals' leaves are already checked (``flatten_inputs``) and the
    tangents match them by construction (a Jacobian's basis), so neither is checked again.
    """
    if checked:
        flat_p, tree_p = tree_flatten(tuple(primals))
        flat_t = tree_flatten(tuple(tangents))[0]
    else:
        flat_p, tree_p = flatten_inputs(primals, transform, positions)
        flat_t, tree_t = tree_flatten(tuple(tangents))
        if tree_p != tree_t:
            raise TypeError(
                f"{transform}: primals and tangents differ in structure: {tree_p} vs {tree_t}"
            )
        flat_t = [
            _as_tangent(t, p, i, transform)
            for i, (p, t) in enumerate(zip(flat_p, flat_t, strict=True))
        ]
    tree_out, primals_out, tangents_out, aux = _push(
        fun, flat_p, tree_p, flat_t, has_aux, transform
    )
    if _plain(flat_t):
        if has_nan(tangents_out):  # a structural zero times an infinite partial? (``nansafe``)
            repaired = nansafe.again(
                lambda tagged: _push(fun, flat_p, tree_p, tagged, has_aux, transform)[2], flat_t
            )
            if repaired is not None:
                tangents_out = [
                    nansafe.merged(t, r) for t, r in zip(tangents_out, repaired, strict=True)
                ]
    elif not checked and _batched(flat_t) and has_nan(tangents_out):
        nansafe.defer()  # (a traced tangent's structural zeros are not known: a user's vmap
        # over the tangents follows them one example at a time)
    return tree_out.unflatten(primals_out), tree_out.unflatten(tangents_out), aux


def _batched(seeds: Sequence[Any]) -> bool:
    """A seed is batched by a ``vmap`` (a user's: the Jacobians' bases do not come here)."""
    for s in seeds:
        if type(s) is BatchTracer:
            return True
    return False


def _plain(seeds: Sequence[Any]) -> bool:
    """No seed is traced (under ``vmap``, a Jacobian's basis: its rows are followed one by
    one instead, ``nansafe.rows_again``)."""
    for s in seeds:
        if isinstance(s, Tracer):
            return False
    return True


def _push(
    fun: Callable[..., Any],
    flat_p: Sequence[Any],
    tree_p: PyTreeDef[Any],
    flat_t: Sequence[Any],
    has_aux: bool,
    transform: str,
) -> tuple[PyTreeDef[Any], list[Any], list[Any], Any]:
    """``fun`` on the primals with the tangents: the outputs' structure, flat primals and
    tangents, and aux."""
    with new_trace(lambda level: JVPTrace(level, transform)) as trace:
        tracers = [JVPTracer(trace, p, t) for p, t in zip(flat_p, flat_t, strict=True)]
        out, aux = _split_aux(fun(*tree_unflatten(tree_p, tracers)), has_aux, transform)
        flat_out, tree_out = tree_flatten(out)
        primals_out = [_array(o.primal if trace.owns(o) else o) for o in flat_out]
        tangents_out = [
            arrays.like(_array(o.tangent if trace.owns(o) else zeros_like(o)), p)
            for o, p in zip(flat_out, primals_out, strict=True)
        ]
        aux = strip(aux, trace)
    return tree_out, primals_out, tangents_out, aux


def _as_cotangent(c: Any, dtype: np.dtype[Any], i: int) -> Any:
    """A cotangent has its output's dtype (JAX's contract); a Python scalar takes it."""
    if isinstance(c, (int, float, complex)) and not isinstance(c, bool):
        return np.asarray(c, dtype=dtype)
    if not isinstance(c, (np.ndarray, np.generic, Tracer)) and not arrays.is_foreign(c):
        raise TypeError(
            f"vjp: cotangent {i} is a {type(c).__name__}, not an array of dtype {dtype}"
        )
    if dtype_of(c) != dtype:  # a ValueError, as JAX's (a non-numeric one: a TypeError above)
        error = ValueError if dtype_of(c).kind in "biufc" else TypeError
        raise error(
            f"vjp: cotangent {i} has dtype {dtype_of(c)} but the output has dtype {dtype}; "
            "pass a cotangent of the output's dtype (cast it with .astype)"
        )
    return c


def _as_tangent(t: Any, primal: Any, i: int, transform: str) -> Any:
    """Check a tangent against its primal (JAX's contract: same shape, same dtype).

    A Python scalar takes the primal's dtype, as NumPy's weak scalars do.
    """
    if isinstance(t, (int, float, complex)) and not isinstance(t, bool):
        t = np.asarray(t, dtype=dtype_of(primal))
    if shape_of(t) != shape_of(primal):
        raise ValueError(
            f"{transform}: tangent {i} has shape {shape_of(t)} but its primal has shape "
            f"{shape_of(primal)}; they must match"
        )
    if dtype_of(t) != dtype_of(primal):
        raise TypeError(
            f"{transform}: tangent {i} has dtype {dtype_of(t)} but its primal has dtype "
            f"{dtype_of(primal)}; they must match (cast the tangent with .astype)"
        )
    return t


class FlatPullback:
    """The pullback of one ``vjp`` call: reusable, and differentiable by outer transforms."""

    __slots__ = (
        "__weakref__",
        "_in_tree",
        "_out_avals",
        "_out_tree",
        "_outputs",
        "_primals",
        "_tape",
    )

    def __init__(
        self,
        primals: list[Any],
        in_tree: PyTreeDef[Any],
        outputs: list[int | None],
        out_tree: PyTreeDef[Any],
        out_avals: list[tuple[tuple[int, ...], np.dtype[Any]]],
        tape: list[Entry],
    ) -> None:
        self._tape = tape
        self._primals = primals
        self._in_tree = in_tree
        self._outputs = outputs
        self._out_tree = out_tree
        self._out_avals = out_avals

    @property
    def primals(self) -> list[Any]:
        """The flat primal inputs (their shapes and dtypes are the cotangents')."""
        return self._primals

    def __call__(self, ct: Any) -> Any:
        flat_ct, ct_tree = tree_flatten(ct)
        if ct_tree != self._out_tree:  # a ValueError, as JAX's
            raise ValueError(
                f"vjp: the cotangent has structure {ct_tree} but the output has {self._out_tree}"
            )
        seeds = []
        for i, (c, (shape, dtype)) in enumerate(zip(flat_ct, self._out_avals, strict=True)):
            if shape_of(c) != shape:
                raise ValueError(
                    f"vjp: cotangent {i} has shape {shape_of(c)} but the output has shape "
                    f"{shape}; pass a cotangent of the output's shape"
                )
            seeds.append(_as_cotangent(c, dtype, i))
        flat = self.pull_flat(seeds)
        if _batched(seeds) and has_nan(flat):  # (a user's vmap over the cotangents: it
            nansafe.defer()  # follows them one example at a time, ``nansafe``)
        return self._in_tree.unflatten(flat)

    def pull_checked(self, flat_ct: Sequence[Any]) -> Any:
        """The input cotangents, as the inputs' tree, of flat output cotangents that have the
        outputs' shapes and dtypes (``grad``'s seed, made so: nothing to check)."""
        return self._in_tree.unflatten(self.pull_flat(flat_ct))

    def pull_flat(self, flat_ct: Sequence[Any]) -> list[Any]:
        """The flat input cotangents of flat output cotangents that have the outputs' shapes
        and dtypes already (checked by ``__call__``, or made so: a Jacobian's basis)."""
        seeds = [
            (node, c) for node, c in zip(self._outputs, flat_ct, strict=True) if node is not None
        ]
        cts = backward(seeds, len(self._primals), self._tape)
        if _plain(flat_ct) and has_nan(cts):  # a structural zero times an infinite partial?
            cts = self._nan_safe(seeds, cts)  # (``nansafe``; a traced seed's are not known)
        flat = []
        for i, (c, p) in enumerate(zip(cts, self._primals, strict=True)):
            c = _array(zeros_like(p) if c is None else c)
            if type(c) is not type(p) and not isinstance(c, Tracer):  # a Dask input's
                c = arrays.like(c, p)  # cotangent: a Dask array, even where it is constant
            flat.append(c)
            if dtype_of(c) != dtype_of(p):  # a rule broke the contract: never pass it on
                raise TypeError(
                    f"vjp: the cotangent of input {i} came out {dtype_of(c)} for a "
                    f"{dtype_of(p)} input: a VJP rule returned a cotangent whose dtype is not "
                    "its operand's (a custom rule must return its operand's dtype)"
                )
        return flat

    def _nan_safe(self, seeds: list[tuple[int, Any]], cts: list[Any]) -> list[Any]:
        """``cts`` with the NaNs that structural zeros made replaced by their exact values."""
        nodes = [node for node, _ in seeds]
        repaired = nansafe.again(
            lambda tagged: backward(
                list(zip(nodes, tagged, strict=True)), len(self._primals), self._tape
            ),
            [c for _, c in seeds],
        )
        if repaired is None:
            return cts
        return [nansafe.merged(c, r) for c, r in zip(cts, repaired, strict=True)]


def vjp_flat(
    fun: Callable[..., Any],
    primals: Sequence[Any],
    has_aux: bool,
    transform: str = "vjp",
    positions: Sequence[int] | None = None,
    flat: tuple[list[Any], PyTreeDef[Any]] | None = None,
    loan: Loan | None = None,
) -> tuple[Any, FlatPullback, Any]:
    """Run ``fun(*primals)`` recording nodes: ``(out, pullback, aux)``.

    ``flat``: the primals' leaves, already checked, and their structure, when the caller
    has them (``flatten_inputs``). With a ``loan`` (a closed call, which runs the pullback
    inside the loan and then returns) the inputs it may borrow are read in place instead
    of copied.
    """
    if flat is not None:
        flat_p, tree_p = flat
    else:
        flat_p, tree_p = flatten_inputs(primals, transform, positions)
    with new_trace(lambda level: VJPTrace(level, transform)) as trace:
        try:
            if loan is not None:
                loan.borrow(flat_p, trace.guard)
            tracers = [trace.input(p) for p in flat_p]
            out, aux = _split_aux(fun(*tree_unflatten(tree_p, tracers)), has_aux, transform)
            flat_out, tree_out = tree_flatten(out)
            outputs: list[int | None] = []
            primals_out = []
            for o in flat_out:
                mine = trace.owns(o)
                outputs.append(o.index if mine else None)
                primals_out.append(_array(o.primal if mine else o))
            aux = strip(aux, trace)
        except BaseException:
            trace.guard.release()
            raise
    avals = [(shape_of(o), dtype_of(o)) for o in primals_out]
    pullback = FlatPullback(flat_p, tree_p, outputs, tree_out, avals, trace.tape)
    trace.guard.release()
    return tree_out.unflatten(primals_out), pullback, aux
