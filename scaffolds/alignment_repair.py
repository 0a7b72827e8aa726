"""Repair strategies of the alignment-first scaffold, registered by name.

A strategy turns one file's failing claims (with the check's reasons and evidence) into one
model request, and applies the reply to the file. The request and the application are separate
graph nodes, so a paid reply is checkpointed before anything acts on it.

- `edits` (default): targeted edits, exact replacements or insertions after a line number;
  an edit whose old text is not in the file exactly once is refused, the others still apply.
- `rewrite`: the whole file written again, with the findings in the request.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Protocol

from sabench.agent.tools import ToolError, WorkspaceTools
from sabench.scaffolds import alignment_prompts as prompts
from sabench.scaffolds.papercoder_parse import PlanParseError, balanced_object, first_fence


class RepairStrategy(Protocol):
    """How failing claims of one file become a request, and its reply a change."""

    name: str

    def request(self, path: str, numbered: str, findings: str) -> str:
        """The model request for `path` (its numbered content and the findings)."""
        ...

    def apply(self, tools: WorkspaceTools, target: str, reply: str) -> dict[str, int]:
        """Apply the reply to `target`; counts of applied and refused changes."""
        ...


def json_object(text: str) -> dict:
    block = balanced_object(text)
    if block is None:
        raise PlanParseError("no JSON object in the reply")
    try:
        value = json.loads(block)
    except ValueError as exc:
        raise PlanParseError(f"the reply's JSON does not parse ({exc})") from None
    if not isinstance(value, dict):
        raise PlanParseError("the reply is not a JSON object")
    return value


@dataclass(frozen=True)
class TargetedEdits:
    name: str = "edits"

    def request(self, path: str, numbered: str, findings: str) -> str:
        return prompts.repair_request(path, numbered, findings)

    def apply(self, tools: WorkspaceTools, target: str, reply: str) -> dict[str, int]:
        try:
            edits = json_object(reply).get("edits") or []
        except PlanParseError:
            return {"applied": 0, "refused": 1}
        counts = {"applied": 0, "refused": 0}
        for edit in edits if isinstance(edits, list) else []:
            try:
                apply_edit(tools, target, edit)
                counts["applied"] += 1
            except (ToolError, ValueError, TypeError):
                counts["refused"] += 1
        return counts


def apply_edit(tools: WorkspaceTools, target: str, edit: object) -> None:
    if isinstance(edit, dict) and "old" in edit:
        tools.replace(target, str(edit["old"]), str(edit.get("new", "")))
    elif isinstance(edit, dict) and "after_line" in edit:
        tools.insert(target, int(edit["after_line"]), str(edit.get("text", "")))
    else:
        raise ToolError("not an edit")


@dataclass(frozen=True)
class Rewrite:
    name: str = "rewrite"

    def request(self, path: str, numbered: str, findings: str) -> str:
        return prompts.rewrite_request(path, numbered, findings)

    def apply(self, tools: WorkspaceTools, target: str, reply: str) -> dict[str, int]:
        text = first_fence(reply)
        if not text.strip():
            return {"applied": 0, "refused": 1}
        try:
            tools.write(target, text)
        except ToolError:
            return {"applied": 0, "refused": 1}
        return {"applied": 1, "refused": 0}


#: Repair strategies by name: a new one is a class and one line here.
REPAIRS: dict[str, RepairStrategy] = {"edits": TargetedEdits(), "rewrite": Rewrite()}


class UnknownRepair(ValueError):
    """A repair strategy name that is not registered (one line)."""


def get_repair(name: str) -> RepairStrategy:
    if name not in REPAIRS:
        raise UnknownRepair(f"unknown repair strategy {name!r} (known: {', '.join(REPAIRS)})")
    return REPAIRS[name]
