"""Local backend: each command runs under bubblewrap in fresh namespaces on this machine.

Isolation: new user, network, PID, IPC, UTS and cgroup namespaces; read-only binds of the system
directories Python needs (/usr and a few files of /etc; never home folders, the project or other
workspaces); a private /tmp; the workspace bound read-write; a cleared environment. Limits: a
per-sandbox cgroup (memory with swap off, pids) when the machine allows it, plus rlimits, and
when the caller is root the command runs as an unprivileged uid so neither root's rlimit exemption
nor root's file access applies. On timeout the whole process group and the sandbox's PID
namespace (and cgroup) are killed.

Without bubblewrap the backend refuses to run unless the spec sets ``allow_unsafe``; then it runs
commands directly with only rlimits and a loud warning on every sandbox it opens.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import IO

from sabench.sandbox.cgroups import CgroupSet
from sabench.sandbox.protocol import Command
from sabench.sandbox.types import (
    SANDBOX_GID,
    SANDBOX_UID,
    WORKSPACE,
    CommandTimeout,
    ExecResult,
    SandboxBroken,
    SandboxSpec,
    UnsafeExecutionRefused,
)
from sabench.sandbox.workspace import (
    HostWorkspace,
    OutputCapture,
    WorkspaceFiles,
    command_timeout,
    display,
    environment,
    inside_cwd,
    to_argv,
    track,
)

#: System paths bound read-only (when present); a symlink such as /bin -> usr/bin is recreated.
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32")
#: The few files of /etc that dynamic linking, Python and TLS need; nothing else of /etc.
ETC_PATHS = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
             "/etc/localtime", "/etc/nsswitch.conf", "/etc/ssl", "/etc/ca-certificates",
             "/etc/python3", "/etc/python3.11", "/etc/mime.types")
PASSWD = (f"root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n"
          f"sandbox:x:{SANDBOX_UID}:{SANDBOX_GID}:sabench sandbox:/tmp:/bin/sh\n")
GROUP = f"root:x:0:\nnogroup:x:65534:\nsandbox:x:{SANDBOX_GID}:\n"
HOSTS = "127.0.0.1 localhost sandbox\n::1 localhost\n"
#: Extra wait after a timeout kill before the sandbox is declared broken.
KILL_GRACE = 5.0
#: The exit code reported for a timed-out command, as by GNU timeout and the docker backend.
TIMEOUT_EXIT = 124
UNSAFE_WARNING = ("WARNING: sabench sandbox runs UNISOLATED (bubblewrap missing, allow_unsafe "
                  "set): generated code has full access to this machine and its network")


@lru_cache(maxsize=1)
def bwrap_status() -> tuple[bool, str]:
    """Whether bubblewrap exists and can make namespaces here (checked once per process)."""
    path = shutil.which("bwrap")
    if path is None:
        return False, "bubblewrap (bwrap) is not installed: apt-get install bubblewrap"
    probe = [path, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "true"]
    if os.geteuid() == 0:
        probe = [*_drop_root(), *probe]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=20, env={})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"bubblewrap cannot run: {exc}"
    if done.returncode != 0:
        return False, f"bubblewrap cannot create namespaces here: {done.stderr.strip()}"
    return True, f"bubblewrap at {path}"


def _drop_root() -> list[str]:
    """Prefix that runs the rest of a command as the sandbox uid with no capabilities at all."""
    return ["setpriv", f"--reuid={SANDBOX_UID}", f"--regid={SANDBOX_GID}", "--clear-groups",
            "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs"]


class LocalBackend:
    """Creates `LocalSandbox`es."""

    name = "local"

    def available(self, spec: SandboxSpec | None = None) -> tuple[bool, str]:
        ok, why = bwrap_status()
        if ok or (spec is not None and spec.allow_unsafe):
            return True, why if ok else f"unisolated (allow_unsafe): {why}"
        return False, why

    def open(self, spec: SandboxSpec) -> LocalSandbox:
        return LocalSandbox(spec)


class LocalSandbox(WorkspaceFiles):
    """A private workspace and cgroup; every `exec` starts a fresh bubblewrap sandbox on them."""

    def __init__(self, spec: SandboxSpec) -> None:
        self.spec = spec
        ok, why = bwrap_status()
        self.isolated = ok
        if not ok and not spec.allow_unsafe:
            raise UnsafeExecutionRefused(
                f"local sandbox refused: {why}; set allow_unsafe=True only if you accept running "
                "generated code unisolated")
        if not ok:
            print(UNSAFE_WARNING, file=sys.stderr, flush=True)
        if os.geteuid() == 0:
            for mount in spec.mounts:
                _check_reachable(Path(mount.source))
        self._closed = False
        self._running: set[subprocess.Popen[bytes]] = set()
        self._lock = threading.Lock()
        self._exec_lock = threading.Lock()  # one command at a time, as in the docker backend
        self.workspace = HostWorkspace("local")
        track(self)
        self.cgroups = CgroupSet.create(spec.limits) if os.geteuid() == 0 else None
        for name, text in (("passwd", PASSWD), ("group", GROUP), ("hosts", HOSTS)):
            (self.workspace.ctl / name).write_text(text)

    # -- command line ---------------------------------------------------------------------

    def _bwrap_args(self, cwd: str) -> list[str]:
        args = ["bwrap", "--unshare-all", "--unshare-user", "--die-with-parent", "--new-session",
                "--hostname", "sandbox", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_GID),
                "--cap-drop", "ALL", "--disable-userns"]
        if self.spec.network:
            args.append("--share-net")
        for path in SYSTEM_PATHS:
            args += self._system_bind(path)
        for path in ETC_PATHS:
            args += ["--ro-bind-try", path, path]
        for name in ("passwd", "group", "hosts"):
            args += ["--ro-bind", str(self.workspace.ctl / name), f"/etc/{name}"]
        args += ["--proc", "/proc", "--dev", "/dev",
                 "--size", str(self.spec.limits.tmp_mb << 20), "--tmpfs", "/tmp",
                 "--bind", str(self.workspace.path), WORKSPACE]
        for alias in self.spec.workspace_aliases:
            args += ["--bind", str(self.workspace.path), alias]
        for mount in self.spec.mounts:
            args += ["--ro-bind" if mount.read_only else "--bind",
                     str(Path(mount.source).resolve()), mount.target]
        # Everything but /workspace and /tmp becomes read-only, including bwrap's own root tmpfs.
        return [*args, "--remount-ro", "/", "--chdir", cwd, "--"]

    @staticmethod
    def _system_bind(path: str) -> list[str]:
        if os.path.islink(path):
            return ["--symlink", os.readlink(path), path]
        return ["--ro-bind", path, path] if os.path.isdir(path) else []

    def _rlimits(self) -> list[str]:
        """rlimits for the command; with a cgroup only core dumps are cut (the cgroup limits
        memory and processes per sandbox, where RLIMIT_NPROC would count every process of the
        uid machine-wide, other sandboxes' included, and RLIMIT_AS would break runtimes that
        reserve large address ranges)."""
        if self.cgroups is not None:
            return ["prlimit", "--core=0", "--"]
        limits = self.spec.limits
        nproc = limits.pids + _tasks_of(os.getuid())  # RLIMIT_NPROC counts the caller's too
        return ["prlimit", f"--nproc={nproc}", f"--as={limits.memory_mb << 20}", "--core=0", "--"]

    def _command_line(self, argv: list[str], cwd: str) -> list[str]:
        argv = ["env", "--", *argv]  # a missing program exits 127, as in a shell or docker
        # Unisolated (allow_unsafe) commands still get the limits and the unprivileged uid.
        inner = [*self._rlimits(), *(self._bwrap_args(cwd) if self.isolated else []), *argv]
        if os.geteuid() == 0:
            inner = [*_drop_root(), *inner]
        if self.cgroups is None:
            return inner
        # The shell joins the cgroups itself before exec'ing, so no child can be born outside.
        joins = " && ".join(f"echo $$ > {shlex.quote(str(path))}"
                            for path in self.cgroups.procs_files)
        return ["/bin/sh", "-c", f'{joins} && exec "$@"', "sabench", *inner]

    # -- commands -------------------------------------------------------------------------

    def exec(self, cmd: Command, *, cwd: str | None = None, env: Mapping[str, str] | None = None,
             timeout: float | None = None, stdin: str | bytes | None = None,
             raise_on_timeout: bool = False) -> ExecResult:
        if self._closed:
            raise SandboxBroken("sandbox is closed")
        limit = command_timeout(timeout, self.spec.limits.timeout_s)
        where = inside_cwd(cwd)
        host_cwd = self.workspace.path if self.isolated else self._unsafe_cwd(where)
        argv = self._command_line(to_argv(cmd), where)
        with self._exec_lock:
            result = self._run(cmd, argv, environment(env), stdin, limit, host_cwd)
        if result.timed_out and raise_on_timeout:
            raise CommandTimeout(result)
        return result

    def _unsafe_cwd(self, where: str) -> Path:
        if where == WORKSPACE or where.startswith(WORKSPACE + "/"):
            return self.workspace.resolve(where)
        return Path(where)

    def _run(self, cmd: Command, argv: list[str], env: dict[str, str],
             stdin: str | bytes | None, limit: float, host_cwd: Path) -> ExecResult:
        capture = OutputCapture(self.spec.limits)
        started = time.monotonic()
        try:
            proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=host_cwd,
                process_group=0, close_fds=True)
        except OSError as exc:
            raise SandboxBroken(f"cannot start {argv[0]}: {exc}") from exc
        with self._lock:
            self._running.add(proc)
        try:
            threads = self._pump(proc, stdin, capture)
            timed_out = self._wait(proc, capture, limit)
            for thread in threads:
                thread.join(KILL_GRACE)
        finally:
            self._kill(proc)
            with self._lock:
                self._running.discard(proc)
        code = TIMEOUT_EXIT if timed_out else _shell_code(
            proc.returncode if proc.returncode is not None else -9)
        return ExecResult(
            command=display(cmd), exit_code=code, stdout=capture.text(1),
            stderr=capture.text(2), timed_out=timed_out,
            oom_killed=(not timed_out and self.cgroups is not None
                        and self.cgroups.new_oom_kill()),
            truncated=capture.truncated, duration=time.monotonic() - started)

    def _pump(self, proc: subprocess.Popen[bytes], stdin: str | bytes | None,
              capture: OutputCapture) -> list[threading.Thread]:
        threads = [threading.Thread(target=_drain, args=(proc.stdout, 1, capture), daemon=True),
                   threading.Thread(target=_drain, args=(proc.stderr, 2, capture), daemon=True)]
        if stdin is not None:
            data = stdin.encode() if isinstance(stdin, str) else stdin
            threads.append(threading.Thread(target=_feed, args=(proc.stdin, data), daemon=True))
        for thread in threads:
            thread.start()
        return threads

    def _wait(self, proc: subprocess.Popen[bytes], capture: OutputCapture, limit: float) -> bool:
        """Wait for the command; True when it ran out of time."""
        deadline = time.monotonic() + limit
        while not capture.finished:
            capture.wake.wait(max(deadline - time.monotonic(), 0))
            if capture.flooded:
                self._kill(proc)
                return False
            if not capture.finished and time.monotonic() >= deadline:
                self._kill(proc)
                return True
        try:
            proc.wait(max(deadline - time.monotonic(), 0.5))
        except subprocess.TimeoutExpired:
            self._kill(proc)
            return True
        return False

    def _kill(self, proc: subprocess.Popen[bytes]) -> None:
        """Kill the process group (bwrap's pid 1 dies with it, taking the namespace) and cgroup."""
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        if self.cgroups is not None and not self.cgroups.kill_all():
            raise SandboxBroken("processes of the sandbox survived SIGKILL")
        try:
            proc.wait(KILL_GRACE)
        except subprocess.TimeoutExpired as exc:
            raise SandboxBroken(f"sandbox process {proc.pid} did not die") from exc

    # -- lifetime -------------------------------------------------------------------------

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with self._lock:
            running = list(self._running)
        try:
            for proc in running:
                self._kill(proc)
        finally:
            if self.cgroups is not None:
                self.cgroups.remove()
            self.workspace.remove()

    def __enter__(self) -> LocalSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_reachable(source: Path) -> None:
    """Bubblewrap runs as the sandbox uid: every folder above a mount must let it through."""
    path = source.resolve()
    if not path.exists():
        raise FileNotFoundError(f"mount source {source}: no such file or directory")
    for folder in path.parents:
        info = folder.stat()
        if not (info.st_mode & 0o001 or info.st_uid == SANDBOX_UID):
            raise PermissionError(
                f"mount source {source}: {folder} is closed to the sandbox uid {SANDBOX_UID} "
                "(needs o+x); move the folder or open that parent")


def _tasks_of(uid: int) -> int:
    """How many processes and threads `uid` runs now (what RLIMIT_NPROC compares against)."""
    count = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if entry.stat().st_uid == uid:
                count += len(os.listdir(entry / "task"))
    return count


def _shell_code(code: int) -> int:
    """Report death by signal N as 128+N, as a shell (and the docker backend) does."""
    return 128 - code if code < 0 else code


def _drain(stream: IO[bytes] | None, which: int, capture: OutputCapture) -> None:
    if stream is None:
        return
    with stream:
        while chunk := stream.read1(65536):  # type: ignore[attr-defined]
            capture.feed(which, chunk)
    if which == 1:
        capture.finish()  # stdout closes when the sandbox's last process is gone


def _feed(stream: IO[bytes] | None, data: bytes) -> None:
    if stream is None:
        return
    try:
        with stream:
            stream.write(data)
    except (BrokenPipeError, OSError):
        pass  # the command stopped reading; that is its business
