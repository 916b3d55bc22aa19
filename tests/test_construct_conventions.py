"""Shape, indexing and construction: batching by value, batched index arrays, conventions.

The op-spec table checks derivatives; here ``vmap`` of every function of the family is
compared with a Python loop over the examples (batch axis first and last, and under
``grad`` and ``jvp``), index arrays that differ between examples are gathered correctly
wherever NumPy puts the advanced axes, and the documented choices are pinned by value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import transforms as T
import transforms.numpy as tnp
from transforms.numpy._indexing import getitem

RNG = np.random.default_rng(20240611)
X3 = RNG.normal(size=(3, 4, 5))
M = RNG.normal(size=(4, 5))
V = RNG.normal(size=(5,))

Fn = Callable[[Any], Any]

# name: (the function of one array, NumPy's own version, an example input)
FUNCTIONS: dict[str, tuple[Fn, Fn, np.ndarray]] = {
    "swapaxes": (lambda x: tnp.swapaxes(x, 0, -1), lambda x: np.swapaxes(x, 0, -1), X3),
    "rollaxis": (lambda x: tnp.rollaxis(x, 2, 0), lambda x: np.rollaxis(x, 2, 0), X3),
    "atleast_2d": (tnp.atleast_2d, np.atleast_2d, V),
    "atleast_3d": (tnp.atleast_3d, np.atleast_3d, V),
    "hstack": (lambda x: tnp.hstack([x, 2 * x]), lambda x: np.hstack([x, 2 * x]), M),
    "vstack": (lambda x: tnp.vstack([x, 2 * x]), lambda x: np.vstack([x, 2 * x]), V),
    "dstack": (lambda x: tnp.dstack([x, 2 * x]), lambda x: np.dstack([x, 2 * x]), M),
    "column_stack": (
        lambda x: tnp.column_stack([x, x[::-1]]),
        lambda x: np.column_stack([x, x[::-1]]),
        V,
    ),
    "append": (lambda x: tnp.append(x, x[:2], axis=0), lambda x: np.append(x, x[:2], axis=0), M),
    "split": (
        lambda x: tnp.split(x, [1, 3], axis=1)[2] - tnp.split(x, [1, 3], axis=1)[0],
        lambda x: np.split(x, [1, 3], axis=1)[2] - np.split(x, [1, 3], axis=1)[0],
        M,
    ),
    "array_split": (
        lambda x: tnp.array_split(x, 3, axis=-1)[0],
        lambda x: np.array_split(x, 3, axis=-1)[0],
        M,
    ),
    "tile": (lambda x: tnp.tile(x, (2, 1, 3)), lambda x: np.tile(x, (2, 1, 3)), M),
    "repeat": (lambda x: tnp.repeat(x, 2, axis=1), lambda x: np.repeat(x, 2, axis=1), M),
    "repeat_counts": (
        lambda x: tnp.repeat(x, [1, 0, 2, 3], axis=0),
        lambda x: np.repeat(x, [1, 0, 2, 3], axis=0),
        M,
    ),
    "pad_constant": (
        lambda x: tnp.pad(x, ((1, 2), (0, 3)), constant_values=x[0, 0]),
        lambda x: np.pad(x, ((1, 2), (0, 3)), constant_values=x[0, 0]),
        M,
    ),
    "pad_reflect": (
        lambda x: tnp.pad(x, ((1, 7), (6, 1)), mode="reflect"),
        lambda x: np.pad(x, ((1, 7), (6, 1)), mode="reflect"),
        M,
    ),
    "pad_symmetric_odd": (
        lambda x: tnp.pad(x, 6, mode="symmetric", reflect_type="odd"),
        lambda x: np.pad(x, 6, mode="symmetric", reflect_type="odd"),
        M,
    ),
    "pad_wrap": (lambda x: tnp.pad(x, 7, mode="wrap"), lambda x: np.pad(x, 7, mode="wrap"), M),
    "pad_edge": (lambda x: tnp.pad(x, 2, mode="edge"), lambda x: np.pad(x, 2, mode="edge"), M),
    "roll": (
        lambda x: tnp.roll(x, (1, -7), axis=(0, 2)),
        lambda x: np.roll(x, (1, -7), axis=(0, 2)),
        X3,
    ),
    "rot90": (
        lambda x: tnp.rot90(x, 3, axes=(2, 0)),
        lambda x: np.rot90(x, 3, axes=(2, 0)),
        X3,
    ),
    "flip": (lambda x: tnp.flip(x, (0, 2)), lambda x: np.flip(x, (0, 2)), X3),
    "fliplr": (tnp.fliplr, np.fliplr, X3),
    "flipud": (tnp.flipud, np.flipud, X3),
    "diag_vector": (lambda x: tnp.diag(x, -1), lambda x: np.diag(x, -1), V),
    "diag_matrix": (lambda x: tnp.diag(x, 1), lambda x: np.diag(x, 1), M),
    "diagonal": (
        lambda x: tnp.diagonal(x, 1, 2, 0),
        lambda x: np.diagonal(x, 1, 2, 0),
        X3,
    ),
    "diagflat": (lambda x: tnp.diagflat(x, 1), lambda x: np.diagflat(x, 1), M[:2, :3]),
    "tril": (lambda x: tnp.tril(x, -1), lambda x: np.tril(x, -1), X3),
    "triu": (lambda x: tnp.triu(x, 1), lambda x: np.triu(x, 1), X3),
    "sort": (lambda x: tnp.sort(x, axis=1), lambda x: np.sort(x, axis=1), X3),
    "sort_flat": (lambda x: tnp.sort(x, axis=None), lambda x: np.sort(x, axis=None), X3),
    "partition": (
        lambda x: tnp.partition(x, 2)[..., 2],
        lambda x: np.partition(x, 2)[..., 2],
        X3,
    ),
    "take": (
        lambda x: tnp.take(x, [[0, 3], [3, 1]], axis=1),
        lambda x: np.take(x, [[0, 3], [3, 1]], axis=1),
        X3,
    ),
    "take_wrap": (
        lambda x: tnp.take(x, [-9, 7, 17], axis=2, mode="wrap"),
        lambda x: np.take(x, [-9, 7, 17], axis=2, mode="wrap"),
        X3,
    ),
    "take_along_axis": (
        lambda x: tnp.take_along_axis(x, np.array([[[0], [2]]]), axis=1),
        lambda x: np.take_along_axis(x, np.array([[[0], [2]]]), axis=1),
        X3,
    ),
    "select": (
        lambda x: tnp.select([x > 0.5, x < -0.5], [2 * x, x * x], default=x[0]),
        lambda x: np.select([x > 0.5, x < -0.5], [2 * x, x * x], default=x[0]),
        M,
    ),
    "full": (lambda x: tnp.full((2, 5), x[0]), lambda x: np.full((2, 5), x[0]), M),
    "full_like": (lambda x: tnp.full_like(x, x[0, 0]), lambda x: np.full_like(x, x[0, 0]), M),
    "linspace": (
        lambda x: tnp.linspace(x[0], x[1], 6, axis=-1),
        lambda x: np.linspace(x[0], x[1], 6, axis=-1),
        M,
    ),
}


def _batch(x: np.ndarray) -> np.ndarray:
    return np.stack([x, 0.7 * x + 0.1, -x])


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_value_matches_numpy(name: str) -> None:
    fn, reference, x = FUNCTIONS[name]
    expected = reference(x)
    out, _ = T.jvp(fn, (x,), (np.ones_like(x),))
    assert np.shape(out) == np.shape(expected)
    np.testing.assert_allclose(out, expected, rtol=1e-13)
    np.testing.assert_allclose(fn(x), expected, rtol=1e-13)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_vmap_matches_a_loop(name: str) -> None:
    fn, _, x = FUNCTIONS[name]
    xs = _batch(x)
    expected = np.stack([fn(e) for e in xs])
    for axis in (0, x.ndim):
        np.testing.assert_allclose(T.vmap(fn, in_axes=axis)(np.moveaxis(xs, 0, axis)), expected)

    def g(a: Any) -> Any:
        return tnp.sum(tnp.sin(fn(a)))

    grads = np.stack([T.grad(g)(e) for e in xs])
    np.testing.assert_allclose(T.vmap(T.grad(g))(xs), grads, rtol=1e-12)
    ts = RNG.normal(size=xs.shape)
    _, t_out = T.jvp(T.vmap(fn), (xs,), (ts,))
    t_loop = np.stack([T.jvp(fn, (e,), (t,))[1] for e, t in zip(xs, ts, strict=True)])
    np.testing.assert_allclose(t_out, t_loop, rtol=1e-12, atol=1e-12)


# ---- index arrays that differ between the examples of a vmap ---------------------------------
def test_take_and_take_along_axis_over_batched_indices() -> None:
    x = X3[0]
    idx = RNG.integers(-4, 4, size=(6, 3))
    out = T.vmap(lambda i: tnp.take(x, i, axis=0))(idx)
    np.testing.assert_array_equal(out, np.stack([np.take(x, i, axis=0) for i in idx]))
    xs = RNG.normal(size=(6, 4, 5))
    out = T.vmap(lambda a, i: tnp.take(a, i, axis=1, mode="clip"))(xs, idx)
    np.testing.assert_array_equal(
        out, np.stack([np.take(a, i, axis=1, mode="clip") for a, i in zip(xs, idx, strict=True)])
    )
    j = RNG.integers(0, 5, size=(6, 4, 2))
    out = T.vmap(lambda a, k: tnp.take_along_axis(a, k, axis=1), in_axes=(0, 0))(xs, j)
    loop = [np.take_along_axis(a, k, axis=1) for a, k in zip(xs, j, strict=True)]
    np.testing.assert_array_equal(out, np.stack(loop))
    # reverse mode through the batch: every example's gather adds into the shared x
    grad = T.grad(lambda a: tnp.sum(T.vmap(lambda i: tnp.take(a, i, axis=0))(idx) ** 2))(x)
    loop_grad = sum(T.grad(lambda a, i=i: tnp.sum(tnp.take(a, i, axis=0) ** 2))(x) for i in idx)
    np.testing.assert_allclose(grad, loop_grad)
    # nested vmaps
    ii = RNG.integers(0, 5, size=(6, 4, 3))
    out = T.vmap(T.vmap(lambda a, i: tnp.take(a, i)))(xs, ii)
    np.testing.assert_array_equal(out, np.take_along_axis(xs, ii, axis=-1))


def _random_index(rng: np.random.Generator, shape: tuple[int, ...], batch: int) -> tuple[Any, ...]:
    """A per-example index of slices, ints, None, Ellipsis, masks and int arrays, some of
    them batched (``("B", k)`` stands for the k-th batched array)."""
    parts: list[Any] = []
    axis = 0
    fancy = tuple(int(n) for n in rng.integers(1, 3, size=rng.integers(0, 3)))
    used_ellipsis = False
    while axis < len(shape) and len(parts) < 4:
        n = shape[axis]
        kind = rng.choice(["slice", "int", "array", "batched", "none", "ellipsis", "mask"])
        if kind == "slice":
            parts.append(slice(int(rng.integers(-n, n)), None, int(rng.choice([1, -1, 2]))))
        elif kind == "int":
            parts.append(int(rng.integers(-n, n)))
        elif kind == "none":
            parts.append(None)
            continue
        elif kind == "ellipsis" and not used_ellipsis:
            used_ellipsis = True
            parts.append(Ellipsis)
            continue
        elif kind == "mask":
            parts.append(rng.random(n) > 0.4)
        elif kind == "array":
            parts.append(rng.integers(-n, n, size=fancy))
        else:
            parts.append(("B", rng.integers(-n, n, size=(batch, *fancy))))
        axis += 1
    if not used_ellipsis and rng.random() < 0.3:  # an Ellipsis that may span no axis
        parts.insert(int(rng.integers(0, len(parts) + 1)), Ellipsis)
    return tuple(parts)


def test_getitem_with_batched_and_plain_index_arrays_matches_a_loop() -> None:
    rng = np.random.default_rng(7)
    batch, shape = 4, (3, 4, 2)
    xs = rng.normal(size=(batch, *shape))
    checked = 0
    for _ in range(400):
        parts = _random_index(rng, shape, batch)
        batched = [p[1] for p in parts if isinstance(p, tuple)]

        def index(arrays: Any, parts: tuple[Any, ...] = parts) -> tuple[Any, ...]:
            it = iter(arrays)
            return tuple(next(it) if isinstance(p, tuple) else p for p in parts)

        try:
            loop = np.stack([x[index([a[b] for a in batched])] for b, x in enumerate(xs)])
        except IndexError:
            continue
        checked += 1

        def f(x: Any, *arrays: Any, index: Any = index) -> Any:
            return getitem(x, index(arrays))

        for axis in (0, 2):
            out = T.vmap(f, in_axes=(axis, *[0] * len(batched)))(np.moveaxis(xs, 0, axis), *batched)
            np.testing.assert_array_equal(out, loop)
        w = rng.normal(size=loop.shape[1:])

        def loss(x: Any, *arrays: Any, f: Any = f, w: Any = w) -> Any:
            return tnp.sum(f(x, *arrays) ** 2 * w)

        grads = T.vmap(T.grad(loss))(xs, *batched)
        loop_grads = [T.grad(loss)(x, *[a[b] for a in batched]) for b, x in enumerate(xs)]
        np.testing.assert_allclose(grads, np.stack(loop_grads))
    assert checked > 100


def test_functional_updates_under_vmap() -> None:
    xs = RNG.normal(size=(3, 4, 5))
    vs = RNG.normal(size=(3, 2, 5))
    out = T.vmap(lambda x, v: tnp.at(x)[..., [3, 1], :].set(v))(xs, vs)
    expected = xs.copy()
    expected[:, [3, 1], :] = vs
    np.testing.assert_array_equal(out, expected)
    idx = np.array([[0, 0, 2], [1, 3, 3], [2, 2, 2]])
    out = T.vmap(lambda x, i: tnp.at(x)[i].add(1.0))(xs, idx)
    expected = xs.copy()
    for b in range(3):
        np.add.at(expected[b], idx[b], 1.0)
    np.testing.assert_allclose(out, expected, rtol=1e-15)


# ---- conventions and errors ------------------------------------------------------------------
def test_sort_gives_tied_values_the_derivative_in_stable_argsort_order() -> None:
    x = np.array([2.0, 1.0, 2.0] * 12)  # long enough for NumPy's default sort not to be stable
    jac = T.jacrev(tnp.sort)(x)
    np.testing.assert_array_equal(jac, np.eye(36)[np.argsort(x, stable=True)])
    np.testing.assert_array_equal(T.jacfwd(tnp.sort)(x), jac)


def test_repeated_index_set_sends_the_derivative_to_the_write_that_wins() -> None:
    x = np.arange(3.0)
    v = np.array([1.0, 2.0, 3.0])

    def f(x: Any, v: Any) -> Any:
        return tnp.at(x)[[0, 0, 2]].set(v)

    expected = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 1.0]])  # v[1] wins at 0
    np.testing.assert_array_equal(T.jacrev(f, argnums=1)(x, v), expected)
    np.testing.assert_array_equal(T.jacfwd(f, argnums=1)(x, v), expected)
    np.testing.assert_array_equal(T.jacrev(f, argnums=1)(x, 2.0), [1.0, 0.0, 1.0])


def test_pad_differentiates_the_traced_constant() -> None:
    x = RNG.normal(size=(4, 5))
    weights = RNG.normal(size=(5, 10))

    def f(c: Any) -> Any:
        return tnp.sum(tnp.pad(x, ((1, 0), (2, 3)), constant_values=c) * weights)

    c = np.array([[1.0, 2.0], [3.0, 4.0]])
    basis = np.eye(4).reshape(4, 2, 2)
    expected = [np.sum(np.pad(0 * x, ((1, 0), (2, 3)), constant_values=e) * weights) for e in basis]
    np.testing.assert_allclose(T.grad(f)(c), np.reshape(expected, (2, 2)))


def test_linspace_derivatives_in_start_and_stop() -> None:
    _, t_start = T.jvp(lambda s: tnp.linspace(s, 3.0, 5), (1.0,), (1.0,))
    _, t_stop = T.jvp(lambda e: tnp.linspace(1.0, e, 5), (3.0,), (1.0,))
    np.testing.assert_allclose(t_start, np.linspace(1.0, 0.0, 5))
    np.testing.assert_allclose(t_stop, np.linspace(0.0, 1.0, 5))


def test_float32_stays_float32() -> None:
    x = M.astype(np.float32)
    fns: list[Fn] = [
        tnp.sort,
        lambda a: tnp.pad(a, 1, constant_values=2.0),
        lambda a: tnp.pad(a, 2, mode="reflect", reflect_type="odd"),
        lambda a: tnp.linspace(a[0], 1.0, 5),
        lambda a: tnp.full((3,), a[0, 0]),
        tnp.tril,
        lambda a: tnp.select([a > 0], [a], 0.5),
        lambda a: tnp.tile(a, 2),
        lambda a: tnp.take(a, [1, 1]),
        lambda a: tnp.split(a, 2)[0],
        lambda a: tnp.hstack([a, a]),
    ]
    for fn in fns:
        out, pullback = T.vjp(fn, x)
        (grad,) = pullback(np.ones_like(out))
        assert np.asarray(out).dtype == np.float32 and grad.dtype == np.float32


def test_cotangent_of_a_float32_operand_joined_with_float64_is_float32() -> None:
    x = V.astype(np.float32)
    out, pullback = T.vjp(lambda a: tnp.append(a, 1.0), x)  # NumPy promotes to float64
    assert np.asarray(out).dtype == np.float64
    assert pullback(np.ones_like(out))[0].dtype == np.float32


def test_errors_name_the_problem() -> None:
    with pytest.raises(IndexError, match=r"tnp\.where"):
        T.vmap(lambda r: getitem(r, r > 0))(M)
    with pytest.raises(NotImplementedError, match="add"):
        T.vmap(lambda x, i: tnp.at(x)[i].set(0.0))(M, np.array([0, 1, 2, 3]))
    with pytest.raises(TypeError, match="repeats"):
        T.vmap(lambda r: tnp.repeat(M, r))(np.array([1, 2]))
    with pytest.raises(NotImplementedError, match="mode"):
        T.grad(lambda x: tnp.sum(tnp.pad(x, 1, mode="mean")))(M)
    with pytest.raises(ValueError, match="equal division"):
        tnp.split(M, 3)
