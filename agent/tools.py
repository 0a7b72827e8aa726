"""Workspace tools over the run's sandbox, as LangChain tools.

Each tool is bound to one `AgentWorkspace`, runs inside its sandbox (commands) or through the
sandbox's safe host-side file operations (reads and writes, which never follow a link), caps
what it returns, and answers a bad request with an error text the model can act on instead of
raising: a tool error is part of the conversation, not the end of the run.

Paths are agent paths: absolute under /home (the paper at /home/paper, the submission at
/home/submission) or relative to /home. Anything else is refused.
"""

from __future__ import annotations

import functools
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool

from sabench.agent.workspace import (
    HOME,
    PAPER_DIR,
    AgentWorkspace,
    PathOutsideWorkspace,
    to_workspace,
)

TRUNCATION_MARK = "\n...[output truncated]...\n"


@dataclass(frozen=True)
class ToolLimits:
    """Caps of the workspace tools (BasicAgent's values where it has one)."""

    command_timeout_s: float = 30.0
    output_chars: int = 12_000
    read_chars: int = 60_000
    write_bytes: int = 2_000_000
    list_entries: int = 1_000
    search_timeout_s: float = 15.0


class ToolError(Exception):
    """A request the tool refuses; its text is what the model sees."""


def head_tail(text: str, cap: int, mark: str = TRUNCATION_MARK) -> str:
    """Keep the first and last `cap // 2` characters of a text longer than `cap`."""
    if len(text) <= cap:
        return text
    half = cap // 2
    return text[:half] + mark + text[len(text) - half:]


def workspace_path(path: str) -> str:
    """The workspace-relative form of an agent path, or a ToolError the model can act on."""
    try:
        return to_workspace(path)
    except PathOutsideWorkspace:
        raise ToolError(f"{path}: outside the workspace; use paths under {HOME} "
                        f"(the paper is in {PAPER_DIR}, your code goes in "
                        f"{HOME}/submission)") from None


def writable_path(path: str) -> str:
    rel = workspace_path(path)
    if rel == "paper" or rel.startswith("paper/"):
        raise ToolError(f"{path}: the paper folder is read-only")
    return rel


class WorkspaceTools:
    """The operations behind the tools; each returns the text the model sees."""

    def __init__(self, workspace: AgentWorkspace, limits: ToolLimits | None = None) -> None:
        self.workspace = workspace
        self.limits = limits or ToolLimits()

    def bash(self, command: str) -> str:
        """Run a shell command in /home; exit code, stdout and stderr come back, capped."""
        result = self.workspace.exec(command, timeout=self.limits.command_timeout_s)
        if result.timed_out:
            raise ToolError(f"command timed out after {self.limits.command_timeout_s:g} s "
                            f"(its output so far is lost); run long jobs in the background or "
                            f"on smaller settings: {command}")
        text = (f"[exit_code] {result.exit_code}\n[stdout]\n{result.stdout}\n"
                f"[stderr]\n{result.stderr}")
        return head_tail(text, self.limits.output_chars)

    def read_text(self, path: str) -> str:
        data = self._read_bytes(path)
        if b"\0" in data[:8192]:
            raise ToolError(f"{path}: a binary file; inspect it with bash (e.g. xxd | head)")
        return data.decode("utf-8", errors="replace")

    def _read_bytes(self, path: str) -> bytes:
        rel = workspace_path(path)
        try:
            return self.workspace.sandbox.read_file(rel)
        except FileNotFoundError:
            raise ToolError(f"{path}: no such file") from None
        except IsADirectoryError:
            raise ToolError(f"{path}: a directory; list it instead") from None
        except PermissionError as exc:
            raise ToolError(f"{path}: cannot be read ({exc})") from None

    def read_lines(self, path: str, start_line: int = 1, num_lines: int = 200) -> str:
        """Lines [start, start + num) of a file, numbered, capped at `read_chars`."""
        lines = self.read_text(path).splitlines()
        start = max(1, start_line)
        chosen = lines[start - 1:start - 1 + max(0, num_lines)]
        body = "\n".join(f"{start + i}: {line}" for i, line in enumerate(chosen))
        footer = f"\n[lines {start}-{start + len(chosen) - 1} of {len(lines)}]"
        return head_tail(body, self.limits.read_chars) + footer

    def write(self, path: str, content: str) -> str:
        data = content.encode()
        if len(data) > self.limits.write_bytes:
            raise ToolError(f"{path}: {len(data)} bytes is over the {self.limits.write_bytes} "
                            f"byte limit of one write; split the file")
        try:
            self.workspace.sandbox.write_file(writable_path(path), data)
        except (PermissionError, IsADirectoryError) as exc:
            raise ToolError(f"{path}: cannot be written ({exc})") from None
        return f"wrote {len(data)} bytes to {path}"

    def replace(self, path: str, old: str, new: str) -> str:
        """Replace the one occurrence of `old` in a file with `new`."""
        text = self.read_text(path)
        count = text.count(old) if old else 0
        if count != 1:
            found = "not found" if count == 0 else f"found {count} times"
            raise ToolError(f"{path}: the text to replace was {found}; it must occur exactly "
                            f"once (copy it exactly, with more surrounding lines if needed)")
        self.write(path, text.replace(old, new, 1))
        return f"replaced 1 occurrence in {path}"

    def insert(self, path: str, line: int, text: str) -> str:
        """Insert `text` after line `line` (0 inserts at the top)."""
        lines = self.read_text(path).splitlines(keepends=True)
        if not 0 <= line <= len(lines):
            raise ToolError(f"{path}: line {line} is out of range (the file has "
                            f"{len(lines)} lines; 0 inserts at the top)")
        if lines and not lines[-1].endswith("\n") and line == len(lines):
            lines[-1] += "\n"
        block = text if text.endswith("\n") else text + "\n"
        self.write(path, "".join([*lines[:line], block, *lines[line:]]))
        return f"inserted {block.count(chr(10))} lines after line {line} of {path}"

    def list_folder(self, path: str = HOME) -> str:
        rel = workspace_path(path)
        result = self.workspace.exec(
            f"cd /workspace/{shlex.quote(rel)} && LC_ALL=C ls -1Ap", timeout=15)
        if not result.ok:
            raise ToolError(f"{path}: not a folder")
        names = result.stdout.splitlines()
        shown = names[:self.limits.list_entries]
        more = len(names) - len(shown)
        return "\n".join(shown) + (f"\n[{more} more entries]" if more > 0 else "")

    def search(self, pattern: str, path: str = HOME) -> str:
        """grep -rn for a regular expression; matches as `file:line:text`, capped."""
        rel = workspace_path(path)
        command = (f"grep -rIn --exclude-dir=.git -E -e {shlex.quote(pattern)} -- "
                   f"{shlex.quote('/workspace/' + rel if rel != '.' else '/workspace')}")
        result = self.workspace.exec(command, timeout=self.limits.search_timeout_s)
        if result.exit_code == 2 or result.timed_out:
            raise ToolError(f"search failed: {result.stderr.strip() or 'timed out'}")
        text = result.stdout.replace("/workspace/", HOME + "/")
        return head_tail(text, self.limits.output_chars) if text else "[no matches]"


def guarded(operation: Callable[..., str]) -> Callable[..., str]:
    """Wrap an operation so a ToolError becomes the text the model reads."""

    @functools.wraps(operation)
    def call(*args: Any, **kwargs: Any) -> str:
        try:
            return operation(*args, **kwargs)
        except ToolError as exc:
            return f"Error: {exc}"

    return call


def workspace_tools(tools: WorkspaceTools) -> list[BaseTool]:
    """The general-purpose tool set: bash, read, write, edit, insert, list, search."""
    specs = [
        ("bash", tools.bash, "Run a shell command (cwd /home; the paper is in /home/paper, "
         "write code in /home/submission). Returns exit code, stdout and stderr."),
        ("read_file", tools.read_lines, "Read lines [start_line, start_line + num_lines) of "
         "a file, numbered."),
        ("write_file", tools.write, "Create or overwrite a file with the given content."),
        ("edit_file", tools.replace, "Replace the single exact occurrence of `old` with "
         "`new` in a file."),
        ("insert_lines", tools.insert, "Insert text after the given line (0 = at the top)."),
        ("list_folder", tools.list_folder, "List a folder (folders end with /)."),
        ("search", tools.search, "Search files under a path for an extended regular "
         "expression (grep -rn)."),
    ]
    return [StructuredTool.from_function(guarded(fn), name=name, description=text)
            for name, fn, text in specs]
