"""An MLP classifier trained on real data: scikit-learn's handwritten digits (8x8 images).

1,797 images ship inside scikit-learn (nothing is downloaded). A 64-64-10 tanh network with
a softmax cross-entropy loss (``tnp.logsumexp``) is trained by Adam on minibatches, with
``T.value_and_grad`` over a dict of parameters. The gradient is checked against finite
differences (``T.check_grads``) before training; after training the held-out accuracy must
be above 90% (above 70% for the short run), and the figure shows the training curves.
"""

from __future__ import annotations

import itertools

import numpy as np
from _cli import new_figure, parse_args, save
from sklearn.datasets import load_digits  # type: ignore[import-untyped]

import transforms as T
import transforms.numpy as tnp

Params = dict[str, T.Array]


def init(rng: np.random.Generator, sizes: list[int]) -> Params:
    params: Params = {}
    for i, (m, n) in enumerate(itertools.pairwise(sizes)):
        params[f"w{i}"] = rng.standard_normal((m, n)) / np.sqrt(m)
        params[f"b{i}"] = np.zeros(n)
    return params


def logits(params: Params, x: T.Array) -> T.Array:
    layers = len(params) // 2
    for i in range(layers - 1):
        x = tnp.tanh(x @ params[f"w{i}"] + params[f"b{i}"])
    return x @ params[f"w{layers - 1}"] + params[f"b{layers - 1}"]


def loss(params: Params, x: T.Array, labels: T.Array) -> T.Array:
    """Mean softmax cross-entropy; ``labels`` are one-hot rows."""
    z = logits(params, x)
    return tnp.mean(tnp.logsumexp(z, axis=1) - tnp.sum(z * labels, axis=1))


def accuracy(params: Params, x: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean(np.argmax(np.asarray(logits(params, x)), axis=1) == y))


def adam(params: Params, grads: Params, state: dict[str, Params], step: int, lr: float) -> Params:
    """One Adam step (Kingma and Ba); ``state`` holds the moment estimates ``m`` and ``v``."""
    b1, b2, eps = 0.9, 0.999, 1e-8
    for k in params:
        state["m"][k] = b1 * state["m"][k] + (1 - b1) * grads[k]
        state["v"][k] = b2 * state["v"][k] + (1 - b2) * grads[k] ** 2
    m_hat = {k: m / (1 - b1**step) for k, m in state["m"].items()}
    v_hat = {k: v / (1 - b2**step) for k, v in state["v"].items()}
    return {k: params[k] - lr * m_hat[k] / (np.sqrt(v_hat[k]) + eps) for k in params}


def main() -> None:
    args = parse_args(__doc__)
    digits = load_digits()
    x_all, y_all = digits.data / 16.0, digits.target
    rng = np.random.default_rng(0)
    order = rng.permutation(len(y_all))
    train, test = order[:1400], order[1400:]
    onehot = np.eye(10)[y_all]

    params = init(rng, [64, 64, 10])
    small = (params, x_all[train[:20]], onehot[train[:20]])
    T.check_grads(lambda p: loss(p, small[1], small[2]), (params,), order=1)
    print("gradient checked against finite differences")

    value_and_grad = T.value_and_grad(loss)
    state: dict[str, Params] = {"m": {k: np.zeros_like(p) for k, p in params.items()}}
    state["v"] = {k: np.zeros_like(p) for k, p in params.items()}
    epochs, batch, step = (4 if args.quick else 40), 64, 0
    history: dict[str, list[float]] = {"train loss": [], "test loss": [], "test accuracy": []}
    for epoch in range(epochs):
        shuffled = rng.permutation(train)
        for start in range(0, len(train), batch):
            idx = shuffled[start : start + batch]
            _, grads = value_and_grad(params, x_all[idx], onehot[idx])
            step += 1
            params = adam(params, grads, state, step, lr=3e-3)
        history["train loss"].append(float(loss(params, x_all[train], onehot[train])))
        history["test loss"].append(float(loss(params, x_all[test], onehot[test])))
        history["test accuracy"].append(accuracy(params, x_all[test], y_all[test]))
        print(
            f"epoch {epoch + 1:2d}: train loss {history['train loss'][-1]:.3f}, "
            f"test accuracy {history['test accuracy'][-1]:.3f}"
        )

    assert history["train loss"][-1] < history["train loss"][0]
    assert history["test accuracy"][-1] > (0.7 if args.quick else 0.9), history["test accuracy"]

    figure = new_figure(8.0, 3.2)
    ax_loss, ax_acc = figure.subplots(1, 2)
    epochs_axis = np.arange(1, epochs + 1)
    ax_loss.plot(epochs_axis, history["train loss"], label="train")
    ax_loss.plot(epochs_axis, history["test loss"], label="test")
    ax_loss.set(xlabel="epoch", ylabel="cross-entropy", yscale="log", title="loss")
    ax_loss.legend()
    ax_acc.plot(epochs_axis, history["test accuracy"], color="C2")
    ax_acc.set(xlabel="epoch", ylabel="accuracy", title="held-out accuracy", ylim=(0.5, 1.0))
    save(figure, args.figures, "mlp_digits_training.png")


if __name__ == "__main__":
    main()
