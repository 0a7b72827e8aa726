"""`sabench demo --agent`: the alignment-first scaffold at work on the bundled example paper.

The model is scripted (`demo/replies.yaml`: written replies, no key, no network) and says so in
every record and on screen; everything else is real: the LangGraph run with its checkpoints,
the sandbox that writes and runs the code, the check step, the repair rounds and the offline
scoring. The script's first implementation departs from the paper on purpose, so the demo
shows the check step flagging those claims and the repair rounds bringing them back. It runs
as a one-cell matrix (`demo/agent.yaml`) through `sabench run`'s runner, so the output folder
has the runner's layout (`scores/`, `records/`, `runs/`) and the HTML report gets its run page
with each claim's verdict per check round.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sabench.benchmark.demo_run import DEMO_ROOT, PAPER_ID, DemoError

AGENT_SPEC = DEMO_ROOT / "agent.yaml"
DEFAULT_AGENT_OUT = Path("sabench-demo") / "agent"
#: Tried in this order when no backend is asked for: bubblewrap starts in milliseconds.
BACKENDS = ("local", "docker")
NO_SANDBOX = ("the agent demo runs the code it writes in a sandbox and none is available here: "
              "install bubblewrap (apt-get install bubblewrap) or build the docker image "
              "(sabench sandbox build --offline)")


@dataclass
class AgentDemoResult:
    """What the agent demo produced."""

    backend: str
    out: Path
    config: str
    model_spec: str
    record: dict[str, Any]
    alignment: dict[str, Any]
    report_html: Path | None

    @property
    def repo(self) -> Path:
        """The repository the scaffold left."""
        return self.out / "runs" / self.config / PAPER_ID / "repo"


def pick_backend(requested: str | None) -> str:
    """The sandbox backend to use: the one asked for, else the first available."""
    from sabench.sandbox import SandboxSpec, get_backend

    for name in (requested,) if requested else BACKENDS:
        ok, why = get_backend(name).available(SandboxSpec(backend=name))
        if ok:
            return name
        if requested:
            raise DemoError(f"the {name} sandbox backend is unavailable: {why}")
    raise DemoError(NO_SANDBOX)


def run_agent_demo(out: Path = DEFAULT_AGENT_OUT, backend: str | None = None
                   ) -> AgentDemoResult:
    """Run the alignment-first scaffold on the example paper into `out` (a rerun into the same
    folder shows the finished run instead of running it again).

    Raises:
        DemoError: no sandbox backend, or the run did not finish.
    """
    from sabench.benchmark.matrix import load_matrix
    from sabench.benchmark.runner import run_matrix

    chosen = pick_backend(backend)
    matrix = load_matrix(AGENT_SPEC)
    sandbox = matrix.spec.sandbox.model_copy(update={"backend": chosen})
    matrix = replace(matrix, spec=matrix.spec.model_copy(update={"sandbox": sandbox}))
    out = Path(out).resolve()
    run_matrix(matrix, out)
    config, entry = next(iter(matrix.configs().items()))
    record = read_json(out / "records" / config / f"{PAPER_ID}.json", "run record")
    if record.get("status") not in ("ok", "stopped"):
        raise DemoError(f"the agent demo's run ended with status {record.get('status')!r}: "
                        f"{record.get('error') or record.get('stop_reason')} "
                        f"(record: {out / 'records' / config / PAPER_ID}.json)")
    repo = out / "runs" / config / PAPER_ID / "repo"
    alignment = read_json(repo / "alignment_report.json", "alignment report")
    html = write_html(out)
    return AgentDemoResult(backend=chosen, out=out, config=config,
                           model_spec=entry["model_spec"], record=record, alignment=alignment,
                           report_html=html)


def read_json(path: Path, what: str) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DemoError(f"{path}: the agent demo's {what} is unreadable ({exc})") from None
    if not isinstance(data, dict):
        raise DemoError(f"{path}: the agent demo's {what} is not a JSON object")
    return data


def write_html(out: Path) -> Path | None:
    """The report of the run, with its run page (each claim's verdict per check round)."""
    try:
        from sabench.benchmark.report import make_report
        from sabench.benchmark.report_html import render_html
        from sabench.benchmark.report_runs import link_run_pages, write_run_pages
    except ImportError:
        return None
    html_path = out / "report.html"
    pages = write_run_pages(out / "scores", html_path, title="sabench agent demo")
    html = render_html(make_report(out / "scores"), title="sabench agent demo: SmoothLR")
    html_path.write_text(link_run_pages(html, html_path, pages), encoding="utf-8")
    return html_path


def claim_rows(alignment: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per claim of the alignment report: id, dimension, verdict per check, location,
    and why each check failed it."""
    rows = []
    for claim in alignment.get("claims") or []:
        verdicts = [bool(v) for v in claim.get("passed_per_round") or []]
        rows.append({"id": claim.get("id", ""), "dimension": claim.get("dimension", ""),
                     "verdicts": verdicts, "location": claim.get("location") or "",
                     "failed_because": claim.get("failed_because_per_round") or []})
    return rows
