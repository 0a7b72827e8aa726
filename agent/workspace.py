"""The agent's view of a run's sandbox: the paper and the submission at fixed paths.

Inside the sandbox the workspace is also mounted at `/home`, so every scaffold sees

    /home/paper/        the paper (paper.md, config.yaml, addendum.md when present)
    /home/submission/   the repository it writes (starts empty)

the paths the SA-Bench baselines used. The sandbox is opened on first use, so a run resumed
after its process died opens a fresh one. The submission survives that: `save()` mirrors it
into a host folder after every step that may have changed it, and a fresh sandbox starts from
that mirror. The benchmark's gold claims (`sau.json`) never enter the sandbox.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from sabench.sandbox.protocol import Sandbox, open_sandbox
from sabench.sandbox.types import WORKSPACE, ExecResult, SandboxSpec

HOME = "/home"
PAPER_DIR = f"{HOME}/paper"
SUBMISSION_DIR = f"{HOME}/submission"
#: The paper files a scaffold may read; anything else of the paper folder stays outside.
PAPER_FILES = ("paper.md", "config.yaml", "addendum.md")


class PathOutsideWorkspace(ValueError):
    """A tool was given a path outside /home (or /workspace)."""


class AgentWorkspace:
    """A lazily opened sandbox laid out for a scaffold, with its submission kept on the host.

    Args:
        spec: the sandbox to open (its `workspace_aliases` gain `/home`).
        paper_dir: the paper's folder; only `PAPER_FILES` are copied in.
        mirror: host folder that always holds the submission as of the last `save()`.
        links: extra names in /home for the scaffold's folders, e.g. {"repo": "submission"}
            for a scaffold whose original called its submission folder `repo`.
    """

    def __init__(self, spec: SandboxSpec, paper_dir: Path, mirror: Path,
                 links: Mapping[str, str] | None = None) -> None:
        aliases = tuple(dict.fromkeys((*spec.workspace_aliases, HOME)))
        self.spec = spec.model_copy(update={"workspace_aliases": aliases})
        self.paper_dir = Path(paper_dir)
        self.mirror = Path(mirror)
        self.links = dict(links or {})
        self._sandbox: Sandbox | None = None
        self._lock = threading.Lock()

    @property
    def sandbox(self) -> Sandbox:
        """The open sandbox (opened and laid out on first use)."""
        with self._lock:
            if self._sandbox is None:
                self._sandbox = self._open()
            return self._sandbox

    def _open(self) -> Sandbox:
        sandbox = open_sandbox(self.spec)
        try:
            for name in PAPER_FILES:
                source = self.paper_dir / name
                if source.is_file():
                    sandbox.write_file(f"paper/{name}", source.read_bytes())
            sandbox.exec(["mkdir", "-p", "submission"])
            for name, target in self.links.items():
                sandbox.exec(["ln", "-sfn", target, name])
            if self.mirror.is_dir():
                sandbox.copy_in(self.mirror, "submission")
        except BaseException:
            sandbox.close()
            raise
        return sandbox

    def exec(self, command: str, *, cwd: str = HOME, timeout: float | None = None,
             env: Mapping[str, str] | None = None) -> ExecResult:
        return self.sandbox.exec(command, cwd=cwd, timeout=timeout, env=env)

    def read(self, path: str) -> bytes:
        return self.sandbox.read_file(to_workspace(path))

    def write(self, path: str, data: str | bytes) -> None:
        self.sandbox.write_file(to_workspace(path), data)

    def save(self) -> None:
        """Mirror the submission to the host folder (replacing the previous mirror whole)."""
        self.mirror.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".mirror-", dir=self.mirror.parent))
        try:
            self.sandbox.copy_out(staging, "submission")
            old = self.mirror.with_name(self.mirror.name + ".old")
            shutil.rmtree(old, ignore_errors=True)
            if self.mirror.exists():
                self.mirror.rename(old)
            staging.rename(self.mirror)
            shutil.rmtree(old, ignore_errors=True)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def collect(self, dest: Path) -> None:
        """Copy the submission out to `dest` (the run's final repository)."""
        dest = Path(dest)
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True)
        self.sandbox.copy_out(dest, "submission")

    def close(self) -> None:
        with self._lock:
            if self._sandbox is not None:
                self._sandbox.close()
                self._sandbox = None


def to_workspace(path: str, cwd: str = HOME) -> str:
    """The workspace-relative form of an agent path (relative paths start at `cwd`).

    Raises:
        PathOutsideWorkspace: the path leaves /home (and /workspace), or climbs with '..'.
    """
    pure = PurePosixPath(cwd) / path if not path.startswith("/") else PurePosixPath(path)
    parts: list[str] = []
    for part in pure.parts[1:]:
        if part == "..":
            if not parts:
                raise PathOutsideWorkspace(path)
            parts.pop()
        elif part != ".":
            parts.append(part)
    for root in (HOME, WORKSPACE):
        prefix = PurePosixPath(root).parts[1:]
        if tuple(parts[:len(prefix)]) == prefix:
            return "/".join(parts[len(prefix):]) or "."
    raise PathOutsideWorkspace(path)


def to_agent(workspace_path: str) -> str:
    """The /home path the agent uses for a workspace-relative path."""
    return HOME if workspace_path in ("", ".") else f"{HOME}/{workspace_path}"
