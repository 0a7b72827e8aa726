"""PaperCoder end to end over the loopback model server, and its parsing of hard replies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sabench.benchmark.reproduce import RunRequest, reproduce
from sabench.scaffolds.papercoder_parse import (
    content_to_json,
    first_fence,
    paper_document,
    task_list,
)
from tests.agent.model_server import LoopbackModelServer, Reply, Request
from tests.sandbox.conftest import require_backend

DEMO = Path(__file__).resolve().parents[2] / "benchmark" / "demo"
PAPER = DEMO / "papers" / "smoothlr"
FAITHFUL = DEMO / "repos" / "faithful"
FILES = ["config.py", "data.py", "model.py", "train.py", "run.py"]
CONFIG = "lr: 0.1\nepochs: 30"
TASKS = ('[CONTENT]\n{"Task list": ["config.yaml", "config.py", "data.py", "model.py",\n'
         '  "train.py", "run.py",],  # run.py drives the rest\n'
         ' "Logic Analysis": [["model.py", "the softmax model\nwith label smoothing"]],\n'
         ' "Anything UNCLEAR": "the \\alpha value"}\n[/CONTENT]')


@pytest.fixture(autouse=True)
def _setup(monkeypatch: pytest.MonkeyPatch) -> None:
    require_backend("local")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")


def last_line(request: Request) -> str:
    return str(request.body["messages"][-1]["content"]).rstrip().splitlines()[-1]


def scripted(coding: dict[str, Reply] | None = None, tasks: str = TASKS):
    """Answers each stage: planning by turn, analysis and code by the file asked for."""

    def respond(request: Request) -> Reply:
        line = last_line(request)
        if line.startswith("## Code: "):
            name = line.removeprefix("## Code: ")
            if coding and name in coding:
                return coding[name]
            return Reply(text=f"Here it is.\n```python\n{(FAITHFUL / name).read_text()}```\n"
                              f"Done.")
        if line.startswith("## Logic Analysis: "):
            return Reply(text=f"Analysis of {line.removeprefix('## Logic Analysis: ')}.")
        turn = sum(m["role"] == "assistant" for m in request.body["messages"])
        return Reply(text=["The plan.", '[CONTENT]{"File list": []}[/CONTENT]', tasks,
                           f"## Code: config.yaml\n```yaml\n{CONFIG}\n```"][turn])

    return respond


def run(server: LoopbackModelServer, out: Path, **options: Any) -> dict[str, Any]:
    return reproduce(RunRequest(paper_dir=PAPER, scaffold="papercoder",
                                model="openai-compatible:pc-model", out=out, backend="local",
                                base_url=server.openai_url, judge=None, options=options))


def stage_of(request: Request) -> str:
    line = last_line(request)
    return "code" if line.startswith("## Code: ") else (
        "analyze" if line.startswith("## Logic Analysis: ") else "plan")


def test_papercoder_on_the_demo_paper(model_server: LoopbackModelServer,
                                      tmp_path: Path) -> None:
    model_server.responder = scripted()
    record = run(model_server, tmp_path / "run")
    repo = tmp_path / "run" / "repo"
    assert record["status"] == "ok" and record["stop_reason"] == "finished"
    assert (repo / "config.yaml").read_text() == CONFIG
    for name in FILES:
        assert (repo / name).read_bytes() == (FAITHFUL / name).read_bytes(), name
    stages = [stage_of(r) for r in model_server.requests]
    assert stages[:4] == ["plan"] * 4 and stages.count("analyze") == stages.count("code") == 5
    assert record["requests"] == 4 + 2 * len(FILES)
    # Planning is one conversation, re-sent whole: the 4th request holds 8 messages (the
    # reply makes the 9 the original recorded).
    assert len(model_server.requests[3].body["messages"]) == 8
    assert all(r.body.get("max_tokens", r.body.get("max_completion_tokens")) == 16384
               for r in model_server.requests)
    # Coding goes in task order and each request shows every earlier file, but not YAML.
    coding = [r for r in model_server.requests if stage_of(r) == "code"]
    assert [last_line(r) for r in coding] == [f"## Code: {name}" for name in FILES]
    last = coding[-1].body["messages"][-1]["content"]
    assert (FAITHFUL / "train.py").read_text() in last and "Analysis of run.py." in last
    assert "## Code Files\n\n\n-----" in coding[0].body["messages"][-1]["content"]
    # Each analysis is its own conversation that sees no other analysis.
    analyses = [r for r in model_server.requests if stage_of(r) == "analyze"]
    assert all(len(r.body["messages"]) == 2 for r in analyses)
    assert all("Analysis of" not in json.dumps(r.body) for r in analyses)


def test_a_reply_without_a_fence_is_the_file_and_a_cut_reply_is_kept(
        model_server: LoopbackModelServer, tmp_path: Path) -> None:
    cut = "```python\nimport numpy as np\ndef train(cfg):\n    lr = cfg['lr']\n"
    model_server.responder = scripted({
        "data.py": Reply(text="import numpy as np\nX = np.zeros(3)\n"),
        "model.py": Reply(text=cut, finish="length"),
    })
    record = run(model_server, tmp_path / "run")
    repo = tmp_path / "run" / "repo"
    assert (repo / "data.py").read_text() == "import numpy as np\nX = np.zeros(3)\n"
    assert (repo / "model.py").read_text() == cut  # no retry of bad content
    finishes = {e.get("file"): e.get("finish_reason") for e in record["trace"]
                if e["node"] == "code"}
    assert finishes["model.py"] == "length" and finishes["data.py"] == "stop"
    assert record["stop_reason"] == "finished"


def test_an_unusable_task_list_ends_the_run_with_the_reason(
        model_server: LoopbackModelServer, tmp_path: Path) -> None:
    model_server.responder = scripted(tasks="I would start with the model.")
    record = run(model_server, tmp_path / "run")
    assert record["status"] == "error" and record["stop_reason"] == "plan_unusable"
    assert "no JSON object" in record["error"]
    assert model_server.request_count() == 4  # nothing was analysed or coded


def test_the_task_list_parser_repairs_what_models_write() -> None:
    plan = content_to_json(TASKS)
    assert task_list(plan) == ["config.yaml", *FILES]
    assert plan["Logic Analysis"][0][1] == "the softmax model\nwith label smoothing"
    assert plan["Anything UNCLEAR"] == "the \\alpha value"
    cut = '[CONTENT]\n{"Required packages": ["numpy"],\n "Task list": ["a.py", "b.py", "c'
    assert task_list(content_to_json(cut)) == ["a.py", "b.py", "c"]
    broken = ('{"Task list": ["x.py", "main.py"],\n "Shared Knowledge": "use the "best" model"'
              '\n "Anything UNCLEAR": ""}')
    assert task_list(content_to_json(broken)) == ["x.py", "main.py"]


def test_first_fence_and_the_paper_document() -> None:
    assert first_fence("Intro\n```python\na = 1\n```\n```\nb\n```") == "a = 1\n"
    assert first_fence("inline ```x``` only") == "inline ```x``` only"
    document = paper_document("p", "# Title\n\nAn abstract.\n\n# 1 Intro\n\nText $x$ here.\n"
                                    "## Detail\n\nMore.\n\n# A Appendix\n\nExtra.\n")
    sections = document["pdf_parse"]["body_text"]
    assert document["title"] == "Title" and document["abstract"] == "An abstract."
    assert [s["section"] for s in sections] == ["Intro", "Intro::Detail"]
    assert sections[0]["text"] == "Text x here." and sections[1]["text"] == "More. Extra."


@pytest.mark.dataset
def test_the_paper_document_has_the_sections_the_original_made(sabench_data: Path) -> None:
    """Our conversion of each development paper against the cleaned document the original
    fed to its model (numbered sections only; the appendix inside the last one)."""
    runs = sorted((sabench_data / "transcripts" / "gpt4o_papercoder").iterdir())
    assert len(runs) == 20
    for run in runs:
        recorded = json.loads((run / f"{run.name}_cleaned.json").read_text())
        markdown = (sabench_data / "papers" / run.name / "paper.md").read_text()
        ours = paper_document(run.name, markdown)
        sections = [(s["sec_num"], s["section"]) for s in ours["pdf_parse"]["body_text"]]
        assert sections == [(s["sec_num"], s["section"])
                            for s in recorded["pdf_parse"]["body_text"]], run.name
        assert 0.95 < len(str(ours)) / len(str(recorded)) < 1.1, run.name
