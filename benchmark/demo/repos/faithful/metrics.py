"""Test metrics of the protocol: accuracy and macro-averaged F1."""

import numpy as np


def accuracy(labels: np.ndarray, predictions: np.ndarray) -> float:
    return float((labels == predictions).mean())


def macro_f1(labels: np.ndarray, predictions: np.ndarray, n_classes: int) -> float:
    """Unweighted mean over classes of the per-class F1 score."""
    scores = []
    for cls in range(n_classes):
        tp = np.sum((predictions == cls) & (labels == cls))
        fp = np.sum((predictions == cls) & (labels != cls))
        fn = np.sum((predictions != cls) & (labels == cls))
        scores.append(2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0)
    return float(np.mean(scores))
