"""Scaffolds: LangGraph graphs that turn a paper into a repository, registered by name.

A scaffold is a class with a `name`, a one-line `description` and `build(options)`, which
returns its compiled graph *without* a checkpointer: it runs as a subgraph of the evaluation
graph (`sabench.benchmark.evaluation`) and inherits that graph's checkpointer, context and
budget. Its graph takes `ScaffoldInput`, reads its dependencies from `RunContext`, and reports
`RunOutput` (status, stop reason, usage, requests, trace). Registering one is one line in
`SCAFFOLDS` (imported on first use).
"""

from __future__ import annotations

import importlib
from typing import Any, Protocol

from langgraph.graph.state import CompiledStateGraph


class Scaffold(Protocol):
    """A way of reproducing a paper, as a LangGraph graph."""

    name: str
    description: str

    def build(self, options: dict[str, Any] | None = None) -> CompiledStateGraph:
        """The compiled graph (no checkpointer: the evaluation graph provides it)."""
        ...


class UnknownScaffold(ValueError):
    """A scaffold name that is not registered (one line)."""


#: name -> "module:class" of the scaffold.
SCAFFOLDS: dict[str, str] = {
    "basic": "sabench.scaffolds.basic:BasicAgent",
    "papercoder": "sabench.scaffolds.papercoder:PaperCoder",
    "openhands": "sabench.scaffolds.openhands:OpenHands",
    "alignment-first": "sabench.scaffolds.alignment_first:AlignmentFirst",
}


def get_scaffold(name: str) -> Scaffold:
    """The scaffold registered under `name`."""
    if name not in SCAFFOLDS:
        raise UnknownScaffold(f"unknown scaffold {name!r} (known: {', '.join(SCAFFOLDS)})")
    module_name, attr = SCAFFOLDS[name].split(":")
    return getattr(importlib.import_module(module_name), attr)()
