"""Resampling statistics for the report: bootstrap confidence intervals over papers.

Papers are the unit of resampling: a configuration's score is a mean over papers, so its
uncertainty is how much that mean moves when the paper sample changes. Comparisons between two
scaffolds are paired (same model, same papers), which removes the large paper-to-paper variance
that an unpaired comparison would carry.

Every random stream is derived from a base seed and a stable key (the name of what is being
resampled), so a result does not change when other configurations are added or the order of the
calls changes.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

DEFAULT_RESAMPLES = 2000
DEFAULT_LEVEL = 0.95
DEFAULT_SEED = 0


class Interval(BaseModel):
    """A point estimate with a percentile bootstrap confidence interval."""

    model_config = ConfigDict(frozen=True)

    mean: float
    low: float
    high: float
    n: int


class PairedDifference(BaseModel):
    """Mean of per-paper differences a - b, its bootstrap interval, and the per-paper tally."""

    model_config = ConfigDict(frozen=True)

    mean_diff: float
    low: float
    high: float
    n: int
    wins: int
    losses: int
    ties: int

    @property
    def significant(self) -> bool:
        """True when the interval excludes 0 (a difference at the interval's level)."""
        return self.low > 0 or self.high < 0


def rng_for(key: str, seed: int = DEFAULT_SEED) -> np.random.Generator:
    """A generator that depends only on `seed` and `key` (crc32 is stable across runs)."""
    return np.random.default_rng([seed, zlib.crc32(key.encode("utf-8"))])


def bootstrap_means(values: np.ndarray, rng: np.random.Generator, resamples: int) -> np.ndarray:
    """Means of `resamples` resamples (with replacement) of `values`, vectorised."""
    picks = rng.integers(0, values.size, size=(resamples, values.size))
    return values[picks].mean(axis=1)


def _bounds(means: np.ndarray, level: float) -> tuple[float, float]:
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return float(low), float(high)


def mean_ci(values: Sequence[float], key: str, *, seed: int = DEFAULT_SEED,
            resamples: int = DEFAULT_RESAMPLES, level: float = DEFAULT_LEVEL) -> Interval | None:
    """Percentile bootstrap CI of the mean of `values` (one value per paper).

    Args:
        values: one score per paper.
        key: stable name of the quantity; seeds its random stream.
        seed: base seed.
        resamples: number of bootstrap resamples.
        level: confidence level, e.g. 0.95.

    Returns:
        The interval, or None when there is no value at all.
    """
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return None
    means = bootstrap_means(data, rng_for(key, seed), resamples)
    low, high = _bounds(means, level)
    return Interval(mean=float(data.mean()), low=low, high=high, n=int(data.size))


def paired_difference(a: Sequence[float], b: Sequence[float], key: str, *,
                      seed: int = DEFAULT_SEED, resamples: int = DEFAULT_RESAMPLES,
                      level: float = DEFAULT_LEVEL) -> PairedDifference | None:
    """Paired bootstrap of the mean difference a - b; a[i] and b[i] belong to the same paper.

    Resampling whole pairs keeps each paper's two scores together, which is what makes the
    comparison paired.

    Returns:
        The difference with its interval, or None when there is no pair.
    """
    left, right = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if left.shape != right.shape:
        raise ValueError(f"paired samples differ in length: {left.size} vs {right.size}")
    if left.size == 0:
        return None
    diffs = left - right
    low, high = _bounds(bootstrap_means(diffs, rng_for(key, seed), resamples), level)
    return PairedDifference(
        mean_diff=float(diffs.mean()), low=low, high=high, n=int(diffs.size),
        wins=int((diffs > 0).sum()), losses=int((diffs < 0).sum()), ties=int((diffs == 0).sum()),
    )
