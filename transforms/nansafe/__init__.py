"""NaN-safe derivatives: a structural zero times a non-finite partial contributes nothing.

``grad`` of ``sum(where(x < 1, x**2, exp(2000 * x)))`` at 0.5 is 1 exactly: the untaken
branch overflows, and its derivative ``exp(2000 x) * 2000`` is infinite, but ``where`` gives
that branch a cotangent of zero there, which does not depend on the seed: the product is no
term of the derivative. IEEE arithmetic makes it ``0 * inf = NaN``, and JAX, PyTorch and
autograd return NaN. So do Hessians of separable sums at ``sqrt``'s or ``log``'s singular
points off their diagonal, where the basis vector's zeros meet the infinite partial.

Exactness decides how: only a *structural* zero (one no seed reaches: see ``_trace``) is
made safe, never a computed one, which ForwardDiff.jl's NaN-safe mode also zeroes and which
would make ``grad(lambda x: sqrt(x) ** 2)(0.0)`` zero (the derivative is 1, the peers give
NaN, and so does this: a NaN says the point is singular; a zero would be a wrong number).

Cost: none on the common path beyond one look for a NaN in each derivative the transforms
hand back (``has_nan``). Only a derivative with a NaN is computed again (``again``), with the
seeds tagged by the structural interpreter; its NaNs that came from structural zeros become
the exact values, the others stay (``merged``). A derivative rule the interpreter cannot
follow leaves the first answer as it was.

Batched values are followed one example at a time: which elements are live differs from
example to example, which one mask cannot say. A Jacobian computes each of its rows that
holds a NaN again alone (``rows_again``). A derivative under a user's ``vmap`` (per-example
gradients) leaves its NaN and counts itself (``defer``); the ``vmap``, seeing the count move
while its function ran, computes each example whose outputs hold a NaN again alone,
unbatched, and merges it in (``examples_again``). Without a NaN that is two reads of the
count per ``vmap`` call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import transforms.numpy as tnp
from transforms.core import Tracer, concrete, current_traces, new_trace, quiet

from ._trace import BatchedOperand, StructuralTrace, Untaggable

__all__ = ["again", "defer", "deferred", "examples_again", "has_nan", "merged", "rows_again"]

#: How many derivatives held a NaN left as it was because their values were batched by an
#: enclosing ``vmap`` (``defer``). A user's ``vmap`` reads it before and after running its
#: function, and only if it moved looks at its outputs (``examples_again``).
deferred = 0


def defer() -> None:
    """Count a derivative whose NaNs are left to the enclosing ``vmap`` (``deferred``)."""
    global deferred
    deferred += 1


_SHORT = 4096  # (OpenBLAS runs a dot of up to 10,000 elements on one thread)


@quiet  # (a dot product of tiny or huge values overflows: no warning of ours)
def has_nan(values: Sequence[Any]) -> bool:
    """Whether a float or complex derivative among ``values`` (arrays, or tracers whose
    concrete value is known: under an outer transform) holds a NaN. Another library's lazy
    array is not looked at (that would compute it)."""
    for v in values:
        if type(v) is not np.ndarray:
            while isinstance(v, Tracer):  # (``concrete``, stopping at a recording's tracer:
                if v._trace.stages:  # ``T.jit`` would guard the look at its values, and
                    return False  # re-record every call; a recorded derivative keeps IEEE's)
                v = v.primal
            if not isinstance(v, (np.ndarray, np.generic)):
                continue
        kind = v.dtype.kind
        if kind == "f":  # NaN propagates through a dot product and through max (methods:
            # no dispatch; never a copy: a Jacobian's transposed rows are read through their
            # transpose, another layout by max). The dot, the cheaper call, only on short
            # arrays: BLAS runs a long one on several threads, which costs more than the look
            flat = None
            if v.size <= _SHORT:
                flags = v.flags
                if flags.c_contiguous or flags.f_contiguous:
                    flat = v.ravel() if flags.c_contiguous else v.T.ravel()
            top = flat.dot(flat) if flat is not None else np.maximum.reduce(v, axis=None)
            if top != top:
                return True
        elif kind == "c" and np.isnan(v).any():
            return True
    return False


def again(run: Callable[[list[Any]], Sequence[Any]], seeds: Sequence[Any]) -> list[Any] | None:
    """``run(seeds)`` once more with the seeds' structural zeros tracked; ``None`` if a rule
    on the way has no structural rule (the caller keeps what it had)."""
    if any(isinstance(t, StructuralTrace) for t in current_traces()):
        return None  # (a derivative inside a rerun: the outer rerun tracks it)
    with new_trace(StructuralTrace) as trace:
        try:
            out = run([trace.tag(s) for s in seeds])
        except BatchedOperand:  # (per-example masks: the enclosing vmap follows one example)
            defer()
            return None
        except Untaggable:
            return None
        return [trace.untag(o) for o in out]


def merged(original: Any, repaired: Any) -> Any:
    """``original``'s elements, except its NaNs, which take ``repaired``'s. A traced
    derivative (an outer transform watches it) is the repaired one whole: its elements
    equal the original's wherever that is a number, and an outer derivative must not reach
    the original's NaN-making products at all."""
    if repaired is None or original is None:
        return original
    if isinstance(original, Tracer):
        return repaired
    if isinstance(original, (np.ndarray, np.generic)) and original.dtype.kind in "fc":
        return np.where(np.isnan(original), repaired, original)
    return original


def rows_again(leaves: list[Any], start: int, row: Callable[[int], Sequence[Any]]) -> list[Any]:
    """A chunk of a Jacobian (``leaves``: one per array, the basis rows ``start ..`` on axis
    0, pushed together under ``vmap``, where structural zeros are not followed) with each
    row that holds a NaN computed again alone by ``row(k)`` (whose own derivative is then
    NaN-safe: ``again``), and merged into it."""
    if not has_nan(leaves):
        return leaves
    values = [concrete(leaf) for leaf in leaves]
    if any(np.shape(v) != np.shape(leaf) for v, leaf in zip(values, leaves, strict=True)):
        defer()  # (rows batched by an outer vmap: it follows them one example at a time)
        return leaves
    n = np.shape(values[0])[0]
    fixed = {r: row(start + r) for r in range(n) if has_nan([v[r] for v in values])}
    out = []
    for i, leaf in enumerate(leaves):
        if isinstance(leaf, np.ndarray):
            leaf = leaf.copy()
            for r, new in fixed.items():
                leaf[r] = merged(leaf[r], new[i])
        elif fixed:
            leaf = tnp.stack([fixed[r][i] if r in fixed else leaf[r] for r in range(n)])
        out.append(leaf)
    return out


def examples_again(
    results: list[Any], axes: Sequence[int | None], example: Callable[[int], Sequence[Any]]
) -> list[Any]:
    """The outputs of a user's ``vmap`` (``results``, one per leaf, the batch on ``axes``;
    ``None``: not batched) with each example whose outputs hold a NaN computed again alone
    by ``example(i)`` (unbatched: its derivatives are then NaN-safe) and merged into them.
    Outputs traced by an outer transform are left as they are (as by ``rows_again``)."""
    batched = {
        k: (r, a) for k, (r, a) in enumerate(zip(results, axes, strict=True)) if a is not None
    }
    if any(type(r) is not np.ndarray for r, _ in batched.values()):
        return results
    copies = {  # the float outputs, the batch axis first (a copy, to write the examples in)
        k: np.moveaxis(r, a, 0).copy() for k, (r, a) in batched.items() if r.dtype.kind in "fc"
    }
    nan = [np.isnan(v).any(axis=tuple(range(1, v.ndim))) for v in copies.values()]
    examples = np.flatnonzero(np.logical_or.reduce(nan)) if nan else ()
    if not len(examples):
        return results
    for i in examples:
        new = example(int(i))
        for k, v in copies.items():
            v[i] = merged(v[i], new[k])
    out = list(results)
    for k, v in copies.items():
        out[k] = np.moveaxis(v, 0, batched[k][1])
    return out
