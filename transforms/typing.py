"""Annotations for code that transforms see: ``Array`` is an ndarray or a tracer of one."""

from transforms.core import Array as Array
from transforms.core import ArrayLike as ArrayLike
from transforms.core import DType as DType
from transforms.core import Scalar as Scalar

__all__ = ["Array", "ArrayLike", "DType", "Scalar"]
