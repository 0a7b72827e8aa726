"""Hyperparameters of SmoothLR and of the evaluation protocol (paper, Sections 2 and 3)."""

from dataclasses import dataclass


@dataclass(frozen=True)
class TrainConfig:
    label_smoothing: float = 0.1
    weight_decay: float = 5e-4  # decoupled: applied to the weights after the step, never the bias
    lr_max: float = 0.1
    lr_min: float = 1e-3
    momentum: float = 0.9
    batch_size: int = 128
    epochs: int = 40
    clip_norm: float = 5.0
    init_std: float = 0.01


@dataclass(frozen=True)
class DataConfig:
    n_classes: int = 10
    n_features: int = 32
    samples_per_class: int = 600
    centre_std: float = 0.45
    label_noise: float = 0.2  # symmetric, training split only
    split_fractions: tuple[float, float, float] = (0.6, 0.2, 0.2)  # train, validation, test


@dataclass(frozen=True)
class EvalConfig:
    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    knn_neighbours: int = 15
