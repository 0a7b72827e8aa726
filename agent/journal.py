"""A run's journal on the host: what was sent and started, kept outside the checkpoints.

Checkpoints record what a step *finished*. Two facts must survive a crash in the middle of a
step: that a model request was sent (so `requests` counts what was paid for, summed over
resumes) and that a tool with side effects was started (so a resumed run does not silently run
a command twice). Each is a line or a file written before the action, with an fsync.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

REQUESTS_FILE = "requests.log"
TOOLS_FOLDER = "tools-started"
TOOL_LOG = "tool-results.jsonl"


class RunJournal:
    """Append-only records in `folder` (created on first write)."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)

    def _append(self, name: str, line: str) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.folder / name, "a", encoding="utf-8") as handle:
            handle.write(line.rstrip("\n") + "\n")
            handle.flush()
            os.fsync(handle.fileno())

    def request_sent(self, label: str) -> None:
        """Record a model request about to be sent."""
        self._append(REQUESTS_FILE, label)

    def requests_sent(self) -> int:
        path = self.folder / REQUESTS_FILE
        if not path.is_file():
            return 0
        with open(path, encoding="utf-8") as handle:
            return sum(1 for _ in handle)

    def _marker(self, call_id: str) -> Path:
        return self.folder / TOOLS_FOLDER / re.sub(r"[^A-Za-z0-9_.-]", "_", call_id)

    def tool_started(self, call_id: str) -> None:
        """Record that a tool call is about to run."""
        marker = self._marker(call_id)
        marker.parent.mkdir(parents=True, exist_ok=True)
        with open(marker, "w", encoding="utf-8") as handle:
            handle.flush()
            os.fsync(handle.fileno())

    def was_started(self, call_id: str) -> bool:
        return self._marker(call_id).exists()

    def log_tool(self, call_id: str, name: str, output: str) -> None:
        """Keep a tool's result for the run's transcript (a resumed call appears again)."""
        self._append(TOOL_LOG, json.dumps({"id": call_id, "name": name, "output": output}))

    def tool_results(self) -> dict[str, str]:
        """Each tool call's latest logged result, by call id."""
        path = self.folder / TOOL_LOG
        if not path.is_file():
            return {}
        with open(path, encoding="utf-8") as handle:
            entries = [json.loads(line) for line in handle if line.strip()]
        return {entry["id"]: entry["output"] for entry in entries}
