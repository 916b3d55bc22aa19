"""The docstring of a ``transforms.scipy.special`` function made by a family constructor."""

from __future__ import annotations

__all__ = ["special_doc"]


def special_doc(name: str, derivative: str) -> str:
    """``Differentiable scipy.special.<name>``, with its derivative rule in words."""
    return f"Differentiable ``scipy.special.{name}`` (elementwise); {derivative}."
