"""Reproduce Table 1: SmoothLR against plain softmax regression on NoisyBlobs.

    python run.py
    python run.py --epochs 3 --seeds 1
"""

import argparse
from dataclasses import replace

import numpy as np

from config import DataConfig, EvalConfig, TrainConfig
from data import inject_label_noise, make_noisy_blobs, standardise, train_test_split
from model import SoftmaxRegression
from train import train


def prepare_data(seed: int, cfg: DataConfig) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    features, labels = make_noisy_blobs(cfg, rng)
    labels = inject_label_noise(labels, cfg.label_noise, cfg.n_classes, rng)
    features = standardise(features)
    train_idx, test_idx = train_test_split(len(labels), cfg.test_fraction, rng)
    return {"train_x": features[train_idx], "train_y": labels[train_idx],
            "test_x": features[test_idx], "test_y": labels[test_idx]}


def methods(cfg: TrainConfig) -> dict[str, TrainConfig]:
    return {"smoothlr": cfg, "softmax": replace(cfg, label_smoothing=0.0, weight_decay=0.0)}


def run_seed(seed: int, data_cfg: DataConfig, train_cfg: TrainConfig) -> dict[str, float]:
    split = prepare_data(seed, data_cfg)
    results = {}
    for name, cfg in methods(train_cfg).items():
        rng = np.random.default_rng(seed)
        model = SoftmaxRegression(data_cfg.n_features, data_cfg.n_classes, cfg.init_std, rng)
        results[name] = train(model, split["train_x"], split["train_y"], split["test_x"],
                              split["test_y"], cfg, rng)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=TrainConfig.epochs)
    parser.add_argument("--seeds", type=int, default=len(EvalConfig.seeds))
    args = parser.parse_args()
    train_cfg = replace(TrainConfig(), epochs=args.epochs)
    per_seed = [run_seed(seed, DataConfig(), train_cfg) for seed in EvalConfig.seeds[:args.seeds]]
    for name in per_seed[0]:
        acc = np.array([result[name] for result in per_seed])
        print(f"{name:9s} test_accuracy={acc.mean():.4f}±{acc.std():.4f}")


if __name__ == "__main__":
    main()
