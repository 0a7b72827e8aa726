"""Local backend specifics: refusal without bubblewrap, the explicit unsafe opt-in, cgroups."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from sabench.sandbox.cgroups import CgroupSet
from sabench.sandbox.local_backend import LocalBackend, LocalSandbox, bwrap_status
from sabench.sandbox.protocol import open_sandbox
from sabench.sandbox.types import (
    SANDBOX_UID,
    Limits,
    Mount,
    SandboxSpec,
    UnsafeExecutionRefused,
)
from tests.conftest import require_or_skip

from .conftest import require_backend


@pytest.fixture
def no_bwrap(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """A PATH on which bubblewrap cannot be found (the machine's bwrap stays untouched)."""
    monkeypatch.setenv("PATH", str(tmp_path))
    bwrap_status.cache_clear()
    yield
    bwrap_status.cache_clear()


def test_missing_bubblewrap_is_refused(no_bwrap: None) -> None:
    ok, why = LocalBackend().available(SandboxSpec(backend="local"))
    assert not ok and "bubblewrap" in why
    with pytest.raises(UnsafeExecutionRefused, match="allow_unsafe"):
        open_sandbox(SandboxSpec(backend="local"))


def test_unsafe_opt_in_runs_and_warns_loudly(no_bwrap: None, capfd: pytest.CaptureFixture) -> None:
    with open_sandbox(SandboxSpec(backend="local", allow_unsafe=True)) as box:
        box.write_file("in.txt", "data")
        result = box.exec("cat in.txt; echo; echo $HOME", env={"X": "1"})
        uid = box.exec(["id", "-u"]).stdout.strip()
    assert result.stdout == "data\n/tmp\n"
    if os.geteuid() == 0:
        assert uid == str(SANDBOX_UID)  # even unisolated, never as root
    assert "UNISOLATED" in capfd.readouterr().err


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def test_cgroup_limits_are_applied() -> None:
    require_backend("local")
    # Both skips go through the require flag: CI (SABENCH_REQUIRE_SANDBOX=1) cannot skip them.
    require_or_skip(os.geteuid() == 0, "SABENCH_REQUIRE_SANDBOX",
                    "cgroup limits are set up only when running as root")
    limits = Limits(memory_mb=96, pids=33)
    with LocalSandbox(SandboxSpec(backend="local", limits=limits)) as box:
        cgroups = box.cgroups
        require_or_skip(cgroups is not None, "SABENCH_REQUIRE_SANDBOX",
                        "this machine offers no writable cgroup hierarchy")
        assert isinstance(cgroups, CgroupSet)
        if cgroups.version == 1:
            memory = (cgroups.dirs["memory"] / "memory.limit_in_bytes").read_text()
            pids = (cgroups.dirs["pids"] / "pids.max").read_text()
        else:
            memory = (cgroups.dirs[""] / "memory.max").read_text()
            pids = (cgroups.dirs[""] / "pids.max").read_text()
        assert int(memory) == 96 << 20 and int(pids) == 33
        running = threading.Thread(target=box.exec, args=("sleep 3",))
        running.start()
        members: set[int] = set()
        for _ in range(200):  # the command's processes show up in the cgroup from the host side
            members = cgroups.pids()
            if any(_comm(pid) == "sleep" for pid in members):
                break
            time.sleep(0.02)
        uids = {Path(f"/proc/{pid}").stat().st_uid for pid in members}
        running.join()
        dirs = list(cgroups.dirs.values())
    assert members and uids == {SANDBOX_UID}  # every process in it runs unprivileged
    assert all(not path.exists() for path in dirs)  # removed on close


@pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox uid differs from the caller's as root")
def test_unreachable_mount_is_refused_up_front(tmp_path: Path) -> None:
    require_backend("local")
    closed = tmp_path / "closed"
    (closed / "inner").mkdir(parents=True)
    closed.chmod(0o700)
    spec = SandboxSpec(backend="local", mounts=(Mount(source=str(closed / "inner"), target="/d"),))
    with pytest.raises(PermissionError, match="closed to the sandbox uid"):
        LocalSandbox(spec)
