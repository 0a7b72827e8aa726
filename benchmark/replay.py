"""Replay a recorded SA-Bench run through our scaffold graph and measure its fidelity.

The recorded model replies are served by `ReplayChatModel`; every tool call they make is
executed for real in our sandbox, at the paths the recorded run used (/home/paper,
/home/submission). If our tools behave like the original's, the repository we end with is the
released one, byte for byte. `replay_run` runs the replay inside the evaluation graph (so it
writes OUT/repo/ and OUT/record.json like `reproduce`, and resumes the same way) and then
compares: files of the released repository written byte-identical, and tool outputs against the
recorded ones, each difference with the reason we can tell.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sabench.agent.journal import RunJournal
from sabench.agent.replay import RecordingError, load_recorded_messages
from sabench.benchmark.reproduce import RunRequest, reproduce
from sabench.sandbox.types import Limits
from sabench.verifiers.files import plain_name, read_json

#: How a recorded run shows which scaffold made it.
SCAFFOLD_MARKERS = (("messages.jsonl", "basic"), ("planning_response.json", "papercoder"))
#: Replays run until the recording ends: the recorded run's own limits already applied.
REPLAY_OPTIONS: dict[str, Any] = {"max_steps": 1_000_000, "time_limit_s": None}
WORKSPACE_PATH = re.compile(r"(/[^\s'\"]*?)/workspace/(repo|paper)\b")


def scaffold_of(run_dir: Path) -> str:
    """The scaffold that made a recorded run, read from its files."""
    for marker, scaffold in SCAFFOLD_MARKERS:
        if (run_dir / marker).is_file():
            return scaffold
    raise RecordingError(f"{run_dir}: not a recorded run (no messages.jsonl or "
                         f"planning_response.json)")


def paper_id_of(run_dir: Path) -> str:
    """The recorded run's paper: `case_id` of its meta.json, else the folder's name."""
    meta = run_dir / "meta.json"
    if not meta.is_file():
        return run_dir.name
    data = read_json(meta, RecordingError, "not a run's meta.json")
    if not isinstance(data, dict):
        raise RecordingError(f"{meta}: not a run's meta.json (expected an object)")
    paper_id = str(data.get("case_id") or run_dir.name)
    if not plain_name(paper_id):
        raise RecordingError(f"{meta}: case_id {paper_id!r} is not a paper id")
    return paper_id


def recorded_messages(run_dir: Path) -> list[dict[str, Any]]:
    """`load_recorded_messages`, with every way the file can be broken as a RecordingError.

    The loader raises RecordingError for a line that is JSON but not a message; a byte that
    is not UTF-8 or a line nested too deeply would escape it as a traceback.
    """
    try:
        return load_recorded_messages(run_dir)
    except UnicodeDecodeError as exc:
        raise RecordingError(f"{run_dir / 'messages.jsonl'}: not valid UTF-8 "
                             f"({exc.reason})") from None
    except RecursionError:
        raise RecordingError(f"{run_dir / 'messages.jsonl'}: a line is JSON nested too "
                             f"deeply") from None


def replay_run(run_dir: Path, papers: Path, out: Path, *, released: Path | None = None,
               thread: str | None = None, backend: str = "docker", judge: str | None = None,
               options: dict[str, Any] | None = None,
               on_event: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Replay one recorded run; returns its fidelity report (the record is in OUT)."""
    run_dir = Path(run_dir)
    scaffold = scaffold_of(run_dir)
    paper_id = paper_id_of(run_dir)
    paper_dir = Path(papers) / paper_id
    if not paper_dir.is_dir() and (Path(papers) / "papers" / paper_id).is_dir():
        paper_dir = Path(papers) / "papers" / paper_id
    request = RunRequest(paper_dir=paper_dir, scaffold=scaffold, model=f"replay:{run_dir}",
                         out=Path(out), thread=thread, judge=judge, backend=backend,
                         options=dict(options or {}), limits=Limits(timeout_s=60.0))
    setup = basic_setup if scaffold == "basic" else papercoder_setup
    setup(request, run_dir, released)
    record = reproduce(request, on_event)
    report = (fidelity if scaffold == "basic" else papercoder_fidelity)(
        run_dir, Path(out), released)
    # Replies served; `requests` also counts one that found the recording at its end.
    report.update(paper_id=paper_id, scaffold=scaffold, stop_reason=record.get("stop_reason"),
                  status=record.get("status"), requests=record.get("requests"),
                  model_calls=(record.get("usage") or {}).get("calls", 0))
    return report


def basic_setup(request: RunRequest, run_dir: Path, released: Path | None) -> None:
    """Commands run where the original ran them, so the paths it wrote into files and
    printed in outputs are the same (see `host_view` in scaffolds/basic.py)."""
    root = original_root(run_dir, recorded_messages(run_dir))
    request.options = {**REPLAY_OPTIONS, **({"original_root": root} if root else {}),
                       **request.options}
    request.workspace_aliases = (f"{root}/workspace",) if root else ()


def papercoder_setup(request: RunRequest, run_dir: Path, released: Path | None) -> None:
    """Coding replies are synthesised from the released repository."""
    request.model_options = {"released": released}


def fidelity(run_dir: Path, out: Path, released: Path | None) -> dict[str, Any]:
    """BasicAgent: files and tool outputs against the recording and the release."""
    recorded = recorded_messages(run_dir)
    root = original_root(run_dir, recorded)
    report: dict[str, Any] = {
        "recorded_calls": sum(1 for m in recorded if m["role"] == "assistant")}
    report.update(tool_differences(recorded, RunJournal(out / "journal").tool_results(), root))
    if released is not None:
        report.update(compare_files(Path(released), out / "repo", root))
    return report


def papercoder_fidelity(run_dir: Path, out: Path, released: Path | None) -> dict[str, Any]:
    """Calls made against the recording, the parsed task list against the files the original
    analysed, and the released files written byte-identical."""
    from sabench.agent.replay_papercoder import ANALYSIS_SUFFIX

    record = json.loads((out / "record.json").read_text())
    calls = Counter(entry["node"] for entry in record["trace"] if entry["kind"] == "model")
    recorded = {p.name[:-len(ANALYSIS_SUFFIX)] for p in run_dir.glob(f"*{ANALYSIS_SUFFIX}")}
    analysed = {entry.get("file") for entry in record["trace"] if entry["node"] == "analyze"}
    report: dict[str, Any] = {
        "recorded_calls": 4 + 2 * len(recorded), "planning_calls": calls["plan"],
        "analysis_calls": calls["analyze"], "coding_calls": calls["code"],
        "task_list_identical": {f.replace("/", "_") for f in analysed} == recorded,
    }
    report["calls_matched"] = (report["task_list_identical"] and calls["plan"] == 4
                               and calls["analyze"] == calls["code"] == len(recorded))
    if released is not None:
        report.update(compare_files(Path(released), out / "repo", None))
    return report


# ------------------------------------------------------------------------------- files


def compare_files(released: Path, ours: Path, root: str | None) -> dict[str, Any]:
    """Which released files we wrote byte-identical, and why the others differ."""
    names = sorted(p.relative_to(released).as_posix() for p in released.rglob("*")
                   if p.is_file() and not p.is_symlink())
    differing = []
    for name in names:
        reason = file_difference(released / name, ours / name, root)
        if reason is not None:
            differing.append({"file": name, "reason": reason})
    same = len(names) - len(differing)
    return {"files_released": len(names), "files_identical": same,
            "share_identical": round(same / len(names), 4) if names else None,
            "files_differing": differing}


def file_difference(theirs: Path, ours: Path, root: str | None) -> str | None:
    """None when identical, else the reason we can tell."""
    if not ours.is_file():
        return "missing"
    want, got = theirs.read_bytes(), ours.read_bytes()
    if want == got:
        return None
    if root and (want.replace(f"{root}/workspace/repo".encode(), b"/home/submission")
                 == got.replace(f"{root}/workspace/repo".encode(), b"/home/submission")):
        return "paths: the host path in the file's text differs"
    if want.rstrip() == got.rstrip():
        return "trailing whitespace"
    return "content"


# ------------------------------------------------------------------------------- tool outputs


def original_root(run_dir: Path, recorded: list[dict[str, Any]]) -> str | None:
    """The host folder the original run's /home paths were rewritten to (its run root)."""
    for message in recorded:
        if message["role"] == "tool":
            match = WORKSPACE_PATH.search(message.get("content") or "")
            if match:
                return match.group(1)
    return None


def tool_differences(recorded: list[dict[str, Any]], ours: dict[str, str],
                     root: str | None) -> dict[str, Any]:
    """Count tool outputs that differ from the recording (after path mapping), by tool and
    by the kind of difference."""
    names = {call["id"]: call["function"]["name"] for m in recorded
             for call in (m.get("tool_calls") or [])}
    kinds: Counter[str] = Counter()
    by_tool: Counter[str] = Counter()
    examples: list[dict[str, str]] = []
    compared = 0
    for message in recorded:
        if message["role"] != "tool" or message.get("tool_call_id") not in ours:
            continue
        compared += 1
        want = message.get("content") or ""  # the replay runs at the original's paths
        got = ours[message["tool_call_id"]]
        kind = difference_kind(want, got, names.get(message["tool_call_id"], "?"))
        if kind is None:
            continue
        kinds[kind] += 1
        by_tool[names.get(message["tool_call_id"], "?")] += 1
        if len(examples) < 5:
            examples.append({"id": message["tool_call_id"], "kind": kind,
                             "recorded": want[:300], "ours": got[:300]})
    return {"tool_outputs_compared": compared, "tool_output_diffs": sum(kinds.values()),
            "tool_output_diff_kinds": dict(kinds), "tool_output_diffs_by_tool": dict(by_tool),
            "tool_output_diff_examples": examples}


def difference_kind(want: str, got: str, tool: str) -> str | None:
    """None when equal, else the first explanation that fits."""
    if want == got:
        return None
    if "...[output truncated]..." in want or "...[output truncated]..." in got:
        return "truncation"
    if sorted(want.splitlines()) == sorted(got.splitlines()):
        return "order"
    if want.startswith("ToolError") or got.startswith("ToolError"):
        return "error"
    if tool == "bash" and want.split("[stdout]")[0] != got.split("[stdout]")[0]:
        return "exit_code"
    return "output"
