"""Sparsity detection: the interpreter that propagates dependency patterns, and its rules."""

from ._derive import partials_rule as partials_rule
from ._pattern import Pattern as Pattern
from ._pattern import scipy_sparse as scipy_sparse
from ._rules import SparsityRule as SparsityRule
from ._rules import axes_rule as axes_rule
from ._rules import convolve_rule as convolve_rule
from ._rules import defsparsity as defsparsity
from ._rules import defsparsity_inline as defsparsity_inline
from ._rules import dense_linear_rule as dense_linear_rule
from ._rules import dense_rule as dense_rule
from ._rules import elementwise_rule as elementwise_rule
from ._rules import has_sparsity_rule as has_sparsity_rule
from ._rules import index_rule as index_rule
from ._rules import matmul_rule as matmul_rule
from ._rules import multiply_rule as multiply_rule
from ._rules import reduction_rule as reduction_rule
from ._rules import scan_rule as scan_rule
from ._rules import scatter_rule as scatter_rule
from ._trace import SparsityTrace as SparsityTrace
from ._trace import SparsityTracer as SparsityTracer
from ._trace import dependencies as dependencies
from ._trace import input_tracer as input_tracer

__all__ = [
    "Pattern",
    "SparsityRule",
    "SparsityTrace",
    "SparsityTracer",
    "axes_rule",
    "convolve_rule",
    "defsparsity",
    "defsparsity_inline",
    "dense_linear_rule",
    "dense_rule",
    "dependencies",
    "elementwise_rule",
    "has_sparsity_rule",
    "index_rule",
    "input_tracer",
    "matmul_rule",
    "multiply_rule",
    "partials_rule",
    "reduction_rule",
    "scan_rule",
    "scatter_rule",
    "scipy_sparse",
]
