"""The alignment-first scaffold on the demo paper over the loopback model server: claims
extracted, planned, implemented, checked for real, repaired."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from sabench.agent.types import Budget
from sabench.benchmark.dataset import load_paper
from sabench.benchmark.reproduce import RunRequest, reproduce
from tests.agent.model_server import LoopbackModelServer, Reply, Request
from tests.sandbox.conftest import require_backend

DEMO = Path(__file__).resolve().parents[2] / "benchmark" / "demo"
PAPER_DIR = DEMO / "papers" / "smoothlr"
PAPER = load_paper(PAPER_DIR)
FAITHFUL = DEMO / "repos" / "faithful"
CODE_FILES = ["config.py", "data.py", "knn.py", "metrics.py", "model.py", "train.py", "run.py"]
DRIFTED_DECAY = "weight_decay: float = 5e-3"


@pytest.fixture(autouse=True)
def _setup(monkeypatch: pytest.MonkeyPatch) -> None:
    require_backend("local")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")


def request_text(request: Request) -> str:
    return str(request.body["messages"][-1]["content"])


def stage_of(request: Request) -> str:
    text = request_text(request)
    for prefix, stage in (("Below is one part", "extract"), ("Plan a repository", "plan"),
                          ("Write the file", "implement"), ("The file `", "repair")):
        if text.startswith(prefix):
            return stage
    return "?"


def owner(claim_id: str) -> str:
    return "config.py" if "-D1-" in claim_id else "train.py" if "-D2-" in claim_id else "run.py"


def scripted(config_text: str | None = None, repair: Any = None,
             files: dict[str, str] | None = None, extra: dict[str, list[str]] | None = None):
    """Extraction returns the paper's claims of each dimension from its abstract (plus `extra`
    ones); the plan puts them in the demo's files; implementation writes the faithful
    reproduction, with `files` (and `config_text` for config.py) replacing some of it."""
    written = {**({"config.py": config_text} if config_text else {}), **(files or {})}

    def respond(request: Request) -> Reply:
        text, stage = request_text(request), stage_of(request)
        if stage == "extract":
            dimension = next(d for d in ("D1", "D2", "D3", "D4") if f"about {_words(d)}" in text)
            if "## Abstract" not in text:
                return Reply(text=json.dumps({"claims": []}))
            claims = [c.text for c in PAPER.claims if c.dimension.value == dimension]
            return Reply(text=json.dumps({"claims": claims + (extra or {}).get(dimension, [])}))
        if stage == "plan":
            ids = [line.split()[0] for line in text.splitlines() if line.startswith("smoothlr-")]
            plan = [{"path": name, "purpose": name,
                     "claims": [i for i in ids if owner(i) == name]} for name in CODE_FILES]
            return Reply(text=json.dumps({"files": plan}))
        if stage == "implement":
            return Reply(text=f"```python\n{implementation(text.split('`')[1], written)}```")
        if stage == "repair" and repair is not None:
            return repair(request)
        return Reply(text='{"edits": []}')

    return respond


def implementation(name: str, written: dict[str, str]) -> str:
    if name in written:
        return written[name]
    if (FAITHFUL / name).is_file():
        return (FAITHFUL / name).read_text()
    return "from run import main\n\nmain()\n" if name == "main.py" else "lr: 0.1\n"


def _words(dimension: str) -> str:
    from sabench.scaffolds.alignment_prompts import DIMENSIONS

    return DIMENSIONS[dimension]


def run(server: LoopbackModelServer, out: Path, **options: Any) -> dict[str, Any]:
    budget = options.pop("budget", Budget())
    return reproduce(RunRequest(paper_dir=PAPER_DIR, scaffold="alignment-first",
                                model="openai-compatible:af-model", out=out, backend="local",
                                base_url=server.openai_url, judge=None, options=options,
                                budget=budget))


def report_of(out: Path) -> dict[str, Any]:
    return json.loads((out / "repo" / "alignment_report.json").read_text())


def test_a_drifted_value_is_flagged_and_repaired(model_server: LoopbackModelServer,
                                                 tmp_path: Path) -> None:
    drifted = (FAITHFUL / "config.py").read_text().replace("weight_decay: float = 5e-4",
                                                           DRIFTED_DECAY)

    def fix_decay(request: Request) -> Reply:
        if "5e-4" in request_text(request) and DRIFTED_DECAY in request_text(request):
            return Reply(text=json.dumps({"edits": [
                {"old": DRIFTED_DECAY, "new": "weight_decay: float = 5e-4"}]}))
        return Reply(text='{"edits": []}')

    model_server.responder = scripted(config_text=drifted, repair=fix_decay)
    record = run(model_server, tmp_path / "run")
    stages = [stage_of(r) for r in model_server.requests]
    assert stages.count("extract") > 4 and stages.count("plan") == 1
    assert stages.count("implement") == len(CODE_FILES) + 2  # + config.yaml and main.py
    report = report_of(tmp_path / "run")
    by_id = {c["text"]: c for c in report["claims"]}
    decay = by_id[next(c.text for c in PAPER.claims if c.id == "smoothlr-D1-002")]
    assert decay["passed_per_round"][0] is False and decay["passed_per_round"][-1] is True
    assert "weight_decay: float = 5e-4" in (tmp_path / "run" / "repo" / "config.py").read_text()
    # The claims were the model's own (numbered in the ledger), not the gold ones.
    assert report["oracle_claims"] is False and len(report["claims"]) == len(PAPER.claims)
    assert record["status"] == "ok"
    readme = (tmp_path / "run" / "repo" / "README.md").read_text()
    assert re.search(r"\| smoothlr-D1-002 \| D1 \| config\.py:\d+ \| pass \|", readme), readme


def test_a_faithful_run_ends_with_every_claim_passing(model_server: LoopbackModelServer,
                                                      tmp_path: Path) -> None:
    model_server.responder = scripted()
    record = run(model_server, tmp_path / "run")
    assert record["status"] == "ok" and record["stop_reason"] == "all_claims_pass"
    report = report_of(tmp_path / "run")
    assert report["rounds"] == 0 and report["passing_per_check"] == [len(PAPER.claims)]
    assert all(c["passed_per_round"] == [True] for c in report["claims"])
    assert "repair" not in [stage_of(r) for r in model_server.requests]
    # One check batch per dimension (a Send each), then the triage.
    batches = [t for t in record["trace"] if t.get("node") == "check_batch"]
    assert sorted(t["claims"] for t in batches) == sorted(
        sum(c.dimension.value == d for c in PAPER.claims) for d in ("D1", "D2", "D3", "D4"))
    readme = (tmp_path / "run" / "repo" / "README.md").read_text()
    rows = re.findall(r"^\| (smoothlr-D\d-\d{3}) \| D\d \| (\S+) \| (pass|fail) \|$", readme, re.M)
    assert len(rows) == len(PAPER.claims) and {r[2] for r in rows} == {"pass"}
    assert all(re.fullmatch(r"[\w/]+\.py:\d+", r[1]) for r in rows), rows


def test_a_stub_is_flagged_and_repaired(model_server: LoopbackModelServer,
                                        tmp_path: Path) -> None:
    body = "    model.w -= lr * weight_decay * model.w\n"
    stubbed = (FAITHFUL / "train.py").read_text().replace(body, "    raise NotImplementedError\n")

    def restore(request: Request) -> Reply:
        if "decoupled_weight_decay is a stub" in request_text(request):
            return Reply(text=json.dumps({"edits": [
                {"old": "    raise NotImplementedError\n", "new": body}]}))
        return Reply(text='{"edits": []}')

    model_server.responder = scripted(files={"train.py": stubbed}, repair=restore)
    record = run(model_server, tmp_path / "run")
    report = report_of(tmp_path / "run")
    history = {c["id"]: c["passed_per_round"] for c in report["claims"]}
    assert history["smoothlr-D2-004"] == [False, True]
    repairs = [r for r in model_server.requests if stage_of(r) == "repair"]
    assert [request_text(r).split("`")[1] for r in repairs] == ["train.py"]
    assert body in (tmp_path / "run" / "repo" / "train.py").read_text()
    assert record["stop_reason"] == "all_claims_pass"


def test_a_claim_restated_only_in_comments_is_flagged(model_server: LoopbackModelServer,
                                                      tmp_path: Path) -> None:
    mixup = ("Mixup augmentation interpolates random pairs of training examples and their "
             "labels with a Beta-distributed mixing coefficient.")
    model = (FAITHFUL / "model.py").read_text().replace("\n\nclass SoftmaxRegression:", (
        "\n\n# Mixup augmentation: interpolate random pairs of training examples and their "
        "labels\n# with a Beta-distributed mixing coefficient.\n\n\nclass SoftmaxRegression:"))
    model_server.responder = scripted(files={"model.py": model}, extra={"D2": [mixup]})
    record = run(model_server, tmp_path / "run", max_rounds=1)
    claim = next(c for c in report_of(tmp_path / "run")["claims"] if c["text"] == mixup)
    assert claim["passed_per_round"] == [False, False]
    assert any("restated in comments" in reason for reason in claim["reasons"])
    repair = next(r for r in model_server.requests if stage_of(r) == "repair")
    assert "model.py:" in request_text(repair) and mixup in request_text(repair)
    assert record["stop_reason"] == "round_cap"


def test_a_crash_in_the_smoke_run_is_flagged_and_repaired(model_server: LoopbackModelServer,
                                                          tmp_path: Path) -> None:
    entry = ("import sys\n\n\ndef smoke() -> str:\n    phases = ['data', 'train', 'evaluate']\n"
             "    return phases[3]\n\n\nif __name__ == '__main__' and '--smoke' in sys.argv:\n"
             "    print(smoke())\n")

    def fix(request: Request) -> Reply:
        if "IndexError" in request_text(request) and "main.py" in request_text(request):
            return Reply(text=json.dumps({"edits": [{"old": "phases[3]", "new": "phases[2]"}]}))
        return Reply(text='{"edits": []}')

    model_server.responder = scripted(files={"main.py": entry}, repair=fix)
    record = run(model_server, tmp_path / "run")
    report = report_of(tmp_path / "run")
    assert report["failing_items_per_check"] == [1, 0]  # the smoke run, then nothing
    assert report["smoke"]["ran"] and report["smoke"]["problems"] == []
    smoke = [t for t in record["trace"] if t.get("kind") == "smoke"]
    assert [t["problems"] for t in smoke] == [1, 0]
    assert "phases[2]" in (tmp_path / "run" / "repo" / "main.py").read_text()
    assert record["stop_reason"] == "all_claims_pass"


def test_without_progress_the_loop_stops_after_two_rounds(model_server: LoopbackModelServer,
                                                          tmp_path: Path) -> None:
    drifted = (FAITHFUL / "config.py").read_text().replace("weight_decay: float = 5e-4",
                                                           DRIFTED_DECAY)
    model_server.responder = scripted(config_text=drifted)  # repairs that change nothing
    record = run(model_server, tmp_path / "run")
    report = report_of(tmp_path / "run")
    assert record["stop_reason"] == "no_progress"
    assert report["rounds"] == 2 and len(report["passing_per_check"]) == 3
    assert len(set(report["passing_per_check"])) == 1
    assert [stage_of(r) for r in model_server.requests].count("repair") == 2


def test_the_rewrite_strategy_replaces_the_file(model_server: LoopbackModelServer,
                                                tmp_path: Path) -> None:
    faithful = (FAITHFUL / "config.py").read_text()
    drifted = faithful.replace("weight_decay: float = 5e-4", DRIFTED_DECAY)

    def rewrite(request: Request) -> Reply:
        assert "Write the corrected file whole" in request_text(request)
        return Reply(text=f"```python\n{faithful}```")

    model_server.responder = scripted(config_text=drifted, repair=rewrite)
    record = run(model_server, tmp_path / "run", repair_strategy="rewrite")
    assert record["stop_reason"] == "all_claims_pass"
    assert (tmp_path / "run" / "repo" / "config.py").read_text() == faithful
    assert report_of(tmp_path / "run")["repair_strategy"] == "rewrite"


def test_the_runs_llm_judge_as_the_checker(model_server: LoopbackModelServer,
                                           tmp_path: Path) -> None:
    """`checker=judge`: the run's judge (an LLM judge over the same loopback server) decides
    each claim; its first verdict on the weight decay is low, its later ones are not."""
    from sabench.verifiers import llm_judge_prompt

    scaffold = scripted()
    judged: dict[str, int] = {}

    def respond(request: Request) -> Reply:
        if request.body["messages"][0]["content"].strip() != llm_judge_prompt.SYSTEM.strip():
            return scaffold(request)
        ids = re.findall(r"^## Claim (\S+)$", request_text(request), re.M)
        verdicts = []
        for cid in ids:
            judged[cid] = judged.get(cid, 0) + 1
            low = cid.endswith("-D1-002") and judged[cid] == 1
            verdicts.append({"id": cid, "score": 0.25 if low else 1.0, "evidence_refs": [],
                             "reasoning": "the decay is 5e-3" if low else "as the paper says"})
        return Reply(text=json.dumps({"verdicts": verdicts}))

    model_server.responder = respond
    record = reproduce(RunRequest(
        paper_dir=PAPER_DIR, scaffold="alignment-first", model="openai-compatible:af-model",
        out=tmp_path / "run", backend="local", base_url=model_server.openai_url,
        judge="llm:openai-compatible:judge-model", options={"checker": "judge"}))
    report = report_of(tmp_path / "run")
    assert report["checker"] == "judge" and record["status"] == "ok"
    decay = next(c for c in report["claims"] if c["id"].endswith("-D1-002"))
    assert decay["passed_per_round"] == [False, True]
    assert any("the judge scores it 0.25" in r and "5e-3" in r
               for r in decay["failed_because_per_round"][0])
    others = [c for c in report["claims"] if c is not decay]
    assert others and all(c["passed_per_round"] == [True, True] for c in others)
    assert judged and "repair" in [stage_of(r) for r in model_server.requests]


def test_the_judge_checker_needs_a_judge(model_server: LoopbackModelServer,
                                         tmp_path: Path) -> None:
    from sabench.benchmark.reproduce import RunFailed

    model_server.responder = scripted()
    with pytest.raises(RunFailed, match="checker 'judge' needs the run's judge"):
        run(model_server, tmp_path / "run", checker="judge")


def test_unknown_checker_or_repair_names_fail_before_the_run() -> None:
    from sabench.scaffolds.alignment_check import UnknownChecker
    from sabench.scaffolds.alignment_first import AlignmentFirst
    from sabench.scaffolds.alignment_repair import UnknownRepair

    with pytest.raises(UnknownChecker):
        AlignmentFirst().build({"checker": "llm-of-my-dreams"})
    with pytest.raises(UnknownRepair):
        AlignmentFirst().build({"repair_strategy": "pray"})


def test_the_round_cap_and_the_oracle_ablation(model_server: LoopbackModelServer,
                                               tmp_path: Path) -> None:
    drifted = (FAITHFUL / "config.py").read_text().replace("weight_decay: float = 5e-4",
                                                           DRIFTED_DECAY)
    model_server.responder = scripted(config_text=drifted)
    record = run(model_server, tmp_path / "run", oracle=True, max_rounds=1)
    stages = [stage_of(r) for r in model_server.requests]
    assert "extract" not in stages  # the gold claims were given
    report = report_of(tmp_path / "run")
    assert report["oracle_claims"] is True and report["rounds"] == 1
    assert record["stop_reason"] == "round_cap"
    assert {c["id"] for c in report["claims"]} == {c.id for c in PAPER.claims}


def test_a_budget_that_ends_mid_repair_keeps_the_repository(
        model_server: LoopbackModelServer, tmp_path: Path) -> None:
    drifted = (FAITHFUL / "config.py").read_text().replace("weight_decay: float = 5e-4",
                                                           DRIFTED_DECAY)
    model_server.responder = scripted(config_text=drifted)
    calls_before_repair = 1 + len(CODE_FILES) + 2  # plan + implementation (oracle claims)
    record = run(model_server, tmp_path / "run", oracle=True,
                 budget=Budget(calls=calls_before_repair + 1))
    assert record["status"] == "stopped" and record["stop_reason"] == "budget_calls"
    assert model_server.request_count() == calls_before_repair + 1
    repo = tmp_path / "run" / "repo"
    assert DRIFTED_DECAY in (repo / "config.py").read_text()
    assert (repo / "alignment_report.json").is_file() and (repo / "train.py").is_file()


def test_kill_9_mid_repair_then_resume_repeats_no_completed_call(
        model_server: LoopbackModelServer, tmp_path: Path) -> None:
    drifted = (FAITHFUL / "config.py").read_text().replace("weight_decay: float = 5e-4",
                                                           DRIFTED_DECAY)
    in_repair, release = threading.Event(), threading.Event()
    answer = scripted(config_text=drifted)

    def respond(request: Request) -> Reply:
        if stage_of(request) == "repair" and not release.is_set():
            in_repair.set()
            release.wait(60)  # the client is killed while it waits for this reply
        return answer(request)

    model_server.responder = respond
    out = tmp_path / "run"
    command = [sys.executable, "-m", "sabench.benchmark.cli", "reproduce", str(PAPER_DIR),
               "--scaffold", "alignment-first", "--model", "openai-compatible:af-model",
               "--out", str(out), "--backend", "local", "--base-url", model_server.openai_url,
               "--judge", "none", "--option", "oracle=true", "--option", "max_rounds=1"]
    env = {**os.environ, "OPENAI_API_KEY": "test-key"}
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, start_new_session=True)
    assert in_repair.wait(120), process.stderr.read().decode() if process.poll() else "stuck"
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    release.set()
    time.sleep(0.2)
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    bodies = [json_body(r) for r in model_server.requests]
    completed_before = bodies[:-2]  # all but the killed repair request and its re-send
    assert len(set(completed_before)) == len(completed_before)
    assert bodies[-1] == bodies[-2]  # only the call in flight was sent again
    record = json.loads((out / "record.json").read_text())
    assert record["stop_reason"] in ("round_cap", "all_claims_pass")
    assert "weight_decay" in (out / "repo" / "config.py").read_text()


def json_body(request: Request) -> str:
    return json.dumps(request.body["messages"], sort_keys=True)
