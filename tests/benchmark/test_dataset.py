"""Dataset loading and validation: the real release, the accepted variants, and bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sabench.benchmark.dataset import (
    DatasetError,
    check_dataset,
    load_paper,
    load_papers,
    resolve_papers_dir,
)
from sabench.verifiers.spec import Dimension

CLAIM_A = {"id": "toy-D1-001", "claim": "learning rate 3e-4", "source": "Table 1"}
CLAIM_B = {"id": "toy-D2-001", "claim": "loss is squared error"}


def make_paper(root: Path, claims: object, paper_id: str = "toy", raw: bytes | None = None) -> Path:
    """A paper folder with the given sau.json content (or raw bytes)."""
    folder = root / paper_id
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "paper.md").write_text("# Toy\n", encoding="utf-8")
    (folder / "config.yaml").write_text('title: "A toy paper"\n', encoding="utf-8")
    body = raw if raw is not None else json.dumps(claims).encode()
    (folder / "sau.json").write_bytes(body)
    return folder


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sabench.benchmark.cli", *args],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.dataset
def test_release_has_30_papers_and_1516_claims(papers_dir: Path) -> None:
    report = check_dataset(papers_dir)
    assert report.errors == []
    assert len(report.papers) == 30
    assert report.counts() == {Dimension.D1: 531, Dimension.D2: 519, Dimension.D3: 299,
                               Dimension.D4: 167}
    mrq = report.papers["mrq"]
    assert mrq.title.startswith("Towards General-Purpose Model-Free RL")
    assert mrq.claims[0].id == "mrq-D1-001" and mrq.claims[0].source
    assert "MR.Q" in mrq.markdown


@pytest.mark.dataset
def test_release_loads_as_dict_keyed_by_id(papers_dir: Path) -> None:
    specs = load_papers(papers_dir, with_markdown=False)
    assert sorted(specs) == sorted(p.name for p in papers_dir.iterdir() if p.is_dir())
    assert all(spec.markdown == "" for spec in specs.values())
    assert resolve_papers_dir(papers_dir.parent) == papers_dir


@pytest.mark.parametrize("content", [
    {"paper_id": "toy", "paper_title": "T", "D1": [CLAIM_A], "D2": [CLAIM_B]},
    {"requirements": {"D1": [CLAIM_A], "D2": [CLAIM_B]}},
    {"requirements": [dict(CLAIM_A, dimension="D1"), dict(CLAIM_B, type="formula")]},
    [dict(CLAIM_A, dimension="d1"), dict(CLAIM_B, dimension="D2")],
    [dict(CLAIM_A, type="D1"), {"id": "toy-D2-001", "text": "loss is squared error",
                                "dimension": "D2"}],
], ids=["dimension-keyed", "requirements-object", "requirements-list", "bare-list", "type-field"])
def test_accepted_claim_file_variants(tmp_path: Path, content: object) -> None:
    spec = load_paper(make_paper(tmp_path, content))
    assert [(c.id, c.dimension) for c in spec.claims] == [
        ("toy-D1-001", Dimension.D1), ("toy-D2-001", Dimension.D2)]
    assert spec.claims[1].text == "loss is squared error"
    assert spec.title == "A toy paper"


@pytest.mark.parametrize(("content", "raw", "expected"), [
    ({"D5": [CLAIM_A]}, None, "no claims found"),
    ([dict(CLAIM_A, dimension="D7")], None, "entry 0 (toy-D1-001): unknown dimension 'D7'"),
    ({"D1": [{"claim": "x"}]}, None, "D1[0]: claim has no id"),
    ({"D1": [{"id": "toy-D1-001", "claim": "  "}]}, None, "D1[0] (toy-D1-001): claim has no text"),
    ({"D1": [CLAIM_A, CLAIM_A]}, None, "D1[1]: duplicate claim id 'toy-D1-001'"),
    ({"D1": [dict(CLAIM_A, id="other-D1-001")]}, None, "does not belong to paper 'toy'"),
    ({"paper_id": "other", "D1": [CLAIM_A]}, None, "paper_id 'other' does not match folder"),
    ({"D1": [CLAIM_A], "D2": "nope"}, None, "D2 must be a list of claims"),
    ({"D1": []}, None, "holds no claims"),
    ([CLAIM_A], None, "claim has no dimension"),
    ({"D1": [dict(CLAIM_A, dimension="D2")]}, None, "listed under D1 but says D2"),
    ({"D1": ["just text"]}, None, "D1[0]: a claim must be an object"),
    (None, b"", "file is empty"),
    (None, b"  \n", "file is empty"),
    (None, b'{"D1": [', "invalid JSON at line 1"),
    (None, b'{"D1": "\xff\xfe"}', "not valid UTF-8"),
    (None, b"42", "expected a JSON object or list"),
])
def test_bad_claim_files_get_one_line_errors(tmp_path: Path, content: object, raw: bytes | None,
                                             expected: str) -> None:
    folder = make_paper(tmp_path, content, raw=raw)
    with pytest.raises(DatasetError) as caught:
        load_paper(folder)
    message = str(caught.value)
    assert expected in message
    assert str(folder / "sau.json") in message
    assert "\n" not in message


def test_missing_files_are_named(tmp_path: Path) -> None:
    folder = make_paper(tmp_path, {"D1": [CLAIM_A]})
    (folder / "paper.md").unlink()
    with pytest.raises(DatasetError, match=r"paper\.md: missing"):
        load_paper(folder)
    assert load_paper(folder, with_markdown=False).claims[0].id == "toy-D1-001"
    (folder / "sau.json").unlink()
    with pytest.raises(DatasetError, match=r"sau\.json: missing"):
        load_paper(folder)
    with pytest.raises(DatasetError, match="does not exist"):
        load_papers(tmp_path / "nowhere")


def test_title_falls_back_to_claim_file_then_folder(tmp_path: Path) -> None:
    folder = make_paper(tmp_path, {"paper_title": "From sau", "D1": [CLAIM_A]})
    (folder / "config.yaml").unlink()
    assert load_paper(folder).title == "From sau"
    (folder / "config.yaml").write_text("title: [unclosed\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"config\.yaml: invalid YAML"):
        load_paper(folder)


def test_check_collects_every_problem(tmp_path: Path) -> None:
    make_paper(tmp_path, {"D1": [CLAIM_A]})
    make_paper(tmp_path, {"D1": [CLAIM_A]}, paper_id="second")  # ids belong to 'toy'
    make_paper(tmp_path, None, paper_id="third", raw=b"")
    report = check_dataset(tmp_path)
    assert list(report.papers) == ["toy"]
    assert len(report.errors) == 2
    assert any("second" in line and "does not belong" in line for line in report.errors)


def test_cli_check_reports_counts_and_errors(tmp_path: Path) -> None:
    make_paper(tmp_path, {"D1": [CLAIM_A], "D2": [CLAIM_B]})
    good = run_cli("data", "check", str(tmp_path), "--json")
    assert good.returncode == 0, good.stderr
    summary = json.loads(good.stdout)
    assert summary["papers"] == 1 and summary["per_dimension"] == {"D1": 1, "D2": 1, "D3": 0,
                                                                   "D4": 0}
    make_paper(tmp_path, None, paper_id="broken", raw=b"{")
    bad = run_cli("data", "check", str(tmp_path))
    assert bad.returncode == 1
    assert "broken/sau.json: invalid JSON" in bad.stdout
    assert "Traceback" not in bad.stdout + bad.stderr


def test_cli_missing_dataset_is_one_line(tmp_path: Path) -> None:
    result = run_cli("data", "check", str(tmp_path / "absent"))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().count("\n") == 0
    assert "absent: dataset folder does not exist" in result.stderr


def test_cli_pull_without_network_is_one_line(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Downloading from an address where nothing listens fails cleanly, naming the dataset."""
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setenv("HF_HUB_ETAG_TIMEOUT", "2")
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    result = run_cli("data", "pull", "--dest", str(tmp_path / "ds"))
    assert result.returncode == 2
    assert "kernel-14/SemanticAlign-Bench: download" in result.stderr
    assert "Traceback" not in result.stderr
