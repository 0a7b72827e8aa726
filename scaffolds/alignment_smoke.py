"""The alignment-first scaffold's smoke run: does the repository compile, import and run?

Three steps in the sandbox, each bounded in time:

1. every Python file of the submission is compiled;
2. every module except the entry point is imported in a process of its own (an import error,
   or a crash at import time, is the module's);
3. the entry point runs in its smoke mode (`python main.py --smoke`, with `SABENCH_SMOKE=1`) when
   it declares one; the implementation prompt asks for it (tiny settings, seconds).

A failure is attributed to the submission file of the innermost traceback frame, so the repair
step edits the file that broke. A missing third-party module is the sandbox's environment, not
the code (the repair step could not install it): it is reported, never held against a claim.
"""

from __future__ import annotations

import json
import re
from typing import Any

from sabench.agent.workspace import AgentWorkspace

SUBMISSION = "/home/submission"
MARKER = "SABENCH-SMOKE "
_FRAME = re.compile(r'File "([^"]+)", line (\d+)')
_MISSING = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")

# Runs inside the sandbox: compile everything, import every module but the entry point, each in
# a process of its own; one JSON line per finding.
_SCRIPT = r"""
import json, pathlib, subprocess, sys
root, entry, timeout = pathlib.Path(sys.argv[1]), sys.argv[2], float(sys.argv[3])
def say(**item): print("SABENCH-SMOKE " + json.dumps(item), flush=True)
files = sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)
broken = set()
for p in files:
    rel = str(p.relative_to(root))
    try:
        compile(p.read_bytes(), rel, "exec")
    except (SyntaxError, ValueError) as e:
        broken.add(rel)
        say(step="compile", file=rel, line=getattr(e, "lineno", None) or 0,
            error=f"{type(e).__name__}: {e}")
for p in files:
    rel = str(p.relative_to(root))
    parts = p.relative_to(root).with_suffix("").parts
    if rel == entry or rel in broken or parts[-1] == "__main__" or \
            not all(part.isidentifier() for part in parts):
        continue
    module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    if not module:
        continue
    try:
        done = subprocess.run([sys.executable, "-c", f"import {module}"], cwd=root,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        say(step="import", file=rel, error=f"importing {module} took over {timeout:.0f}s")
        continue
    if done.returncode:
        say(step="import", file=rel, error=done.stderr[-3000:])
"""


def smoke_run(workspace: AgentWorkspace, entry: str, planned: list[str], *,
              run_entry: bool = True, timeout: float = 120.0) -> dict[str, Any]:
    """Compile, import and run the submission; problems attributed to files.

    Args:
        workspace: the run's workspace (the submission is at /home/submission).
        entry: the entry point, relative to the submission (`main.py`).
        planned: the files of the plan (a missing module named after one is the code's fault).
        run_entry: run the entry point's smoke mode (when it declares one).
        timeout: seconds for the entry point's smoke run (each import gets a sixth of it).

    Returns:
        `{"problems": [{"step", "file", "line", "error"}], "environment": [missing modules],
        "ran": bool, "seconds": float}`; `problems` is empty when everything worked.
    """
    report: dict[str, Any] = {"problems": [], "environment": [], "ran": False, "seconds": 0.0}
    checked = workspace.exec(
        ["python3", "-c", _SCRIPT, SUBMISSION, entry, str(max(10.0, timeout / 6))],
        timeout=timeout * 4)
    report["seconds"] += checked.duration
    for line in checked.stdout.splitlines():
        if line.startswith(MARKER):
            add_problem(report, json.loads(line[len(MARKER):]), planned)
    if checked.timed_out:
        report["problems"].append({"step": "import", "file": entry, "line": 0,
                                   "error": "compiling and importing the modules timed out"})
    if run_entry and not report["problems"] and declares_smoke(workspace, entry):
        run_smoke_mode(workspace, entry, planned, timeout, report)
    return report


def declares_smoke(workspace: AgentWorkspace, entry: str) -> bool:
    try:
        text = workspace.read(f"{SUBMISSION}/{entry}").decode("utf-8", "replace")
    except (FileNotFoundError, PermissionError, IsADirectoryError):
        return False
    return "--smoke" in text or "SABENCH_SMOKE" in text


def run_smoke_mode(workspace: AgentWorkspace, entry: str, planned: list[str], timeout: float,
                   report: dict[str, Any]) -> None:
    done = workspace.exec(["python3", entry, "--smoke"], cwd=SUBMISSION, timeout=timeout,
                          env={"SABENCH_SMOKE": "1", "PYTHONDONTWRITEBYTECODE": "1"})
    report["ran"] = True
    report["seconds"] += done.duration
    if done.timed_out:
        report["problems"].append({"step": "run", "file": entry, "line": 0, "error": (
            f"`python {entry} --smoke` did not finish in {timeout:.0f}s: the smoke mode must "
            "use tiny settings")})
    elif done.exit_code != 0:
        add_problem(report, {"step": "run", "file": entry,
                             "error": (done.stderr or done.stdout)[-3000:]}, planned)


def add_problem(report: dict[str, Any], item: dict[str, Any], planned: list[str]) -> None:
    """Record one finding: environment (a missing third-party module) or a file's problem,
    moved to the innermost submission frame of its traceback."""
    error = str(item.get("error") or "")
    missing = _MISSING.search(error)
    if missing and not is_planned_module(missing.group(1), planned):
        report["environment"].append(missing.group(1))
        return
    file, line = innermost_frame(error) or (item.get("file"), item.get("line") or 0)
    report["problems"].append({"step": item.get("step"), "file": file, "line": line,
                               "error": last_lines(error)})


def innermost_frame(error: str) -> tuple[str, int] | None:
    """The last traceback frame inside the submission, as (relative path, line)."""
    found = None
    for path, line in _FRAME.findall(error):
        for prefix in (f"{SUBMISSION}/", "/workspace/submission/", "./"):
            if path.startswith(prefix):
                path = path[len(prefix):]
        if not path.startswith("/") and not path.startswith("<"):
            found = (path, int(line))
    return found


def is_planned_module(name: str, planned: list[str]) -> bool:
    top = name.split(".")[0]
    return any(p.removesuffix(".py").split("/")[0] == top for p in planned)


def last_lines(text: str, lines: int = 12, chars: int = 1500) -> str:
    """The end of an error output: where the cause is."""
    return "\n".join(text.strip().splitlines()[-lines:])[-chars:]
