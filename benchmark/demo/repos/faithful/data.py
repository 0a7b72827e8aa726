"""NoisyBlobs: the synthetic benchmark of the paper, its split, label noise and standardisation."""

import numpy as np

from config import DataConfig


def make_noisy_blobs(cfg: DataConfig, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Isotropic unit-variance Gaussian classes around centres drawn from N(0, centre_std^2 I)."""
    centres = rng.normal(0.0, cfg.centre_std, size=(cfg.n_classes, cfg.n_features))
    labels = np.repeat(np.arange(cfg.n_classes), cfg.samples_per_class)
    features = centres[labels] + rng.normal(size=(len(labels), cfg.n_features))
    return features, labels


def stratified_split(labels: np.ndarray, fractions: tuple[float, float, float],
                     rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Train/validation/test indices with the same class proportions in each part."""
    parts: tuple[list, list, list] = ([], [], [])
    for cls in np.unique(labels):
        idx = rng.permutation(np.flatnonzero(labels == cls))
        n_train = int(round(fractions[0] * len(idx)))
        n_val = int(round(fractions[1] * len(idx)))
        parts[0].append(idx[:n_train])
        parts[1].append(idx[n_train:n_train + n_val])
        parts[2].append(idx[n_train + n_val:])
    return tuple(np.concatenate(part) for part in parts)


def inject_label_noise(labels: np.ndarray, rate: float, n_classes: int,
                       rng: np.random.Generator) -> np.ndarray:
    """Symmetric noise: a `rate` share of labels is replaced by a different class, uniformly."""
    noisy = labels.copy()
    flip = rng.random(len(labels)) < rate
    offsets = rng.integers(1, n_classes, size=int(flip.sum()))
    noisy[flip] = (labels[flip] + offsets) % n_classes
    return noisy


def fit_standardiser(features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-feature mean and standard deviation (fitted on the training split only)."""
    return features.mean(axis=0), features.std(axis=0) + 1e-8


def standardise(features: np.ndarray, mean: np.ndarray, std: np.ndarray) -> np.ndarray:
    return (features - mean) / std
