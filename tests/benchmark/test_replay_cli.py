"""`sabench replay` of a development BasicAgent run, end to end, against the released repo."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.sandbox.conftest import require_backend

CONFIG, PAPER = "gpt4o_basic", "adjoint-matching"


@pytest.fixture
def released(sabench_data: Path, tmp_path: Path) -> Path:
    """The run's released repository, unpacked from the release archive."""
    prefix = f"{CONFIG}/{PAPER}/repo/"
    with tarfile.open(sabench_data / "runs" / f"{CONFIG}.tar.gz") as archive:
        members = [m for m in archive.getmembers() if m.name.startswith(prefix)]
        archive.extractall(tmp_path / "released", members=members, filter="data")
    return tmp_path / "released" / CONFIG / PAPER / "repo"


@pytest.mark.dataset
def test_replay_writes_the_released_repository(sabench_data: Path, released: Path,
                                               tmp_path: Path) -> None:
    require_backend("local")
    out = tmp_path / "replay"
    command = [sys.executable, "-m", "sabench.benchmark.cli", "replay",
               str(sabench_data / "transcripts" / CONFIG / PAPER),
               "--papers", str(sabench_data / "papers"), "--released", str(released),
               "--out", str(out), "--backend", "local", "--json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["scaffold"] == "basic" and report["stop_reason"] == "submitted"
    assert report["files_released"] == len([p for p in released.rglob("*") if p.is_file()]) > 0
    assert report["files_identical"] == report["files_released"]
    assert report["share_identical"] == 1.0
    assert report["model_calls"] == report["recorded_calls"] == 24
    assert report["tool_outputs_compared"] == 24
    assert set(report["tool_output_diff_kinds"]) <= {"output", "exit_code", "truncation",
                                                     "order", "error"}
    record = json.loads((out / "record.json").read_text())
    assert record["requests"] == 24 and record["usage"]["input_tokens"] == 432068
    # Run again: the finished replay is left as it is.
    again = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert json.loads(again.stdout)["model_calls"] == 24
    assert json.loads((out / "record.json").read_text())["requests"] == 24


def test_replay_of_a_folder_that_is_no_recording_is_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sabench.benchmark.cli", "replay", str(tmp_path),
         "--papers", str(tmp_path), "--out", str(tmp_path / "o")],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "not a recorded run" in done.stderr and done.stderr.strip().count("\n") == 0


@pytest.mark.dataset
def test_replay_of_a_papercoder_run_writes_the_released_repository(
        sabench_data: Path, tmp_path: Path) -> None:
    require_backend("local")
    config = "gpt4o_papercoder"
    prefix = f"{config}/{PAPER}/repo/"
    with tarfile.open(sabench_data / "runs" / f"{config}.tar.gz") as archive:
        members = [m for m in archive.getmembers() if m.name.startswith(prefix)]
        archive.extractall(tmp_path / "released", members=members, filter="data")
    released = tmp_path / "released" / config / PAPER / "repo"
    run_dir = sabench_data / "transcripts" / config / PAPER
    done = subprocess.run(
        [sys.executable, "-m", "sabench.benchmark.cli", "replay", str(run_dir), "--papers",
         str(sabench_data / "papers"), "--released", str(released), "--out",
         str(tmp_path / "replay"), "--backend", "local", "--json"],
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    analysed = len(list(run_dir.glob("*_simple_analysis_response.json")))
    assert report["scaffold"] == "papercoder" and report["stop_reason"] == "finished"
    assert report["task_list_identical"] and report["calls_matched"]
    assert [report["planning_calls"], report["analysis_calls"], report["coding_calls"]] == \
        [4, analysed, analysed]
    assert report["files_identical"] == report["files_released"] > 0
