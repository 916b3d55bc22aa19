"""The family kit: how ``transforms.numpy``, ``transforms.scipy`` and ``transforms.nn`` define
their primitives — and how you define yours.

A primitive is a named NumPy implementation plus one rule per interpreter, side by side. The
constructors register every rule at once from the mathematics alone:

- ``unary(name, impl, d)``: a one-argument elementwise function from its derivative
  ``d(ans, x)`` (written with ``transforms.numpy``, so it nests to any order);
- ``elementwise(name, impl, *d)``: a broadcasting function of several arguments from its
  partial derivatives ``d_i(ans, *args)`` (``None``: zero; ``NO_DERIVATIVE``: refused);
- ``elementwise_nondifferentiable``: comparisons and predicates (no derivative, batched);
- ``elementwise_function``: the batching rule and public function of an elementwise
  primitive whose derivative rules are written by hand with ``defjvp``/``defvjp``.

Anything else is a ``Primitive`` with rules given by ``defjvp``/``defjvp_joint``, ``defvjp``/
``defvjp_argnum`` and ``defbatch``; ``primitive(fun)`` makes one from a function whose
arguments may be pytrees. The helpers the rules of every family share: shapes and dtypes
(``shape_of``, ``dtype_of``, ``normalize_axes``), broadcasting in rules (``to_output`` for a
tangent term, ``to_operand``/``unbroadcast`` for a cotangent, ``cast_to``/``in_dtype_of``
for the cotangent dtype contract), batch axes (``to_front``, ``materialized``,
``elementwise_rule``, ``reduction_rule``), and ``register_twins`` so that a foreign
library's raw function called on a traced value dispatches to its twin (or says which
namespace to use). The rule coverage test holds every primitive a module of ``transforms``
defines to a rule in every interpreter.
"""

from .core import NoRuleError as NoRuleError
from .core import Primitive as Primitive
from .core import Tracer as Tracer
from .core import all_primitives as all_primitives
from .core import interpreters as interpreters
from .forward import defjvp_joint as defjvp_joint
from .numpy._batching import axis_size as axis_size
from .numpy._batching import elementwise_rule as elementwise_rule
from .numpy._batching import materialized as materialized
from .numpy._batching import reduction_rule as reduction_rule
from .numpy._batching import to_front as to_front
from .numpy._define import dtype_of as dtype_of
from .numpy._define import is_traced as is_traced
from .numpy._define import ndim_of as ndim_of
from .numpy._define import nondifferentiable as nondifferentiable
from .numpy._define import normalize_axes as normalize_axes
from .numpy._define import reject_out as reject_out
from .numpy._define import shape_of as shape_of
from .numpy._install import register_twins as register_twins
from .numpy._kit import NO_DERIVATIVE as NO_DERIVATIVE
from .numpy._kit import Derivative as Derivative
from .numpy._kit import elementwise as elementwise
from .numpy._kit import elementwise_function as elementwise_function
from .numpy._kit import elementwise_nondifferentiable as elementwise_nondifferentiable
from .numpy._kit import unary as unary
from .numpy._shape import cast_to as cast_to
from .numpy._shape import in_dtype_of as in_dtype_of
from .numpy._shape import to_operand as to_operand
from .numpy._shape import to_output as to_output
from .numpy._shape import unbroadcast as unbroadcast
from .numpy._user import FunctionPrimitive as FunctionPrimitive
from .numpy._user import defbatch as defbatch
from .numpy._user import defjvp as defjvp
from .numpy._user import defvjp as defvjp
from .numpy._user import primitive as primitive
from .reverse import defvjp_argnum as defvjp_argnum

__all__ = [
    "NO_DERIVATIVE",
    "Derivative",
    "FunctionPrimitive",
    "NoRuleError",
    "Primitive",
    "Tracer",
    "all_primitives",
    "axis_size",
    "cast_to",
    "defbatch",
    "defjvp",
    "defjvp_joint",
    "defvjp",
    "defvjp_argnum",
    "dtype_of",
    "elementwise",
    "elementwise_function",
    "elementwise_nondifferentiable",
    "elementwise_rule",
    "in_dtype_of",
    "interpreters",
    "is_traced",
    "materialized",
    "ndim_of",
    "nondifferentiable",
    "normalize_axes",
    "primitive",
    "reduction_rule",
    "register_twins",
    "reject_out",
    "shape_of",
    "to_front",
    "to_operand",
    "to_output",
    "unary",
    "unbroadcast",
]
