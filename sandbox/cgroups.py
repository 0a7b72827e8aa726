"""Per-sandbox cgroups (v1 or v2) for the local backend: memory (swap off) and pids limits
(plus a CPU quota on v2, where it costs nothing extra).

RLIMIT_NPROC does not bind root and RLIMIT_AS is not a memory limit, so when the machine lets us
(root, or a delegated v2 subtree) every local sandbox gets its own cgroup below ours. Where it
cannot, `CgroupSet.create` returns None and the caller falls back to rlimits plus an unprivileged
uid.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import uuid
from pathlib import Path

from sabench.sandbox.types import LABEL, Limits

CGROUP_ROOT = Path("/sys/fs/cgroup")
#: v1 hierarchies a sandbox joins: each join is a write costing milliseconds on every command,
#: so only the two limits the local backend promises (memory, process count); v2 adds cpu.max.
V1_CONTROLLERS = ("memory", "pids")


def _own_paths() -> dict[str, str]:
    """controller ("" for v2) -> this process's cgroup path, from /proc/self/cgroup."""
    found: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            found[name] = path
    return found


def _v2_root() -> Path | None:
    """The cgroup2 mount that carries the memory and pids controllers, if any."""
    for candidate in (CGROUP_ROOT, CGROUP_ROOT / "unified"):
        controllers = candidate / "cgroup.controllers"
        if controllers.is_file() and {"memory", "pids"} <= set(controllers.read_text().split()):
            return candidate
    return None


class CgroupSet:
    """The cgroup directories of one sandbox (one per v1 controller, or one v2 directory)."""

    def __init__(self, dirs: dict[str, Path], version: int) -> None:
        self.dirs = dirs
        self.version = version
        self._oom_seen = 0

    @classmethod
    def create(cls, limits: Limits) -> CgroupSet | None:
        """Make and configure the cgroups; None when this machine does not let us."""
        name = f"{LABEL}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        made: CgroupSet | None = None
        try:
            made = cls._make_v2(name) or cls._make_v1(name)
            if made is not None:
                made._configure(limits)
            return made
        except OSError:
            if made is not None:
                made.remove()
            return None

    @classmethod
    def _make_v2(cls, name: str) -> CgroupSet | None:
        root = _v2_root()
        if root is None:
            return None
        parent = root / _own_paths().get("", "/").lstrip("/")
        control = (parent / "cgroup.subtree_control").read_text().split()
        if not {"memory", "pids"} <= set(control):
            return None  # not delegated to us: processes cannot live in an inner node
        path = parent / name
        path.mkdir()
        return cls({"": path}, 2)

    @classmethod
    def _make_v1(cls, name: str) -> CgroupSet | None:
        own = _own_paths()
        dirs: dict[str, Path] = {}
        for controller in V1_CONTROLLERS:
            mount = CGROUP_ROOT / controller
            if controller not in own or not (mount / "cgroup.procs").is_file():
                return None
            path = mount / own[controller].lstrip("/") / name
            path.mkdir()
            dirs[controller] = path
        return cls(dirs, 1)

    def _configure(self, limits: Limits) -> None:
        memory = str(limits.memory_mb << 20)
        period = 100_000
        quota = str(int(limits.cpus * period))
        if self.version == 2:
            path = self.dirs[""]
            (path / "memory.max").write_text(memory)
            with contextlib.suppress(FileNotFoundError):
                (path / "memory.swap.max").write_text("0")
            (path / "pids.max").write_text(str(limits.pids))
            with contextlib.suppress(OSError):
                (path / "cpu.max").write_text(f"{quota} {period}")
            return
        (self.dirs["memory"] / "memory.limit_in_bytes").write_text(memory)
        with contextlib.suppress(OSError):  # only present with swap accounting
            (self.dirs["memory"] / "memory.memsw.limit_in_bytes").write_text(memory)
        (self.dirs["pids"] / "pids.max").write_text(str(limits.pids))

    @property
    def procs_files(self) -> list[Path]:
        """The cgroup.procs files a new process must join (written by its own shell)."""
        return [path / "cgroup.procs" for path in self.dirs.values()]

    def pids(self) -> set[int]:
        found: set[int] = set()
        for procs in self.procs_files:
            with contextlib.suppress(OSError):
                found.update(int(pid) for pid in procs.read_text().split())
        return found

    def kill_all(self, rounds: int = 50) -> bool:
        """SIGKILL every process in the cgroup until it is empty; False if it never empties."""
        for _ in range(rounds):
            pids = self.pids()
            if not pids:
                return True
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.02)
        return not self.pids()

    def oom_kills(self) -> int:
        """How many processes the kernel killed for memory in this cgroup so far."""
        path = self.dirs[""] / "memory.events" if self.version == 2 else (
            self.dirs["memory"] / "memory.oom_control")
        with contextlib.suppress(OSError):
            for line in path.read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        return 0

    def new_oom_kill(self) -> bool:
        """True when an OOM kill happened since the last call."""
        count = self.oom_kills()
        fresh, self._oom_seen = count > self._oom_seen, max(count, self._oom_seen)
        return fresh

    def remove(self) -> None:
        self.kill_all()
        for path in self.dirs.values():
            for _ in range(20):
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.05)  # the last killed process is still being torn down
