"""The HTML report: one self-contained file (tables + matplotlib plots as base64 PNG).

Nothing is fetched when the file is opened: styles are inline, images are data URIs, and there is
no script, so the file can be mailed, archived or attached to a CI run as is.
"""

from __future__ import annotations

import base64
import io
import re
from pathlib import Path
from typing import Any

import jinja2
import numpy as np
from matplotlib.figure import Figure
from pydantic import BaseModel, ConfigDict

from sabench.benchmark.report import DIMENSIONS, LEVEL_KEYS, METRICS, report_tables

TEMPLATES = Path(__file__).parent / "templates"
DPI = 100
# Colour-blind-safe palette (Okabe-Ito), one colour per metric / score level.
PALETTE = ("#000000", "#E69F00", "#56B4E9", "#009E73", "#CC79A7", "#0072B2", "#D55E00")
LEVEL_COLOURS = ("#b2182b", "#ef8a62", "#fddbc7", "#67a9cf", "#2166ac", "#9e9e9e")
ERROR_COLUMNS = ("claim errors", "error", "errors")


class Plot(BaseModel):
    """One embedded figure."""

    model_config = ConfigDict(frozen=True)

    id: str
    caption: str
    png: str  # base64
    width: int
    height: int


def _label_room(labels: list[str], height_in: float) -> float:
    """Bottom margin (figure fraction) for x labels rotated 30 degrees at 8 pt.

    Fixed margins instead of a layout engine: constrained layout measured every text twice and
    doubled the plotting time of the report.
    """
    longest = max((len(label) for label in labels), default=1)
    return min(0.6, (0.2 + 0.036 * longest) / height_in)


def _name_room(labels: list[str], width_in: float) -> float:
    """Left margin (figure fraction) for horizontal tick labels at 8 pt."""
    longest = max((len(label) for label in labels), default=1)
    return min(0.4, (0.2 + 0.062 * longest) / width_in)


def _encode(fig: Figure, plot_id: str, caption: str) -> Plot:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, pil_kwargs={"compress_level": 3})
    width, height = (int(round(v * DPI)) for v in fig.get_size_inches())
    return Plot(id=plot_id, caption=caption, width=width, height=height,
                png=base64.b64encode(buffer.getvalue()).decode("ascii"))


def _configs_short(report: dict[str, Any]) -> list[str]:
    return list(report["configs"])


def plot_dimension_bars(report: dict[str, Any]) -> Plot:
    """Grouped bars: overall and D1-D4 per configuration, overall with its bootstrap CI."""
    configs = _configs_short(report)
    width = max(6.0, 1.0 * len(configs) + 2)
    fig = Figure(figsize=(width, 4.4))
    fig.subplots_adjust(left=0.65 / width, right=1 - 0.1 / width, top=1 - 0.45 / 4.4,
                        bottom=_label_room(configs, 4.4))
    ax = fig.add_subplot()
    x = np.arange(len(configs))
    width = 0.8 / len(METRICS)
    for i, metric in enumerate(METRICS):
        values = [report["configs"][c][metric] for c in configs]
        heights = [np.nan if v is None else v for v in values]
        offsets = x + (i - (len(METRICS) - 1) / 2) * width
        yerr = _ci_errors(report, configs, metric) if metric == "overall" else None
        ax.bar(offsets, heights, width, label=metric, color=PALETTE[i], yerr=yerr, capsize=2)
    ax.set_xticks(x, configs, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("mean score over papers")
    ax.set_ylim(0, 1)
    ax.legend(ncols=len(METRICS), fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0),
              frameon=False)
    ax.grid(axis="y", alpha=0.3)
    return _encode(fig, "plot-dimensions", "Overall and per-dimension score per configuration "
                   "(bars: mean over papers; whiskers on overall: 95% bootstrap interval).")


def _ci_errors(report: dict[str, Any], configs: list[str], metric: str) -> np.ndarray:
    """Asymmetric error bars (below, above) from the bootstrap intervals; 0 where absent."""
    below, above = [], []
    for config in configs:
        cell = report["confidence_intervals"]["configs"][config][metric]
        below.append(cell["mean"] - cell["low"] if cell else 0.0)
        above.append(cell["high"] - cell["mean"] if cell else 0.0)
    return np.array([below, above])


def plot_level_shares(report: dict[str, Any]) -> Plot:
    """Per dimension: each configuration's claims split by score level (and errors)."""
    configs = _configs_short(report)
    height = 1.6 + 0.5 * len(configs)
    fig = Figure(figsize=(11, height))
    fig.subplots_adjust(left=_name_room(configs, 11), right=0.99, top=1 - 0.4 / height,
                        bottom=1.1 / height, wspace=0.08)
    axes = fig.subplots(1, len(DIMENSIONS), sharey=True)
    keys = (*LEVEL_KEYS, "error")
    for ax, dim in zip(np.atleast_1d(axes), DIMENSIONS, strict=True):
        counts = np.array([[report["score_distribution"][c][dim][k] for k in keys]
                           for c in configs], dtype=float)
        totals = counts.sum(axis=1, keepdims=True)
        shares = np.divide(counts, totals, out=np.zeros_like(counts), where=totals > 0)
        left = np.zeros(len(configs))
        for j, key in enumerate(keys):
            ax.barh(configs, shares[:, j], left=left, color=LEVEL_COLOURS[j], label=key)
            left += shares[:, j]
        ax.set_title(dim)
        ax.set_xlim(0, 1)
        ax.set_xticks([0, 0.5, 1], ["0", "0.5", "1"])
        ax.tick_params(labelsize=8)
        ax.invert_yaxis() if ax is np.atleast_1d(axes)[0] else None
    fig.legend(*np.atleast_1d(axes)[0].get_legend_handles_labels(), loc="lower center",
               ncols=len(keys), fontsize=8, title="claim score")
    return _encode(fig, "plot-levels", "Distribution of claim scores per dimension and "
                   "configuration (share of claims at each level; grey: failed judgements).")


def plot_run_distribution(report: dict[str, Any]) -> Plot:
    """Box plot of run-level overall scores per configuration, every run as a dot."""
    configs = _configs_short(report)
    width = max(6.0, 0.8 * len(configs) + 2)
    fig = Figure(figsize=(width, 4))
    fig.subplots_adjust(left=0.65 / width, right=1 - 0.1 / width, top=0.97,
                        bottom=_label_room(configs, 4))
    ax = fig.add_subplot()
    data = [[r["overall"] for r in report["runs"][c].values() if r["overall"] is not None]
            for c in configs]
    positions = np.arange(1, len(configs) + 1)
    present = [i for i, values in enumerate(data) if values]
    if present:
        ax.boxplot([data[i] for i in present], positions=positions[present], widths=0.5,
                   showfliers=False)
    jitter = np.random.default_rng(0)  # fixed: the same report draws the same picture
    for pos, values in zip(positions, data, strict=True):
        ax.scatter(pos + jitter.uniform(-0.15, 0.15, len(values)), values, s=9, alpha=0.6,
                   color=PALETTE[5])
    ax.set_xticks(positions, configs, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("run overall score")
    ax.set_ylim(0, 1)
    ax.grid(axis="y", alpha=0.3)
    return _encode(fig, "plot-runs", "Run-level overall scores per configuration "
                   "(one dot per paper; box: quartiles and median).")


def plot_failure_categories(data: dict[str, Any], plot_id: str = "plot-failure-categories",
                            caption: str = "Failure categories per dimension (share of the "
                            "claims that carry a category, all configurations pooled).") -> Plot:
    """Per dimension, pooled over configurations: share of claims in each failure category."""
    pooled: dict[str, dict[str, int]] = {}
    for dims in data.values():
        for dim, cell in dims.items():
            for category, count in cell.items():
                pooled.setdefault(dim, {}).setdefault(category, 0)
                pooled[dim][category] += count
    dims = sorted(pooled)
    categories = sorted({c for cell in pooled.values() for c in cell})
    fig = Figure(figsize=(9, 1.6 + 0.45 * len(dims)))
    fig.subplots_adjust(left=0.08, right=0.98, top=0.92, bottom=0.45 if len(dims) < 3 else 0.3)
    ax = fig.add_subplot()
    left = np.zeros(len(dims))
    for i, category in enumerate(categories):
        counts = np.array([pooled[d].get(category, 0) for d in dims], dtype=float)
        shares = counts / np.array([sum(pooled[d].values()) for d in dims], dtype=float)
        ax.barh(dims, shares, left=left, label=category, color=PALETTE[(i + 1) % len(PALETTE)])
        left += shares
    ax.set_xlim(0, 1)
    ax.invert_yaxis()
    ax.legend(ncols=min(4, len(categories)), fontsize=8, loc="upper center",
              bbox_to_anchor=(0.5, -0.15 if len(dims) > 2 else -0.3), frameon=False)
    return _encode(fig, plot_id, caption)


def plot_failure_taxonomy(data: dict[str, Any]) -> Plot:
    return plot_failure_categories(
        data["per_config"], "plot-failure-taxonomy",
        "Failure taxonomy of low claims (≤ 0.25) per dimension, all configurations pooled.")


PLOTS = (plot_dimension_bars, plot_level_shares, plot_run_distribution)
# Plots of optional report sections, keyed like report.SECTIONS: drawn when the section exists.
SECTION_PLOTS = {"failure_categories": plot_failure_categories,
                 "failure_taxonomy": plot_failure_taxonomy}


def _plots(report: dict[str, Any]) -> list[Plot]:
    plots = [make(report) for make in PLOTS]
    plots += [make(report[name]) for name, make in SECTION_PLOTS.items() if name in report]
    return plots


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES),
                             autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters["slug"] = _slug
    return env


def render_html(report: dict[str, Any], title: str = "SA-Bench report") -> str:
    """The report as one self-contained HTML page."""
    template = _environment().get_template("report.html.j2")
    return template.render(title=title, meta=report["meta"], errors=report["errors"],
                           groups=report_tables(report), plots=_plots(report),
                           error_columns=ERROR_COLUMNS)
