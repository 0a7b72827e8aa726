"""Hostile code against every backend: network, secrets, resource bombs, escapes, leftovers.

No test sends traffic anywhere but this machine's loopback: network isolation is shown by the
interfaces and routes the sandbox sees and by a server on the host's loopback that nobody reaches.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from sabench.sandbox.protocol import Sandbox, open_sandbox
from sabench.sandbox.types import SandboxSpec
from tests.conftest import REPO_ROOT

from .conftest import TEST_LIMITS

CONNECT = textwrap.dedent("""
    import socket, sys
    s = socket.socket()
    s.settimeout(3)
    try:
        s.connect(("127.0.0.1", int(sys.argv[1])))
        s.sendall(b"escaped")
        print("connected")
    except OSError as exc:
        print("refused", type(exc).__name__)
""")

FORK_COUNT = textwrap.dedent("""
    import os, time
    count = 0
    try:
        while count < 100000:
            if os.fork() == 0:
                time.sleep(30)
                os._exit(0)
            count += 1
    except OSError:
        pass
    print(count)
""")

MEMORY_BOMB = "blocks = []\nwhile True:\n    blocks.append(bytearray(16 << 20))\n"


def test_only_loopback_interface_and_no_routes(box: Sandbox) -> None:
    devices = box.exec(["cat", "/proc/net/dev"]).stdout.splitlines()[2:]
    assert [line.split(":")[0].strip() for line in devices] == ["lo"]
    routes = box.exec(["cat", "/proc/net/route"]).stdout.splitlines()[1:]
    assert routes == []  # no default route: nothing can leave, not even towards the host


def test_host_loopback_server_is_unreachable(box: Sandbox) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.settimeout(0.5)
        port = server.getsockname()[1]
        result = box.exec(["python3", "-c", CONNECT, str(port)], timeout=20)
        assert result.stdout.startswith("refused"), result
        with pytest.raises(TimeoutError):
            server.accept()  # nothing arrived from the sandbox


def test_no_engine_socket_inside(box: Sandbox) -> None:
    probe = box.exec("ls -l /var/run/docker.sock /run/docker.sock /run/containerd 2>&1; exit 0")
    assert "No such file" in probe.stdout and "srw" not in probe.stdout


def test_home_canary_and_project_are_invisible(backend: str) -> None:
    secret = f"canary-{uuid.uuid4().hex}"
    canary = Path.home() / f".sabench-canary-{uuid.uuid4().hex[:8]}"
    canary.write_text(secret)
    try:
        with open_sandbox(SandboxSpec(backend=backend, limits=TEST_LIMITS)) as sandbox:
            read = sandbox.exec(["cat", str(canary)])
            search = sandbox.exec(f"grep -rsl {secret} / --exclude-dir=proc --exclude-dir=sys "
                                  "--exclude-dir=usr --exclude-dir=dev", timeout=120)
            project = sandbox.exec(["ls", str(REPO_ROOT / "sandbox")])
    finally:
        canary.unlink()
    assert read.exit_code != 0 and secret not in read.stdout
    assert search.stdout == "", search.stdout
    assert project.exit_code != 0


def test_host_api_key_does_not_leak(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    key = f"sk-ant-canary-{uuid.uuid4().hex}"
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    monkeypatch.setenv("OPENAI_API_KEY", key)
    with open_sandbox(SandboxSpec(backend=backend, limits=TEST_LIMITS)) as sandbox:
        shown = sandbox.exec("env; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'")
    assert shown.exit_code == 0
    assert key not in shown.stdout and "API_KEY" not in shown.stdout


def test_fork_bomb_is_contained(make_box) -> None:
    box = make_box(pids=64)
    forks = box.exec(["python3", "-c", FORK_COUNT], timeout=60)
    assert forks.exit_code == 0, forks
    assert 0 < int(forks.stdout) < 64  # the pids limit stopped it
    bomb = box.exec("f() { f | f & }; f; sleep 2", timeout=10)
    assert bomb.exit_code in (0, 2) or bomb.timed_out
    assert subprocess.run(["true"], check=False).returncode == 0  # the host still forks
    assert box.exec("echo alive").stdout == "alive\n"  # and so does the sandbox


def test_memory_bomb_is_killed_and_reported_as_oom(make_box) -> None:
    box = make_box(memory_mb=128)
    result = box.exec(["python3", "-c", MEMORY_BOMB], timeout=60)
    assert result.oom_killed and not result.timed_out, result
    assert result.exit_code == 137
    after = box.exec("echo fine")
    assert after.ok and not after.oom_killed


def test_endless_loop_is_killed_at_its_timeout(box: Sandbox) -> None:
    result = box.exec(["python3", "-c", "while True: pass"], timeout=2)
    assert result.timed_out and not result.oom_killed
    assert result.duration >= 2


def test_output_flood_is_truncated_and_stopped(box: Sandbox) -> None:
    result = box.exec("yes flood", timeout=120)
    assert result.truncated and not result.timed_out
    assert len(result.stdout) == TEST_LIMITS.output_bytes
    assert result.stdout.startswith("flood\nflood\n")


@pytest.mark.parametrize("path", ["/x", "/usr/x", "/etc/x", "/root/x", "/var/x", "/home/x"])
def test_writes_outside_workspace_fail(box: Sandbox, path: str) -> None:
    result = box.exec(["sh", "-c", f"echo owned > {path}"])
    assert result.exit_code != 0
    assert box.exec(["test", "-e", path]).exit_code != 0


def test_workspace_and_tmp_are_writable_and_tmp_is_limited(box: Sandbox) -> None:
    assert box.exec("echo a > /workspace/w && echo b > /tmp/t && cat /workspace/w /tmp/t"
                    ).stdout == "a\nb\n"
    too_big = (TEST_LIMITS.tmp_mb + 8) << 20
    fill = box.exec(f"head -c {too_big} /dev/zero > /tmp/fill; rc=$?; rm -f /tmp/fill; exit $rc")
    assert fill.exit_code != 0


def test_other_workspaces_are_invisible(backend: str) -> None:
    with open_sandbox(SandboxSpec(backend=backend, limits=TEST_LIMITS)) as first, \
            open_sandbox(SandboxSpec(backend=backend, limits=TEST_LIMITS)) as second:
        marker = f"only-first-{uuid.uuid4().hex}"
        first.write_file("private.txt", marker)
        host_path = first.workspace.path  # type: ignore[attr-defined]
        seen = second.exec(f"cat {host_path}/private.txt; grep -rsl {marker} /tmp /workspace")
    assert marker not in seen.stdout and seen.exit_code != 0


# -- leftovers: every exit path removes the sandbox, and the reaper catches a killed owner ------

# The owner takes SIGINT as an interrupt even when the test runs as a background job of a
# shell without job control, which starts its children with SIGINT ignored.
OWNER_SCRIPT = textwrap.dedent("""
    import signal
    import sys
    signal.signal(signal.SIGINT, signal.default_int_handler)
    from sabench.sandbox.protocol import open_sandbox
    from sabench.sandbox.types import SandboxSpec
    with open_sandbox(SandboxSpec(backend=sys.argv[1])) as box:
        name = box.container.name if sys.argv[1] == "docker" else str(box.workspace.root)
        print(name, flush=True)
        box.exec("sleep 300", timeout=300)
""")


def _start_owner(backend: str) -> tuple[subprocess.Popen[str], str]:
    owner = subprocess.Popen([sys.executable, "-c", OWNER_SCRIPT, backend],
                             stdout=subprocess.PIPE, text=True, cwd=REPO_ROOT)
    assert owner.stdout is not None
    name = owner.stdout.readline().strip()
    assert name, "the owner process could not open a sandbox"
    time.sleep(0.5)  # let it enter the command
    return owner, name


def _exists(backend: str, name: str) -> bool:
    if backend == "local":
        return Path(name).exists()
    from sabench.sandbox.docker_backend import docker_client

    return any(c.name == name for c in docker_client().containers.list(all=True))


def test_exception_mid_command_removes_the_sandbox(backend: str) -> None:
    spec = SandboxSpec(backend=backend, limits=TEST_LIMITS)
    with pytest.raises(KeyboardInterrupt), open_sandbox(spec) as sandbox:
        name = sandbox.container.name if backend == "docker" else str(  # type: ignore
            sandbox.workspace.root)  # type: ignore[attr-defined]
        sandbox.exec("sleep 1 &")
        raise KeyboardInterrupt
    assert not _exists(backend, name)


def test_interrupted_owner_cleans_up(backend: str) -> None:
    owner, name = _start_owner(backend)
    owner.send_signal(signal.SIGINT)
    owner.wait(60)
    assert not _exists(backend, name)


def test_reaper_removes_what_a_killed_owner_left(backend: str) -> None:
    from sabench.sandbox.reaper import reap

    owner, name = _start_owner(backend)
    os.kill(owner.pid, signal.SIGKILL)
    owner.wait(60)
    report = reap()
    removed = report.containers if backend == "docker" else report.workspaces
    assert name in removed
    assert not _exists(backend, name)


def test_copy_in_never_writes_through_a_planted_link(box: Sandbox, tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    source = tmp_path / "src"
    (source / "pkg").mkdir(parents=True)
    (source / "pkg" / "mod.py").write_text("X = 1\n")
    (source / "top.txt").write_text("top\n")
    box.exec(f"mkdir -p planted && ln -s {victim} planted/pkg && ln -s {victim}/t planted/top.txt")
    box.copy_in(source, "planted")
    assert list(victim.iterdir()) == []  # nothing landed on the host
    assert box.exec("cat planted/pkg/mod.py planted/top.txt").stdout == "X = 1\ntop\n"


def test_oom_of_a_child_is_reported(make_box) -> None:
    box = make_box(memory_mb=128)
    parent = ("import subprocess, sys\n"
              "child = subprocess.run([sys.executable, '-c', sys.argv[1]])\n"
              "print('child exit', child.returncode)\nsys.exit(3)\n")
    result = box.exec(["python3", "-c", parent, MEMORY_BOMB], timeout=60)
    assert result.exit_code == 3 and result.stdout == "child exit -9\n"
    assert result.oom_killed


def test_planted_fifo_neither_hangs_nor_leaks(box: Sandbox, tmp_path: Path) -> None:
    box.exec("mkdir -p fifo-dir && mkfifo fifo-dir/pipe && echo ok > fifo-dir/file")
    with pytest.raises(PermissionError, match="not a regular file"):
        box.read_file("fifo-dir/pipe")
    with pytest.raises(PermissionError, match="not a regular file"):
        box.write_file("fifo-dir/pipe", "would block on a FIFO")
    box.copy_out(tmp_path / "out", "fifo-dir")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["file"]


def test_forgotten_sandbox_is_closed_at_interpreter_exit(backend: str) -> None:
    script = textwrap.dedent("""
        import sys
        from sabench.sandbox.protocol import open_sandbox
        from sabench.sandbox.types import SandboxSpec
        box = open_sandbox(SandboxSpec(backend=sys.argv[1]))  # never closed by the script
        print(box.container.name if sys.argv[1] == "docker" else box.workspace.root)
    """)
    done = subprocess.run([sys.executable, "-c", script, backend], capture_output=True,
                          text=True, timeout=120, cwd=REPO_ROOT, check=True)
    assert not _exists(backend, done.stdout.strip())
