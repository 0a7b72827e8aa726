"""Runs in the report: usage and cost per configuration, and a page per run.

`sabench run` leaves beside the SCORES_DIR a `records/` folder (one JSON record per run: status,
stop reason, usage, timings) and a `runs/` folder (each run's repository). When they are there:

* the report gains the section "Usage and cost": per configuration the runs by status, the
  stop reasons, model calls, tokens in/out/cached, dollars (the judge's apart) and time, and
  one row per run — failed runs included, since they have a record but no score;
* `sabench report ... --format html -o PATH` also writes `PATH-runs/` (next to PATH, named
  after it): an index of the runs and one page per run with every claim's verdict, reasoning
  and evidence (file:line with the code shown), and, for a scaffold that checks its own claims
  (alignment-first), each of its claims' history across repair rounds. Pages are static HTML
  with inline styles and relative links: the folder opens from disk.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import jinja2

from sabench.benchmark.report import ScoreSet, Table, fmt
from sabench.verifiers.types import PaperScore, ResultFileError

RECORDS, RUNS = "records", "runs"
TEMPLATES = Path(__file__).parent / "templates"
#: Lines of code shown around a piece of evidence, and at most this many per piece.
CONTEXT_LINES, MAX_LINES = 2, 40
#: Where a scaffold that checks its own claims leaves their history (in the run's folder).
ALIGNMENT_FILES = ("repo/alignment_report.json",)
USAGE_KEYS = ("calls", "input_tokens", "output_tokens", "cached_tokens", "cache_write_tokens",
              "dollars", "unpriced_calls")


# ------------------------------------------------------------------------------ records


def load_records(scores_dir: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """config -> paper id -> run record, from `records/` beside the SCORES_DIR (empty when
    there is none: score folders made by other tools have no records)."""
    folder = Path(scores_dir).parent / RECORDS
    records: dict[str, dict[str, dict[str, Any]]] = {}
    if not folder.is_dir():
        return records
    for path in sorted(folder.glob("*/*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {"status": "error", "error": f"{path}: unreadable record"}
        records.setdefault(path.parent.name, {})[path.stem] = data
    return records


def active_seconds(record: dict[str, Any]) -> float:
    """The run's time in the evaluation graph: the scaffold's active time (summed over
    resumes) plus sandbox start, collection and scoring."""
    timings = record.get("timings") or {}
    return sum(float(timings.get(k) or 0.0)
               for k in ("scaffold_s", "prepare_s", "collect_s", "score_s"))


def run_row(config: str, paper: str, record: dict[str, Any]) -> dict[str, Any]:
    usage = record.get("usage") or {}
    return {"config": config, "paper_id": paper, "status": record.get("status"),
            "stop_reason": record.get("stop_reason"), "error": record.get("error"),
            "requests": record.get("requests"), "overall_score": record.get("overall_score"),
            **{k: usage.get(k, 0) for k in USAGE_KEYS},
            "judge_dollars": (record.get("judge_usage") or {}).get("dollars", 0.0),
            "seconds": round(active_seconds(record), 3)}


def config_usage(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Sums and counts over one configuration's runs."""
    return {"runs": len(rows),
            "status": dict(sorted(Counter(str(r["status"]) for r in rows).items())),
            "stop_reasons": dict(Counter(str(r["stop_reason"]) for r in rows).most_common()),
            **{k: sum(r[k] or 0 for r in rows) for k in (*USAGE_KEYS, "judge_dollars")},
            "requests": sum(r["requests"] or 0 for r in rows),
            "seconds": round(sum(r["seconds"] for r in rows), 3),
            "mean_seconds": round(sum(r["seconds"] for r in rows) / len(rows), 3)}


def usage_section(scores: ScoreSet) -> dict[str, Any] | None:
    """The report section "Usage and cost" (None: no records beside this SCORES_DIR)."""
    records = load_records(scores.root)
    if not records:
        return None
    runs = [run_row(config, paper, record)
            for config, papers in records.items() for paper, record in papers.items()]
    configs = {config: config_usage([r for r in runs if r["config"] == config])
               for config in records}
    return {"records_dir": str(scores.root.parent / RECORDS), "configs": configs, "runs": runs}


def usage_tables(data: dict[str, Any]) -> list[Table]:
    rows = [[config, fmt(c["runs"]), counts(c["status"]), counts(c["stop_reasons"]),
             fmt(c["calls"]), f"{c['input_tokens']:,}", f"{c['output_tokens']:,}",
             f"{c['cached_tokens']:,}", money(c["dollars"], c["unpriced_calls"]),
             money(c["judge_dollars"]), f"{c['seconds']:.1f}", f"{c['mean_seconds']:.1f}"]
            for config, c in data["configs"].items()]
    per_config = Table(
        id="usage", title="Usage and cost per configuration", rows=rows,
        columns=["config", "runs", "status", "stop reasons", "model calls", "tokens in",
                 "tokens out", "cached in", "dollars", "judge dollars", "time (s)",
                 "mean time (s)"],
        note="From the run records (failed runs included: they have no score). Time: the "
             "scaffold's active time summed over resumes, plus sandbox start, collection and "
             "scoring. Calls to models missing from the price table are counted as unpriced, "
             "never as $0.")
    run_rows = [[r["config"], r["paper_id"], str(r["status"]), str(r["stop_reason"]),
                 fmt(r["calls"]), f"{r['input_tokens']:,}", f"{r['output_tokens']:,}",
                 money(r["dollars"], r["unpriced_calls"]), f"{r['seconds']:.1f}",
                 fmt(r["overall_score"]), (r["error"] or "")[:160]] for r in data["runs"]]
    per_run = Table(id="run-records", title="Runs", rows=run_rows,
                    columns=["config", "paper", "status", "stop reason", "model calls",
                             "tokens in", "tokens out", "dollars", "time (s)", "overall",
                             "error"])
    return [per_config, per_run]


def counts(counter: dict[str, int]) -> str:
    return ", ".join(f"{name} {count}" for name, count in counter.items())


def money(dollars: float, unpriced: int = 0) -> str:
    return f"${dollars:,.4f}" + (f" (+{unpriced} unpriced calls)" if unpriced else "")


# ------------------------------------------------------------------------------ run pages


def pages_folder(output: Path) -> Path:
    """Where the run pages of a report written to `output` go: `<stem>-runs/` beside it."""
    return output.with_name(f"{output.stem}-runs")


def write_run_pages(scores_dir: Path, output: Path, title: str = "SA-Bench report") -> int:
    """Write the index and one page per run beside `output`; returns how many run pages."""
    scores_dir = Path(scores_dir)
    records = load_records(scores_dir)
    folder = pages_folder(output)
    env = environment()
    entries = []
    for config, papers in records.items():
        for paper, record in papers.items():
            page = run_page(scores_dir, config, paper, record)
            target = folder / safe_name(config) / f"{safe_name(paper)}.html"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(env.get_template("runs.html.j2").render(
                kind="run", title=f"{config} · {paper}", back=f"../../{output.name}",
                index="../index.html", run=page), encoding="utf-8")
            entries.append({**run_row(config, paper, record),
                            "href": f"{safe_name(config)}/{safe_name(paper)}.html"})
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "index.html").write_text(env.get_template("runs.html.j2").render(
        kind="index", title=f"{title}: runs", back=f"../{output.name}", index="index.html",
        runs=entries), encoding="utf-8")
    return len(entries)


def link_run_pages(html: str, output: Path, pages: int) -> str:
    """The main report with a link to the run index in its navigation bar."""
    link = (f'<nav>\n  <a id="run-pages" href="{pages_folder(output).name}/index.html">'
            f"Runs ({pages} pages)</a>")
    return html.replace("<nav>", link, 1)


def safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)


def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True,
                             lstrip_blocks=True)
    env.filters["fmt"] = fmt
    return env


def run_page(scores_dir: Path, config: str, paper: str,
             record: dict[str, Any]) -> dict[str, Any]:
    """Everything a run page shows."""
    run_dir = scores_dir.parent / RUNS / config / paper
    score = load_score(scores_dir / config / f"{paper}.json")
    texts = claim_texts(record)
    dimensions = []
    if score is not None:
        for dim, result in score.dimensions.items():
            claims = [claim_view(v, texts.get(v.id, ""), run_dir / "repo")
                      for v in result.claims]
            dimensions.append({"name": str(dim), "score": result.score, "claims": claims})
    return {"config": config, "paper_id": paper, "record": record,
            "row": run_row(config, paper, record), "score": score,
            "dimensions": dimensions, "alignment": alignment_history(run_dir),
            "trace": summarize_trace(record.get("trace") or [])}


def load_score(path: Path) -> PaperScore | None:
    if not path.is_file():
        return None
    try:
        return PaperScore.load(path)
    except ResultFileError:
        return None


def claim_texts(record: dict[str, Any]) -> dict[str, str]:
    """claim id -> claim text, from the paper the run was given (when it is still there)."""
    from sabench.benchmark.dataset import DatasetError, load_paper

    paper_dir = (record.get("runner") or {}).get("paper_dir")
    if not paper_dir or not Path(paper_dir).is_dir():
        return {}
    try:
        paper = load_paper(Path(paper_dir), with_markdown=False)
    except DatasetError:
        return {}
    return {claim.id: claim.text for claim in paper.claims}


def claim_view(verdict: Any, text: str, repo: Path) -> dict[str, Any]:
    return {"id": verdict.id, "text": text, "score": verdict.score, "error": verdict.error,
            "category": verdict.failure_category and str(verdict.failure_category),
            "reasoning": verdict.judge_reasoning, "judge": verdict.judge,
            "evidence": [evidence_view(ref, repo) for ref in verdict.evidence_refs]}


REF = re.compile(r"^(?P<file>.+?):(?P<start>\d+)(?:-(?P<end>\d+))?$")


def evidence_view(ref: str, repo: Path) -> dict[str, Any]:
    """A `file:start-end` reference with the cited lines (and a little context) from the
    run's repository; files outside the repository are never read."""
    match = REF.match(ref.strip())
    if match is None:
        return {"ref": ref, "lines": [], "missing": "not a file:line reference"}
    start = int(match["start"])
    end = max(int(match["end"] or start), start)
    path = (repo / match["file"]).resolve()
    root = repo.resolve()
    if not path.is_relative_to(root) or not path.is_file():
        return {"ref": ref, "lines": [], "missing": "not in the run's repository"}
    text = path.read_text(encoding="utf-8", errors="replace").splitlines()
    first, last = max(start - CONTEXT_LINES, 1), min(end + CONTEXT_LINES, len(text))
    last = min(last, first + MAX_LINES - 1)
    lines = [{"number": n, "text": text[n - 1], "cited": start <= n <= end}
             for n in range(first, last + 1)]
    return {"ref": ref, "lines": lines, "missing": "" if lines else "past the file's end"}


def alignment_history(run_dir: Path) -> dict[str, Any] | None:
    """A self-checking scaffold's own claims and their verdict per check round, when it left
    them in its repository (alignment-first's `alignment_report.json`: `claims[]` with
    `passed_per_round`, plus `checker`, `rounds` and `oracle_claims`)."""
    for name in ALIGNMENT_FILES:
        path = run_dir / name
        if not path.is_file():
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict):
            return None
        claims = [claim_history(c) for c in data.get("claims") or [] if isinstance(c, dict)]
        return {"file": name, "checker": data.get("checker"), "rounds": data.get("rounds"),
                "oracle": bool(data.get("oracle_claims")), "claims": claims,
                "checks": max((len(c["rounds"]) for c in claims), default=0)}
    return None


def claim_history(claim: dict[str, Any]) -> dict[str, Any]:
    passed = claim.get("passed_per_round") or []
    why = claim.get("failed_because_per_round") or []
    return {"id": str(claim.get("id", "")), "text": str(claim.get("text") or ""),
            "dimension": str(claim.get("dimension") or ""),
            "location": str(claim.get("location") or ""),
            "rounds": [bool(p) for p in passed if isinstance(p, bool | int)],
            "why": ["; ".join(str(r) for r in w) if isinstance(w, list) else "" for w in why]}


def summarize_trace(trace: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per node: how many steps, model calls, tokens and seconds."""
    nodes: dict[str, dict[str, Any]] = {}
    for entry in trace:
        name = str(entry.get("tool") or entry.get("node") or "?")
        kind = str(entry.get("kind") or "")
        row = nodes.setdefault(f"{kind}:{name}", {"kind": kind, "name": name, "count": 0,
                                                  "seconds": 0.0, "input_tokens": 0,
                                                  "output_tokens": 0})
        row["count"] += 1
        row["seconds"] += float(entry.get("seconds") or 0.0)
        row["input_tokens"] += int(entry.get("input_tokens") or 0)
        row["output_tokens"] += int(entry.get("output_tokens") or 0)
    return list(nodes.values())
