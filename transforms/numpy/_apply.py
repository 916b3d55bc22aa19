"""NumPy's functions that apply the user's function: ``piecewise``, ``apply_along_axis`` and
``vectorize``.

Each is a composite: it calls the user's function on pieces of the traced operands (a
boolean selection, a 1-d slice, one element or one core block, taken with ``getitem``) and
puts the results together with ``at[].set``/``stack``/``reshape``, all differentiable
primitives. So the derivative is exact in every mode and nesting, through the operands and
through anything the user's function closes over, and the function sees exactly the values
NumPy would give it (``piecewise`` evaluates each function only where its condition holds:
a branch that overflows elsewhere contributes nothing). The price is a Python loop over the
pieces, as in NumPy (whose ``vectorize`` is also a loop).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from transforms.batching import is_batched
from transforms.core import Array, ArrayLike, Tracer, arrays, concrete

from . import _indexing, _shape
from ._define import dtype_of, ndim_of, shape_of
from ._nondiff import logical_not, logical_or
from ._shape import operand as _operand

__all__ = ["apply_along_axis", "piecewise", "vectorize"]


def piecewise(x: ArrayLike, condlist: Any, funclist: Sequence[Any], *args: Any, **kw: Any) -> Array:
    """Differentiable ``numpy.piecewise``: in ``x`` and through the functions (a composite
    of boolean ``getitem`` and ``at[].set``). Each function is called only on the elements
    of ``x`` where its condition holds, as in NumPy; a later condition overrides an earlier
    one, elements no condition selects are 0, and one function more than conditions is the
    "otherwise" case. The conditions select elements by their values; under ``vmap``, where
    they differ per example, and for conditions that are Dask arrays (lazy: their values
    are unknown), every function runs on every element and ``where`` selects (as
    ``jax.numpy.piecewise`` does), so an untaken function's overflow can reach a derivative
    as NaN there.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> f = lambda x: tnp.sum(tnp.piecewise(x, [x < 0, x >= 0], [lambda v: -v, tnp.exp]))
        >>> T.grad(f)(np.array([-2.0, 0.0, 1.0]))
        array([-1.        ,  1.        ,  2.71828183])
    """
    x = _operand(x)
    n_funcs = len(funclist)
    ndim = ndim_of(x)
    first = condlist[0] if not np.isscalar(condlist) else None
    one = not isinstance(first, (list, np.ndarray, Tracer)) and not arrays.is_foreign(first)
    if np.isscalar(condlist) or (one and ndim != 0):  # (NumPy's test; a traced or Dask
        condlist = [condlist]  # condition is an array too)
    if len(condlist) not in (n_funcs - 1, n_funcs):
        raise ValueError(
            f"with {len(condlist)} condition(s), either {len(condlist)} or "
            f"{len(condlist) + 1} functions are expected"
        )
    if any(is_batched(c) or arrays.is_foreign(concrete(c)) for c in condlist):
        return _selected(x, list(condlist), funclist, args, kw)
    conds = np.asarray([np.asarray(concrete(c)) for c in condlist], dtype=bool)
    if len(conds) == n_funcs - 1:
        conds = np.concatenate([conds, ~np.any(conds, axis=0, keepdims=True)])
    y: Any = _shape.zeros_like(x)
    for cond, func in zip(conds, funclist, strict=True):
        if ndim == 0:  # NumPy's piecewise of a 0-d x works on its 1-d view
            cond = cond.reshape(())
        if not callable(func):
            y = _indexing.at(y)[cond].set(func)
        elif cond.any():
            y = _indexing.at(y)[cond].set(func(_indexing.getitem(x, cond), *args, **kw))
    return y  # type: ignore[no-any-return]


def _selected(
    x: Any, conds: list[Any], funclist: Sequence[Any], args: Any, kw: dict[str, Any]
) -> Array:
    """``piecewise`` by selection: every function on all of ``x``, the last condition that
    holds choosing (per-example conditions under ``vmap``)."""
    if len(conds) == len(funclist) - 1:
        taken: Any = conds[0]
        for c in conds[1:]:
            taken = logical_or(taken, c)
        conds = [*conds, logical_not(taken)]
    y: Any = _shape.zeros_like(x)
    for cond, func in zip(conds, funclist, strict=True):
        value = func(x, *args, **kw) if callable(func) else func
        y = _shape.where(cond, _shape.astype(value, dtype_of(x)), y)
    return y  # type: ignore[no-any-return]


def apply_along_axis(
    func1d: Callable[..., Any], axis: int, arr: ArrayLike, *args: Any, **kwargs: Any
) -> Array:
    """Differentiable ``numpy.apply_along_axis``: ``func1d`` (a differentiable function of
    a 1-d array) on every 1-d slice along ``axis``, the results stacked where ``axis`` was,
    with the first result's dtype, as NumPy. A composite of ``getitem`` and ``stack``.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> f = lambda a: tnp.sum(tnp.apply_along_axis(lambda v: v[0] * v[1], 1, a))
        >>> T.grad(f)(np.array([[1.0, 2.0], [3.0, 4.0]]))
        array([[2., 1.],
               [4., 3.]])
    """
    a = _operand(arr)
    ndim = ndim_of(a)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    axis %= ndim
    view = _shape.moveaxis(a, axis, -1)
    outer = shape_of(view)[:-1]
    if 0 in outer:
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    results = [_shape.asarray(func1d(view[index], *args, **kwargs)) for index in np.ndindex(outer)]
    dtype = dtype_of(results[0])
    inner = shape_of(results[0])
    stacked = _shape.reshape(_shape.stack(results), outer + inner)
    if dtype_of(stacked) != dtype:
        stacked = _shape.astype(stacked, dtype)
    # the result's axes take the place of ``axis``, as NumPy's ``buff_permute``
    dims = list(range(len(outer) + len(inner)))
    order = dims[:axis] + dims[len(outer) :] + dims[axis : len(outer)]
    return _shape.transpose(stacked, order)


_DIM = r"\w+"
_CORE = rf"\((?:{_DIM}(?:,{_DIM})*)?\)"
_SIGNATURE = re.compile(rf"^{_CORE}(?:,{_CORE})*->{_CORE}(?:,{_CORE})*$")


def _parse_signature(signature: str) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """``"(m,n),(n)->(m)"`` as the core dimension names of each input and each output."""
    signature = re.sub(r"\s+", "", signature)
    if not _SIGNATURE.match(signature):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    ins, outs = signature.split("->")

    def cores(part: str) -> list[tuple[str, ...]]:
        return [tuple(re.findall(_DIM, c)) for c in re.findall(_CORE, part)]

    return cores(ins), cores(outs)


class vectorize:  # (NumPy's name: a class, used as a decorator too)
    """Differentiable ``numpy.vectorize``: calls ``pyfunc`` (a differentiable function) on
    each element of the broadcast arguments, or with ``signature=`` on each core block, and
    stacks the results (a composite of ``getitem`` and ``stack``, exact in every mode).
    ``excluded`` (positions or keyword names) are passed through whole; ``otypes`` casts
    the outputs. Like NumPy's, it is a loop in Python.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> f = tnp.vectorize(lambda x, y: x * y if x > 0 else y)
        >>> T.grad(lambda x: tnp.sum(f(x, 3.0)))(np.array([-1.0, 2.0]))
        array([0., 3.])
    """

    def __init__(
        self,
        pyfunc: Callable[..., Any] | None = None,
        otypes: str | Sequence[Any] | None = None,
        doc: str | None = None,
        excluded: set[int | str] | None = None,
        cache: bool = False,
        signature: str | None = None,
    ) -> None:
        self.pyfunc = pyfunc
        self.otypes = None if otypes is None else [np.dtype(t) for t in otypes]
        self.excluded = set() if excluded is None else set(excluded)
        self.signature = signature
        self._cores = None if signature is None else _parse_signature(signature)
        self.__doc__ = doc if doc is not None else getattr(pyfunc, "__doc__", None)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.pyfunc is None:  # ``@vectorize(otypes=...)``: the decorator's form
            return vectorize(args[0], self.otypes, None, self.excluded, False, self.signature)
        pyfunc = self.pyfunc
        varying = [i for i in range(len(args)) if i not in self.excluded]
        names = [k for k in kwargs if k not in self.excluded]
        values = [_operand(args[i]) for i in varying] + [_operand(kwargs[k]) for k in names]

        def call(pieces: Sequence[Any]) -> Any:
            full = list(args)
            for i, piece in zip(varying, pieces, strict=False):
                full[i] = piece
            keywords = dict(kwargs)
            for k, piece in zip(names, pieces[len(varying) :], strict=True):
                keywords[k] = piece
            return pyfunc(*full, **keywords)

        if self._cores is None:
            cores_in: list[tuple[str, ...]] = [()] * len(values)
            cores_out: list[tuple[str, ...]] | None = None
        else:
            cores_in, cores_out = self._cores
            if len(cores_in) != len(values):
                raise TypeError(
                    f"wrong number of positional arguments: expected {len(cores_in)}, "
                    f"got {len(values)}"
                )
        sizes: dict[str, int] = {}
        loop_shapes = []
        for value, core in zip(values, cores_in, strict=True):
            shape = shape_of(value)
            if len(shape) < len(core):
                raise ValueError(
                    f"input with shape {shape} does not have enough dimensions for all core "
                    f"dimensions {core}"
                )
            for name, size in zip(core, shape[len(shape) - len(core) :], strict=True):
                if sizes.setdefault(name, size) != size:
                    raise ValueError(f"inconsistent size for core dimension {name!r}")
            loop_shapes.append(shape[: len(shape) - len(core)])
        loop = np.broadcast_shapes(*loop_shapes)
        if 0 in loop:  # nothing to call pyfunc on: the outputs' dtypes must be given
            if self.otypes is None or self._cores is not None:
                raise ValueError("cannot call `vectorize` on size 0 inputs unless `otypes` is set")
            empty = tuple(np.zeros(loop, dtype) for dtype in self.otypes)
            return empty if len(empty) > 1 else empty[0]
        spread = [
            _shape.broadcast_to(v, loop + shape_of(v)[len(s) :])
            for v, s in zip(values, loop_shapes, strict=True)
        ]
        results = [call([v[index] for v in spread]) for index in np.ndindex(loop)]
        multiple = isinstance(results[0], tuple)
        outputs = list(zip(*results, strict=True)) if multiple else [results]
        if cores_out is not None and len(cores_out) != len(outputs):
            raise ValueError(
                f"wrong number of outputs from pyfunc: expected {len(cores_out)}, "
                f"got {len(outputs)}"
            )
        stacked = [self._stack(list(out), loop, k) for k, out in enumerate(outputs)]
        return tuple(stacked) if multiple else stacked[0]

    def _stack(self, pieces: list[Any], loop: tuple[int, ...], k: int) -> Array:
        arrays = [_shape.asarray(p) for p in pieces]
        dtype = dtype_of(arrays[0]) if self.otypes is None else self.otypes[k]
        out = _shape.reshape(_shape.stack(arrays), loop + shape_of(arrays[0]))
        return out if dtype_of(out) == dtype else _shape.astype(out, dtype)
