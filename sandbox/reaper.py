"""Remove what sandboxes left behind when their owner died without closing them.

Every container carries the label `sabench.sandbox` and `sabench.sandbox.owner=<host>:<pid>`;
every local sandbox has a temp folder `sabench.sandbox-local-*` holding its owner's pid and a
cgroup named `sabench.sandbox-<pid>-*`. Something is an orphan when its owner process on this host
no longer exists; `reap(everything=True)` removes all of them regardless.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from sabench.sandbox.cgroups import CGROUP_ROOT, CgroupSet
from sabench.sandbox.types import LABEL
from sabench.sandbox.workspace import OWNER_FILE


class ReapReport(BaseModel):
    """What a reap removed."""

    containers: list[str] = []
    workspaces: list[str] = []
    cgroups: list[str] = []
    docker_error: str | None = None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _orphan(owner: str | None) -> bool:
    """True when `owner` ("host:pid") names a dead process on this host."""
    host, _, pid = (owner or "").rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False  # another machine's sandbox (shared engine): not ours to judge
    return not _alive(int(pid))


def sandbox_containers(owner: str | None = None) -> list[Any]:
    """Containers (running or not) labelled as sandboxes, optionally of one owner."""
    from sabench.sandbox.docker_backend import docker_client

    label = f"{LABEL}.owner={owner}" if owner else LABEL
    return docker_client().containers.list(all=True, filters={"label": label})


def reap_containers(everything: bool = False, owner: str | None = None) -> list[str]:
    """Remove orphaned sandbox containers (all of them with `everything`, or one owner's)."""
    removed: list[str] = []
    for container in sandbox_containers(owner):
        tag = container.labels.get(f"{LABEL}.owner")
        if everything or owner or _orphan(tag):
            with contextlib.suppress(Exception):  # removed concurrently: fine
                container.remove(force=True, v=True)
                removed.append(container.name)
    return removed


def reap_workspaces(everything: bool = False) -> list[str]:
    removed: list[str] = []
    for folder in Path(tempfile.gettempdir()).glob(f"{LABEL}-*"):
        owner_file = folder / OWNER_FILE
        with contextlib.suppress(OSError, ValueError):
            pid = int(owner_file.read_text().strip())
            if everything or not _alive(pid):
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(str(folder))
    return removed


def reap_cgroups(everything: bool = False) -> list[str]:
    removed: list[str] = []
    if not CGROUP_ROOT.is_dir():
        return removed
    for path in CGROUP_ROOT.rglob(f"{LABEL}-*"):
        pid = path.name.removeprefix(f"{LABEL}-").split("-")[0]
        if path.is_dir() and pid.isdigit() and (everything or not _alive(int(pid))):
            version = 2 if (path / "cgroup.controllers").exists() else 1
            CgroupSet({path.name: path}, version).remove()
            removed.append(str(path))
    return removed


def reap(everything: bool = False) -> ReapReport:
    """Remove every orphan sandbox resource on this machine (or all of them)."""
    report = ReapReport(workspaces=reap_workspaces(everything), cgroups=reap_cgroups(everything))
    try:
        report.containers = reap_containers(everything)
    except Exception as exc:  # no engine: nothing of ours can be running there either
        report.docker_error = str(exc)
    return report
