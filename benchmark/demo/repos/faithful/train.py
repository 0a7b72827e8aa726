"""Training of SmoothLR: momentum SGD, global-norm clipping, decoupled weight decay (Algorithm 1)."""

from dataclasses import dataclass

import numpy as np

from config import TrainConfig
from metrics import accuracy
from model import (SoftmaxRegression, clip_by_global_norm, cosine_lr, loss_gradients,
                   smoothed_targets, softmax)


@dataclass
class Velocity:
    w: np.ndarray
    b: np.ndarray


def decoupled_weight_decay(model: SoftmaxRegression, lr: float, weight_decay: float) -> None:
    """W <- W - lr * lambda * W, after the gradient step and outside the gradient (bias exempt)."""
    model.w -= lr * weight_decay * model.w


def sgd_step(model: SoftmaxRegression, velocity: Velocity, batch_x: np.ndarray,
             batch_y: np.ndarray, lr: float, cfg: TrainConfig) -> None:
    n_classes = model.w.shape[0]
    targets = smoothed_targets(batch_y, n_classes, cfg.label_smoothing)
    probs = softmax(model.logits(batch_x))
    grad_w, grad_b = loss_gradients(batch_x, probs, targets)
    grad_w, grad_b = clip_by_global_norm(grad_w, grad_b, cfg.clip_norm)
    velocity.w = cfg.momentum * velocity.w + grad_w
    velocity.b = cfg.momentum * velocity.b + grad_b
    model.w -= lr * velocity.w
    model.b -= lr * velocity.b
    decoupled_weight_decay(model, lr, cfg.weight_decay)


def train(model: SoftmaxRegression, train_x: np.ndarray, train_y: np.ndarray,
          val_x: np.ndarray, val_y: np.ndarray, cfg: TrainConfig,
          rng: np.random.Generator) -> float:
    """Train for cfg.epochs; leaves the model at its best-validation checkpoint, returns its accuracy."""
    velocity = Velocity(np.zeros_like(model.w), np.zeros_like(model.b))
    best_acc, best_w, best_b = -1.0, model.w.copy(), model.b.copy()
    lr = cosine_lr(0, cfg.epochs, cfg.lr_max, cfg.lr_min)
    for epoch in range(cfg.epochs):
        order = rng.permutation(len(train_x))
        for start in range(0, len(order), cfg.batch_size):
            batch = order[start:start + cfg.batch_size]
            sgd_step(model, velocity, train_x[batch], train_y[batch], lr, cfg)
        val_acc = accuracy(val_y, model.predict(val_x))
        if val_acc > best_acc:
            best_acc, best_w, best_b = val_acc, model.w.copy(), model.b.copy()
        lr = cosine_lr(epoch + 1, cfg.epochs, cfg.lr_max, cfg.lr_min)
    model.w, model.b = best_w, best_b
    return best_acc
