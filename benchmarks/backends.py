"""One interface over the four autodiff libraries, so each workload is written once.

A :class:`Backend` bundles a NumPy-like namespace (``xp``), conversions in and out of its
array type, and its transformations under JAX's names. The peers (autograd, JAX, torch.func)
are imported only inside :func:`load`, in the worker process that times them: they are
optional, and nothing that imports transforms may depend on them.

Peers run as they do for a researcher in an eager loop: JAX without ``jit`` (float64
enabled), torch.func on float64 tensors with one intra-op thread.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np

PEERS = ("autograd", "jax", "torch")
LABELS = {
    "transforms": "transforms",
    "autograd": "autograd",
    "jax": "JAX (eager)",
    "torch": "torch.func",
}
Transform = Callable[[Callable[..., Any]], Callable[..., Any]]


class PeerUnavailable(Exception):
    """A peer library is not installed or fails to import: its rows are left out."""


@dataclass(frozen=True)
class Backend:
    """An autodiff library seen through the few operations the workloads use."""

    name: str
    xp: Any  # sin, exp, tanh, log, sum(x, axis, keepdims), max(x, axis, keepdims), matmul
    asarray: Callable[[np.ndarray], Any]
    to_numpy: Callable[[Any], np.ndarray]
    grad: Transform
    hessian: Transform
    jacrev: Transform
    jacfwd: Transform | None  # None: the library has no forward-mode Jacobian
    hvp: Callable[[Callable[..., Any]], Callable[[Any, Any], Any]]  # f -> (x, v) -> H(x) v
    jet: Callable[..., Any] | None = None  # Taylor mode, JAX's jet signature (W7)


def installed(peer: str) -> bool:
    """Whether ``peer`` can be found, without importing it (the runner stays light)."""
    return importlib.util.find_spec(peer) is not None


def load(name: str) -> Backend:
    """The backend called ``name``; raises :class:`PeerUnavailable` for a missing peer."""
    loaders = {"transforms": _transforms, "autograd": _autograd, "jax": _jax, "torch": _torch}
    try:
        return loaders[name]()
    except ImportError as e:
        raise PeerUnavailable(f"{name} is not importable: {e}") from e


def _transforms() -> Backend:
    import transforms as T
    import transforms.numpy as tnp

    return Backend(
        name="transforms",
        xp=tnp,
        asarray=lambda a: a,
        to_numpy=np.asarray,
        grad=T.grad,
        hessian=T.hessian,
        jacrev=T.jacrev,
        jacfwd=T.jacfwd,
        hvp=lambda f: lambda x, v: T.hvp(f, (x,), (v,))[1][0],
        jet=T.jet,
    )


def _autograd() -> Backend:
    import autograd
    import autograd.numpy as anp

    return Backend(
        name="autograd",
        xp=anp,
        asarray=lambda a: a,
        to_numpy=np.asarray,
        grad=autograd.grad,
        hessian=autograd.hessian,
        jacrev=autograd.jacobian,
        jacfwd=None,
        hvp=autograd.hessian_vector_product,  # reverse-over-reverse: autograd's only way
    )


def _jax() -> Backend:
    import jax
    import jax.numpy as jnp
    from jax.experimental.jet import jet

    jax.config.update("jax_enable_x64", True)  # type: ignore[no-untyped-call]
    return Backend(
        name="jax",
        xp=jnp,
        asarray=jnp.asarray,
        to_numpy=np.asarray,
        grad=jax.grad,
        hessian=jax.hessian,
        jacrev=jax.jacrev,
        jacfwd=jax.jacfwd,
        hvp=lambda f: lambda x, v: jax.jvp(jax.grad(f), (x,), (v,))[1],
        jet=jet,
    )


def _torch() -> Backend:
    import torch
    import torch.func as tf

    torch.set_num_threads(1)

    def tsum(x: Any, axis: int | None = None, keepdims: bool = False) -> Any:
        return torch.sum(x) if axis is None else torch.sum(x, dim=axis, keepdim=keepdims)

    def tmax(x: Any, axis: int, keepdims: bool = False) -> Any:
        return torch.amax(x, dim=axis, keepdim=keepdims)

    xp = SimpleNamespace(
        sin=torch.sin, exp=torch.exp, tanh=torch.tanh, log=torch.log,
        sum=tsum, max=tmax, matmul=torch.matmul,
    )  # fmt: skip
    return Backend(
        name="torch",
        xp=xp,
        asarray=torch.from_numpy,  # keeps float64
        to_numpy=lambda t: t.detach().numpy(),
        grad=tf.grad,
        hessian=tf.hessian,
        jacrev=tf.jacrev,
        jacfwd=tf.jacfwd,
        hvp=lambda f: lambda x, v: tf.jvp(tf.grad(f), (x,), (v,))[1],
    )
