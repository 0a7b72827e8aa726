"""Reproduce Table 1: SmoothLR against plain softmax regression and k-NN on NoisyBlobs.

    python run.py                      # the paper's protocol: 40 epochs, 5 seeds
    python run.py --epochs 3 --seeds 1 # a quick smoke run
"""

import argparse
from dataclasses import replace

import numpy as np

from config import DataConfig, EvalConfig, TrainConfig
from data import fit_standardiser, inject_label_noise, make_noisy_blobs, standardise, stratified_split
from knn import knn_predict
from metrics import accuracy, macro_f1
from model import SoftmaxRegression
from train import train


def prepare_data(seed: int, cfg: DataConfig) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    features, labels = make_noisy_blobs(cfg, rng)
    train_idx, val_idx, test_idx = stratified_split(labels, cfg.split_fractions, rng)
    train_y = inject_label_noise(labels[train_idx], cfg.label_noise, cfg.n_classes, rng)
    mean, std = fit_standardiser(features[train_idx])
    return {
        "train_x": standardise(features[train_idx], mean, std), "train_y": train_y,
        "val_x": standardise(features[val_idx], mean, std), "val_y": labels[val_idx],
        "test_x": standardise(features[test_idx], mean, std), "test_y": labels[test_idx],
    }


def methods(cfg: TrainConfig) -> dict[str, TrainConfig]:
    """SmoothLR and the unregularised baseline share the optimiser and the schedule."""
    return {"smoothlr": cfg, "softmax": replace(cfg, label_smoothing=0.0, weight_decay=0.0)}


def run_seed(seed: int, data_cfg: DataConfig, train_cfg: TrainConfig,
             eval_cfg: EvalConfig) -> dict[str, tuple[float, float]]:
    split = prepare_data(seed, data_cfg)
    test_y = split["test_y"]
    results = {}
    for name, cfg in methods(train_cfg).items():
        rng = np.random.default_rng(seed)
        model = SoftmaxRegression(data_cfg.n_features, data_cfg.n_classes, cfg.init_std, rng)
        train(model, split["train_x"], split["train_y"], split["val_x"], split["val_y"], cfg, rng)
        predictions = model.predict(split["test_x"])  # the best-validation checkpoint, once
        results[name] = (accuracy(test_y, predictions),
                         macro_f1(test_y, predictions, data_cfg.n_classes))
    predictions = knn_predict(split["train_x"], split["train_y"], split["test_x"],
                              eval_cfg.knn_neighbours, data_cfg.n_classes)
    results["knn"] = (accuracy(test_y, predictions), macro_f1(test_y, predictions, data_cfg.n_classes))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=TrainConfig.epochs)
    parser.add_argument("--seeds", type=int, default=len(EvalConfig.seeds),
                        help="how many of the seeds 0..4 to run (the paper uses 5)")
    args = parser.parse_args()
    train_cfg = replace(TrainConfig(), epochs=args.epochs)
    eval_cfg = EvalConfig()
    per_seed = [run_seed(seed, DataConfig(), train_cfg, eval_cfg)
                for seed in eval_cfg.seeds[:args.seeds]]
    for name in per_seed[0]:
        acc = np.array([result[name][0] for result in per_seed])
        f1 = np.array([result[name][1] for result in per_seed])
        print(f"{name:9s} test_accuracy={acc.mean():.4f}±{acc.std():.4f} "
              f"macro_f1={f1.mean():.4f}±{f1.std():.4f}")


if __name__ == "__main__":
    main()
