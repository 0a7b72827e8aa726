import numpy as np


def accuracy(labels: np.ndarray, predictions: np.ndarray) -> float:
    return float((labels == predictions).mean())
