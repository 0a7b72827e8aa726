"""NoisyBlobs: synthetic data, label noise, standardisation and a train/test split."""

import numpy as np

from config import DataConfig


def make_noisy_blobs(cfg: DataConfig, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    centres = rng.normal(0.0, cfg.centre_std, size=(cfg.n_classes, cfg.n_features))
    labels = np.repeat(np.arange(cfg.n_classes), cfg.samples_per_class)
    features = centres[labels] + rng.normal(size=(len(labels), cfg.n_features))
    return features, labels


def train_test_split(n_samples: int, test_fraction: float,
                     rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    idx = rng.permutation(n_samples)
    n_test = int(round(test_fraction * n_samples))
    return idx[n_test:], idx[:n_test]


def inject_label_noise(labels: np.ndarray, rate: float, n_classes: int,
                       rng: np.random.Generator) -> np.ndarray:
    noisy = labels.copy()
    flip = rng.random(len(labels)) < rate
    offsets = rng.integers(1, n_classes, size=int(flip.sum()))
    noisy[flip] = (labels[flip] + offsets) % n_classes
    return noisy


def standardise(features: np.ndarray) -> np.ndarray:
    return (features - features.mean(axis=0)) / (features.std(axis=0) + 1e-8)
