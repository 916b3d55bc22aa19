"""Batching: the ``vmap`` interpreter and its rule registry."""

from ._rules import BatchRule as BatchRule
from ._rules import batch_rule as batch_rule
from ._rules import defbatch as defbatch
from ._rules import has_batch_rule as has_batch_rule
from ._trace import BatchTrace as BatchTrace
from ._trace import BatchTracer as BatchTracer
from ._trace import is_batched as is_batched

__all__ = [
    "BatchRule",
    "BatchTrace",
    "BatchTracer",
    "batch_rule",
    "defbatch",
    "has_batch_rule",
    "is_batched",
]
