"""The transform-agnostic core: primitives, traces, the trace stack, pytrees, errors."""

from . import arrays as arrays
from . import tree_util as tree_util
from ._freeze import frozen as frozen
from ._freeze import thawed as thawed
from ._interpreters import Interpreter as Interpreter
from ._interpreters import interpreters as interpreters
from ._interpreters import register_interpreter as register_interpreter
from ._primitive import Primitive as Primitive
from ._primitive import all_primitives as all_primitives
from ._primitive import native as native
from ._primitive import native_types as native_types
from ._primitive import no_scalars as no_scalars
from ._primitive import unary_function as unary_function
from ._quiet import quiet as quiet
from ._stack import current_traces as current_traces
from ._stack import new_trace as new_trace
from ._trace import PrimalTracer as PrimalTracer
from ._trace import Trace as Trace
from ._trace import Tracer as Tracer
from ._trace import Transposing as Transposing
from ._trace import concrete as concrete
from ._trace import number_primitives as number_primitives
from ._trace import operators as operators
from ._trace import peek as peek
from ._trace import refuse_concrete as refuse_concrete
from ._trace import twins as twins
from ._trace import untwinned as untwinned
from ._types import Array as Array
from ._types import ArrayLike as ArrayLike
from ._types import DType as DType
from ._types import Scalar as Scalar
from .errors import ArrayLibraryError as ArrayLibraryError
from .errors import ConcretizationTypeError as ConcretizationTypeError
from .errors import DerivativeDroppedError as DerivativeDroppedError
from .errors import EscapedTracerError as EscapedTracerError
from .errors import NoRuleError as NoRuleError
from .errors import TraceMixError as TraceMixError
from .errors import TracerBoolConversionError as TracerBoolConversionError
from .errors import TransformsError as TransformsError
from .errors import UnexpectedTracerError as UnexpectedTracerError

__all__ = [
    "Array",
    "ArrayLike",
    "ArrayLibraryError",
    "arrays",
    "ConcretizationTypeError",
    "DType",
    "DerivativeDroppedError",
    "EscapedTracerError",
    "Interpreter",
    "NoRuleError",
    "Primitive",
    "Scalar",
    "Trace",
    "all_primitives",
    "interpreters",
    "register_interpreter",
    "TraceMixError",
    "PrimalTracer",
    "Tracer",
    "TracerBoolConversionError",
    "TransformsError",
    "UnexpectedTracerError",
    "concrete",
    "current_traces",
    "frozen",
    "new_trace",
    "native",
    "native_types",
    "no_scalars",
    "number_primitives",
    "operators",
    "peek",
    "quiet",
    "Transposing",
    "refuse_concrete",
    "thawed",
    "tree_util",
    "twins",
    "unary_function",
    "untwinned",
]
