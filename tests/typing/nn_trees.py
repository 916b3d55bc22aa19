"""A user's module with ``transforms.nn``, the pytree utilities and the NumPy extras: checked
by ``mypy --strict`` and pyright strict (``.ci/run``)."""

from __future__ import annotations

from typing import TypedDict, assert_type

import numpy as np

import transforms as T
import transforms.nn as nn
import transforms.numpy as tnp
from transforms import Array
from transforms.flatten_util import ravel_pytree
from transforms.tree_util import tree_map, tree_reduce


class Params(TypedDict):
    w: Array
    b: Array


def loss(p: Params, x: Array) -> Array:
    h = nn.gelu(x @ p["w"] + p["b"])
    return -tnp.sum(nn.log_softmax(nn.relu(h), axis=-1))


params: Params = {"w": np.ones((3, 2)), "b": np.zeros(2)}
x = np.ones((4, 3))
grads = assert_type(T.grad(loss)(params, x), Params)
assert_type(tree_map(lambda p, g: p - 0.1 * g, params, grads), Params)
flat, unravel = ravel_pytree(params)
assert_type(flat, Array)
assert_type(unravel(flat), Params)
assert_type(tree_reduce(lambda acc, leaf: acc + 1, params, 0), int)
assert_type(nn.softmax(x, where=x > 0), Array)
assert_type(nn.logsumexp(x, axis=1), Array)
assert_type(nn.one_hot(np.array([0, 2]), 3), Array)
assert_type(nn.standardize(x, axis=0), Array)
assert_type(tnp.interp(x, np.arange(3.0), np.ones(3)), Array)
assert_type(tnp.where(x > 0), tuple[Array, ...])
assert_type(tnp.where(x > 0, x, 0.0), Array)
assert_type(tnp.divmod(x, 2.0), tuple[Array, Array])
assert_type(tnp.meshgrid(x[0], x[1]), tuple[Array, ...])
