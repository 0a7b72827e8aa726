"""The embedded demo: score the bundled example paper's two reproductions, offline.

`benchmark/demo/` ships, as package data, a small example paper (`papers/smoothlr/`: paper.md,
sau.json, config.yaml in the official layout) and two reproductions of it: `repos/faithful/`,
which follows the paper, and `repos/drifted/`, which departs from it in every dimension
(`repos/DRIFT.md` lists how). The demo scores both with the best judge available without network
or keys (the calibrated offline judge when it is installed and works, else the keyword judge),
writes the scores as a SCORES_DIR and renders the report from it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from sabench.benchmark.dataset import load_paper
from sabench.benchmark.scoring import (
    CONFIGS_FILE,
    make_judge,
    score_repo,
    write_configs,
    write_score,
)
from sabench.verifiers.judge import Judge
from sabench.verifiers.keyword import KeywordJudge
from sabench.verifiers.spec import PaperSpec
from sabench.verifiers.types import PaperScore

DEMO_ROOT = Path(__file__).resolve().parent / "demo"
PAPER_ID = "smoothlr"
REPOSITORIES = ("faithful", "drifted")
MODEL = "hand-written"  # the demo's reproductions were written by people, not generated
DEFAULT_OUT = Path("sabench-demo")
JUDGE_CHOICES = ("offline", "keyword")


class DemoError(RuntimeError):
    """The demo cannot run: bundled data missing, or the requested judge unavailable."""


@dataclass
class DemoResult:
    """What a demo run produced."""

    judge: str
    judge_note: str
    scores: dict[str, PaperScore]
    scores_dir: Path
    report_html: Path | None = None
    report_md: Path | None = None
    report_note: str = ""
    files: list[Path] = field(default_factory=list)


def config_name(repository: str) -> str:
    return f"demo-{repository}"


def demo_paper() -> PaperSpec:
    """The bundled example paper (raises DemoError if the package data is missing)."""
    paper_dir = DEMO_ROOT / "papers" / PAPER_ID
    if not (paper_dir / "sau.json").is_file():
        raise DemoError(f"{paper_dir}: the demo paper is missing from this installation")
    return load_paper(paper_dir)


def drifted_claims() -> set[str]:
    """The claims `repos/DRIFT.md` says the drifted reproduction departs on (its table rows
    name a claim id, or an id and more numbers: `smoothlr-D2-002, -004`)."""
    found: set[str] = set()
    for line in (DEMO_ROOT / "repos" / "DRIFT.md").read_text(encoding="utf-8").splitlines():
        match = re.match(r"\| D\d [^|]*\| (\S+-D\d-\d{3})((?:, -\d{3})*) \|", line)
        if match:
            found.add(match.group(1))
            found |= {match.group(1)[:-3] + extra for extra in
                      re.findall(r"\d{3}", match.group(2))}
    return found


def demo_repository(repository: str) -> Path:
    repo = DEMO_ROOT / "repos" / repository
    if not repo.is_dir():
        raise DemoError(f"{repo}: the demo repository is missing from this installation")
    return repo


def offline_judge() -> Judge:
    """The calibrated offline judge; `make_judge` imports it lazily (it may not be built yet)."""
    return make_judge("offline")


def score_all(judge: Judge, spec: PaperSpec) -> dict[str, PaperScore]:
    return {name: score_repo(spec, demo_repository(name), judge) for name in REPOSITORIES}


def score_with(kind: str | None, spec: PaperSpec) -> tuple[str, str, dict[str, PaperScore]]:
    """Score both repositories; `kind` None prefers the offline judge and falls back.

    Returns:
        The judge's name, a note on how it was chosen, and the scores by repository.
    """
    if kind not in (None, *JUDGE_CHOICES):
        raise DemoError(f"judge {kind!r}: expected one of {', '.join(JUDGE_CHOICES)}")
    if kind == "keyword":
        judge = KeywordJudge()
        return judge.name, "keyword judge (requested)", score_all(judge, spec)
    try:
        judge = offline_judge()
        scores = score_all(judge, spec)
    except Exception as exc:  # noqa: BLE001 - any failure of the optional judge means fall back
        if kind == "offline":
            raise DemoError(f"the offline judge is not usable here: {_one_line(exc)}") from exc
        judge = KeywordJudge()
        note = f"keyword judge (offline judge unavailable: {_one_line(exc)})"
        return judge.name, note, score_all(judge, spec)
    how = "requested" if kind == "offline" else "the best judge available offline"
    return judge.name, f"offline judge ({how})", scores


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


def write_scores(scores: dict[str, PaperScore], scores_dir: Path) -> list[Path]:
    """The SCORES_DIR layout `sabench report` reads: `<config>/<paper_id>.json` + configs.json."""
    written = []
    for repository, score in scores.items():
        path = scores_dir / config_name(repository) / f"{score.paper_id}.json"
        write_score(score, path)
        written.append(path)
    write_configs(scores_dir, {config_name(r): {"scaffold": r, "model": MODEL}
                               for r in scores})
    written.append(scores_dir / CONFIGS_FILE)
    return written


def write_report(scores_dir: Path, out: Path) -> tuple[Path | None, Path | None, str]:
    """Render the report with `sabench report`'s machinery, if this build has it.

    Returns:
        The HTML and Markdown paths written (None when not available) and a note.
    """
    try:
        from sabench.benchmark.report import make_report, render_markdown
    except ImportError as exc:
        return None, None, f"report not available in this build ({_one_line(exc)})"
    report = make_report(scores_dir)
    md_path = out / "report.md"
    md_path.write_text(render_markdown(report) + "\n", encoding="utf-8")
    try:
        from sabench.benchmark.report_html import render_html
    except ImportError as exc:
        return None, md_path, f"HTML report not available yet ({_one_line(exc)})"
    html_path = out / "report.html"
    html_path.write_text(render_html(report, title="sabench demo: SmoothLR"), encoding="utf-8")
    return html_path, md_path, ""


def run_demo(out: Path = DEFAULT_OUT, judge: str | None = None) -> DemoResult:
    """Score the two bundled reproductions and write scores and report under `out`.

    Args:
        out: output folder (created); scores go to `out/scores`, the report beside them.
        judge: `offline`, `keyword`, or None for the best available offline judge.

    Raises:
        DemoError: bundled data missing, or `judge="offline"` but that judge is unusable.
    """
    spec = demo_paper()
    name, note, scores = score_with(judge, spec)
    out.mkdir(parents=True, exist_ok=True)
    scores_dir = out / "scores"
    files = write_scores(scores, scores_dir)
    html, md, report_note = write_report(scores_dir, out)
    files += [path for path in (md, html) if path is not None]
    return DemoResult(judge=name, judge_note=note, scores=scores, scores_dir=scores_dir,
                      report_html=html, report_md=md, report_note=report_note, files=files)
