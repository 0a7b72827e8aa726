"""Tables of a SCORES_DIR: the paper's result tables plus intervals, paired comparisons, errors.

A SCORES_DIR holds `<config>/<paper_id>.json` result files (official or ours) and `configs.json`
(`{config: {"scaffold", "model"}}`). The numbers follow the definitions of SA-Bench's published
tables: a run's dimension and overall scores are the ones its result file records (official files
round them to 4 decimals, and the published tables were computed from those recorded values), a
configuration's score is the mean over its papers, a marginal is the mean of the configuration
scores sharing a model (or scaffold), claim rates are over claim scores.

A claim whose judgement failed (score None, `error` set) is never a 0: it is left out of every
mean and rate and counted as an error, and the counts are part of every format.

`build_report` returns a plain JSON-ready dict; `report_tables` turns it into display tables that
the Markdown and HTML renderers share, so both always show the same numbers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from functools import cached_property
from pathlib import Path
from statistics import fmean, median
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, ValidationError

from sabench.benchmark import stats
from sabench.verifiers import taxonomy
from sabench.verifiers.files import read_json
from sabench.verifiers.spec import Dimension
from sabench.verifiers.types import SCORE_LEVELS, ClaimVerdict, PaperScore, ResultFileError

CONFIGS_FILE = "configs.json"
DIMENSIONS: tuple[str, ...] = tuple(dim.value for dim in Dimension)
METRICS: tuple[str, ...] = ("overall", *DIMENSIONS)
LEVEL_KEYS: tuple[str, ...] = tuple(f"{level:g}" for level in SCORE_LEVELS)


class ScoresDirError(ResultFileError):
    """A SCORES_DIR whose layout or configs.json is unusable (a user error, printed as one line)."""


class ConfigInfo(BaseModel):
    """Which scaffold and which generator model a configuration ran."""

    model_config = ConfigDict(frozen=True, extra="allow")

    scaffold: str
    model: str


class ClaimRow(NamedTuple):
    config: str
    dimension: str
    score: float | None  # None: the judgement failed
    category: str | None


@dataclass(frozen=True)
class ScoreSet:
    """All result files of a SCORES_DIR: config -> paper_id -> score."""

    root: Path
    configs: dict[str, ConfigInfo]
    runs: dict[str, dict[str, PaperScore]] = field(default_factory=dict)

    def iter_runs(self) -> Iterator[tuple[str, PaperScore]]:
        for config, papers in self.runs.items():
            for score in papers.values():
                yield config, score

    def iter_verdicts(self) -> Iterator[tuple[str, str, ClaimVerdict]]:
        """(config, dimension, verdict) for every claim of every run."""
        for config, score in self.iter_runs():
            for dim, verdict in score.verdicts():
                yield config, str(dim), verdict

    @cached_property
    def claims(self) -> list[ClaimRow]:
        """Every claim as a flat row, built once: the rates and counts all scan this list."""
        return [ClaimRow(config, dim, v.score, v.failure_category and str(v.failure_category))
                for config, dim, v in self.iter_verdicts()]


# ---------------------------------------------------------------- loading


def load_scores(scores_dir: Path) -> ScoreSet:
    """Read `configs.json` and every `<config>/<paper_id>.json` of a SCORES_DIR.

    Raises:
        ScoresDirError: missing directory or configs.json, a configuration directory that
            configs.json does not list (or the reverse), a config without score files, a file
            whose paper_id differs from its name.
        ResultFileError: a result file that is not valid result JSON.
    """
    scores_dir = Path(scores_dir)
    if not scores_dir.is_dir():
        raise ScoresDirError(f"{scores_dir}: not a directory of score files")
    configs = read_configs(scores_dir / CONFIGS_FILE)
    _check_config_dirs(scores_dir, configs)
    runs = {name: _load_config(scores_dir / name) for name in configs}
    return ScoreSet(root=scores_dir, configs=configs, runs=runs)


def read_configs(path: Path) -> dict[str, ConfigInfo]:
    """Parse `configs.json`: `{config: {"scaffold": ..., "model": ...}}`, order kept."""
    if not path.is_file():
        raise ScoresDirError(f"{path}: missing (it maps each configuration to scaffold and model)")
    data = read_json(path, ScoresDirError, "cannot read JSON")
    if not isinstance(data, dict) or not data:
        raise ScoresDirError(f"{path}: expected a non-empty object {{config: {{scaffold, model}}}}")
    configs = {}
    for name, entry in data.items():
        try:
            configs[name] = ConfigInfo.model_validate(entry)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "entry"
            raise ScoresDirError(f"{path}: entry '{name}': {where}: {first['msg']}") from exc
    return configs


def _check_config_dirs(scores_dir: Path, configs: dict[str, ConfigInfo]) -> None:
    present = {p.name for p in scores_dir.iterdir()
               if p.is_dir() and not p.name.startswith((".", "_"))}
    for name in sorted(present - configs.keys()):
        raise ScoresDirError(f"{scores_dir / name}: configuration '{name}' is missing from "
                             f"{scores_dir / CONFIGS_FILE}")
    for name in configs:
        if name not in present:
            raise ScoresDirError(f"{scores_dir / CONFIGS_FILE}: configuration '{name}' has no "
                                 f"directory {scores_dir / name}")


def _load_config(config_dir: Path) -> dict[str, PaperScore]:
    files = sorted(config_dir.glob("*.json"))
    if not files:
        raise ScoresDirError(f"{config_dir}: no <paper_id>.json score files")
    runs = {}
    for path in files:
        score = PaperScore.load(path)
        if score.paper_id != path.stem:
            raise ScoresDirError(
                f"{path}: paper_id '{score.paper_id}' does not match the file name")
        runs[score.paper_id] = score
    return runs


# ---------------------------------------------------------------- numbers


def round_half_up(value: float, digits: int = 3) -> float:
    """Round as the published tables do: halves go up, float noise is ignored.

    A mean of values recorded with 4 decimals can be exactly x.xxx5 on paper but land a hair
    below it in binary (0.1975 -> 0.19749999999999998); rounding at 9 decimals first restores the
    decimal value before the half-up rounding.
    """
    exact = Decimal(repr(round(value, 9)))
    return float(exact.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def _mean(values: list[float]) -> float | None:
    return fmean(values) if values else None


def run_value(score: PaperScore, metric: str) -> float | None:
    """A run's recorded overall or dimension score; None when nothing in it was judged."""
    if metric == "overall":
        return score.overall_score
    result = score.dimensions.get(Dimension(metric))
    return result.score if result is not None else None


def paper_values(scores: ScoreSet, config: str, metric: str) -> dict[str, float]:
    """paper_id -> the run's value of `metric`, for the runs that have one."""
    values = {}
    for paper_id, score in scores.runs[config].items():
        value = run_value(score, metric)
        if value is not None:
            values[paper_id] = value
    return values


def config_table(scores: ScoreSet) -> dict[str, dict[str, Any]]:
    """Mean over papers of each metric, per configuration, with its scaffold and model."""
    table = {}
    for name, info in scores.configs.items():
        row: dict[str, Any] = {"scaffold": info.scaffold, "model": info.model}
        for metric in METRICS:
            row[metric] = _mean(list(paper_values(scores, name, metric).values()))
        row["n_papers"] = len(scores.runs[name])
        table[name] = row
    return table


def _mean_of_rows(rows: list[dict[str, Any]]) -> dict[str, float | None]:
    return {m: _mean([row[m] for row in rows if row[m] is not None]) for m in METRICS}


def marginals(configs: dict[str, dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """Mean of the configuration scores that share a model, and those that share a scaffold."""
    result: dict[str, dict[str, dict[str, Any]]] = {}
    for axis in ("model", "scaffold"):
        names = list(dict.fromkeys(row[axis] for row in configs.values()))
        result[axis] = {
            name: _mean_of_rows([row for row in configs.values() if row[axis] == name])
            for name in names
        }
    return result


def _claim_scores(scores: ScoreSet, dimension: str | None = None) -> tuple[list[float], int]:
    """Judged claim scores (optionally of one dimension) and the number of failed judgements."""
    rows = [r.score for r in scores.claims if dimension is None or r.dimension == dimension]
    judged = [score for score in rows if score is not None]
    return judged, len(rows) - len(judged)


def _rate(claims: list[float], test: Callable[[float], bool]) -> float | None:
    return sum(1 for s in claims if test(s)) / len(claims) if claims else None


def dimension_statistics(scores: ScoreSet) -> dict[str, dict[str, Any]]:
    """Per dimension: mean and median of run-level scores; rates over judged claim scores."""
    result = {}
    for dim in DIMENSIONS:
        runs = [v for c in scores.runs for v in paper_values(scores, c, dim).values()]
        claims, errors = _claim_scores(scores, dim)
        result[dim] = {
            "mean": _mean(runs),
            "median": median(runs) if runs else None,
            "share_ge_0.5": _rate(claims, lambda s: s >= 0.5),
            "full_mark_rate": _rate(claims, lambda s: s == 1.0),
            "zero_rate": _rate(claims, lambda s: s == 0.0),
            "n_runs": len(runs),
            "n_claims": len(claims),
            "errors": errors,
        }
    return result


def headline(scores: ScoreSet, configs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Overall mean/median over runs, claim shares and counts, and the best configuration."""
    overall = [v for c in scores.runs for v in paper_values(scores, c, "overall").values()]
    claims, errors = _claim_scores(scores)
    ranked = [name for name, row in configs.items() if row["overall"] is not None]
    best = max(ranked, key=lambda name: configs[name]["overall"]) if ranked else None
    return {
        "overall_mean": _mean(overall),
        "overall_median": median(overall) if overall else None,
        "share_claims_le_0.25": _rate(claims, lambda s: s <= 0.25),
        "zero_scored_claims": sum(1 for s in claims if s == 0.0),
        "best_config": best,
        "best_score": configs[best]["overall"] if best else None,
        "scored_claims": len(claims),
        "claim_errors": errors,
    }


def confidence_intervals(scores: ScoreSet, *, seed: int, resamples: int) -> dict[str, Any]:
    """Bootstrap CI (over papers) of every configuration's metrics."""
    table: dict[str, dict[str, Any]] = {}
    for name in scores.configs:
        table[name] = {}
        for metric in METRICS:
            values = list(paper_values(scores, name, metric).values())
            interval = stats.mean_ci(values, f"ci/{name}/{metric}", seed=seed, resamples=resamples)
            table[name][metric] = interval.model_dump() if interval else None
    return {"level": stats.DEFAULT_LEVEL, "resamples": resamples, "seed": seed,
            "unit": "paper", "configs": table}


def _scaffold_pairs(scores: ScoreSet, model: str) -> list[tuple[str, str]]:
    """(config_a, config_b) for each pair of scaffolds that ran `model`.

    Every pair is oriented by the scaffolds' first appearance in configs.json, so that A - B
    means the same thing for every model and the pairs of all models can be pooled.
    """
    rank = {s: i for i, s in enumerate(dict.fromkeys(c.scaffold for c in scores.configs.values()))}
    of_model = sorted((n for n, info in scores.configs.items() if info.model == model),
                      key=lambda n: rank[scores.configs[n].scaffold])
    return [(a, b) for i, a in enumerate(of_model) for b in of_model[i + 1:]
            if scores.configs[a].scaffold != scores.configs[b].scaffold]


def _paired_metric(scores: ScoreSet, pairs: list[tuple[str, str]], metric: str, key: str,
                   *, seed: int, resamples: int) -> dict[str, Any] | None:
    """Pool the (paper, model) pairs of several config pairs and compare them, paired."""
    left, right = [], []
    for a, b in pairs:
        va, vb = paper_values(scores, a, metric), paper_values(scores, b, metric)
        common = sorted(va.keys() & vb.keys())
        left += [va[p] for p in common]
        right += [vb[p] for p in common]
    diff = stats.paired_difference(left, right, key, seed=seed, resamples=resamples)
    return diff.model_dump() if diff else None


def paired_comparisons(scores: ScoreSet, *, seed: int, resamples: int) -> list[dict[str, Any]]:
    """Scaffold A vs B with the same model on the same papers; also pooled over all models.

    The pooled comparison resamples (model, paper) pairs; per model, papers are resampled.
    """
    models = list(dict.fromkeys(info.model for info in scores.configs.values()))
    by_scaffolds: dict[tuple[str, str], list[tuple[str, str]]] = {}
    entries = []
    for model in models:
        for a, b in _scaffold_pairs(scores, model):
            sa, sb = scores.configs[a].scaffold, scores.configs[b].scaffold
            by_scaffolds.setdefault((sa, sb), []).append((a, b))
            entries.append(_comparison(scores, model, sa, sb, [(a, b)], seed, resamples))
    if len(models) > 1:
        for (sa, sb), pairs in by_scaffolds.items():
            if len(pairs) > 1:
                entries.append(_comparison(scores, "all models", sa, sb, pairs, seed, resamples))
    return entries


def _comparison(scores: ScoreSet, model: str, sa: str, sb: str, pairs: list[tuple[str, str]],
                seed: int, resamples: int) -> dict[str, Any]:
    metrics = {
        m: _paired_metric(scores, pairs, m, f"paired/{model}/{sa}/{sb}/{m}",
                          seed=seed, resamples=resamples)
        for m in METRICS
    }
    n = metrics["overall"]["n"] if metrics["overall"] else 0
    return {"model": model, "scaffold_a": sa, "scaffold_b": sb,
            "configs": [list(pair) for pair in pairs], "n_pairs": n, "metrics": metrics}


def score_distribution(scores: ScoreSet) -> dict[str, dict[str, dict[str, int]]]:
    """Per configuration and dimension: how many claims got each level, and how many failed."""
    counts: dict[str, dict[str, Counter[str]]] = {
        c: {d: Counter() for d in DIMENSIONS} for c in scores.configs
    }
    keys = {level: key for level, key in zip(SCORE_LEVELS, LEVEL_KEYS, strict=True)}
    for row in scores.claims:
        key = "error" if row.score is None else keys[row.score]
        counts[row.config].setdefault(row.dimension, Counter())[key] += 1
    return {c: {d: {k: counter[k] for k in (*LEVEL_KEYS, "error")} for d, counter in dims.items()}
            for c, dims in counts.items()}


def error_summary(scores: ScoreSet) -> dict[str, Any]:
    """Failed judgements: totals, per configuration and dimension, and the runs that had them."""
    runs = []
    by_config = {c: dict.fromkeys(DIMENSIONS, 0) for c in scores.configs}
    for config, score in scores.iter_runs():
        failed = [(str(d), v) for d, v in score.verdicts() if v.score is None]
        for dim, _ in failed:
            by_config[config][dim] = by_config[config].get(dim, 0) + 1
        if failed or score.overall_score is None:
            runs.append({"config": config, "paper_id": score.paper_id, "errors": len(failed),
                         "unscored": score.overall_score is None,
                         "first_error": failed[0][1].error if failed else None})
    return {"claims": sum(sum(d.values()) for d in by_config.values()),
            "runs_with_errors": len(runs), "by_config": by_config, "runs": runs}


def run_table(scores: ScoreSet) -> dict[str, dict[str, dict[str, Any]]]:
    """Every run's metrics and error count (the data behind the distribution plots)."""
    return {
        config: {
            paper_id: {**{m: run_value(score, m) for m in METRICS}, "errors": score.errors}
            for paper_id, score in papers.items()
        }
        for config, papers in scores.runs.items()
    }


# ---------------------------------------------------------------- extra sections


class Table(BaseModel):
    """A display table: formatted cells, shared by the Markdown and HTML renderers."""

    model_config = ConfigDict(frozen=True)

    id: str
    title: str
    columns: list[str]
    rows: list[list[str]]
    note: str = ""


@dataclass(frozen=True)
class Section:
    """An optional report section: `build` returns its JSON data (None: section absent) and
    `tables` turns that data into display tables. An `opt_in` section is built only on request
    (it costs seconds on the full release)."""

    title: str
    build: Callable[[ScoreSet], dict[str, Any] | None]
    tables: Callable[[dict[str, Any]], list[Table]]
    opt_in: bool = False


def failure_categories(scores: ScoreSet) -> dict[str, Any] | None:
    """Distribution of verdicts' failure_category per configuration and dimension, if any."""
    counts: dict[str, dict[str, Counter[str]]] = {}
    for row in scores.claims:
        if row.category is not None:
            cell = counts.setdefault(row.config, {}).setdefault(row.dimension, Counter())
            cell[row.category] += 1
    if not counts:
        return None
    return {c: {d: dict(sorted(counter.items())) for d, counter in sorted(dims.items())}
            for c, dims in counts.items()}


def _failure_tables(data: dict[str, Any]) -> list[Table]:
    categories = sorted({cat for dims in data.values() for cell in dims.values() for cat in cell})
    rows = [[config, dim, *[str(cell.get(cat, 0)) for cat in categories]]
            for config, dims in data.items() for dim, cell in dims.items()]
    return [Table(id="failure-categories", title="Failure categories per configuration and "
                  "dimension (claims)", columns=["config", "dimension", *categories], rows=rows)]


def failure_taxonomy(scores: ScoreSet) -> dict[str, Any] | None:
    """Category of every low claim (≤ 0.25) per configuration and dimension, and the zero-scored
    claims' distribution against the published one.

    A verdict's own category is used when it has one (our judges set it from their checks);
    otherwise it is read from the judge's reasoning, which is all an official file offers.
    """
    per_config: dict[str, dict[str, Counter[str]]] = {}
    rows: list[tuple[str, str, float, str]] = []
    for config, dim, verdict in scores.iter_verdicts():
        if verdict.score is None or verdict.score > taxonomy.LOW:
            continue
        category = verdict.failure_category or taxonomy.classify_verdict(verdict, dim)
        cell = per_config.setdefault(config, {}).setdefault(dim, Counter())
        cell[str(category)] += 1
        rows.append((config, dim, verdict.score, verdict.judge_reasoning))
    if not rows:
        return None
    return {"per_config": {c: {d: dict(sorted(n.items())) for d, n in sorted(dims.items())}
                           for c, dims in per_config.items()},
            "comparison": taxonomy.comparison(rows)}


def _taxonomy_tables(data: dict[str, Any]) -> list[Table]:
    tables = _failure_tables(data["per_config"])
    compared = data["comparison"]
    rows = [[d["against"], d["item"], fmt(d["ours"]), fmt(d["theirs"]), fmt(d["delta"])]
            for d in compared["differences"]]
    tables.append(Table(
        id="taxonomy-comparison", rows=rows, note=compared["explanation"],
        title=f"Zero-scored claims ({compared['zero']['n']:,}) and low claims "
              f"({compared['low']['n']:,}): our reading against the published shares",
        columns=["compared with", "category or mode", "ours", "published", "difference"]))
    return tables


def _usage(scores: ScoreSet) -> dict[str, Any] | None:
    from sabench.benchmark.report_runs import usage_section

    return usage_section(scores)


def _usage_tables(data: dict[str, Any]) -> list[Table]:
    from sabench.benchmark.report_runs import usage_tables

    return usage_tables(data)


# Extra sections, keyed by their JSON name: a new analysis is one entry here. A section whose
# builder returns None is left out of every format.
SECTIONS: dict[str, Section] = {
    "usage": Section("Usage and cost", _usage, _usage_tables),
    "failure_categories": Section("Failure categories", failure_categories, _failure_tables),
    "failure_taxonomy": Section("Failure taxonomy", failure_taxonomy, _taxonomy_tables,
                                opt_in=True),
}


# ---------------------------------------------------------------- the report


def build_report(scores: ScoreSet, *, seed: int = stats.DEFAULT_SEED,
                 resamples: int = stats.DEFAULT_RESAMPLES,
                 extra: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Every table of the report as a JSON-ready dict with full-precision numbers.

    Args:
        scores: the loaded SCORES_DIR.
        seed: base seed of the bootstrap (results are deterministic for a seed).
        resamples: bootstrap resamples per interval.
        extra: names of opt-in SECTIONS to build as well (e.g. `failure_taxonomy`).
    """
    configs = config_table(scores)
    report: dict[str, Any] = {
        "configs": configs,
        "marginals": marginals(configs),
        "mean_row": _mean_of_rows(list(configs.values())),
        "dimension_statistics": dimension_statistics(scores),
        "headline": headline(scores, configs),
        "confidence_intervals": confidence_intervals(scores, seed=seed, resamples=resamples),
        "paired_comparisons": paired_comparisons(scores, seed=seed, resamples=resamples),
        "errors": error_summary(scores),
        "score_distribution": score_distribution(scores),
        "runs": run_table(scores),
    }
    for name, section in SECTIONS.items():
        if section.opt_in and name not in extra:
            continue
        data = section.build(scores)
        if data is not None:
            report[name] = data
    report["meta"] = _meta(scores)
    return report


def _meta(scores: ScoreSet) -> dict[str, Any]:
    judges = Counter(score.judge_name or "unknown" for _, score in scores.iter_runs())
    return {"scores_dir": str(scores.root), "n_configs": len(scores.configs),
            "n_runs": sum(len(p) for p in scores.runs.values()),
            "n_papers": len({s.paper_id for _, s in scores.iter_runs()}),
            "judges": dict(sorted(judges.items())), "metrics": list(METRICS),
            "sections": [name for name in SECTIONS],
            "recorded_score_mismatches": recorded_score_mismatches(scores)}


def recorded_score_mismatches(scores: ScoreSet, tolerance: float = 5e-4) -> list[dict[str, Any]]:
    """Runs whose recorded dimension score is not the mean of their judged claims.

    The tables use the recorded scores (as the published tables did; official files round them
    to 4 decimals, well within `tolerance`), so a hand-edited or truncated file shows up here.
    """
    found = []
    for config, score in scores.iter_runs():
        for dim, result in score.dimensions.items():
            judged = [v.score for v in result.claims if v.score is not None]
            recomputed = fmean(judged) if judged else None
            if (recomputed is None) != (result.score is None) or (
                    recomputed is not None and abs(recomputed - result.score) > tolerance):
                found.append({"config": config, "paper_id": score.paper_id, "dimension": str(dim),
                              "recorded": result.score, "from_claims": recomputed})
    return found


def make_report(scores_dir: Path, **options: Any) -> dict[str, Any]:
    """Load a SCORES_DIR and build its report."""
    return build_report(load_scores(scores_dir), **options)


# ---------------------------------------------------------------- display tables

NA = "–"


def fmt(value: Any) -> str:
    """A cell: numbers at 3 decimals (half up), counts as integers, nothing as a dash."""
    if value is None:
        return NA
    if isinstance(value, int):  # bool included
        return str(value)
    if isinstance(value, float):
        return f"{round_half_up(value, 3):.3f}"
    return str(value)


def _interval(cell: dict[str, Any] | None, centre: str = "mean") -> str:
    if cell is None:
        return NA
    return f"{fmt(cell[centre])} [{fmt(cell['low'])}, {fmt(cell['high'])}]"


def _matrix_table(report: dict[str, Any]) -> Table:
    errors = report["errors"]["by_config"]
    rows = [[name, row["scaffold"], row["model"], *[fmt(row[m]) for m in METRICS],
             fmt(row["n_papers"]), fmt(sum(errors[name].values()))]
            for name, row in report["configs"].items()]
    rows.append(["mean", "", "", *[fmt(report["mean_row"][m]) for m in METRICS], "", ""])
    return Table(id="configs", title="Generator × scaffold scores (mean over papers)",
                 columns=["config", "scaffold", "model", *METRICS, "papers", "claim errors"],
                 rows=rows, note="Claims whose judgement failed are left out of every mean and "
                 "counted under 'claim errors'.")


def _pivot_table(report: dict[str, Any]) -> Table:
    """Overall score with models as rows and scaffolds as columns, marginals at the edges."""
    model_marg, scaffold_marg = report["marginals"]["model"], report["marginals"]["scaffold"]
    cells: dict[tuple[str, str], list[float]] = {}
    for row in report["configs"].values():
        if row["overall"] is not None:  # several configs may share a pair: show their mean
            cells.setdefault((row["model"], row["scaffold"]), []).append(row["overall"])
    rows = [[model, *[fmt(_mean(cells.get((model, s), []))) for s in scaffold_marg],
             fmt(model_marg[model]["overall"])] for model in model_marg]
    rows.append(["scaffold mean", *[fmt(v["overall"]) for v in scaffold_marg.values()],
                 fmt(report["mean_row"]["overall"])])
    return Table(id="matrix", title="Overall score: model × scaffold",
                 columns=["model", *scaffold_marg, "model mean"], rows=rows)


def _marginal_table(report: dict[str, Any], axis: str) -> Table:
    rows = [[name, *[fmt(values[m]) for m in METRICS]]
            for name, values in report["marginals"][axis].items()]
    return Table(id=f"marginals-{axis}", title=f"Marginal means by {axis}",
                 columns=[axis, *METRICS], rows=rows)


def _dimension_table(report: dict[str, Any]) -> Table:
    keys = ("mean", "median", "share_ge_0.5", "full_mark_rate", "zero_rate", "n_claims", "errors")
    rows = [[dim, *[fmt(values[k]) for k in keys]]
            for dim, values in report["dimension_statistics"].items()]
    return Table(id="dimension-statistics", title="Dimension statistics",
                 columns=["dimension", "mean", "median", "share ≥ 0.5", "full-mark rate",
                          "zero rate", "claims scored", "claim errors"], rows=rows,
                 note="Mean and median over run-level dimension scores; rates over claim scores.")


def _headline_table(report: dict[str, Any]) -> Table:
    head = report["headline"]
    labels = {"overall_mean": "overall mean", "overall_median": "overall median",
              "share_claims_le_0.25": "share of claims ≤ 0.25",
              "zero_scored_claims": "zero-scored claims", "best_config": "best configuration",
              "best_score": "best score", "scored_claims": "claims scored",
              "claim_errors": "claim errors"}
    return Table(id="headline", title="Headline figures", columns=["figure", "value"],
                 rows=[[label, fmt(head[key])] for key, label in labels.items()])


def _ci_table(report: dict[str, Any]) -> Table:
    ci = report["confidence_intervals"]
    rows = [[name, *[_interval(cells[m]) for m in METRICS]]
            for name, cells in ci["configs"].items()]
    return Table(id="confidence-intervals",
                 title=f"{ci['level']:.0%} bootstrap confidence intervals over papers",
                 columns=["config", *METRICS], rows=rows,
                 note=f"Percentile bootstrap, {ci['resamples']} resamples of papers, seed "
                 f"{ci['seed']}.")


def _paired_table(report: dict[str, Any]) -> Table:
    rows = []
    for entry in report["paired_comparisons"]:
        overall = entry["metrics"]["overall"]
        tally = (f"{overall['wins']}/{overall['losses']}/{overall['ties']}" if overall else NA)
        rows.append([entry["model"], f"{entry['scaffold_a']} − {entry['scaffold_b']}",
                     fmt(entry["n_pairs"]),
                     *[_interval(entry["metrics"][m], "mean_diff") for m in METRICS], tally])
    return Table(id="paired-comparisons", title="Paired scaffold comparisons (same model, "
                 "same papers)", columns=["model", "difference", "pairs", *METRICS,
                                          "win/loss/tie"], rows=rows,
                 note="Mean per-paper difference with a paired bootstrap 95% interval."
                 if rows else "No model ran under two scaffolds: nothing to compare.")


def _distribution_table(report: dict[str, Any]) -> Table:
    rows = [[config, dim, *[fmt(cell[k]) for k in (*LEVEL_KEYS, "error")]]
            for config, dims in report["score_distribution"].items()
            for dim, cell in dims.items()]
    return Table(id="score-distribution", title="Claim scores per level (counts)",
                 columns=["config", "dimension", *LEVEL_KEYS, "error"], rows=rows)


def _errors_table(report: dict[str, Any]) -> Table:
    errors = report["errors"]
    rows = [[r["config"], r["paper_id"], fmt(r["errors"]), "yes" if r["unscored"] else "no",
             r["first_error"] or ""] for r in errors["runs"]]
    note = (f"{errors['claims']} claim judgements failed in {errors['runs_with_errors']} runs; "
            "they are excluded from every score, never counted as 0." if rows
            else "No judgement failed.")
    mismatches = report["meta"]["recorded_score_mismatches"]
    if mismatches:
        note += (f" {len(mismatches)} recorded dimension scores differ from the mean of their "
                 "claims (meta.recorded_score_mismatches in the JSON report); tables use the "
                 "recorded scores.")
    return Table(id="errors", title="Failed judgements", rows=rows, note=note,
                 columns=["config", "paper", "claim errors", "run unscored", "first error"])


def report_tables(report: dict[str, Any]) -> list[tuple[str, list[Table]]]:
    """The report's display tables, grouped under headings, in reading order."""
    groups = [
        ("Scores", [_matrix_table(report), _pivot_table(report)]),
        ("Marginal means", [_marginal_table(report, "model"), _marginal_table(report, "scaffold")]),
        ("Dimensions and headline", [_dimension_table(report), _headline_table(report)]),
        ("Uncertainty", [_ci_table(report), _paired_table(report)]),
        ("Distributions and errors", [_distribution_table(report), _errors_table(report)]),
    ]
    for name, section in SECTIONS.items():
        if name in report:
            groups.append((section.title, section.tables(report[name])))
    return groups


def render_markdown(report: dict[str, Any]) -> str:
    """The report as Markdown: one pipe table per display table."""
    meta = report["meta"]
    lines = ["# SA-Bench report", "",
             f"{meta['n_runs']} runs: {meta['n_configs']} configurations × {meta['n_papers']} "
             f"papers, from `{meta['scores_dir']}`.", ""]
    for heading, tables in report_tables(report):
        lines += [f"## {heading}", ""]
        for table in tables:
            lines += _markdown_table(table)
    return "\n".join(lines)


def _markdown_table(table: Table) -> list[str]:
    def row(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |"

    lines = [f"### {table.title}", "", row(table.columns), row(["---"] * len(table.columns))]
    lines += [row(cells) for cells in table.rows]
    if table.note:
        lines += ["", table.note]
    return [*lines, ""]
