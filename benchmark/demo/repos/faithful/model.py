"""SmoothLR: softmax regression trained on label-smoothed targets (paper, Section 2)."""

import numpy as np


def softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=1, keepdims=True)


def smoothed_targets(labels: np.ndarray, n_classes: int, epsilon: float) -> np.ndarray:
    """q = (1 - epsilon) * onehot(y) + epsilon / C, Eq. (2)."""
    onehot = np.eye(n_classes)[labels]
    return (1.0 - epsilon) * onehot + epsilon / n_classes


def cross_entropy(probs: np.ndarray, targets: np.ndarray) -> float:
    """Mean over the batch of -sum_c q_c log p_c, Eq. (3)."""
    return float(-(targets * np.log(probs + 1e-12)).sum(axis=1).mean())


def loss_gradients(features: np.ndarray, probs: np.ndarray,
                   targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """dL/dz = (p - q) / B, so dL/dW = (p - q)^T X / B and dL/db = sum_i (p_i - q_i) / B."""
    delta = (probs - targets) / len(features)
    return delta.T @ features, delta.sum(axis=0)


def clip_by_global_norm(grad_w: np.ndarray, grad_b: np.ndarray,
                        max_norm: float) -> tuple[np.ndarray, np.ndarray]:
    """Rescale both gradients by max_norm / ||g|| when their joint L2 norm exceeds max_norm."""
    norm = np.sqrt((grad_w ** 2).sum() + (grad_b ** 2).sum())
    if norm > max_norm:
        scale = max_norm / norm
        return grad_w * scale, grad_b * scale
    return grad_w, grad_b


def cosine_lr(epoch: int, total_epochs: int, lr_max: float, lr_min: float) -> float:
    """eta_t = eta_min + 0.5 (eta_0 - eta_min) (1 + cos(pi t / T)), Eq. (6)."""
    return lr_min + 0.5 * (lr_max - lr_min) * (1.0 + np.cos(np.pi * epoch / total_epochs))


class SoftmaxRegression:
    """A linear classifier z = W x + b with Gaussian-initialised weights and zero bias."""

    def __init__(self, n_features: int, n_classes: int, init_std: float,
                 rng: np.random.Generator) -> None:
        self.w = rng.normal(0.0, init_std, size=(n_classes, n_features))
        self.b = np.zeros(n_classes)

    def logits(self, features: np.ndarray) -> np.ndarray:
        return features @ self.w.T + self.b

    def predict(self, features: np.ndarray) -> np.ndarray:
        return self.logits(features).argmax(axis=1)
