"""Softmax regression trained on label-smoothed targets."""

import numpy as np


def softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=1, keepdims=True)


def smoothed_targets(labels: np.ndarray, n_classes: int, epsilon: float) -> np.ndarray:
    targets = np.full((len(labels), n_classes), epsilon / (n_classes - 1))
    targets[np.arange(len(labels)), labels] = 1.0 - epsilon
    return targets


def loss_gradients(features: np.ndarray, probs: np.ndarray, targets: np.ndarray,
                   w: np.ndarray, b: np.ndarray,
                   l2: float) -> tuple[np.ndarray, np.ndarray]:
    delta = (probs - targets) / len(features)
    return delta.T @ features + l2 * w, delta.sum(axis=0) + l2 * b


def clip_by_global_norm(grad_w: np.ndarray, grad_b: np.ndarray,
                        max_norm: float) -> tuple[np.ndarray, np.ndarray]:
    norm = np.sqrt((grad_w ** 2).sum() + (grad_b ** 2).sum())
    if norm > max_norm:
        scale = max_norm / norm
        return grad_w * scale, grad_b * scale
    return grad_w, grad_b


def step_lr(epoch: int, lr: float, decay_epoch: int, factor: float) -> float:
    return lr * factor ** (epoch // decay_epoch)


class SoftmaxRegression:
    def __init__(self, n_features: int, n_classes: int, init_std: float,
                 rng: np.random.Generator) -> None:
        self.w = rng.normal(0.0, init_std, size=(n_classes, n_features))
        self.b = np.zeros(n_classes)

    def logits(self, features: np.ndarray) -> np.ndarray:
        return features @ self.w.T + self.b

    def predict(self, features: np.ndarray) -> np.ndarray:
        return self.logits(features).argmax(axis=1)
