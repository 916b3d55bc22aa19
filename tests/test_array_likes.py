"""Array-likes that are not ndarrays (pandas Series and DataFrames, lists, tuples,
memoryviews, 0-d arrays, Python numbers) give what NumPy's own function gives, as an ndarray.

NumPy's ufuncs hand pandas objects back to pandas (``np.matmul(df, x)`` is a Series), while
its other functions return ndarrays (``np.dot(df, x)``); a ``transforms.numpy`` function
returns an ``Array`` for both, with the value, dtype and shape of ``np.asarray`` of NumPy's
result, so a traced operation can follow it (issue 31: ``tnp.dot(df, x)`` was a Series).

Two families, both generated so that a new function is covered without an edit here:

1. every public function of ``transforms.numpy`` (and ``linalg``, ``fft``), of
   ``transforms.scipy.special``, ``.linalg``, ``.signal`` and of ``transforms.nn``, called
   with the operands of the first argument pattern NumPy's (SciPy's) function accepts, each
   operand then replaced by each array-like form of it: the result against NumPy's own
   function on those array-likes (``nn`` has no NumPy twin: against itself on ndarrays);
2. every op-spec row of two or more arguments with one argument an array-like constant and
   the others traced, under ``jvp``, ``vjp`` and ``vmap``, against the same constant as an
   ndarray: the values and derivatives must be the same to the bit.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd
import pytest
import scipy.linalg
import scipy.signal
import scipy.special

import transforms as T
import transforms.nn as nn
import transforms.numpy as tnp
import transforms.scipy.linalg as tsl
import transforms.scipy.signal as tss
import transforms.scipy.special as tsp

# ---- the array-like forms of an ndarray --------------------------------------------------------
Form = Callable[[np.ndarray], Any]


def _pandas(a: np.ndarray) -> Any:
    if a.ndim == 1:
        return pd.Series(a)
    if a.ndim == 2:
        return pd.DataFrame(a)
    return None


def _python(a: np.ndarray) -> Any:
    return a.item() if a.ndim == 0 else None


FORMS: dict[str, Form] = {
    "pandas": _pandas,
    "list": lambda a: a.tolist() if a.ndim else None,
    "tuple": lambda a: tuple(a.tolist()) if a.ndim == 1 else None,
    "memoryview": lambda a: memoryview(np.ascontiguousarray(a)),
    "python": _python,
}


def _alike(form: str, a: np.ndarray) -> Any:
    """``a`` in the array-like ``form``, or ``None`` where the form has no such array."""
    return FORMS[form](a)


# ---- family 1: every public function against NumPy's own ------------------------------------
_V = np.array([0.25, 0.5, 0.75])
_M = np.array([[1.0, 0.25], [0.25, 0.5]])  # symmetric positive definite, entries in (0, 1)
_S = np.array(0.5)
_I = np.array([2, 0, 1])
_ONE, _ZERO = np.array(1), np.array(0)  # an axis, a count (repeat, swapaxes)
PATTERNS: tuple[tuple[np.ndarray, ...], ...] = (
    (_V,),
    (_M,),
    (_S,),
    (_I,),
    (_V, _V),
    (_M, _M),
    (_M, _V),
    (_S, _S),
    (_V, _V, _V),
    (_I, _I),
    (_V, _ONE),
    (_M, _ZERO, _ONE),
)

NAMESPACES: tuple[tuple[str, ModuleType, ModuleType | None], ...] = (
    ("tnp", tnp, np),
    ("tnp.linalg", tnp.linalg, np.linalg),
    ("tnp.fft", tnp.fft, np.fft),
    ("special", tsp, scipy.special),
    ("scipy.linalg", tsl, scipy.linalg),
    ("scipy.signal", tss, scipy.signal),
    ("nn", nn, None),
)


def _functions() -> Iterator[tuple[str, Callable[..., Any], Callable[..., Any] | None]]:
    for prefix, ours, theirs in NAMESPACES:
        for name in sorted(ours.__all__):
            fun = getattr(ours, name)
            if callable(fun) and not isinstance(fun, (type, ModuleType)):
                twin = getattr(theirs, name, None) if theirs is not None else fun
                if callable(twin) and not isinstance(twin, type):
                    yield f"{prefix}.{name}", fun, twin


FUNCTIONS = list(_functions())


def _quietly(fun: Callable[..., Any], *args: Any) -> Any:
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fun(*args)


def _answers(fun: Callable[..., Any], args: tuple[Any, ...]) -> tuple[bool, Any]:
    try:
        return True, _quietly(fun, *args)
    except Exception:
        return False, None


def _pattern(ours: Callable[..., Any], theirs: Callable[..., Any]) -> tuple[np.ndarray, ...] | None:
    """The first argument pattern both functions answer on ndarrays."""
    for args in PATTERNS:
        if _answers(theirs, _copies(args))[0] and _answers(ours, _copies(args))[0]:
            return args
    return None


def _copies(args: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    """Fresh operands for each call: a NumPy function may write into its argument."""
    return tuple(a.copy() for a in args)


def _leaves(out: Any) -> list[Any]:
    """The arrays of a result, a (nested) tuple or list of them."""
    if isinstance(out, (tuple, list)):
        return [leaf for o in out for leaf in _leaves(o)]
    return [out]


def _assert_numpys_answer(ours: Any, theirs: Any, where: str) -> None:
    """``ours`` has ``theirs``'s structure, each leaf an ndarray with the value, dtype and
    shape of ``np.asarray`` of ``theirs``'s leaf (a pandas result: its values)."""
    assert isinstance(ours, (tuple, list)) == isinstance(theirs, (tuple, list)), where
    if isinstance(ours, (tuple, list)):
        assert len(ours) == len(theirs), where
    ours_leaves, their_leaves = _leaves(ours), _leaves(theirs)
    assert len(ours_leaves) == len(their_leaves), where
    for o, t in zip(ours_leaves, their_leaves, strict=True):
        if type(t) in (bool, int, float, complex):  # allclose, array_equal: as NumPy's
            assert type(o) is type(t) and o == t, where
            continue
        assert type(o) is np.ndarray, f"{where}: a {type(o).__name__}, not an ndarray"
        expected = np.asarray(t)
        assert o.dtype == expected.dtype, f"{where}: dtype {o.dtype}, NumPy's {expected.dtype}"
        assert o.shape == expected.shape, where
        np.testing.assert_allclose(o, expected, rtol=1e-12, atol=1e-14, err_msg=where)


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize(("name", "ours", "theirs"), FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
def test_public_function_on_array_likes_gives_numpys_answer(
    name: str, ours: Callable[..., Any], theirs: Callable[..., Any], form: str
) -> None:
    pattern = _pattern(ours, theirs)
    if pattern is None:
        pytest.skip("takes none of the generic argument patterns (see the coverage test)")
    args = _copies(pattern)
    alikes = [_alike(form, a) for a in args]
    if all(a is None for a in alikes):
        pytest.skip(f"no {form} form of these operands")
    variants = [tuple(a if c is None else c for a, c in zip(args, alikes, strict=True))]
    if len(args) > 1:  # each operand alone in the array-like form, next to ndarrays
        variants += [args[:i] + (c,) + args[i + 1 :] for i, c in enumerate(alikes) if c is not None]
    for call in variants:
        where = f"{name}{tuple(type(a).__name__ for a in call)}"
        on_values = tuple(np.asarray(a) for a in call)
        try:
            numpys = _quietly(theirs, *call)
        except Exception as refusal:  # np.block of a tuple, np.flip of a 2-d memoryview
            try:
                out = _quietly(ours, *call)
            except type(refusal):
                continue  # refused as NumPy refuses
            # answered where NumPy's implementation cannot: NumPy's answer on the values
            _assert_numpys_answer(out, _quietly(theirs, *on_values), where)
            continue
        if form == "pandas":
            # a pandas object is its values; NumPy's answer on it, except where NumPy iterates
            # a DataFrame (as the sequence of multi_dot: its column labels), is the same
            numpys = _quietly(theirs, *on_values)
        _assert_numpys_answer(_quietly(ours, *call), numpys, where)


def test_the_generic_patterns_reach_almost_every_function() -> None:
    # The family above skips a function that takes none of the patterns (reshape needs a
    # shape); family 2 reaches those through their op-spec rows. This bound keeps the skips
    # a small minority, so the family cannot silently stop testing.
    reached = [name for name, ours, theirs in FUNCTIONS if _pattern(ours, theirs) is not None]
    assert len(FUNCTIONS) > 350
    assert len(reached) > 0.9 * len(FUNCTIONS)


def test_dot_of_a_dataframe_then_a_traced_product() -> None:
    # issue 31's report: the Series that tnp.dot returned broke the multiply after it.
    df = pd.DataFrame([[1.0, 2.0], [3.0, 4.0]])
    w = np.array([0.5, -1.0])

    def loss(w: T.Array) -> T.Array:
        return tnp.sum(tnp.dot(df, w) * w)

    expected = (df.to_numpy() + df.to_numpy().T) @ w
    np.testing.assert_allclose(T.grad(loss)(w), expected, rtol=1e-14)
    assert type(tnp.dot(df, w)) is np.ndarray
    assert type(tnp.matmul(df, w)) is np.ndarray  # NumPy's ufunc gives a Series here


# ---- family 2: an array-like constant next to traced values -----------------------------------
def _transformed(fun: Callable[..., Any], traced: tuple[np.ndarray, ...]) -> Iterator[Any]:
    """``fun``'s value, its ``jvp``, its ``vjp``'s cotangents and its ``vmap`` (over a batch of
    two), each computed lazily (a transform may refuse: the caller compares refusals)."""
    tangents = tuple(np.full_like(x, 0.5) for x in traced)
    yield lambda: fun(*traced)
    yield lambda: T.jvp(fun, traced, tangents)

    def pulled() -> Any:
        out, pullback = T.vjp(fun, *traced)
        return out, pullback(T.tree_util.tree_map(lambda o: np.ones_like(o), out))

    yield pulled
    yield lambda: T.vmap(fun)(*(np.stack([x, x + 0.125]) for x in traced))


def _outcome(thunk: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return "value", _quietly(thunk)
    except Exception as e:
        return "error", type(e)


BINARY = [
    (name, ours, theirs)
    for name, ours, theirs in FUNCTIONS
    if (args := _pattern(ours, theirs)) is not None
    and len(args) > 1
    and all(a.dtype.kind == "f" for a in args)
]


@pytest.mark.parametrize("form", ["pandas", "list", "memoryview", "python"])
@pytest.mark.parametrize(("name", "ours", "theirs"), BINARY, ids=[f[0] for f in BINARY])
def test_array_like_constant_next_to_traced_values(
    name: str, ours: Callable[..., Any], theirs: Callable[..., Any], form: str
) -> None:
    # Each operand in turn is the array-like constant, the others traced: under jvp, vjp and
    # vmap the function gives exactly what it gives with that constant as an ndarray (or
    # refuses as it refuses then).
    pattern = _pattern(ours, theirs)
    assert pattern is not None
    args = _copies(pattern)
    compared = 0
    for k, a in enumerate(args):
        constant = _alike(form, a)
        if constant is None:
            continue
        traced = args[:k] + args[k + 1 :]

        def with_constant(c: Any, k: int = k) -> Callable[..., Any]:
            return lambda *xs: ours(*xs[:k], c, *xs[k:])

        pairs = zip(
            _transformed(with_constant(constant), traced),
            _transformed(with_constant(a), traced),
            strict=True,
        )
        for step, (alike_thunk, array_thunk) in enumerate(pairs):
            where = (
                f"{name}: argument {k} a {form} constant, {['value', 'jvp', 'vjp', 'vmap'][step]}"
            )
            expected = _outcome(array_thunk)
            got = _outcome(alike_thunk)
            assert got[0] == expected[0], f"{where}: {got} where the ndarray gives {expected}"
            if expected[0] == "error":
                assert got[1] is expected[1], where
                continue
            compared += 1
            for x, y in zip(_leaves(got[1]), _leaves(expected[1]), strict=True):
                assert type(x) is type(y), where
                np.testing.assert_array_equal(x, y, err_msg=where)
    if compared == 0:
        pytest.skip(f"no {form} form of these operands")
