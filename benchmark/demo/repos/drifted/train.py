"""Training loop: momentum SGD with L2 regularisation and gradient clipping."""

from dataclasses import dataclass

import numpy as np

from config import TrainConfig
from metrics import accuracy
from model import SoftmaxRegression, clip_by_global_norm, loss_gradients, smoothed_targets, softmax, step_lr


@dataclass
class Velocity:
    w: np.ndarray
    b: np.ndarray


def sgd_step(model: SoftmaxRegression, velocity: Velocity, batch_x: np.ndarray,
             batch_y: np.ndarray, lr: float, cfg: TrainConfig) -> None:
    n_classes = model.w.shape[0]
    targets = smoothed_targets(batch_y, n_classes, cfg.label_smoothing)
    probs = softmax(model.logits(batch_x))
    grad_w, grad_b = loss_gradients(batch_x, probs, targets, model.w, model.b, cfg.weight_decay)
    grad_w, grad_b = clip_by_global_norm(grad_w, grad_b, cfg.clip_norm)
    velocity.w = cfg.momentum * velocity.w + grad_w
    velocity.b = cfg.momentum * velocity.b + grad_b
    model.w -= lr * velocity.w
    model.b -= lr * velocity.b


def train(model: SoftmaxRegression, train_x: np.ndarray, train_y: np.ndarray,
          test_x: np.ndarray, test_y: np.ndarray, cfg: TrainConfig,
          rng: np.random.Generator) -> float:
    """Train for cfg.epochs and return the best test accuracy seen."""
    velocity = Velocity(np.zeros_like(model.w), np.zeros_like(model.b))
    best_acc = 0.0
    for epoch in range(cfg.epochs):
        lr = step_lr(epoch, cfg.lr, cfg.lr_decay_epoch, cfg.lr_decay_factor)
        order = rng.permutation(len(train_x))
        for start in range(0, len(order), cfg.batch_size):
            batch = order[start:start + cfg.batch_size]
            sgd_step(model, velocity, train_x[batch], train_y[batch], lr, cfg)
        best_acc = max(best_acc, accuracy(test_y, model.predict(test_x)))
    return best_acc
