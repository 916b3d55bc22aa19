"""The errors a user of transforms may meet; each message names what went wrong and the fix."""

from __future__ import annotations

__all__ = [
    "TransformsError",
    "NoRuleError",
    "EscapedTracerError",
    "DerivativeDroppedError",
    "TraceMixError",
    "ConcretizationTypeError",
    "TracerBoolConversionError",
    "UnexpectedTracerError",
    "ArrayLibraryError",
]


class TransformsError(Exception):
    """Base class of every error raised by transforms itself."""


class NoRuleError(TransformsError, NotImplementedError):
    """A primitive reached an interpreter that has no rule for it."""

    def __init__(
        self, primitive: str, transform: str, argnum: int | None, how: str, reason: str = ""
    ) -> None:
        where = "" if argnum is None else f" with respect to argument {argnum}"
        fix = reason or f"add one with {how}(<{primitive} primitive>, ...)"
        super().__init__(f"primitive '{primitive}' has no {transform} rule{where}; {fix}")
        self.primitive = primitive
        self.transform = transform
        self.argnum = argnum


class EscapedTracerError(TransformsError, RuntimeError):
    """A traced value outlived the transform that created it and reached a primitive."""

    def __init__(self, primitive: str, transform: str) -> None:
        super().__init__(
            f"primitive '{primitive}' received a traced value of a finished '{transform}' "
            "transform: the value escaped it (stored in a global, a closure or a list that "
            "outlived the call). Return it from the transformed function instead."
        )


class DerivativeDroppedError(TransformsError, TypeError):
    """A conversion (``float()``, ``int()``, ``np.asarray``) would silently drop a derivative."""

    def __init__(self, what: str, transform: str) -> None:
        super().__init__(
            f"{what} of a value being differentiated by '{transform}' would drop its "
            "derivative. Keep it an array and use transforms.numpy functions; comparisons "
            "and bool() are allowed for control flow, and .item() gives the primal value."
        )


class TraceMixError(TransformsError, RuntimeError):
    """Two live transforms at the same level met in one primitive (e.g. across threads)."""

    def __init__(self, primitive: str, first: str, second: str) -> None:
        super().__init__(
            f"primitive '{primitive}' received traced values of two different live transforms "
            f"at the same level ('{first}' and '{second}'); a traced value was shared between "
            "threads or tasks. Pass plain arrays between them instead."
        )


class ConcretizationTypeError(TransformsError, TypeError):
    """A traced value was needed as a concrete one where that would give a wrong derivative.

    Raised while a custom rule is transposed (forward mode of a ``custom_vjp``, reverse mode
    of a ``custom_jvp``): the rule must be linear in the values being transposed, so control
    flow that reads them (``if``, ``bool()``, comparisons, ``.item()``) would make the
    transposed rule follow the branch taken at one point. A ``TypeError``, as JAX's
    ``jax.errors.ConcretizationTypeError``.
    """


class TracerBoolConversionError(ConcretizationTypeError):
    """``bool()`` of a traced value that cannot be branched on (JAX's type of the same name):
    a value being transposed, or a batched value under ``vmap``."""


class UnexpectedTracerError(TransformsError, TypeError):
    """A custom rule's function reads, through its closure, a traced value of the transform
    that applies the rule (JAX's ``jax.errors.UnexpectedTracerError``, a ``TypeError``): the
    rule would never give that value's derivative. Pass it as an argument instead."""

    def __init__(self, what: str, primitive: str) -> None:
        super().__init__(
            f"{what} reads a value traced by the transform that differentiates or batches it "
            f"without taking it as an argument (primitive '{primitive}' received it from a "
            "closure, a global or a container): its rules would not give that value's "
            "derivative. Pass the value as an argument of the function (nondiff_argnums for "
            "one that is not differentiated), or use T.checkpoint, which converts closures"
        )


class ArrayLibraryError(TransformsError, NotImplementedError):
    """An operation the array library of its operands does not have (Dask has no ``eigh``,
    ``det`` or ``sort``): an error, never a silent computation of the whole array. The fix
    is to bring the operand into memory first, or to use an operation the library has."""

    def __init__(self, what: str, library: str) -> None:
        super().__init__(
            f"{what} is not available for {library} arrays: {library} does not implement it, "
            f"and transforms never computes a whole {library} array behind your back. Compute "
            "the operand first (dask: x.compute(), or x.persist() to keep it distributed, "
            "cupy: x.get()) if it fits in memory, or express the step with operations "
            f"{library} has"
        )
        self.library = library
