"""The transforms of generalised linear models' losses over Dask data, on a cluster (issue 34).

A module fixture starts a ``dask.distributed.LocalCluster`` on loopback (two worker
processes, one thread each, a memory limit per worker) and a Client. For the logistic,
Poisson and least-squares losses of ``w`` over Dask data ``X``, ``y`` (chunked along rows),
with ``w`` a NumPy array and with ``w`` a Dask array, every transform (``grad``,
``value_and_grad``, ``jvp``, ``vjp``, ``hvp``, ``vmap``, ``T.jit``) must:

- return Dask arrays and compute nothing while it builds them (the scheduler is replaced by
  one that fails the test, and Dask's warning for a function it lacks is an error);
- computed on the cluster and on the threaded scheduler, equal NumPy's result on the same
  values and the hand-written closed forms (``X.T @ (sigmoid(X @ w) - y)``, ...), to 1e-12
  relative to the result's largest entry (Dask sums chunk by chunk, in another order).

Value and gradient come out of ONE ``dask.compute`` call over one task graph that the two
share. The memory test (the gradient over data four times the workers' total memory
limit, generated on the workers) runs only in the ``long`` profile.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np
import pytest

import transforms as T
import transforms.numpy as tnp

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")

# Dask computes the whole array, warning, for a NumPy function it lacks: here an error.
pytestmark = pytest.mark.filterwarnings("error:.*is not implemented by Dask array:FutureWarning")

LONG = os.environ.get("HYPOTHESIS_PROFILE") == "long"
N, D, ROWS = 2_000, 5, 500  # data (N, D) in chunks of ROWS rows


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    """Two worker processes on loopback, one thread and 1 GB each, the dashboard on a free port."""
    with (
        distributed.LocalCluster(
            host="127.0.0.1",
            n_workers=2,
            threads_per_worker=1,
            memory_limit="1GB",
            processes=True,
            dashboard_address=":0",
        ) as cluster,
        distributed.Client(cluster, set_as_default=False) as c,
    ):
        yield c


# ---- the losses, and their derivatives by hand ---------------------------------------------


def logistic(w: Any, X: Any, y: Any) -> Any:
    z = X @ w
    return tnp.sum(tnp.logaddexp(0.0, z) - y * z)


def poisson(w: Any, X: Any, y: Any) -> Any:
    z = X @ w
    return tnp.sum(tnp.exp(z) - y * z)


def least_squares(w: Any, X: Any, y: Any) -> Any:
    r = X @ w - y
    return 0.5 * tnp.sum(r * r)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


class Loss(NamedTuple):
    f: Callable[[Any, Any, Any], Any]
    #: (w, X, y) -> the gradient; (w, X) -> the per-example second derivative, d2f/dz2
    grad: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
    curvature: Callable[[np.ndarray, np.ndarray], np.ndarray]
    #: y of this model, from a uniform draw and z = X @ w_true
    targets: Callable[[np.random.Generator, np.ndarray], np.ndarray]


LOSSES = {
    "logistic": Loss(
        logistic,
        lambda w, X, y: X.T @ (_sigmoid(X @ w) - y),
        lambda w, X: _sigmoid(X @ w) * (1.0 - _sigmoid(X @ w)),
        lambda rng, z: (rng.random(z.shape) < _sigmoid(z)).astype(np.float64),
    ),
    "poisson": Loss(
        poisson,
        lambda w, X, y: X.T @ (np.exp(X @ w) - y),
        lambda w, X: np.exp(X @ w),
        lambda rng, z: rng.poisson(np.exp(z)).astype(np.float64),
    ),
    "least_squares": Loss(
        least_squares,
        lambda w, X, y: X.T @ (X @ w - y),
        lambda w, X: np.ones(X.shape[0]),
        lambda rng, z: z + rng.normal(size=z.shape),
    ),
}


class Data(NamedTuple):
    w: np.ndarray
    X: np.ndarray
    y: np.ndarray
    v: np.ndarray  # a tangent / direction for jvp and hvp
    batch: np.ndarray  # three parameter vectors, for vmap


def _data(name: str) -> Data:
    rng = np.random.default_rng(34)
    X = rng.normal(size=(N, D)) / np.sqrt(D)
    w_true = rng.normal(size=D)
    y = LOSSES[name].targets(rng, X @ w_true)
    w, v = 0.3 * rng.normal(size=D), rng.normal(size=D)
    return Data(w, X, y, v, np.stack([w, 0.5 * w, w_true]))


# ---- each transform, as a function of (loss, w, X, y, data) ----------------------------------


Run = Callable[[Callable[..., Any], Any, Any, Any, Data], Any]


def _hvp(f: Callable[..., Any], w: Any, X: Any, y: Any, d: Data) -> Any:
    value, (product,) = T.hvp(lambda w: f(w, X, y), (w,), (d.v,))
    return value, product


TRANSFORMS: dict[str, Run] = {
    "grad": lambda f, w, X, y, d: T.grad(f)(w, X, y),
    "value_and_grad": lambda f, w, X, y, d: T.value_and_grad(f)(w, X, y),
    "jvp": lambda f, w, X, y, d: T.jvp(lambda w: f(w, X, y), (w,), (d.v,)),
    "vjp": lambda f, w, X, y, d: T.vjp(lambda w: f(w, X, y), w)[1](1.0)[0],
    "hvp": _hvp,
    "vmap_parameters": lambda f, w, X, y, d: T.vmap(T.grad(f), in_axes=(0, None, None))(
        d.batch, X, y
    ),
    # per-example losses and gradients: each loss of one row x (D,) and its y (0-d)
    "vmap_examples": lambda f, w, X, y, d: T.vmap(T.value_and_grad(f), in_axes=(None, 0, 0))(
        w, X, y
    ),
    "jit_grad": lambda f, w, X, y, d: T.jit(T.grad(f))(w, X, y),
    "jit_value_and_grad": lambda f, w, X, y, d: T.jit(T.value_and_grad(f))(w, X, y),
}


def _closed_form(transform: str, loss: Loss, d: Data) -> Any:
    """What ``transform`` must give, from the hand-written derivatives."""
    w, X, y, v = d.w, d.X, d.y, d.v
    value, grad = float(loss.f(w, X, y)), loss.grad(w, X, y)
    if transform in ("grad", "vjp", "jit_grad"):
        return grad
    if transform in ("value_and_grad", "jit_value_and_grad"):
        return value, grad
    if transform == "jvp":
        return value, grad @ v
    if transform == "hvp":
        return value, X.T @ (loss.curvature(w, X) * (X @ v))
    if transform == "vmap_parameters":
        return np.stack([loss.grad(b, X, y) for b in d.batch])
    assert transform == "vmap_examples"
    values = np.array([float(loss.f(w, X[i : i + 1], y[i : i + 1])) for i in range(N)])
    grads = np.stack([loss.grad(w, X[i : i + 1], y[i : i + 1]) for i in range(N)])
    return values, grads


#: transform -> why it fails on Dask today (the mark is strict: it must fail for that reason).


def _refuse_compute(dsk: Any, keys: Any, **kwargs: Any) -> Any:
    raise AssertionError("a Dask array was computed while the result was built")


def _lazily(run: Run, loss: Loss, w: Any, X: Any, y: Any, d: Data) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # Dask: "... is not implemented"
        with dask.config.set(scheduler=_refuse_compute):
            return run(loss.f, w, X, y, d)


def _leaves(y: Any) -> list[Any]:
    return [v for x in y for v in _leaves(x)] if isinstance(y, (tuple, list)) else [y]


def _close(got: Any, expected: Any, what: str) -> None:
    """Equal to 1e-12 relative to the largest entry (Dask sums chunks in another order)."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape and got.dtype == expected.dtype, what
    scale = float(np.max(np.abs(expected)))
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12 * scale, err_msg=what)


def _cases() -> Iterator[Any]:
    for transform in TRANSFORMS:
        for name in LOSSES:
            for params in ("numpy", "dask"):
                yield pytest.param(transform, name, params)


@pytest.mark.parametrize(("transform", "name", "params"), list(_cases()))
def test_transform_of_loss_is_lazy_and_equals_numpy(
    client: Any, transform: str, name: str, params: str
) -> None:
    loss, d, run = LOSSES[name], _data(name), TRANSFORMS[transform]
    X, y = da.from_array(d.X, chunks=(ROWS, D)), da.from_array(d.y, chunks=ROWS)
    w = d.w if params == "numpy" else da.from_array(d.w)

    lazy = _leaves(_lazily(run, loss, w, X, y, d))
    expected = _leaves(run(loss.f, d.w, d.X, d.y, d))  # NumPy all through
    closed_form = _leaves(_closed_form(transform, loss, d))
    assert len(lazy) == len(expected) == len(closed_form)
    for got in lazy:
        assert isinstance(got, da.Array), f"{transform}: a {type(got).__name__}, not Dask"

    on_threads = dask.compute(*lazy, scheduler="threads")
    on_cluster = dask.compute(*lazy, scheduler=client)
    for i, (e, c) in enumerate(zip(expected, closed_form, strict=True)):
        _close(e, c, f"{transform}[{i}]: NumPy against the closed form")
        _close(on_threads[i], e, f"{transform}[{i}]: threaded scheduler against NumPy")
        _close(on_cluster[i], e, f"{transform}[{i}]: cluster against NumPy")


@pytest.mark.parametrize("name", LOSSES)
def test_value_and_gradient_are_one_graph_and_one_compute(client: Any, name: str) -> None:
    loss, d = LOSSES[name], _data(name)
    X, y = da.from_array(d.X, chunks=(ROWS, D)), da.from_array(d.y, chunks=ROWS)
    value, grad = _lazily(TRANSFORMS["value_and_grad"], loss, d.w, X, y, d)

    # The two share the forward pass (X @ w, ...): the joint graph has fewer tasks than both.
    joint = {**dict(value.__dask_graph__()), **dict(grad.__dask_graph__())}
    assert len(joint) < len(value.__dask_graph__()) + len(grad.__dask_graph__())

    calls: list[int] = []  # the number of outputs of each graph the scheduler got

    def counting(dsk: Any, keys: Any, **kwargs: Any) -> Any:
        calls.append(len(keys))
        return client.get(dsk, keys, **kwargs)

    with dask.config.set(scheduler=counting):
        got_value, got_grad = dask.compute(value, grad)
    assert calls == [2]  # one graph, with both outputs, went to the cluster, once
    _close(got_value, float(loss.f(d.w, d.X, d.y)), "value")
    _close(got_grad, loss.grad(d.w, d.X, d.y), "gradient")


#: Why the reverse-mode graphs carry data-sized NumPy arrays today (the marks are strict).


def _graph_cases() -> Iterator[Any]:
    for transform in ("grad", "value_and_grad", "vjp", "hvp", "jvp", "jit_grad"):
        for name in LOSSES:
            yield pytest.param(transform, name)


@pytest.mark.parametrize(("transform", "name"), list(_graph_cases()))
def test_the_graph_carries_no_data_sized_numpy_array(transform: str, name: str) -> None:
    """Data drawn lazily (``dask.array.random``: the graph holds seeds, not values) at 10**6
    rows: the transform's graph, pickled as it is sent to a cluster, must stay far below the
    size of one data column. A NumPy array of the data's length made on the client (a
    broadcast cotangent, a ``zeros(shape)``) would be shipped in the graph, and at a
    cluster's scale would not fit the client."""
    cloudpickle = pytest.importorskip("cloudpickle")
    n, d = 1_000_000, _data(name)
    rng = da.random.default_rng(34)
    X = rng.normal(size=(n, D), chunks=(n // 4, D))
    y = rng.random(size=n, chunks=n // 4)
    outs = _leaves(_lazily(TRANSFORMS[transform], LOSSES[name], d.w, X, y, d))
    for out in outs:
        size = len(cloudpickle.dumps(dict(out.__dask_graph__())))
        assert size < n * 8 / 10, f"{transform}: a graph of {size / 1e6:.1f} MB"


def test_a_function_dask_lacks_raises_array_library_error() -> None:
    from transforms import ArrayLibraryError

    A = da.from_array(np.eye(4) + 0.1, chunks=2)
    with (
        dask.config.set(scheduler=_refuse_compute),
        pytest.raises(ArrayLibraryError, match=r"'det'.*dask"),
    ):
        T.grad(lambda a: tnp.linalg.det(a))(A)


@pytest.mark.skipif(not LONG, reason="a minute of work: the long profile only")
def test_gradient_over_data_four_times_the_workers_memory_streams() -> None:
    """2 workers with 250 MB each; X is 2 GB (4x their total), drawn by the workers chunk
    by chunk (never on the client): the gradient completes, and equals the closed form
    computed by Dask over the same chunks (drawn again from the same seeds)."""
    limit, n, d, rows = 250e6, 12_500_000, 20, 125_000
    assert n * d * 8 >= 4 * 2 * limit
    with (
        distributed.LocalCluster(
            host="127.0.0.1",
            n_workers=2,
            threads_per_worker=1,
            memory_limit=limit,
            dashboard_address=":0",
        ) as cluster,
        distributed.Client(cluster, set_as_default=False) as c,
    ):
        state = da.random.RandomState(34)
        X = state.normal(size=(n, d), chunks=(rows, d)) / np.sqrt(d)
        y = (state.random_sample(size=n, chunks=rows) < 0.5).astype(np.float64)
        w = 0.1 * np.ones(d)
        grad = T.grad(logistic)(w, X, y)
        # The closed form, written in Dask: the same per-chunk arithmetic, summed by Dask.
        closed = X.T @ (1.0 / (1.0 + da.exp(-(X @ w))) - y)
        got = grad.compute(scheduler=c)  # one at a time: neither holds X for the other
        expected = closed.compute(scheduler=c)
    _close(got, expected, "streamed gradient")
