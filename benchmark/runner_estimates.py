"""Token and dollar estimates of a matrix before it runs (`sabench run --dry-run`).

They come from recorded usage: the SA-Bench release's transcripts
(`transcripts/<config>/<paper>/`, the development split), read by what each folder holds:

* BasicAgent (`messages.jsonl`, `meta.json`): the usage totals and per-step token counts.
* PaperCoder (`planning_response.json`, `*_simple_analysis_response.json`): the planning and
  analysis responses' usage. The coding stage was not recorded; it is estimated from the
  released repository (`runs/<config>.tar.gz` beside the transcripts): one call per file whose
  prompt holds the analysis context plus every file written before it (on average half the
  code), and whose reply is the file (characters / 4 tokens).
* OpenHands (`meta.json`: iterations only): imputed from BasicAgent's per-step usage on the same
  paper (same model when recorded, else every model), a line fitted to input tokens per step
  and extended to OpenHands' recorded iterations.

A cell (model × scaffold × paper) takes the first estimate that exists: the recording of the
same model, scaffold and paper; the mean over the model's other recorded papers with that
scaffold; the mean over the scaffold's recordings with any model; else none (a scaffold never
recorded, such as alignment-first). Every estimate says which (`basis`). Dollars use the price
table (`agent.usage.PRICES`) with the spec's price overrides; a model without a price has
`dollars: None`, never $0.
"""

from __future__ import annotations

import json
import re
import tarfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean
from typing import Any

from sabench.benchmark.matrix import Cell, Matrix

CHARS_PER_TOKEN = 4
TEXT_SUFFIXES = (".py", ".md", ".txt", ".sh", ".json", ".toml", ".cfg", ".ipynb")


@dataclass(frozen=True)
class Usage:
    """Tokens of one (recorded or estimated) run."""

    input_tokens: float = 0.0
    output_tokens: float = 0.0
    cached_tokens: float = 0.0
    calls: float = 0.0
    estimated_part: str = ""  # what of it is not a recording

    def scaled(self, factor: float) -> Usage:
        return Usage(self.input_tokens * factor, self.output_tokens * factor,
                     self.cached_tokens * factor, self.calls * factor, self.estimated_part)


@dataclass
class Recordings:
    """Recorded usage by (scaffold, normalised model name, paper id)."""

    runs: dict[tuple[str, str, str], Usage] = field(default_factory=dict)
    steps: dict[tuple[str, str], list[tuple[int, int]]] = field(default_factory=dict)
    iterations: dict[tuple[str, str], int] = field(default_factory=dict)

    def usage(self, scaffold: str, model: str, paper: str) -> Usage | None:
        return self.runs.get((scaffold, model, paper))


# ------------------------------------------------------------------------------ reading


def normalise(model: str) -> str:
    """`gpt-4o-2024-11-20` -> `gpt-4o`, `claude-sonnet-4.6` -> `claude-sonnet-4-6`."""
    name = model.rsplit(":", 1)[-1].rsplit("/", 1)[-1].lower().replace(".", "-")
    return re.sub(r"-\d{4}-\d{2}-\d{2}$", "", name)


def read_recordings(transcripts: Path) -> Recordings:
    """Every usable recording under `transcripts/<config>/<paper>/`."""
    found = Recordings()
    if not transcripts.is_dir():
        return found
    for config in sorted(p for p in transcripts.iterdir() if p.is_dir()):
        code = released_code_tokens(transcripts.parent / "runs" / f"{config.name}.tar.gz")
        for paper in sorted(p for p in config.iterdir() if p.is_dir()):
            read_paper(found, paper, code.get(paper.name))
    impute_openhands(found)
    return found


def read_paper(found: Recordings, folder: Path, code: list[int] | None) -> None:
    if (folder / "messages.jsonl").is_file():
        read_basic(found, folder)
    elif (folder / "planning_response.json").is_file():
        read_papercoder(found, folder, code)
    elif (folder / "meta.json").is_file():
        meta = load(folder / "meta.json")
        if meta.get("model") and meta.get("iterations"):
            found.iterations[(normalise(meta["model"]), folder.name)] = int(meta["iterations"])


def read_basic(found: Recordings, folder: Path) -> None:
    meta = load(folder / "meta.json")
    usage, model = meta.get("usage") or {}, normalise(str(meta.get("model_name") or ""))
    steps = [(int(s.get("input_tokens") or 0), int(s.get("output_tokens") or 0))
             for s in usage.get("step_timings") or []]
    if not model or not usage.get("total_input_tokens"):
        return
    found.runs[("basic", model, folder.name)] = Usage(
        usage["total_input_tokens"], usage.get("total_output_tokens") or 0, 0,
        usage.get("steps") or len(steps))
    found.steps[(model, folder.name)] = steps


def read_papercoder(found: Recordings, folder: Path, code: list[int] | None) -> None:
    planning = load_list(folder / "planning_response.json")
    analyses = [load_list(p) for p in sorted(folder.glob("*_simple_analysis_response.json"))]
    responses = planning + [r for group in analyses for r in group]
    if not responses:
        return
    model = normalise(str(responses[0].get("model") or ""))
    recorded = [response_usage(r) for r in responses]
    total = Usage(sum(u[0] for u in recorded), sum(u[1] for u in recorded),
                  sum(u[2] for u in recorded), len(recorded))
    per_file = [response_usage(group[0]) for group in analyses if group]
    found.runs[("papercoder", model, folder.name)] = add(total, coding_stage(per_file, code))


def response_usage(response: dict[str, Any]) -> tuple[int, int, int]:
    usage = response.get("usage") or {}
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
    return (int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0),
            int(cached))


def coding_stage(analyses: list[tuple[int, int, int]], code: list[int] | None) -> Usage:
    """PaperCoder's unrecorded coding calls: one per analysed file, each prompt the analysis
    context plus that file's analysis plus the code written so far (half of it on average)."""
    if not analyses:
        return Usage()
    files = len(analyses)
    code_tokens = sum(code) if code else fmean(out for _, out, _ in analyses) * files
    prompt = sum(inp + out for inp, out, _ in analyses) + code_tokens * (files - 1) / 2
    basis = "coding stage estimated from " + ("the released files" if code
                                              else "the analyses' length")
    return Usage(prompt, code_tokens, 0, files, basis)


def released_code_tokens(tarball: Path) -> dict[str, list[int]]:
    """paper id -> estimated tokens of each released code file (YAML excluded, as PaperCoder
    writes config.yaml without a model call)."""
    if not tarball.is_file():
        return {}
    sizes: dict[str, list[int]] = {}
    with tarfile.open(tarball) as archive:
        for member in archive:
            parts = member.name.split("/")
            if member.isfile() and len(parts) > 3 and member.name.endswith(TEXT_SUFFIXES):
                sizes.setdefault(parts[1], []).append(member.size // CHARS_PER_TOKEN)
    return sizes


def impute_openhands(found: Recordings) -> None:
    """OpenHands usage from BasicAgent's per-step usage, extended to OpenHands' iterations."""
    for (model, paper), iterations in found.iterations.items():
        same = found.steps.get((model, paper))
        pools = [same] if same else [s for (_, p), s in found.steps.items() if p == paper]
        fits = [step_fit(steps, iterations) for steps in pools if len(steps) >= 2]
        if fits:
            found.runs[("openhands", model, paper)] = Usage(
                fmean(f[0] for f in fits), fmean(f[1] for f in fits), 0, iterations,
                "imputed from BasicAgent's per-step usage"
                + ("" if same else " (other models)") + f" over {iterations} iterations")


def step_fit(steps: list[tuple[int, int]], calls: int) -> tuple[float, float]:
    """Input and output tokens of `calls` steps, from a least-squares line through the
    recorded input tokens per step (the context grows) and the mean output per step."""
    xs = range(1, len(steps) + 1)
    mean_x, mean_y = fmean(xs), fmean(s[0] for s in steps)
    var = sum((x - mean_x) ** 2 for x in xs)
    slope = sum((x - mean_x) * (s[0] - mean_y) for x, s in zip(xs, steps, strict=True)) / var
    intercept = mean_y - slope * mean_x
    total_in = sum(max(intercept + slope * k, 0.0) for k in range(1, calls + 1))
    return total_in, fmean(s[1] for s in steps) * calls


def add(a: Usage, b: Usage) -> Usage:
    return Usage(a.input_tokens + b.input_tokens, a.output_tokens + b.output_tokens,
                 a.cached_tokens + b.cached_tokens, a.calls + b.calls,
                 b.estimated_part or a.estimated_part)


def load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def load_list(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    items = data if isinstance(data, list) else [data]
    return [item for item in items if isinstance(item, dict)]


# ------------------------------------------------------------------------------ estimating


@dataclass(frozen=True)
class Estimate:
    """The estimate of one cell."""

    input_tokens: int | None
    output_tokens: int | None
    cached_tokens: int | None
    calls: int | None
    dollars: float | None
    basis: str
    source: str = "none"  # recorded | model-mean | scaffold-mean | scripted | none

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def estimate_usage(recordings: Recordings, scaffold: str, model: str, paper: str,
                   *, withhold: bool = False) -> tuple[Usage | None, str, str]:
    """A cell's usage and its basis (`withhold`: ignore the cell's own recording, to measure
    how good the fallbacks are)."""
    model = normalise(model)
    own = None if withhold else recordings.usage(scaffold, model, paper)
    if own is not None:
        return own, "recorded" + (f"; {own.estimated_part}" if own.estimated_part else ""), \
            "recorded"
    same = [u for (s, m, p), u in recordings.runs.items()
            if s == scaffold and m == model and p != paper]
    if same:
        return mean_usage(same), f"mean of {len(same)} recorded papers, same model and " \
                                 "scaffold", "model-mean"
    anyone = [u for (s, _, p), u in recordings.runs.items() if s == scaffold and p != paper]
    if anyone:
        return mean_usage(anyone), f"mean of {len(anyone)} recorded runs of {scaffold}, " \
                                   "other models", "scaffold-mean"
    return None, f"no recorded usage of {scaffold}", "none"


def mean_usage(usages: list[Usage]) -> Usage:
    return Usage(fmean(u.input_tokens for u in usages), fmean(u.output_tokens for u in usages),
                 fmean(u.cached_tokens for u in usages), fmean(u.calls for u in usages))


def priced(usage: Usage | None, basis: str, source: str, model: str,
           overrides: dict[str, Any]) -> Estimate:
    from sabench.agent.types import CallUsage, Price
    from sabench.agent.usage import PRICES, dollars_of, price_for

    if usage is None:
        return Estimate(None, None, None, None, None, basis, source)
    table = {**PRICES, **{name: Price(**p) for name, p in overrides.items()}}
    price = price_for(model, table)
    tokens = CallUsage(model=model, input_tokens=round(usage.input_tokens),
                       output_tokens=round(usage.output_tokens),
                       cached_tokens=round(usage.cached_tokens))
    return Estimate(tokens.input_tokens, tokens.output_tokens, tokens.cached_tokens,
                    round(usage.calls), dollars_of(tokens, price), basis, source)


def estimate_cell(recordings: Recordings, cell: Cell) -> Estimate:
    """The estimate of one run of the matrix."""
    from sabench.benchmark.runner import price_overrides

    model = cell.model.model_name
    if cell.model.spec.startswith("scripted:"):
        usage, basis = scripted_usage(Path(model), cell.scaffold.name)
        source = "scripted" if usage is not None else "none"
        model = model_name_of_script(Path(model))
    else:
        usage, basis, source = estimate_usage(recordings, cell.scaffold.name, model,
                                              cell.paper_id)
    return priced(usage, basis, source, model, price_overrides(cell.model))


def scripted_usage(path: Path, scaffold: str) -> tuple[Usage | None, str]:
    """A scripted model's usage: the token counts its replies state, over the scripts named
    after the scaffold (`basic`, `alignment-first plan`, ...), else a catch-all script. A
    reply served several times (`repeat: last`) counts once, so this can be a lower bound."""
    from sabench.agent.scripted import load_script

    scripts = load_script(path).all_scripts()
    chosen = [s for s in scripts if s.name == scaffold or s.name.startswith(f"{scaffold} ")] \
        or [s for s in scripts if s.when.model_dump(exclude_defaults=True) == {}]
    if not chosen:
        return None, f"no script named after {scaffold!r} in {path.name}"
    replies = [r for script in chosen for r in script.replies]
    repeats = any(script.repeat for script in chosen)
    return Usage(sum(r.input_tokens or 0 for r in replies),
                 sum(r.output_tokens or 0 for r in replies),
                 sum(r.cached_tokens for r in replies), len(replies)), \
        f"scripted replies ({len(chosen)} script(s) for {scaffold}: the token counts they " \
        "state" + ("; repeated replies counted once, a lower bound)" if repeats else ")")


def model_name_of_script(path: Path) -> str:
    from sabench.agent.scripted import load_script

    return load_script(path).model_name


def default_transcripts(matrix: Matrix) -> Path:
    """The release's transcripts beside its papers (`<data>/papers`, `<data>/transcripts`)."""
    return matrix.dataset.parent / "transcripts"


def estimate_matrix(matrix: Matrix, transcripts: Path | None = None) -> dict[str, Estimate]:
    """Every run's estimate, by its key (`config/paper`)."""
    recordings = read_recordings(transcripts or default_transcripts(matrix))
    return {cell.key: estimate_cell(recordings, cell) for cell in matrix.cells()}


def totals(estimates: Iterator[Estimate] | list[Estimate]) -> dict[str, Any]:
    """Sums over estimates; `unestimated` counts the runs without one, `unpriced` those
    without a price (their tokens are in the sums, their dollars are not)."""
    items = list(estimates)
    known = [e for e in items if e.input_tokens is not None]
    sources = Counter(e.source for e in items)
    return {"runs": len(items), "unestimated": len(items) - len(known),
            "sources": dict(sorted(sources.items())),
            "unpriced": sum(e.dollars is None for e in known),
            "input_tokens": sum(e.input_tokens or 0 for e in known),
            "output_tokens": sum(e.output_tokens or 0 for e in known),
            "cached_tokens": sum(e.cached_tokens or 0 for e in known),
            "calls": sum(e.calls or 0 for e in known),
            "dollars": sum(e.dollars or 0.0 for e in known)}
