"""Scoring a repository and a runs root: judge specs, resumability, process pool, CLI.

The LLM boundary is faked with the scripted chat model, registered as a judge kind so that
worker processes (forked from the test) build it from its spec string like any other judge.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from langchain_core.messages import BaseMessage
from typer.testing import CliRunner

from sabench.agent.models import ModelConfigError
from sabench.benchmark import cli, scoring
from sabench.benchmark.report import load_scores
from sabench.benchmark.scoring import (
    JUDGE_KINDS,
    JudgeRequest,
    JudgeSpecError,
    RunsRootError,
    make_judge,
    read_runs_root,
    score_runs,
)
from sabench.verifiers.llm_judge import LLMJudge
from sabench.verifiers.spec import Claim
from sabench.verifiers.types import Evidence, PaperScore

SAU = {
    "paper_id": "toy", "paper_title": "Toy paper",
    "D1": [{"id": "toy-D1-001", "claim": "The learning rate is 3e-4.", "source": "Sec. 4"},
           {"id": "toy-D1-002", "claim": "The batch size is 64.", "source": "Sec. 4"}],
    "D2": [{"id": "toy-D2-001", "claim": "AdamW minimises the mean loss.", "source": "Eq. 2"}],
}


def answer(messages: list[BaseMessage]) -> str:
    ids = re.findall(r"^## Claim (\S+)$", str(messages[-1].content), re.MULTILINE)
    return json.dumps({"verdicts": [{"id": cid, "score": 0.25 if "D2" in cid else 0.75,
                                     "reasoning": "value set in train.py",
                                     "evidence_refs": []} for cid in ids]})


def first_lines(root: Path):
    """Evidence read from the repository's real Python files (first eight lines of each)."""
    files = sorted(p for p in root.rglob("*.py") if p.is_file())

    def provide(claim: Claim) -> list[Evidence]:
        found = []
        for path in files[:3]:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()[:8]
            if lines:
                found.append(Evidence(file=path.relative_to(root).as_posix(), start_line=1,
                                      end_line=len(lines), snippet="\n".join(lines)))
        return found

    return provide


def scripted_kind(request: JudgeRequest) -> LLMJudge:
    from tests.agent.scripted import ScriptedChatModel

    model = ScriptedChatModel(replies=[answer] * 2000, model_name="gpt-4o",
                              callbacks=[request.recorder] if request.recorder else [])
    return LLMJudge(model, name="llm:scripted", evidence=first_lines, concurrency=1,
                    sleep=lambda _: None, **request.options)


@pytest.fixture(autouse=True)
def scripted_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(JUDGE_KINDS, "scripted", scripted_kind)


def make_papers(tmp_path: Path) -> Path:
    papers = tmp_path / "papers"
    (papers / "toy").mkdir(parents=True)
    (papers / "toy" / "sau.json").write_text(json.dumps(SAU), encoding="utf-8")
    (papers / "toy" / "paper.md").write_text("# Toy paper\n", encoding="utf-8")
    return papers


def make_runs_root(tmp_path: Path) -> Path:
    root = tmp_path / "dest"
    runs = []
    for config in ("alpha_basic", "beta_basic"):
        repo = root / "runs" / config / "toy" / "repo"
        repo.mkdir(parents=True)
        (repo / "train.py").write_text("lr = 3e-4\nbatch_size = 64\n", encoding="utf-8")
        runs.append({"config": config, "paper_id": "toy", "scaffold": "basic",
                     "model": config.split("_")[0], "repo": f"runs/{config}/toy/repo",
                     "missing_cited_files": ["configs/x.yaml"] if config == "beta_basic" else []})
    runs.append({"config": "beta_basic", "paper_id": "absent-paper", "scaffold": "basic",
                 "model": "beta", "repo": "runs/beta_basic/absent-paper/repo"})
    index = {"configs": {"alpha_basic": {"scaffold": "basic", "model": "alpha"},
                         "beta_basic": {"scaffold": "basic", "model": "beta"}}, "runs": runs}
    (root / "runs" / "index.json").write_text(json.dumps(index), encoding="utf-8")
    return root


# ---------------------------------------------------------------- judge specs


@pytest.mark.parametrize("spec", ["bogus", "llm", "llm:", "hybrid", "gpt-4o"])
def test_bad_judge_specs_are_one_line_errors(spec: str) -> None:
    with pytest.raises(JudgeSpecError) as info:
        make_judge(spec)
    assert spec in str(info.value) and "\n" not in str(info.value)


def test_llm_judge_spec_builds_the_named_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    judge = make_judge("llm:openai-compatible:deepseek-v4-pro", "http://judge.local/v1")
    assert isinstance(judge, LLMJudge) and judge.name == "llm:openai-compatible:deepseek-v4-pro"
    assert judge.model.openai_api_base == "http://judge.local/v1"
    with pytest.raises(ModelConfigError):
        make_judge("llm:mistral:large")


def test_offline_judge_takes_no_model() -> None:
    with pytest.raises(JudgeSpecError, match="takes no model"):
        make_judge("offline:gpt-4o")


# ---------------------------------------------------------------- runs roots


def test_score_runs_writes_the_report_layout_and_resumes(tmp_path: Path) -> None:
    papers, root, out = make_papers(tmp_path), make_runs_root(tmp_path), tmp_path / "scores"
    summary = score_runs(root, papers, "scripted", out)
    assert (summary.count("scored"), summary.count("failed")) == (2, 1)
    failure = summary.as_dict()["failures"][0]
    assert failure["paper_id"] == "absent-paper" and "no paper 'absent-paper'" in failure["error"]
    configs = json.loads((out / "configs.json").read_text())
    assert configs == {"alpha_basic": {"scaffold": "basic", "model": "alpha"},
                       "beta_basic": {"scaffold": "basic", "model": "beta"}}
    score = PaperScore.load(out / "beta_basic" / "toy.json")  # missing cited files: still scored
    assert score.model == "llm:scripted" and score.errors == 0
    assert score.overall_score == pytest.approx((0.75 + 0.25) / 2)
    assert score.usage["calls"] == 2 and score.usage["dollars"] > 0
    assert load_scores(out).runs["alpha_basic"]["toy"].overall_score == score.overall_score
    assert summary.usage().calls == 4

    again = score_runs(root, papers, "scripted", out)
    assert (again.count("scored"), again.count("skipped")) == (0, 2)
    assert again.usage().calls == 0


def test_damaged_score_file_is_scored_again(tmp_path: Path) -> None:
    papers, root, out = make_papers(tmp_path), make_runs_root(tmp_path), tmp_path / "scores"
    score_runs(root, papers, "scripted", out)
    (out / "alpha_basic" / "toy.json").write_text("{\"paper_id\": ", encoding="utf-8")
    again = score_runs(root, papers, "scripted", out)
    assert {(o.config, o.status) for o in again.outcomes if o.status != "failed"} == {
        ("alpha_basic", "scored"), ("beta_basic", "skipped")}
    assert PaperScore.load(out / "alpha_basic" / "toy.json").errors == 0


def answer_by_evidence(messages: list[BaseMessage]) -> str:
    """Verdicts that depend on the repository shown: runs mixed up between workers differ."""
    text = str(messages[-1].content)
    score = 1.0 if "lr = 3e-4" in text else 0.0
    ids = re.findall(r"^## Claim (\S+)$", text, re.MULTILINE)
    return json.dumps({"verdicts": [{"id": cid, "score": score, "reasoning": "as shown",
                                     "evidence_refs": []} for cid in ids]})


def by_repository_kind(request: JudgeRequest) -> LLMJudge:
    from tests.agent.scripted import ScriptedChatModel

    model = ScriptedChatModel(replies=[answer_by_evidence] * 200, model_name="gpt-4o")
    return LLMJudge(model, name="llm:scripted", evidence=first_lines, concurrency=1,
                    sleep=lambda _: None, **request.options)


def test_process_pool_gives_the_same_scores(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(JUDGE_KINDS, "by-repository", by_repository_kind)
    papers, root = make_papers(tmp_path), make_runs_root(tmp_path)
    (root / "runs" / "beta_basic" / "toy" / "repo" / "train.py").write_text("lr = 0.1\n")
    serial, pooled = tmp_path / "serial", tmp_path / "pooled"
    score_runs(root, papers, "by-repository", serial, jobs=1)
    summary = score_runs(root, papers, "by-repository", pooled, jobs=2)
    assert summary.count("scored") == 2
    overall = {}
    for config in ("alpha_basic", "beta_basic"):
        a = PaperScore.load(serial / config / "toy.json")
        b = PaperScore.load(pooled / config / "toy.json")
        assert [v.score for _, v in a.verdicts()] == [v.score for _, v in b.verdicts()]
        overall[config] = b.overall_score
    assert overall == {"alpha_basic": 1.0, "beta_basic": 0.0}  # a mix-up would show


def test_missing_repository_is_a_failed_run_not_a_crash(tmp_path: Path) -> None:
    papers, root, out = make_papers(tmp_path), make_runs_root(tmp_path), tmp_path / "scores"
    shutil.rmtree(root / "runs" / "alpha_basic" / "toy" / "repo")
    summary = score_runs(root, papers, "scripted", out)
    failed = {o.config: o.error for o in summary.outcomes if o.status == "failed"
              and o.paper_id == "toy"}
    assert "does not exist" in failed["alpha_basic"]
    assert not (out / "alpha_basic" / "toy.json").exists()


def test_runs_root_errors_name_the_path(tmp_path: Path) -> None:
    with pytest.raises(RunsRootError, match="does not exist"):
        read_runs_root(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(RunsRootError, match="no index.json"):
        read_runs_root(tmp_path / "empty")
    bad = tmp_path / "bad" / "runs"
    bad.mkdir(parents=True)
    (bad / "index.json").write_text('{"runs": [{"config": "x"}]}')
    with pytest.raises(RunsRootError, match=r"runs\[0\] needs"):
        read_runs_root(tmp_path / "bad")


def test_runs_without_index_are_discovered(tmp_path: Path) -> None:
    repo = tmp_path / "runs" / "mine" / "toy" / "repo"
    repo.mkdir(parents=True)
    found = read_runs_root(tmp_path)
    assert [(r.config, r.paper_id, r.repo) for r in found.runs] == [("mine", "toy", repo)]


# ---------------------------------------------------------------- CLI


def test_cli_score_writes_official_json(tmp_path: Path) -> None:
    papers, root = make_papers(tmp_path), make_runs_root(tmp_path)
    cli._register_all()
    out = tmp_path / "one.json"
    result = CliRunner().invoke(cli.app, [
        "score", "--paper", "toy", "--repo", str(root / "runs" / "alpha_basic" / "toy" / "repo"),
        "--papers", str(papers), "--judge", "scripted", "-o", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["paper_id"] == "toy" and set(data["dimensions"]) == {"D1", "D2"}
    assert data["dimensions"]["D1"]["claims"][0]["score"] == 0.75
    assert data["usage"]["calls"] == 2 and "2 model calls" in result.output


def test_offline_scoring_does_not_load_langchain(tmp_path: Path) -> None:
    # A fresh interpreter: this test process has loaded langchain already.
    papers, root = make_papers(tmp_path), make_runs_root(tmp_path)
    repo = root / "runs" / "alpha_basic" / "toy" / "repo"
    out = tmp_path / "one.json"
    code = ("import sys\n"
            "from sabench.benchmark.cli import main\n"
            f"sys.argv = ['sabench', 'score', '--paper', 'toy', '--repo', {str(repo)!r}, "
            f"'--papers', {str(papers)!r}, '--judge', 'offline', '-o', {str(out)!r}]\n"
            "try:\n    main()\nexcept SystemExit as exc:\n    assert not exc.code, exc.code\n"
            "print(sorted(m for m in sys.modules if m.startswith('langchain')))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"
    assert json.loads(out.read_text())["paper_id"] == "toy"
    assert scoring.usage_recorder("offline") is None
    assert scoring.usage_recorder("llm:openai:gpt-4o") is not None


def test_cli_score_runs_json_summary_and_exit_code(tmp_path: Path) -> None:
    papers, root = make_papers(tmp_path), make_runs_root(tmp_path)
    cli._register_all()
    result = CliRunner().invoke(cli.app, [
        "score-runs", str(root), "--papers", str(papers), "--judge", "scripted",
        "--out", str(tmp_path / "scores"), "--json"])
    assert result.exit_code == 1  # one run names a paper the dataset lacks
    summary = json.loads(result.stdout[result.stdout.index("{"):])
    assert (summary["scored"], summary["failed"]) == (2, 1)


def test_cli_bad_judge_is_one_line_exit_2(tmp_path: Path) -> None:
    papers = make_papers(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "sabench.benchmark.cli", "score", "--paper", "toy", "--repo",
         str(tmp_path), "--papers", str(papers), "--judge", "nonsense"],
        capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "nonsense" in proc.stderr


# ---------------------------------------------------------------- release data


@pytest.mark.dataset
def test_release_index_lists_every_run(sabench_data: Path, tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    shutil.copy(sabench_data / "runs" / "index.json", tmp_path / "runs" / "index.json")
    root = read_runs_root(tmp_path)
    assert len(root.runs) == 240 and len(root.configs) == 12
    assert sum(bool(r.missing_cited_files) for r in root.runs) == 72
    assert all(r.repo == tmp_path / "runs" / r.config / r.paper_id / "repo" for r in root.runs)


@pytest.mark.dataset
def test_release_configuration_scores_with_real_papers(sabench_data: Path,
                                                        tmp_path: Path) -> None:
    dest = tmp_path / "dest" / "runs"
    dest.mkdir(parents=True)
    with tarfile.open(sabench_data / "runs" / "gpt4o_basic.tar.gz") as archive:
        archive.extractall(dest, filter="data")
    index = json.loads((sabench_data / "runs" / "index.json").read_text())
    index["runs"] = [r for r in index["runs"] if r["config"] == "gpt4o_basic"]
    (dest / "index.json").write_text(json.dumps(index))
    out = tmp_path / "scores"
    summary = score_runs(tmp_path / "dest", sabench_data / "papers", "scripted", out, jobs=2)
    assert summary.count("scored") == 20 and summary.count("failed") == 0
    official = sabench_data / "official_scores" / "gpt4o_basic"
    ours = sorted((out / "gpt4o_basic").glob("*.json"))
    assert len(ours) == 20
    for path in ours:  # every claim the official judge scored, and no other
        theirs = PaperScore.load(official / path.name)
        assert ({v.id for _, v in PaperScore.load(path).verdicts()}
                == {v.id for _, v in theirs.verdicts()})
    assert load_scores(out).configs["gpt4o_basic"].model == "gpt-4o"


def test_keyword_judge_kind_scores_without_a_model(tmp_path: Path) -> None:
    papers, root = make_papers(tmp_path), make_runs_root(tmp_path)
    judge = make_judge("keyword")
    score = scoring.score_repo(scoring.paper_spec(papers, "toy"),
                               root / "runs" / "alpha_basic" / "toy" / "repo", judge)
    assert score.errors == 0 and score.model == judge.name
    with pytest.raises(JudgeSpecError, match="takes no model"):
        make_judge("keyword:x")


def test_low_verdicts_get_categories_the_report_counts(tmp_path: Path) -> None:
    from sabench.benchmark.report import failure_categories

    papers, root, out = make_papers(tmp_path), make_runs_root(tmp_path), tmp_path / "scores"
    score_runs(root, papers, "scripted", out)
    score = PaperScore.load(out / "alpha_basic" / "toy.json")
    low = [v for _, v in score.verdicts() if v.score <= 0.25]
    assert low and all(v.failure_category is not None for v in low)
    counts = failure_categories(load_scores(out))
    assert sum(counts["alpha_basic"]["D2"].values()) == len(low)


@pytest.mark.dataset
def test_cli_taxonomy_on_the_release(official_scores_dir: Path) -> None:
    cli._register_all()
    result = CliRunner().invoke(cli.app, ["taxonomy", str(official_scores_dir), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["zero"]["n"] == 7034 and data["published_zero"]["implementation_mismatch"] == 0.408


def test_estimate_prices_llm_judges_and_not_offline_ones(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    papers, root = make_papers(tmp_path), make_runs_root(tmp_path)
    spec = scoring.paper_spec(papers, "toy")
    repo = root / "runs" / "alpha_basic" / "toy" / "repo"
    assert scoring.estimate(spec, repo, make_judge("keyword"))["dollars"] == 0.0
    unpriced = scoring.estimate(spec, repo, make_judge("scripted"))
    assert unpriced["requests"] == 2 and unpriced["dollars"] is None
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    priced = scoring.estimate(spec, repo, make_judge("llm:openai:gpt-4o"))
    expected = (priced["input_tokens"] * 2.5 + priced["output_tokens"] * 10.0) / 1e6
    assert priced["dollars"] == pytest.approx(expected) and priced["dollars"] > 0


def test_scores_of_another_judge_are_neither_reused_nor_overwritten(tmp_path: Path) -> None:
    papers, root, out = make_papers(tmp_path), make_runs_root(tmp_path), tmp_path / "scores"
    score_runs(root, papers, "keyword", out)
    before = (out / "alpha_basic" / "toy.json").read_text()
    summary = score_runs(root, papers, "scripted", out)
    conflicts = [o for o in summary.outcomes if o.paper_id == "toy"]
    assert all(o.status == "failed" and "scored by keyword, not llm:scripted" in o.error
               for o in conflicts) and len(conflicts) == 2
    assert (out / "alpha_basic" / "toy.json").read_text() == before


def test_hybrid_spec_passes_threshold_and_emulated_judge() -> None:
    from sabench.verifiers.llm_judge import HybridJudge

    judge = make_judge("hybrid:openai-compatible:qwen", "http://judge.local/v1",
                       threshold=0.3, emulate="deepseek-v4-pro")
    assert isinstance(judge, HybridJudge) and judge.threshold == 0.3
    assert judge.offline.name == "offline:deepseek-v4-pro"
    assert judge.name == "hybrid:openai-compatible:qwen"
    # options meant for other kinds are ignored, not errors
    assert make_judge("offline", threshold=0.3, emulate="gpt-5.5").name == "offline:gpt-5.5"
    with pytest.raises(JudgeSpecError, match="cannot emulate"):
        make_judge("offline", emulate="nobody")


def test_evidence_choice_reaches_the_llm_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "not-used")
    judge = make_judge("llm:openai-compatible:some-model", "http://localhost:9",
                       evidence="official")
    assert isinstance(judge, LLMJudge)
    assert judge.evidence.__qualname__.startswith("official_evidence.")
    default = make_judge("llm:openai-compatible:some-model", "http://localhost:9")
    assert default.evidence.__qualname__.startswith("default_evidence.")
    assert make_judge("offline", evidence="official").name.startswith("offline")
    with pytest.raises(JudgeSpecError, match="evidence 'nearby'"):
        make_judge("llm:openai-compatible:some-model", "http://localhost:9", evidence="nearby")


def test_score_warns_on_an_empty_repository_and_a_paper_without_text(tmp_path: Path) -> None:
    papers = make_papers(tmp_path)
    (papers / "toy" / "paper.md").unlink()
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "weights.py").write_bytes(b"\0\1\2")  # binary, named .py
    proc = subprocess.run(
        [sys.executable, "-m", "sabench.benchmark.cli", "score", "--paper", "toy", "--repo",
         str(empty), "--papers", str(papers), "--judge", "offline", "-o",
         str(tmp_path / "s.json")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "holds no text files" in proc.stderr and "has no paper.md" in proc.stderr


def test_taxonomy_of_a_folder_without_result_files_is_one_line(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "sabench.benchmark.cli", "taxonomy",
                           str(tmp_path)], capture_output=True, text=True)
    assert proc.returncode == 2 and "no result files" in proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and not proc.stdout
