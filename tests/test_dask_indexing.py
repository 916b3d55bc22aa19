"""Indexing, its transpose (the scatter-add) and indexed updates of Dask arrays, exactly.

``core/arrays.py`` indexes a Dask array where Dask indexes as NumPy does and otherwise
gathers its flattened elements at the positions NumPy's own indexing selects; the scatter-add
(the VJP of ``x[idx]``) is a functional update in ``np.add.at``'s order, one round per
occurrence of a repeated index, so that it equals NumPy's bit for bit (the order matters:
``(1e16 + 1) - 1e16`` is 0, ``(1e16 - 1e16) + 1`` is 1). Every result must be built without
computing a Dask array (the scheduler refuses), and equal NumPy's exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import transforms as T
import transforms.numpy as tnp
from transforms.core import ArrayLibraryError, arrays

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")


def _refuse(dsk: Any, keys: Any, **kwargs: Any) -> Any:
    raise AssertionError("a Dask array was computed while the result was built")


@contextmanager
def _lazy() -> Iterator[None]:
    with dask.config.set(scheduler=_refuse):
        yield


def _dask(a: Any, chunk: int = 2) -> Any:
    a = np.asarray(a)
    return da.from_array(a, chunks=tuple(max(1, min(chunk, n)) for n in a.shape))


def _value(x: Any) -> np.ndarray:
    assert isinstance(x, da.Array), type(x)
    return np.asarray(x.compute(scheduler="sync"))


# index -> shape of the array it indexes: repeated entries, several and n-d index arrays,
# arrays apart (NumPy moves their axes first), masks, integers mixed in, negative entries
INDICES: list[tuple[Any, tuple[int, ...]]] = [
    ((np.array([0, 1, 1, 0, 3, 0]), np.array([2, 2, 2, 2, 5, 2])), (4, 6)),
    (np.array([[0, 1], [1, 0], [-1, 0]]), (4, 6)),
    ((slice(None), np.array([0, 0, 5, 0])), (4, 6)),
    ((np.array([0, 2, 0]), slice(1, 3), np.array([1, 1, 1])), (3, 4, 2)),
    (np.arange(24).reshape(4, 6) % 3 == 0, (4, 6)),
    ((1, np.array([3, 3, -3])), (4, 6)),
    ((Ellipsis, np.array([[1, 1], [0, 1]])), (3, 2, 2)),
    ((np.array([1, 1]), None, slice(None, None, -1)), (3, 4)),
    ((slice(1, None), 0), (4, 6)),
]


@pytest.mark.parametrize(("index", "shape"), INDICES)
def test_getitem_of_a_dask_array_is_lazy_and_numpys(index: Any, shape: tuple[int, ...]) -> None:
    x = np.random.default_rng(0).normal(size=shape)
    with _lazy():
        got = arrays.getitem(_dask(x), index)
    np.testing.assert_array_equal(_value(got), x[index])


@pytest.mark.parametrize(("index", "shape"), INDICES)
def test_scatter_add_into_a_dask_array_is_np_add_at_bit_for_bit(
    index: Any, shape: tuple[int, ...]
) -> None:
    rng = np.random.default_rng(1)
    out = rng.normal(size=shape)
    selected = out[index].shape
    # magnitudes 1e-16 .. 1e16: any other summation order than add.at's changes the bits
    values = rng.normal(size=selected) * 10.0 ** rng.integers(-16, 17, size=selected)
    expected = out.copy()
    np.add.at(expected, index, values)
    for o, v in ((_dask(out), values), (out.copy(), _dask(values)), (_dask(out), _dask(values))):
        with _lazy():
            got = arrays.scatter_add(o, index, v)
        np.testing.assert_array_equal(_value(got), expected)


def test_scatter_add_keeps_add_at_order_where_it_decides_the_result() -> None:
    values = np.array([1e16, 1.0, -1e16, 1.0])  # add.at: (1e16 + 1) - 1e16 = 0 (1 < ulp)
    expected = np.zeros(2)
    np.add.at(expected, [0, 0, 0, 1], values)
    with _lazy():
        got = arrays.scatter_add(_dask(np.zeros(2)), np.array([0, 0, 0, 1]), _dask(values))
    assert expected.tolist() == [0.0, 1.0]  # (another order, (1e16 - 1e16) + 1, gives 1)
    assert _value(got).tolist() == expected.tolist()


@given(
    st.lists(st.integers(0, 4), min_size=1, max_size=12),
    st.integers(0, 2**32 - 1),
)
def test_scatter_add_with_drawn_repeats_is_add_at(index: list[int], seed: int) -> None:
    rng = np.random.default_rng(seed)
    values = rng.normal(size=(len(index), 2)) * 10.0 ** rng.integers(-8, 9, size=(len(index), 1))
    expected = np.zeros((5, 2))
    np.add.at(expected, np.array(index), values)
    with _lazy():
        got = arrays.scatter_add(_dask(np.zeros((5, 2))), np.array(index), _dask(values))
    np.testing.assert_array_equal(_value(got), expected)


@pytest.mark.parametrize(("index", "shape"), INDICES)
def test_index_set_of_a_dask_array_is_the_last_write(index: Any, shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(2)
    x = rng.normal(size=shape)
    values = rng.normal(size=x[index].shape)
    expected = x.copy()
    expected[index] = values
    for a, v in ((_dask(x), values), (x, _dask(values))):
        with _lazy():
            got = arrays.index_set(a, index, v)
        np.testing.assert_array_equal(_value(got), expected)
    np.testing.assert_array_equal(arrays.index_set(x, index, values), expected)


@pytest.mark.parametrize(
    ("index", "shape"),
    [
        (np.array([[0, 3], [2, -1], [1, 0]]), (4, 6)),
        ((slice(None), np.array([5, 0, 5, -6])), (4, 6)),
        ((np.array([[0], [3]]), np.array([1, 1, 5])), (4, 6)),
        ((np.array([2, 2, 0]), Ellipsis), (3, 2, 2)),
    ],
)
def test_index_arrays_that_are_dask_arrays_gather_and_scatter_lazily(
    index: Any, shape: tuple[int, ...]
) -> None:
    """Indices computed lazily (``searchsorted`` of Dask data) stay Dask arrays."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=shape)
    lazy_index: Any = _dask(index) if isinstance(index, np.ndarray) else index
    if isinstance(index, tuple):
        lazy_index = tuple(_dask(p) if isinstance(p, np.ndarray) else p for p in index)
    values = rng.normal(size=x[index].shape)
    expected = x.copy()
    np.add.at(expected, index, values)
    for a in (x, _dask(x)):
        with _lazy():
            taken = arrays.getitem(a, lazy_index)
            added = arrays.scatter_add(a if a is not x else x.copy(), lazy_index, values)
        np.testing.assert_array_equal(_value(taken), x[index])
        np.testing.assert_allclose(_value(added), expected, rtol=1e-14, atol=1e-15)  # (sum order)


def test_a_lazy_mask_is_refused_not_computed() -> None:
    x = _dask(np.arange(4.0))
    with _lazy(), pytest.raises(ArrayLibraryError, match="dask"):
        arrays.getitem(x, x > 1)


def test_updates_at_a_lazy_index_add_and_refuse_to_set() -> None:
    """``.add`` at a lazy index is a sum; which ``.set`` wins would depend on its values."""
    x, index = np.arange(6.0), np.array([1, 1, 4])
    expected = x.copy()
    np.add.at(expected, index, 2.0)
    with _lazy():
        added = tnp.at(_dask(x))[_dask(index)].add(2.0)
        with pytest.raises(ArrayLibraryError, match="dask"):
            tnp.at(_dask(x))[_dask(index)].set(2.0)
    np.testing.assert_array_equal(_value(added), expected)


# ---- through the transforms: grad of indexing is the scatter-add -----------------------------
LOSSES: list[Callable[[Any], Any]] = [
    lambda x: tnp.sum(x[np.array([0, 0, 3, 0, 2])] ** 2),
    lambda x: tnp.sum(tnp.sin(x[np.array([[1, 1], [0, 1]]), np.array([2, 2])])),
    lambda x: tnp.sum(tnp.take(x, np.array([5, 5, 5, 1]), axis=1) ** 3 * np.arange(4.0)),
    lambda x: tnp.sum(tnp.at(x)[np.array([1, 1]), :].set(x[0] * 3.0) ** 2),
    lambda x: tnp.sum(
        tnp.cos(tnp.reshape(x, (6, 4), order="F")[:, ::-1]) * np.arange(24.0).reshape(6, 4)
    ),
]


@pytest.mark.parametrize("loss", LOSSES)
def test_grad_of_indexing_a_dask_array_equals_numpy_exactly(loss: Callable[[Any], Any]) -> None:
    x = np.random.default_rng(4).normal(size=(4, 6)) * 1e8
    expected = T.grad(loss)(x)
    with _lazy():
        got = T.grad(loss)(_dask(x))
    np.testing.assert_array_equal(_value(got), expected)


def test_median_gradient_on_dask_picks_numpys_order_statistics() -> None:
    """Dask has no sort: the middle order statistics come from the median itself, also when
    the two middle ones are adjacent floats or their sum overflows."""
    one, after = 1.0, np.nextafter(1.0, 2.0)
    for x in (
        np.array([[one, after, 0.0, 3.0], [2.0, 2.0, 2.0, 1.0]]),
        np.array([[1e308, 1.7e308, 0.0, 1.75e308], [after, one, one, after]]),
        np.array([[5.0, -1.0, 5.0, 3.0], [0.0, -0.0, 1.0, -1.0]]),
    ):
        with np.errstate(over="ignore"):
            expected = T.grad(lambda a: tnp.sum(tnp.median(a, axis=1) * np.array([1.0, 2.0])))(x)
            with _lazy():
                got = T.grad(lambda a: tnp.sum(tnp.median(a, axis=1) * np.array([1.0, 2.0])))(
                    _dask(x)
                )
            np.testing.assert_array_equal(_value(got), expected)
