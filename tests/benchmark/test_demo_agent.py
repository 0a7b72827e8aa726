"""`sabench demo --agent`: the alignment-first scaffold on the example paper with the scripted
demo model, through the real runner, sandbox and check step."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.sandbox.conftest import require_backend

DEMO = Path(__file__).resolve().parents[2] / "benchmark" / "demo"
#: The claims the script's first implementation breaks: weight decay 5e-3 (D1-002) and the
#: cosine schedule left a stub (the schedule's endpoints D1-003 and formula D2-003, and the
#: steps that take their learning rate from it: the decoupled decay D2-004, the epoch order
#: D4-003).
DRIFTED = {"smoothlr-D1-002", "smoothlr-D1-003", "smoothlr-D2-003", "smoothlr-D2-004",
           "smoothlr-D4-003"}


def sabench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sabench.benchmark.cli", *args],
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def demo_out(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    require_backend("local")
    out = tmp_path_factory.mktemp("demo")
    done = sabench("demo", "--agent", "--backend", "local", "--out", str(out), "--json")
    assert done.returncode == 0, done.stderr
    return out / "agent", json.loads(done.stdout)


def test_the_drifted_claims_fail_the_first_check_and_pass_after_repair(demo_out) -> None:
    out, summary = demo_out
    assert summary["scripted"] is True and summary["model"].startswith("scripted:")
    assert summary["stop_reason"] == "all_claims_pass" and summary["rounds"] == 1
    claims = {c["id"]: c for c in summary["claims"]}
    assert len(claims) == 22
    failed_first = {cid for cid, c in claims.items() if not c["verdicts"][0]}
    assert failed_first == DRIFTED
    assert all(c["verdicts"] == [c["id"] not in DRIFTED, True] for c in claims.values())
    assert "5e-4" in " ".join(claims["smoothlr-D1-002"]["failed_because"][0])
    assert "stub" in " ".join(claims["smoothlr-D2-003"]["failed_because"][0])
    assert summary["passing_per_check"] == [17, 22]


def test_the_repaired_repository_follows_the_paper(demo_out) -> None:
    out, _ = demo_out
    repo = next((out / "runs").glob("*/smoothlr/repo"))
    assert "weight_decay: float = 5e-4" in (repo / "config.py").read_text()
    model = (repo / "model.py").read_text()
    assert "NotImplementedError" not in model and "np.cos(np.pi * epoch" in model
    report = json.loads((repo / "alignment_report.json").read_text())
    assert report["checker"] == "alignment" and not report["oracle_claims"]


def test_the_record_and_the_html_say_scripted_and_show_each_check(demo_out) -> None:
    out, summary = demo_out
    record = json.loads(next((out / "records").glob("*/smoothlr.json")).read_text())
    assert record["status"] == "ok" and "scripted" in record["model"]
    page = next((out / "report-runs").glob("*/smoothlr.html")).read_text()
    assert 'id="alignment-history"' in page and "check 2" in page
    assert "cosine_lr is a stub" in page
    assert "report-runs/index.html" in (out / "report.html").read_text()
    assert summary["score"] == record["overall_score"] > 0


def test_a_rerun_shows_the_finished_run_without_running_it_again(demo_out) -> None:
    out, summary = demo_out
    record = next((out / "records").glob("*/smoothlr.json"))
    before = record.read_text()
    again = sabench("demo", "--agent", "--backend", "local", "--out", str(out.parent), "--json")
    assert again.returncode == 0, again.stderr
    assert record.read_text() == before
    assert json.loads(again.stdout)["claims"] == summary["claims"]


def test_bad_backend_flags_are_one_line_errors(tmp_path: Path) -> None:
    bogus = sabench("demo", "--agent", "--backend", "bogus", "--out", str(tmp_path))
    assert bogus.returncode != 0 and "bogus" in bogus.stderr
    assert "Traceback" not in bogus.stderr
    alone = sabench("demo", "--backend", "local", "--out", str(tmp_path))
    assert alone.returncode != 0 and "--agent" in alone.stderr
