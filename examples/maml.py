"""MAML (Finn et al., 2017) on sine-wave regression: a gradient through a gradient step.

Each task is a sine wave ``A sin(x + phase)``; the model adapts to a task by one gradient
step on a few support points, and the meta-loss is its error on query points *after* that
step. The meta-gradient therefore differentiates through ``T.grad`` (second order), and a
batch of tasks is one ``T.vmap`` over the whole inner loop. The meta-gradient is checked
against finite differences (and shown to differ from first-order MAML, which cuts the
second-order term with ``T.stop_gradient``); meta-training must lower the post-adaptation
error on held-out tasks.
"""

from __future__ import annotations

import numpy as np
from _cli import parse_args

import transforms as T
import transforms.numpy as tnp

Params = dict[str, T.Array]
INNER_LR, META_LR, SHOTS = 0.01, 0.003, 10


def predict(params: Params, x: T.Array) -> T.Array:
    h = tnp.tanh(x[:, None] * params["w0"] + params["b0"])
    h = tnp.tanh(h @ params["w1"] + params["b1"])
    return h @ params["w2"] + params["b2"]


def mse(params: Params, x: T.Array, y: T.Array) -> T.Array:
    return tnp.mean((predict(params, x) - y) ** 2)


def adapt(params: Params, x: T.Array, y: T.Array, first_order: bool = False) -> Params:
    """One inner gradient step on the support set (``first_order`` drops its derivative)."""
    grads = T.grad(mse)(params, x, y)
    if first_order:
        grads = {k: T.stop_gradient(g) for k, g in grads.items()}
    return {k: params[k] - INNER_LR * grads[k] for k in params}


def maml_loss(
    params: Params, xs: T.Array, ys: T.Array, xq: T.Array, yq: T.Array, first_order: bool = False
) -> T.Array:
    """The query loss after adaptation, averaged over a batch of tasks (one vmap)."""

    def task_loss(xs: T.Array, ys: T.Array, xq: T.Array, yq: T.Array) -> T.Array:
        return mse(adapt(params, xs, ys, first_order), xq, yq)

    return tnp.mean(T.vmap(task_loss)(xs, ys, xq, yq))


Tasks = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # support x, y; query x, y


def sample_tasks(rng: np.random.Generator, n: int) -> Tasks:
    amp = rng.uniform(0.1, 5.0, (n, 1))
    phase = rng.uniform(0.0, np.pi, (n, 1))
    xs, xq = rng.uniform(-5, 5, (n, SHOTS)), rng.uniform(-5, 5, (n, SHOTS))
    return xs, amp * np.sin(xs + phase), xq, amp * np.sin(xq + phase)


def main() -> None:
    args = parse_args(__doc__)
    rng = np.random.default_rng(0)
    width = 40
    params: Params = {
        "w0": rng.standard_normal(width),
        "b0": rng.uniform(-3, 3, width),
        "w1": rng.standard_normal((width, width)) / np.sqrt(width),
        "b1": np.zeros(width),
        "w2": rng.standard_normal(width) / np.sqrt(width),
        "b2": np.zeros(()),
    }

    tasks = sample_tasks(rng, 4)
    meta_grad = T.grad(maml_loss)(params, *tasks)
    direction = {k: rng.standard_normal(np.shape(p)) for k, p in params.items()}
    h = 1e-5

    def shifted(s: float) -> float:
        return float(maml_loss({k: p + s * direction[k] for k, p in params.items()}, *tasks))

    fd = (shifted(h) - shifted(-h)) / (2 * h)
    exact = sum(float(np.sum(meta_grad[k] * direction[k])) for k in params)
    assert np.isclose(exact, fd, rtol=1e-6), (exact, fd)

    def first_order_loss(p: Params) -> T.Array:
        return maml_loss(p, *tasks, first_order=True)

    fo_grad = T.grad(first_order_loss)(params)
    first_order = sum(float(np.sum(fo_grad[k] * direction[k])) for k in params)
    print(
        f"meta-gradient along a random direction: {exact:.6f} (finite differences {fd:.6f},"
        f" first-order MAML {first_order:.6f})"
    )
    assert not np.isclose(exact, first_order, rtol=1e-4), "the second-order term vanished"

    held_out = sample_tasks(np.random.default_rng(1), 100)
    before = float(maml_loss(params, *held_out))
    m = {k: np.zeros_like(p) for k, p in params.items()}
    v = {k: np.zeros_like(p) for k, p in params.items()}
    steps = 30 if args.quick else 1000
    for step in range(1, steps + 1):
        grads = T.grad(maml_loss)(params, *sample_tasks(rng, 8))
        for k in params:  # Adam
            m[k] = 0.9 * m[k] + 0.1 * grads[k]
            v[k] = 0.999 * v[k] + 0.001 * grads[k] ** 2
            params[k] = params[k] - META_LR * (m[k] / (1 - 0.9**step)) / (
                np.sqrt(v[k] / (1 - 0.999**step)) + 1e-8
            )
    after = float(maml_loss(params, *held_out))
    print(f"post-adaptation query loss on 100 held-out tasks: {before:.3f} -> {after:.3f}")
    assert after < (0.9 if args.quick else 0.5) * before, (before, after)


if __name__ == "__main__":
    main()
