"""Wire tracers to this package: operators and raw-NumPy calls dispatch to primitives.

``core`` declares the tracer operators and methods but never imports this package; here
they are pointed at the differentiable functions, and ``np.sin(tracer)`` (NumPy's
``__array_ufunc__``/``__array_function__`` protocols) is routed to ``tnp.sin``.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

from transforms.core import number_primitives, operators, twins, untwinned

from . import _arithmetic, _elementwise, _indexing, _products, _reductions, _shape, fft, linalg


def install(namespace: ModuleType) -> None:
    """Fill the tracer operator table and the raw-NumPy dispatch table from ``namespace``."""
    operators.update(
        add=_arithmetic.add,
        subtract=_arithmetic.subtract,
        multiply=_arithmetic.multiply,
        divide=_arithmetic.divide,
        power=_arithmetic.power,
        negative=_arithmetic.negative,
        less=_arithmetic.less,
        less_equal=_arithmetic.less_equal,
        greater=_arithmetic.greater,
        greater_equal=_arithmetic.greater_equal,
        equal=_arithmetic.equal,
        not_equal=_arithmetic.not_equal,
        abs=_elementwise.abs,
        matmul=_products.matmul,
        dot=_products.dot,
        getitem=_indexing.getitem,
        reshape=_shape.reshape,
        ravel=_shape.ravel,
        transpose=_shape.transpose,
        squeeze=_shape.squeeze,
        astype=_shape.astype,
        sum=_reductions.sum,
        mean=_reductions.mean,
        prod=_reductions.prod,
        max=_reductions.max,
        min=_reductions.min,
        var=namespace.var,
        std=namespace.std,
        cumsum=namespace.cumsum,
        cumprod=namespace.cumprod,
        trace=namespace.trace,
        diagonal=namespace.diagonal,
        swapaxes=namespace.swapaxes,
        repeat=namespace.repeat,
        take=namespace.take,
        clip=namespace.clip,
        round=namespace.round,
        conjugate=namespace.conjugate,
        real=namespace.real,
        imag=namespace.imag,
        argmax=namespace.argmax,
        argmin=namespace.argmin,
        argsort=namespace.argsort,
        nonzero=namespace.nonzero,
        bitwise_and=namespace.bitwise_and,
        bitwise_or=namespace.bitwise_or,
        bitwise_xor=namespace.bitwise_xor,
        invert=namespace.invert,
        floor_divide=namespace.floor_divide,
        mod=namespace.mod,
        divmod=namespace.divmod,
        all=namespace.all,
        any=namespace.any,
    )
    number_primitives.update(
        add=_arithmetic.add_p,
        subtract=_arithmetic.subtract_p,
        multiply=_arithmetic.multiply_p,
        divide=_arithmetic.divide_p,
        power=_arithmetic.power_p,
    )
    for ours, theirs in ((namespace, np), (linalg, np.linalg), (fft, np.fft)):
        register_twins(ours, theirs, "NumPy")


def register_twins(ours: ModuleType, theirs: ModuleType, library: str) -> None:
    """Route the raw functions of ``theirs`` (``numpy``, ``scipy.special``) called on traced
    values to their differentiable twins of the same name in ``ours``; a raw function with
    no twin raises an error naming ``library`` and ``ours``, never drops a derivative."""
    for name in ours.__all__:
        twin = getattr(theirs, name, None)
        ours_fn = getattr(ours, name)
        if callable(twin) and callable(ours_fn) and not isinstance(ours_fn, type):
            twins[twin] = ours_fn
    for name in getattr(theirs, "__all__", dir(theirs)):
        raw = getattr(theirs, name, None)
        if callable(raw) and raw not in twins and not isinstance(raw, type):
            untwinned[raw] = (library, ours.__name__)
