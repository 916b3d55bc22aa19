"""Sparsity rules derived from partial derivatives: how the family kit covers every
elementwise primitive it makes.

First order needs only which partials are zero (``None``). Second order needs which
second derivatives are non-zero: ``d2 f / dx_i dx_j`` is non-zero where the partial
``d_i(ans, *args)`` varies with argument ``j``, and that is a first-order detection of ``d_i``
itself, on labels (argument ``j`` is input ``j``; ``ans`` depends on every argument with a
non-zero partial). It runs once per primitive, operand layout and parameters, and is cached.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ._pattern import Pattern
from ._rules import SparsityRule, elementwise_pattern
from ._trace import dependencies

__all__ = ["partials_rule"]


def partials_rule(partials: Sequence[Callable[..., Any] | None]) -> SparsityRule:
    """The sparsity rule of an elementwise function with these partial derivatives
    ``d_i(ans, *args, **params)`` (``None`` for a zero one)."""
    zero = frozenset(i for i, d in enumerate(partials) if d is None)
    cache: dict[Any, tuple[tuple[int, int], ...]] = {}

    def pairs_of(ans: Any, values: Sequence[Any], live: tuple[bool, ...], params: Any) -> Any:
        try:
            key: Any = (live, tuple(sorted(params.items())))
            hash(key)
        except TypeError:
            key = None
        if key is not None and key in cache:
            return cache[key]
        n = len(values)
        columns = [(j,) if live[j] else () for j in range(n)]
        ans_columns = tuple(j for j in range(n) if live[j])
        pairs: list[tuple[int, int]] = []
        for i in range(n):
            d = partials[i] if i < len(partials) else None
            if not live[i] or d is None:
                continue
            try:
                depends = dependencies(
                    lambda a, *xs, d=d: d(a, *xs, **params),
                    [ans, *values],
                    [ans_columns, *columns],
                    n,
                )
            except Exception:  # a partial detection cannot follow: assume every pair
                depends = frozenset(ans_columns)
            pairs.extend((i, j) for j in depends if live[j])
        result = tuple(pairs)
        if key is not None:
            cache[key] = result
        return result

    def rule(
        ans: Any, values: Sequence[Any], patterns: Sequence[Pattern | None], **params: Any
    ) -> Any:
        live = tuple(p is not None and i not in zero for i, p in enumerate(patterns))
        pairs: Any = ()
        if any(p is not None and p.h is not None for p in patterns):
            pairs = pairs_of(ans, values, live, params)
        return elementwise_pattern(ans, values, patterns, pairs, zero)

    return rule
