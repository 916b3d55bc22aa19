"""Products: ``matmul`` (``@``) is the primitive; ``dot``, ``outer``, ``tensordot``,
``vdot``, ``inner``, ``einsum``, ``kron`` and ``cross`` are composites of it and of
reshapes/transposes/indexing/``multiply``/``sum``, so their derivatives (of every order, in
every mode, and their batching) come from those rules.

``matmul``'s VJP treats 1-d operands as NumPy does (a row vector on the left, a column
vector on the right), contracts the cotangent with the other operand, and un-broadcasts the
batch dimensions.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from transforms.batching import defbatch
from transforms.core import Array, ArrayLike, Primitive
from transforms.forward import defjvp
from transforms.reverse import defvjp
from transforms.sparsity import defsparsity, matmul_rule

from . import _elementwise, _indexing, _reductions, _shape
from ._arithmetic import multiply
from ._batching import axis_size, is_identity_basis, materialized, to_front
from ._define import dtype_of, ndim_of, shape_of
from ._define import is_complex as _is_complex
from ._shape import array, broadcast_to, in_dtype_of, reshape, transpose, unbroadcast
from ._shape import operands as _operands

__all__ = [
    "matmul",
    "dot",
    "outer",
    "tensordot",
    "vdot",
    "inner",
    "einsum",
    "kron",
    "cross",
]


def _swap_last(a: Any) -> Any:
    n = ndim_of(a)
    return transpose(a, tuple(range(n - 2)) + (n - 1, n - 2))


def _matmul_pullback(argnum: int, x: Any, y: Any) -> Callable[[Any], Any]:
    x_shape, y_shape = shape_of(x), shape_of(y)
    # A matrix times a vector (either way round), the shape of most models and of every
    # Jacobian/Hessian row, or two matrices: one product (or one outer product), without the
    # reshapes, batch-shape broadcasting and un-broadcasting of the general case (which
    # nested and batched transforms would repeat). The products bind ``matmul_p`` itself:
    # the operands' ranks are known, there is nothing for ``matmul`` to check.
    if len(x_shape) == 2 and len(y_shape) == 1:
        if argnum == 0:
            return lambda ct: multiply(reshape(ct, (x_shape[0], 1)), y)  # outer(ct, y)
        return lambda ct: matmul_p.bind(ct, x)  # x.T @ ct
    if len(x_shape) == 1 and len(y_shape) == 2:
        if argnum == 0:
            return lambda ct: matmul_p.bind(y, ct)  # y @ ct
        return lambda ct: multiply(reshape(x, (x_shape[0], 1)), ct)  # outer(x, ct)
    if len(x_shape) == 2 and len(y_shape) == 2:  # two matrices (every layer of an MLP)
        if argnum == 0:
            return lambda ct: matmul_p.bind(ct, transpose(y))  # ct @ y.T
        return lambda ct: matmul_p.bind(transpose(x), ct)  # x.T @ ct
    x2 = x_shape if len(x_shape) > 1 else (1,) + x_shape
    y2 = y_shape if len(y_shape) > 1 else y_shape + (1,)
    out2 = np.broadcast_shapes(x2[:-2], y2[:-2]) + (x2[-2], y2[-1])

    def pullback(ct: Any) -> Any:
        ct2 = reshape(ct, out2)
        if argnum == 0:
            grad = matmul(ct2, _swap_last(reshape(y, y2)))
            return reshape(unbroadcast(grad, x2), x_shape)
        grad = matmul(_swap_last(reshape(x, x2)), ct2)
        return reshape(unbroadcast(grad, y2), y_shape)

    return pullback


def _matmul_vjp(argnum: int) -> Callable[..., Callable[[Any], Any]]:
    def maker(ans: Any, x: Any, y: Any) -> Callable[[Any], Any]:
        return in_dtype_of(x if argnum == 0 else y, ans, _matmul_pullback(argnum, x, y))

    return maker


matmul_p = Primitive("matmul", np.matmul)
defjvp(matmul_p, lambda t, ans, x, y: matmul(t, y), lambda t, ans, x, y: matmul(x, t))
defvjp(matmul_p, _matmul_vjp(0), _matmul_vjp(1))


def _times_identity(a: Any, basis: np.ndarray, contracted: int) -> Any | None:
    """The product of ``a`` with the identity ``basis`` (``A @ e_i`` for every ``i``: ``A``
    itself), or ``None`` if the shapes or dtypes do not allow it (``matmul`` then says why).

    ``A``, in ``matmul``'s result dtype, is exactly what the product computes for finite
    entries (each is one entry times 1 plus zeros); where ``A`` holds an inf or a nan the
    product would spread nans (``inf * 0``) and ``A`` is the exact derivative. An array is
    copied: a Jacobian assembled from it must not share memory with the user's ``A``.
    """
    dtype = dtype_of(a)
    if dtype.kind not in "biufc" or shape_of(a)[contracted] != shape_of(basis)[0]:
        return None
    dtype = np.promote_types(dtype, basis.dtype)
    if isinstance(a, np.ndarray):
        return np.array(a, dtype=dtype)
    return a if dtype_of(a) == dtype else a.astype(dtype)


def _matmul_batch(values: Any, dims: Any) -> tuple[Any, int]:
    """Batch ``matmul`` as one large product where the other operand is an unbatched matrix
    (the shape of Jacobian work), and as a broadcast batched ``matmul`` otherwise. The
    identity basis of ``jacfwd``/``jacrev`` (``is_identity_basis``) takes no product at all."""
    (x, y), (dx, dy) = values, dims
    x_ndim, y_ndim = len(shape_of(x)), len(shape_of(y))
    if dy is None and y_ndim == 1:  # (B, ..., n) @ (n,): NumPy's own product, one call
        return matmul_p.bind(to_front(x, dx), y), 0
    if dx is None and x_ndim == 1 and y_ndim >= 3:  # (n,) @ (B, ..., n, p), likewise
        return matmul_p.bind(x, to_front(y, dy)), 0
    if dy is None and y_ndim == 2 and x_ndim <= 3:  # (B, [m,] n) @ (n, p)
        x = to_front(x, dx)
        if is_identity_basis(x):  # e_i @ y: row i of y
            rows = _times_identity(y, x, 0)
            if rows is not None:
                return rows, 0
        if x_ndim == 3 and type(x) is np.ndarray and x.flags.c_contiguous:
            # the B m rows as one matrix (a view): one GEMM, where NumPy's stacked matmul
            # takes B small ones (three times slower for m = 1, a vmapped vector-matrix)
            size, m, n = x.shape
            out = matmul_p.bind(x.reshape(size * m, n), y)
            return reshape(out, (size, m, shape_of(out)[1])), 0
        return matmul_p.bind(x, y), 0
    if dx is None and x_ndim == 2 and y_ndim in (2, 3):  # (m, n) @ (B, n [, p])
        y = to_front(y, dy)
        if y_ndim == 2:  # per-example vectors become the columns of one matrix
            if is_identity_basis(y):  # x @ e_i: column i of x
                columns = _times_identity(x, y, 1)
                if columns is not None:
                    return columns, 1
            return matmul_p.bind(x, transpose(y)), 1
        size, n, p = shape_of(y)
        columns = reshape(transpose(y, (1, 0, 2)), (n, size * p))
        return reshape(matmul(x, columns), (shape_of(x)[0], size, p)), 1
    # general case: batch axes in front, 1-d operands promoted, ranks aligned
    size = axis_size(values, dims)
    x_rank, y_rank = x_ndim - (dx is not None), y_ndim - (dy is not None)
    xs = materialized([x], [dx])[0] if dx is not None else broadcast_to(x, (size, *shape_of(x)))
    ys = materialized([y], [dy])[0] if dy is not None else broadcast_to(y, (size, *shape_of(y)))
    if x_rank == 1:
        xs = reshape(xs, (size, 1, shape_of(xs)[1]))
    if y_rank == 1:
        ys = reshape(ys, (size, shape_of(ys)[1], 1))
    rank = max(ndim_of(xs), ndim_of(ys))
    xs = reshape(xs, (size,) + (1,) * (rank - ndim_of(xs)) + shape_of(xs)[1:])
    ys = reshape(ys, (size,) + (1,) * (rank - ndim_of(ys)) + shape_of(ys)[1:])
    out = matmul(xs, ys)
    out_shape = shape_of(out)
    if y_rank == 1:
        out_shape = out_shape[:-1]
    if x_rank == 1:
        out_shape = out_shape[:-2] + out_shape[-1:] if y_rank != 1 else out_shape[:-1]
    return reshape(out, out_shape), 0


defbatch(matmul_p, _matmul_batch)
defsparsity(matmul_p, matmul_rule)


def matmul(x1: ArrayLike, x2: ArrayLike) -> Array:
    """Differentiable ``numpy.matmul`` (the ``@`` operator)."""
    a = array(x1) if isinstance(x1, (list, tuple)) else x1
    b = array(x2) if isinstance(x2, (list, tuple)) else x2
    if ndim_of(a) == 0 or ndim_of(b) == 0:
        raise ValueError("matmul: input operand does not have enough dimensions (0-d); use *")
    return matmul_p.bind(a, b)


def tensordot(a: ArrayLike, b: ArrayLike, axes: int | Sequence[Any] = 2) -> Array:
    """Differentiable ``numpy.tensordot``: transpose, reshape to matrices, ``matmul``."""
    a = array(a) if isinstance(a, (list, tuple)) else a
    b = array(b) if isinstance(b, (list, tuple)) else b
    a_shape, b_shape = shape_of(a), shape_of(b)
    if isinstance(axes, (int, np.integer)):
        a_axes = list(range(len(a_shape) - int(axes), len(a_shape)))
        b_axes = list(range(int(axes)))
    else:
        a_axes = [int(axes[0])] if isinstance(axes[0], (int, np.integer)) else list(axes[0])
        b_axes = [int(axes[1])] if isinstance(axes[1], (int, np.integer)) else list(axes[1])
    a_axes = [int(i) % max(len(a_shape), 1) for i in a_axes]
    b_axes = [int(i) % max(len(b_shape), 1) for i in b_axes]
    if [a_shape[i] for i in a_axes] != [b_shape[i] for i in b_axes]:
        raise ValueError(
            f"tensordot: shape mismatch for sum over {a_axes} of {a_shape} "
            f"and {b_axes} of {b_shape}"
        )
    a_free = [i for i in range(len(a_shape)) if i not in a_axes]
    b_free = [i for i in range(len(b_shape)) if i not in b_axes]
    k = math.prod(a_shape[i] for i in a_axes)
    a2 = reshape(transpose(a, a_free + a_axes), (math.prod(a_shape[i] for i in a_free), k))
    b2 = reshape(transpose(b, b_axes + b_free), (k, math.prod(b_shape[i] for i in b_free)))
    out_shape = tuple(a_shape[i] for i in a_free) + tuple(b_shape[i] for i in b_free)
    return reshape(matmul(a2, b2), out_shape)


def dot(a: ArrayLike, b: ArrayLike) -> Array:
    """Differentiable ``numpy.dot``: ``*`` for scalars, ``@`` up to 2-d, else ``tensordot``."""
    a = array(a) if isinstance(a, (list, tuple)) else a
    b = array(b) if isinstance(b, (list, tuple)) else b
    if ndim_of(a) == 0 or ndim_of(b) == 0:
        return multiply(a, b)
    if ndim_of(b) <= 2:
        return matmul(a, b)
    return tensordot(a, b, axes=([-1], [-2]))


def outer(a: ArrayLike, b: ArrayLike) -> Array:
    """Differentiable ``numpy.outer``: the flattened operands multiplied by broadcasting."""
    a = array(a) if isinstance(a, (list, tuple)) else a
    b = array(b) if isinstance(b, (list, tuple)) else b
    return multiply(reshape(a, (-1, 1)), reshape(b, (1, -1)))


def vdot(a: ArrayLike, b: ArrayLike, /) -> Array:
    """Differentiable ``numpy.vdot``: ``sum(conj(a) * b)`` over the flattened operands."""
    a, b = _operands(a, b)
    if math.prod(shape_of(a)) != math.prod(shape_of(b)):
        raise ValueError(
            f"vdot: cannot reshape array of size {math.prod(shape_of(a))} into shape {shape_of(b)}"
        )
    if _is_complex(a):
        a = _elementwise.conj(a)
    return matmul(reshape(a, (-1,)), reshape(b, (-1,)))


def inner(a: ArrayLike, b: ArrayLike, /) -> Array:
    """Differentiable ``numpy.inner``: contracts the last axes (``tensordot``); a product for
    a scalar operand."""
    a, b = _operands(a, b)
    if ndim_of(a) == 0 or ndim_of(b) == 0:
        return multiply(a, b)
    return tensordot(a, b, axes=([-1], [-1]))


# ---- kron -------------------------------------------------------------------------------------
def kron(a: ArrayLike, b: ArrayLike) -> Array:
    """Differentiable ``numpy.kron``: interleaved singleton axes, ``multiply``, ``reshape``."""
    a, b = _operands(a, b)
    nda, ndb = ndim_of(a), ndim_of(b)
    if nda == 0 or ndb == 0:
        return multiply(a, b)
    nd = max(nda, ndb)
    a_shape = (1,) * (nd - nda) + shape_of(a)
    b_shape = (1,) * (nd - ndb) + shape_of(b)
    a2 = reshape(a, tuple(n for d in a_shape for n in (d, 1)))
    b2 = reshape(b, tuple(n for d in b_shape for n in (1, d)))
    return reshape(multiply(a2, b2), tuple(p * q for p, q in zip(a_shape, b_shape, strict=True)))


# ---- cross --------------------------------------------------------------------------------------
def cross(
    a: ArrayLike,
    b: ArrayLike,
    axisa: int = -1,
    axisb: int = -1,
    axisc: int = -1,
    axis: int | None = None,
) -> Array:
    """Differentiable ``numpy.cross`` of 3-vectors (and NumPy's deprecated 2-vectors), with
    ``axisa``/``axisb``/``axisc``/``axis``: component products, ``stack``, ``moveaxis``."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = _operands(a, b)
    if ndim_of(a) < 1 or ndim_of(b) < 1:
        raise ValueError("At least one array has zero dimension")
    a = _shape.moveaxis(a, _normalize_axis(axisa, ndim_of(a), "axisa"), -1)
    b = _shape.moveaxis(b, _normalize_axis(axisb, ndim_of(b), "axisb"), -1)
    na, nb = shape_of(a)[-1], shape_of(b)[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n(dimension must be 2 or 3)")
    if na == 2 or nb == 2:
        warnings.warn(
            "Arrays of 2-dimensional vectors are deprecated. Use arrays of 3-dimensional "
            "vectors instead. (deprecated in NumPy 2.0)",
            DeprecationWarning,
            stacklevel=2,
        )

    def part(x: Any, i: int) -> Any:
        return _indexing.getitem(x, (Ellipsis, i))

    a0, a1, b0, b1 = part(a, 0), part(a, 1), part(b, 0), part(b, 1)
    if na == 2 and nb == 2:
        z: Array = a0 * b1 - a1 * b0
        return z
    batch = np.broadcast_shapes(shape_of(a)[:-1], shape_of(b)[:-1])
    if na == 3 and nb == 3:
        a2, b2 = part(a, 2), part(b, 2)
        c = [a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0]
    elif na == 2:  # a2 = 0
        b2 = part(b, 2)
        c = [a1 * b2, -(a0 * b2), a0 * b1 - a1 * b0]
    else:  # b2 = 0
        a2 = part(a, 2)
        c = [-(a2 * b1), a2 * b0, a0 * b1 - a1 * b0]
    out = _shape.stack([broadcast_to(ci, batch) for ci in c], axis=-1)
    return _shape.moveaxis(out, -1, _normalize_axis(axisc, len(batch) + 1, "axisc"))


def _normalize_axis(axis: int, ndim: int, name: str) -> int:
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(
            f"{name}: axis {axis} is out of bounds for array of dimension {ndim}"
        )
    return axis % ndim


# ---- einsum ------------------------------------------------------------------------------------
# Labels are ints: a letter is its code point, the k-th broadcast (ellipsis) axis counted from
# the right is -1 - k. Each operand first takes its repeated-label diagonals and sums labels
# that nothing else uses; operands are then contracted left to right, two at a time, as one
# batched ``matmul`` (batch = shared labels still needed, contracted = shared labels no longer
# needed, the rest free); the result is summed and transposed to the output labels.
Labels = list[int]


def _parse_term(term: str, ndim: int, where: str) -> Labels:
    if "." in term:
        if term.count("...") != 1 or term.replace("...", "").count(".") != 0:
            raise ValueError(f"einsum: invalid ellipsis in subscripts {term!r} ({where})")
        left, right = term.split("...")
        n_ell = ndim - len(left) - len(right)
        if n_ell < 0:
            raise ValueError(
                f"einsum: {where} has {ndim} dimensions but subscripts {term!r} need more"
            )
        return (
            [ord(c) for c in left]
            + [-1 - k for k in reversed(range(n_ell))]
            + [ord(c) for c in right]
        )
    if len(term) != ndim:
        raise ValueError(
            f"einsum: {where} has {ndim} dimensions but subscripts {term!r} name {len(term)}"
        )
    return [ord(c) for c in term]


def _check_letters(term: str) -> None:
    for c in term.replace("...", ""):
        if not c.isalpha():
            raise ValueError(f"einsum: invalid subscript {c!r} in einstein sum subscripts string")


def _parse_einsum(subscripts: str, ndims: Sequence[int]) -> tuple[list[Labels], Labels]:
    subscripts = subscripts.replace(" ", "")
    explicit = "->" in subscripts
    lhs, rhs = subscripts.split("->") if explicit else (subscripts, "")
    terms = lhs.split(",")
    if len(terms) != len(ndims):
        raise ValueError(f"einsum: {len(terms)} operand subscripts for {len(ndims)} operands")
    for term in (*terms, rhs):
        _check_letters(term)
    inputs = [
        _parse_term(t, n, f"operand {i}") for i, (t, n) in enumerate(zip(terms, ndims, strict=True))
    ]
    n_ell = max((sum(lab < 0 for lab in labels) for labels in inputs), default=0)
    if explicit:
        if "." in rhs:
            left, right = rhs.split("...")
            output = [ord(c) for c in left] + [-1 - k for k in reversed(range(n_ell))]
            output += [ord(c) for c in right]
        else:
            output = [ord(c) for c in rhs]
            if n_ell:
                raise ValueError(
                    "output has more dimensions than subscripts given in einstein sum, but no "
                    "'...' ellipsis provided to broadcast the extra dimensions."
                )
        if len(set(output)) != len(output):
            raise ValueError(f"einsum: output subscript {rhs!r} repeats a label")
        used = {lab for labels in inputs for lab in labels}
        for lab in output:
            if lab not in used:
                raise ValueError(
                    f"einsum: output subscript {chr(lab) if lab > 0 else '...'!r} does not "
                    "appear in the input"
                )
    else:
        counts: dict[int, int] = {}
        for labels in inputs:
            for lab in labels:
                counts[lab] = counts.get(lab, 0) + 1
        output = [-1 - k for k in reversed(range(n_ell))]
        output += sorted(lab for lab, c in counts.items() if c == 1 and lab > 0)
    return inputs, output


def _take_diagonals(x: Any, labels: Labels) -> tuple[Any, Labels]:
    """Repeated labels of one operand: keep the diagonal (``'ii->i'``)."""
    while len(set(labels)) != len(labels):
        lab = next(lab for lab in labels if labels.count(lab) > 1)
        positions = [i for i, l2 in enumerate(labels) if l2 == lab][:2]
        first, second = positions
        n = shape_of(x)[first]
        if shape_of(x)[second] != n:
            raise ValueError(
                f"dimensions in operand for collapsing index '{chr(lab)}' don't match "
                f"({n} != {shape_of(x)[second]})"
            )
        x = _shape.moveaxis(x, (first, second), (0, 1))
        rest = [l2 for i, l2 in enumerate(labels) if i not in (first, second)]
        r = np.arange(n)
        x = _indexing.getitem(x, (r, r))
        labels = [lab, *rest]
    return x, labels


def _sum_out(x: Any, labels: Labels, keep: set[int]) -> tuple[Any, Labels]:
    axes = tuple(i for i, lab in enumerate(labels) if lab not in keep)
    if not axes:
        return x, labels
    return _reductions.sum(x, axis=axes), [lab for lab in labels if lab in keep]


def _contract_pair(
    a: Any, la: Labels, b: Any, lb: Labels, keep: set[int], sizes: dict[int, int]
) -> tuple[Any, Labels]:
    """Contract two operands over their shared labels that ``keep`` does not need."""
    a, la = _sum_out(a, la, keep | set(lb))
    b, lb = _sum_out(b, lb, keep | set(la))
    batch = [lab for lab in la if lab in lb and lab in keep]
    summed = [lab for lab in la if lab in lb and lab not in keep]
    a_free = [lab for lab in la if lab not in lb]
    b_free = [lab for lab in lb if lab not in la]
    a_shape = dict(zip(la, shape_of(a), strict=True))
    b_shape = dict(zip(lb, shape_of(b), strict=True))
    # a contracted label of size 1 on one side broadcasts against the other side
    if any(a_shape[lab] != sizes[lab] for lab in summed):
        a = broadcast_to(a, tuple(sizes[lab] if lab in summed else a_shape[lab] for lab in la))
    if any(b_shape[lab] != sizes[lab] for lab in summed):
        b = broadcast_to(b, tuple(sizes[lab] if lab in summed else b_shape[lab] for lab in lb))
    k = math.prod(sizes[lab] for lab in summed)
    fa = math.prod(a_shape[lab] for lab in a_free)
    fb = math.prod(b_shape[lab] for lab in b_free)
    a2 = transpose(a, [la.index(lab) for lab in batch + a_free + summed])
    b2 = transpose(b, [lb.index(lab) for lab in batch + summed + b_free])
    a2 = reshape(a2, tuple(a_shape[lab] for lab in batch) + (fa, k))
    b2 = reshape(b2, tuple(b_shape[lab] for lab in batch) + (k, fb))
    out = matmul(a2, b2)
    batch_shape = shape_of(out)[:-2]
    out_shape = (
        batch_shape + tuple(a_shape[lab] for lab in a_free) + tuple(b_shape[lab] for lab in b_free)
    )
    return reshape(out, out_shape), batch + a_free + b_free


def _interleaved(args: Sequence[Any]) -> tuple[str, list[Any]]:
    """``einsum(op0, sublist0, op1, sublist1, ..., [sublistout])`` as a subscripts string."""
    rest = list(args)
    out_term = rest.pop() if len(rest) % 2 == 1 else None
    operands, terms = rest[0::2], rest[1::2]

    def letters(sub: Sequence[Any]) -> str:
        out = []
        for s in sub:
            if s is Ellipsis:
                out.append("...")
            else:
                i = int(s)
                if not 0 <= i < 52:
                    raise ValueError(f"einsum: subscript {i} is not in [0, 52)")
                out.append(chr(ord("A") + i) if i < 26 else chr(ord("a") + i - 26))
        return "".join(out)

    subscripts = ",".join(letters(t) for t in terms)
    if out_term is not None:
        subscripts += "->" + letters(out_term)
    return subscripts, operands


def einsum(*operands: Any, out: None = None, optimize: Any = False, **kwargs: Any) -> Array:
    """Differentiable ``numpy.einsum``: a subscripts string (with ``...`` broadcasting and
    implicit output) or the interleaved ``(op, sublist, ..., [sublistout])`` form.

    A composite: per-operand diagonals (indexing) and sums, then left-to-right pairwise
    contractions, each one batched ``matmul`` of transposed/reshaped operands. ``optimize`` is
    accepted and ignored (the pairwise order is already matmul-based); ``dtype``/``casting``
    are applied to the operands first (``astype``).
    """
    if out is not None:
        raise TypeError("tnp.einsum: out= is not supported (arrays are values)")
    del optimize
    if not operands:
        raise ValueError("No input operands")
    if isinstance(operands[0], str):
        subscripts, xs = operands[0], list(operands[1:])
    else:
        subscripts, xs = _interleaved(operands)
    xs = _operands(*xs)
    dtype = kwargs.pop("dtype", None)
    kwargs.pop("casting", None)
    kwargs.pop("order", None)
    if kwargs:
        raise TypeError(f"einsum: unexpected keyword arguments {sorted(kwargs)}")
    if dtype is not None:
        xs = [_shape.astype(x, dtype) for x in xs]
    inputs, output = _parse_einsum(subscripts, [ndim_of(x) for x in xs])
    sizes: dict[int, int] = {}
    for x, labels in zip(xs, inputs, strict=True):
        for lab, n in zip(labels, shape_of(x), strict=True):
            if sizes.get(lab, 1) not in (1, n) and n != 1:
                raise ValueError(
                    f"einsum: operands could not be broadcast together: label "
                    f"{chr(lab) if lab > 0 else '...'!r} has sizes {sizes[lab]} and {n}"
                )
            sizes[lab] = n if sizes.get(lab, 1) == 1 else sizes[lab]
    terms = [_take_diagonals(x, list(labels)) for x, labels in zip(xs, inputs, strict=True)]
    out_set = set(output)

    def needed_after(k: int) -> set[int]:
        return out_set.union(*(set(lb) for _, lb in terms[k + 1 :]))

    acc, acc_labels = _sum_out(*terms[0], needed_after(0))
    for k in range(1, len(terms)):
        acc, acc_labels = _contract_pair(
            acc, acc_labels, terms[k][0], terms[k][1], needed_after(k), sizes
        )
    acc, acc_labels = _sum_out(acc, acc_labels, out_set)
    # output labels of size 1 missing from the result (ellipsis axes of size 1 never seen)
    result_shape = dict(zip(acc_labels, shape_of(acc), strict=True))
    acc = transpose(acc, [acc_labels.index(lab) for lab in output if lab in result_shape])
    final = tuple(result_shape.get(lab, 1) for lab in output)
    full = tuple(sizes.get(lab, 1) for lab in output)
    acc = reshape(acc, final)
    return broadcast_to(acc, full) if final != full else acc
