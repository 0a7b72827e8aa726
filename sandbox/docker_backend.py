"""Docker backend: one locked-down container per sandbox, commands run with `docker exec`.

The container has no network, a memory limit with swap off, a CPU quota, a pids limit, no
capabilities, no-new-privileges, a read-only root with a private workspace bound at /workspace and
a size-limited tmpfs /tmp, and runs as an unprivileged uid. Each command is wrapped in GNU
`timeout` inside the container so the whole process group dies at the deadline even if the host
loses track of it; the host keeps its own guard a few seconds later and sweeps every process of
the sandbox user when a command outlives both.
"""

from __future__ import annotations

import atexit
import os
import socket
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from sabench.sandbox.protocol import Command
from sabench.sandbox.types import (
    LABEL,
    SANDBOX_GID,
    SANDBOX_UID,
    WORKSPACE,
    BackendUnavailable,
    CommandTimeout,
    ExecResult,
    SandboxBroken,
    SandboxSpec,
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

#: Read-only bind of the host control folder (stdin files) inside the container.
CONTROL = "/.sabench"
#: Seconds between TERM and KILL inside the container, and the host guard's extra patience.
KILL_AFTER = 2
HOST_GRACE = 5.0
#: Runs every command: cd, feed stdin, clear the environment, enforce the timeout on the group,
#: then kill whatever the command left behind (twice: a fork bomb may fork during the first pass).
WRAPPER = (
    't=$1; in=$2; dir=$3; shift 3; cd "$dir" || exit 126; '
    f'timeout -k {KILL_AFTER} "$t" env -i "$@" < "$in"; rc=$?; '
    'kill -9 -1 2>/dev/null; kill -9 -1 2>/dev/null; exit $rc'
)
#: Exit codes of `timeout` when it had to stop the command (TERM worked / KILL was needed).
TIMEOUT_CODES = (124, 137)
#: The exit code every backend reports for a timed-out command (GNU timeout's convention).
TIMEOUT_EXIT = 124
SWEEP = ["/bin/sh", "-c", "kill -9 -1 2>/dev/null; true"]
#: The container's init: survives the sweep (a namespace's init ignores kills from inside) and
#: reaps orphans, because dash's `wait` collects any child, not just its own jobs.
KEEPER = ["/bin/sh", "-c", 'trap "exit 0" TERM; while :; do sleep 3600 & wait; done']
OOM_PROBE = ("cat /sys/fs/cgroup/memory/memory.oom_control /sys/fs/cgroup/memory.events "
             "2>/dev/null; true")

_client_lock = threading.Lock()
_client: Any = None


def docker_client() -> Any:
    """One shared client (thread-safe connection pool sized for many concurrent sandboxes)."""
    global _client
    with _client_lock:
        if _client is None:
            try:
                import docker

                client = docker.from_env(max_pool_size=64, timeout=120)
                client.ping()
            except Exception as exc:  # any failure here means "no usable engine"
                raise BackendUnavailable(f"docker engine unavailable: {exc}") from exc
            _client = client
        return _client


def owner_tag() -> str:
    """Which host process owns a container (the reaper removes those whose owner is dead)."""
    return f"{socket.gethostname()}:{os.getpid()}"


class _WarmPool:
    """Started, never-used sandboxes waiting to be handed out (each is used once, then removed).

    Starting a container costs a few hundred milliseconds and the engine starts them one after
    another, so a caller that knows it will need N sandboxes at once can start them ahead of
    time with `DockerBackend.prewarm`. Nothing is ever reused: a sandbox leaves the pool unused.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ready: dict[str, list[DockerSandbox]] = {}
        atexit.register(self.drain)

    @staticmethod
    def key(spec: SandboxSpec) -> str:
        return spec.model_dump_json()

    def take(self, spec: SandboxSpec) -> DockerSandbox | None:
        with self._lock:
            ready = self._ready.get(self.key(spec))
            return ready.pop() if ready else None

    def put(self, sandbox: DockerSandbox) -> None:
        with self._lock:
            self._ready.setdefault(self.key(sandbox.spec), []).append(sandbox)

    def drain(self) -> None:
        with self._lock:
            waiting = [box for boxes in self._ready.values() for box in boxes]
            self._ready.clear()
        for sandbox in waiting:
            sandbox.close()


_pool = _WarmPool()


class DockerBackend:
    """Creates `DockerSandbox`es (from the warm pool when `prewarm` filled it)."""

    name = "docker"

    def available(self, spec: SandboxSpec | None = None) -> tuple[bool, str]:
        from sabench.sandbox.images import resolve_image

        try:
            client = docker_client()
            image = resolve_image(spec.image if spec else None)
            client.images.get(image)
        except BackendUnavailable as exc:
            return False, str(exc)
        except Exception as exc:
            return False, f"image unavailable: {exc}"
        return True, f"docker engine up, image {image} present"

    def open(self, spec: SandboxSpec) -> DockerSandbox:
        return _pool.take(spec) or DockerSandbox(spec)

    def prewarm(self, spec: SandboxSpec, count: int) -> None:
        """Start `count` sandboxes of `spec` now (in parallel) so later opens are instant.

        Unused ones are removed when this process exits (or by the reaper if it is killed).
        """
        with ThreadPoolExecutor(max(1, min(count, 16))) as pool:
            futures = [pool.submit(DockerSandbox, spec) for _ in range(count)]
        errors = [error for future in futures if (error := future.exception()) is not None]
        for future in futures:
            if future.exception() is None:
                _pool.put(future.result())  # kept even if a sibling failed: drained at exit
        if errors:
            raise errors[0]

    @staticmethod
    def drain() -> None:
        """Remove every prewarmed sandbox not handed out yet."""
        _pool.drain()


class DockerSandbox(WorkspaceFiles):
    """A running container; use as a context manager so it is always removed."""

    def __init__(self, spec: SandboxSpec) -> None:
        from sabench.sandbox.images import resolve_image

        self.spec = spec
        self.client = docker_client()
        self.image = resolve_image(spec.image)
        self.container: Any = None
        self._oom_seen = 0
        self._closed = False
        self._exec_lock = threading.Lock()  # one command at a time: each cleans up after itself
        self.workspace = HostWorkspace("docker")
        track(self)
        try:
            self._start()
        except BaseException:
            self.close()  # also on KeyboardInterrupt between create and start
            raise

    def _start(self) -> None:
        import docker.errors

        try:
            # create + start, never `run`: run would try to pull a missing image from a registry
            self.container = self.client.containers.create(self.image, KEEPER, **self._options())
            self.container.start()
        except docker.errors.ImageNotFound as exc:
            raise BackendUnavailable(
                f"docker image {self.image} not found: run `sabench sandbox build --offline`"
            ) from exc
        except docker.errors.APIError as exc:
            raise BackendUnavailable(f"docker could not start a sandbox: {exc}") from exc

    def _options(self) -> dict[str, Any]:
        limits = self.spec.limits
        memory = f"{limits.memory_mb}m"
        volumes = {
            str(self.workspace.path): {"bind": WORKSPACE, "mode": "rw"},
            str(self.workspace.ctl): {"bind": CONTROL, "mode": "ro"},
        }
        binds = [f"{self.workspace.path}:{alias}:rw" for alias in self.spec.workspace_aliases]
        for mount in self.spec.mounts:
            volumes[str(Path(mount.source).resolve())] = {
                "bind": mount.target, "mode": "ro" if mount.read_only else "rw"}
        binds += [f"{source}:{spec['bind']}:{spec['mode']}" for source, spec in volumes.items()]
        return {
            "user": f"{SANDBOX_UID}:{SANDBOX_GID}",
            "network_mode": "bridge" if self.spec.network else "none",
            "mem_limit": memory, "memswap_limit": memory, "mem_swappiness": 0,
            "nano_cpus": int(limits.cpus * 1e9), "pids_limit": limits.pids,
            "cap_drop": ["ALL"], "security_opt": ["no-new-privileges"], "read_only": True,
            "tmpfs": {"/tmp": f"size={limits.tmp_mb}m,mode=1777,nosuid,nodev"},
            "volumes": binds, "working_dir": WORKSPACE, "environment": {},
            "hostname": "sandbox", "labels": {LABEL: "1", f"{LABEL}.owner": owner_tag()},
        }

    # -- commands -------------------------------------------------------------------------

    def exec(self, cmd: Command, *, cwd: str | None = None, env: Mapping[str, str] | None = None,
             timeout: float | None = None, stdin: str | bytes | None = None,
             raise_on_timeout: bool = False) -> ExecResult:
        self._check_open()
        limit = command_timeout(timeout, self.spec.limits.timeout_s)
        stdin_path = self._stdin_file(stdin)
        try:
            with self._exec_lock:
                result = self._run(cmd, limit, cwd, environment(env), stdin_path)
        finally:
            if stdin_path != "/dev/null":
                (self.workspace.ctl / Path(stdin_path).name).unlink(missing_ok=True)
        if result.timed_out and raise_on_timeout:
            raise CommandTimeout(result)
        return result

    def _stdin_file(self, stdin: str | bytes | None) -> str:
        if stdin is None:
            return "/dev/null"
        name = f"stdin-{threading.get_ident()}-{time.monotonic_ns()}"
        data = stdin.encode() if isinstance(stdin, str) else stdin
        (self.workspace.ctl / name).write_bytes(data)
        (self.workspace.ctl / name).chmod(0o644)
        return f"{CONTROL}/{name}"

    def _run(self, cmd: Command, limit: float, cwd: str | None, env: dict[str, str],
             stdin_path: str) -> ExecResult:
        argv = ["/bin/sh", "-c", WRAPPER, "sabench", f"{limit:g}", stdin_path, inside_cwd(cwd),
                *(f"{key}={value}" for key, value in env.items()), *to_argv(cmd)]
        api = self.client.api
        started = time.monotonic()
        exec_id = self._api(api.exec_create, self.container.id, argv,
                            user=f"{SANDBOX_UID}:{SANDBOX_GID}")["Id"]
        capture = OutputCapture(self.spec.limits)
        reader = threading.Thread(target=self._read, args=(exec_id, capture), daemon=True)
        reader.start()
        host_killed = self._wait(reader, capture, limit)
        code = self._exit_code(exec_id)
        duration = time.monotonic() - started
        timed_out = host_killed or (code in TIMEOUT_CODES and duration >= limit)
        code = TIMEOUT_EXIT if timed_out else code
        if timed_out:
            self._sweep()  # children that left the process group (setsid) die here
        return ExecResult(
            command=display(cmd), exit_code=code, stdout=capture.text(1), stderr=capture.text(2),
            timed_out=timed_out, oom_killed=(not timed_out and self._oom_killed(code)),
            truncated=capture.truncated, duration=duration)

    def _read(self, exec_id: str, capture: OutputCapture) -> None:
        try:
            for out, err in self.client.api.exec_start(exec_id, stream=True, demux=True):
                if out:
                    capture.feed(1, out)
                if err:
                    capture.feed(2, err)
        except Exception:  # the stream dies with the container; _exit_code reports that
            pass
        finally:
            capture.finish()

    def _wait(self, reader: threading.Thread, capture: OutputCapture, limit: float) -> bool:
        """Wait for the command; True when the host had to kill it (guard or flood)."""
        deadline = time.monotonic() + limit + KILL_AFTER + HOST_GRACE
        while not capture.finished:
            capture.wake.wait(max(deadline - time.monotonic(), 0))
            if capture.flooded:
                self._sweep()  # an output flood is stopped, not drained forever
                reader.join(HOST_GRACE)
                return False
            if not capture.finished and time.monotonic() > deadline:
                self._sweep()
                reader.join(HOST_GRACE)
                if reader.is_alive():
                    raise SandboxBroken(f"command outlived its timeout and a kill: {self._name()}")
                return True
        return False

    def _exit_code(self, exec_id: str) -> int:
        for _ in range(200):
            info = self._api(self.client.api.exec_inspect, exec_id)
            if not info.get("Running"):
                code = info.get("ExitCode")
                return -1 if code is None else int(code)
            time.sleep(0.01)
        raise SandboxBroken(f"exec never finished in {self._name()}")

    def _oom_killed(self, code: int) -> bool:
        """A failed command plus a new OOM kill in the container's memory cgroup means OOM.

        Any non-zero exit is checked (one extra exec), not just 137: the victim may be a child
        whose parent then exited with its own code.
        """
        if code == 0:
            return False
        probe = self._api(self.client.api.exec_create, self.container.id,
                          ["/bin/sh", "-c", OOM_PROBE], user="0")
        text = self._api(self.client.api.exec_start, probe["Id"]).decode(errors="replace")
        count = sum(int(line.split()[1]) for line in text.splitlines()
                    if line.startswith("oom_kill ") and line.split()[1].isdigit())
        fresh, self._oom_seen = count > self._oom_seen, max(count, self._oom_seen)
        return fresh

    def _sweep(self) -> None:
        """Kill every process of the sandbox user except the container's init."""
        try:
            probe = self.client.api.exec_create(self.container.id, SWEEP,
                                                user=f"{SANDBOX_UID}:{SANDBOX_GID}")
            self.client.api.exec_start(probe["Id"])
        except Exception as exc:
            raise SandboxBroken(f"cannot kill processes in {self._name()}: {exc}") from exc

    def _api(self, call: Any, *args: Any, **kwargs: Any) -> Any:
        import docker.errors

        try:
            return call(*args, **kwargs)
        except docker.errors.APIError as exc:
            raise SandboxBroken(f"sandbox {self._name()} failed: {exc}") from exc

    def _name(self) -> str:
        return self.container.name if self.container is not None else "(not started)"

    def _check_open(self) -> None:
        if self._closed:
            raise SandboxBroken("sandbox is closed")

    # -- lifetime -------------------------------------------------------------------------

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self.container is not None:
                self.container.remove(force=True, v=True)
        except Exception:
            pass  # already gone; anything left is labelled and the reaper removes it
        finally:
            self.workspace.remove()

    def __enter__(self) -> DockerSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
