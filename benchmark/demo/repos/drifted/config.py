"""Hyperparameters of SmoothLR and of the evaluation protocol."""

from dataclasses import dataclass


@dataclass(frozen=True)
class TrainConfig:
    label_smoothing: float = 0.3
    weight_decay: float = 5e-3
    lr: float = 0.1
    lr_decay_epoch: int = 15
    lr_decay_factor: float = 0.1
    momentum: float = 0.9
    batch_size: int = 128
    epochs: int = 20
    clip_norm: float = 5.0
    init_std: float = 0.01


@dataclass(frozen=True)
class DataConfig:
    n_classes: int = 10
    n_features: int = 32
    samples_per_class: int = 600
    centre_std: float = 0.45
    label_noise: float = 0.2
    test_fraction: float = 0.2


@dataclass(frozen=True)
class EvalConfig:
    seeds: tuple[int, ...] = (0, 1, 2)
