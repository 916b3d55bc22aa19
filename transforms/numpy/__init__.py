"""``transforms.numpy``: NumPy's names, differentiable in every mode and nesting.

Replace ``import numpy as np`` by ``import transforms.numpy as tnp`` in code to be
transformed. Constants and dtypes (``tnp.pi``, ``tnp.float32``, ``tnp.newaxis``) and
constructors that take no array input (``tnp.zeros``, ``tnp.eye``) are NumPy's own objects.
A NumPy function not yet differentiable here fails at attribute access, never silently.
"""

from typing import Any

import numpy as _np

from ._arithmetic import add as add
from ._arithmetic import divide as divide
from ._arithmetic import equal as equal
from ._arithmetic import greater as greater
from ._arithmetic import greater_equal as greater_equal
from ._arithmetic import less as less
from ._arithmetic import less_equal as less_equal
from ._arithmetic import maximum as maximum
from ._arithmetic import minimum as minimum
from ._arithmetic import multiply as multiply
from ._arithmetic import negative as negative
from ._arithmetic import not_equal as not_equal
from ._arithmetic import power as power
from ._arithmetic import subtract as subtract
from ._arithmetic import true_divide as true_divide
from ._arithmetic import where as where
from ._elementwise import abs as abs
from ._elementwise import absolute as absolute
from ._elementwise import cos as cos
from ._elementwise import exp as exp
from ._elementwise import log as log
from ._elementwise import sign as sign
from ._elementwise import sin as sin
from ._elementwise import sqrt as sqrt
from ._elementwise import square as square
from ._elementwise import tan as tan
from ._elementwise import tanh as tanh
from ._install import install as _install
from ._products import dot as dot
from ._products import matmul as matmul
from ._products import outer as outer
from ._products import tensordot as tensordot
from ._reductions import amax as amax
from ._reductions import amin as amin
from ._reductions import max as max
from ._reductions import mean as mean
from ._reductions import min as min
from ._reductions import prod as prod
from ._reductions import sum as sum
from ._shape import array as array
from ._shape import asarray as asarray
from ._shape import broadcast_to as broadcast_to
from ._shape import concatenate as concatenate
from ._shape import expand_dims as expand_dims
from ._shape import moveaxis as moveaxis
from ._shape import ones_like as ones_like
from ._shape import ravel as ravel
from ._shape import reshape as reshape
from ._shape import squeeze as squeeze
from ._shape import stack as stack
from ._shape import transpose as transpose
from ._shape import zeros_like as zeros_like

# NumPy's own objects: constants, scalar types, and constructors with no array input.
from numpy import e as e
from numpy import inf as inf
from numpy import nan as nan
from numpy import newaxis as newaxis
from numpy import pi as pi
from numpy import bool_ as bool_
from numpy import complex64 as complex64
from numpy import complex128 as complex128
from numpy import float16 as float16
from numpy import float32 as float32
from numpy import float64 as float64
from numpy import int32 as int32
from numpy import int64 as int64
from numpy import ndarray as ndarray
from numpy import dtype as dtype
from numpy import arange as arange
from numpy import empty as empty
from numpy import eye as eye
from numpy import identity as identity
from numpy import ones as ones
from numpy import zeros as zeros

__all__ = [
    "abs", "absolute", "add", "amax", "amin", "array", "asarray", "broadcast_to", "concatenate",
    "cos", "divide", "dot", "equal", "exp", "expand_dims", "greater", "greater_equal", "less",
    "less_equal", "log", "matmul", "max", "maximum", "mean", "min", "minimum", "moveaxis",
    "multiply", "negative", "not_equal", "ones_like", "outer", "power", "prod", "ravel",
    "reshape", "sign", "sin", "sqrt", "square", "squeeze", "stack", "subtract", "sum", "tan",
    "tanh", "tensordot", "transpose", "true_divide", "where", "zeros_like",
    "e", "inf", "nan", "newaxis", "pi", "bool_", "complex64", "complex128", "float16",
    "float32", "float64", "int32", "int64", "ndarray", "dtype",
    "arange", "empty", "eye", "identity", "ones", "zeros",
]  # fmt: skip


def __getattr__(name: str) -> Any:
    if hasattr(_np, name):
        raise AttributeError(
            f"transforms.numpy has no '{name}': numpy.{name} is not (yet) differentiable here. "
            f"Calling numpy.{name} on traced values would drop their derivatives; "
            "file an issue, or define it with transforms.primitive/defjvp/defvjp."
        )
    raise AttributeError(f"module 'transforms.numpy' has no attribute '{name}'")


_install(__import__(__name__, fromlist=["_"]))
