"""The host side of a sandbox: its private workspace directory and output capture.

Both backends bind a private host directory at /workspace, so file transfers are plain host file
operations. Code inside the sandbox controls that directory, so nothing here follows a symlink:
a link planted by sandboxed code can never make the host read or write outside the workspace.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import os
import shutil
import stat
import tempfile
import threading
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

from sabench.sandbox.copyout import CopyReport, copy_out
from sabench.sandbox.types import (
    BASE_ENV,
    LABEL,
    SANDBOX_GID,
    SANDBOX_UID,
    WORKSPACE,
    Limits,
    SandboxSpec,
)

#: Name of the file that records which host process owns a workspace (read by the reaper).
OWNER_FILE = ".sabench-owner"


_live: weakref.WeakSet[Any] = weakref.WeakSet()


def track(sandbox: Any) -> None:
    """Remember an open sandbox so interpreter exit closes it even without `with`/`close()`."""
    _live.add(sandbox)


@atexit.register
def _close_forgotten() -> None:
    for sandbox in list(_live):
        with contextlib.suppress(Exception):
            sandbox.close()


def to_argv(cmd: str | Sequence[str]) -> list[str]:
    """A shell string runs through /bin/sh -c; a sequence is the argv itself."""
    if isinstance(cmd, str):
        return ["/bin/sh", "-c", cmd]
    argv = [str(part) for part in cmd]
    if not argv:
        raise ValueError("empty command")
    return argv


def environment(extra: Mapping[str, str] | None) -> dict[str, str]:
    """The base environment plus the caller's variables (never the host's)."""
    env = {**BASE_ENV, **(extra or {})}
    for key in env:
        if not key or "=" in key or "\0" in key:
            raise ValueError(f"invalid environment variable name {key!r}")
    return env


def command_timeout(timeout: float | None, default: float) -> float:
    """The timeout of one command; 0 or less is refused (GNU timeout would read 0 as "none")."""
    limit = default if timeout is None else float(timeout)
    if not limit > 0:
        raise ValueError(f"timeout must be positive seconds, got {timeout!r}")
    return limit


def display(cmd: str | Sequence[str]) -> str:
    return cmd if isinstance(cmd, str) else " ".join(str(part) for part in cmd)


def inside_cwd(cwd: str | None) -> str:
    """Working directory inside the sandbox: relative paths are under /workspace."""
    if not cwd:
        return WORKSPACE
    path = PurePosixPath(cwd)
    return str(path if path.is_absolute() else PurePosixPath(WORKSPACE) / path)


class HostWorkspace:
    """A private, root-owned parent holding a workspace owned by the sandbox uid.

    Layout: ``<tmp>/sabench.sandbox-<backend>-<random>/`` holds ``ws/`` (bound at /workspace),
    ``ctl/`` (host-made control files such as stdin data, bound read-only where a backend needs
    them) and the owner file the reaper reads.
    """

    def __init__(self, kind: str) -> None:
        self.root = Path(tempfile.mkdtemp(prefix=f"{LABEL}-{kind}-"))
        self.root.chmod(0o711)  # the sandbox uid may traverse to ws/ but not list the parent
        self.path = self.root / "ws"
        self.ctl = self.root / "ctl"
        self.path.mkdir(mode=0o755)
        self.ctl.mkdir(mode=0o755)
        (self.root / OWNER_FILE).write_text(str(os.getpid()))
        self._chown(self.path)

    @staticmethod
    def _chown(path: Path) -> None:
        if os.geteuid() == 0:
            os.chown(path, SANDBOX_UID, SANDBOX_GID, follow_symlinks=False)

    def resolve(self, rel: str) -> Path:
        """The host path of workspace path `rel`, refusing anything that escapes it."""
        pure = PurePosixPath(rel)
        if pure.is_absolute():
            try:
                pure = pure.relative_to(WORKSPACE)
            except ValueError:
                raise PermissionError(f"{rel}: only paths under {WORKSPACE} are reachable"
                                      ) from None
        if ".." in pure.parts:
            raise PermissionError(f"{rel}: '..' is not allowed in workspace paths")
        host = self.path.joinpath(*pure.parts)
        self._no_links(host)
        return host

    def _no_links(self, host: Path) -> None:
        """Refuse a path whose components (below the workspace) include a symlink."""
        current = self.path
        for part in host.relative_to(self.path).parts:
            current = current / part
            if current.is_symlink():
                raise PermissionError(f"{current.relative_to(self.path)}: is a symbolic link")

    def write_file(self, rel: str, data: str | bytes) -> None:
        target = self.resolve(rel)
        self._make_parents(target.parent)
        payload = data.encode() if isinstance(data, str) else data
        with _open_for_write(target) as handle:
            handle.write(payload)
        self._chown(target)

    def _make_parents(self, folder: Path) -> None:
        missing = []
        while not folder.exists():
            missing.append(folder)
            folder = folder.parent
        for item in reversed(missing):
            item.mkdir()
            self._chown(item)

    def read_file(self, rel: str) -> bytes:
        target = self.resolve(rel)
        try:
            # O_NONBLOCK: a FIFO planted by sandboxed code must not hang the host on open.
            fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError:
            raise FileNotFoundError(f"{rel}: no such file in the sandbox workspace") from None
        with os.fdopen(fd, "rb") as handle:
            mode = os.fstat(handle.fileno()).st_mode
            if stat.S_ISDIR(mode):
                raise IsADirectoryError(f"{rel}: is a directory")
            if not stat.S_ISREG(mode):
                raise PermissionError(f"{rel}: not a regular file")
            return handle.read()

    def copy_in(self, src: Path, dest: str = ".") -> None:
        src = Path(src)
        if not src.is_dir():
            raise NotADirectoryError(f"{src}: not a directory")
        target = self.resolve(dest)
        self._make_parents(target)
        # Not shutil.copytree: the destination may hold links planted by sandboxed code, and
        # copytree would write through them onto the host. Every path is checked, nothing is
        # followed, and a planted link in the way is replaced rather than written through.
        for folder, dirs, files in os.walk(src):
            rel = Path(folder).relative_to(src)
            for name in dirs:
                self._copy_dir_entry(Path(folder) / name, target / rel / name)
            for name in files:
                self._copy_file(Path(folder) / name, target / rel / name)

    def _copy_dir_entry(self, source: Path, dest: Path) -> None:
        self._no_links(dest.parent)
        if source.is_symlink():
            self._replace_with_link(source, dest)
            return
        if dest.is_symlink() or (dest.exists() and not dest.is_dir()):
            dest.unlink()
        if not dest.exists():
            dest.mkdir()
            self._chown(dest)

    def _copy_file(self, source: Path, dest: Path) -> None:
        self._no_links(dest.parent)
        if source.is_symlink():
            self._replace_with_link(source, dest)
            return
        if not stat.S_ISREG(os.lstat(source).st_mode):
            return  # a FIFO, socket or device: opening it could block, and it means nothing inside
        if dest.is_symlink():
            dest.unlink()
        with _open_for_write(dest) as out, source.open("rb") as data:
            copy_sparse(data.fileno(), out.fileno())
        os.chmod(dest, source.stat().st_mode & 0o777, follow_symlinks=False)
        self._chown(dest)

    def _replace_with_link(self, source: Path, dest: Path) -> None:
        if dest.is_symlink() or dest.is_file():
            dest.unlink()
        elif dest.is_dir():
            shutil.rmtree(dest)
        os.symlink(os.readlink(source), dest)
        self._chown(dest)

    def copy_out(self, dest: Path, src: str = ".", limits: Limits | None = None,
                 aliases: tuple[str, ...] = ()) -> CopyReport:
        """Rebuild `src` at `dest` from regular files and folders (see `copyout.py`)."""
        source = self.resolve(src)
        if not source.is_dir():
            raise NotADirectoryError(f"{src}: not a directory in the sandbox workspace")
        limits = limits or Limits()
        return copy_out(self.path, source, Path(dest), max_bytes=limits.copy_out_bytes,
                        max_files=limits.copy_out_files, aliases=aliases)

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def copy_sparse(source: int, dest: int) -> None:
    """Copy an open file's data, leaving its holes as holes (a 2 GB sparse file stays small)."""
    size = os.fstat(source).st_size
    offset = 0
    while offset < size:
        try:
            start = os.lseek(source, offset, os.SEEK_DATA)
            end = os.lseek(source, start, os.SEEK_HOLE)
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: only a hole is left
                raise
            break
        _copy_range(source, dest, start, end)
        offset = end
    os.ftruncate(dest, size)


def _copy_range(source: int, dest: int, start: int, end: int) -> None:
    while start < end:
        try:
            done = os.copy_file_range(source, dest, min(end - start, 1 << 30), start, start)
        except OSError as exc:  # across file systems on older kernels, or unsupported
            if exc.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
                raise
            done = os.pwrite(dest, os.pread(source, min(end - start, 1 << 20), start), start)
        if done == 0:  # the file shrank meanwhile
            return
        start += done


def _open_for_write(path: Path) -> BinaryIO:
    """Open a workspace file for writing without following a link or blocking on a FIFO."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO):
            raise PermissionError(f"{path.name}: not a regular file") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise PermissionError(f"{path.name}: not a regular file")
    os.ftruncate(fd, 0)
    os.set_blocking(fd, True)
    return os.fdopen(fd, "wb")


class WorkspaceFiles:
    """The Sandbox file operations, on the host side of a backend's `HostWorkspace`.

    They hold the backend's command lock, so a file is never moved while a command could be
    using it. A backend sets `workspace` and `_exec_lock`, and may refuse work by overriding
    `_check_open`.
    """

    workspace: HostWorkspace
    spec: SandboxSpec
    _exec_lock: threading.Lock

    def _check_open(self) -> None:
        """Raise when the sandbox can no longer be used (backends that track closing)."""

    def write_file(self, path: str, data: str | bytes) -> None:
        self._check_open()
        with self._exec_lock:
            self.workspace.write_file(path, data)

    def read_file(self, path: str) -> bytes:
        self._check_open()
        with self._exec_lock:
            return self.workspace.read_file(path)

    def copy_in(self, src: Path, dest: str = ".") -> None:
        self._check_open()
        with self._exec_lock:
            self.workspace.copy_in(src, dest)

    def copy_out(self, dest: Path, src: str = ".") -> CopyReport:
        self._check_open()
        spec = self.spec
        with self._exec_lock:
            return self.workspace.copy_out(dest, src, spec.limits, spec.workspace_aliases)


class OutputCapture:
    """Keeps the first `output_bytes` of stdout and stderr; flags a flood past `flood_bytes`."""

    def __init__(self, limits: Limits) -> None:
        self.keep = limits.output_bytes
        self.flood = limits.flood_bytes
        self.data = {1: bytearray(), 2: bytearray()}
        self.total = 0
        self.truncated = False
        self.flooded = False
        self.finished = False
        #: Set when the output ended or flooded: the waiting thread wakes at once, no polling.
        self.wake = threading.Event()

    def feed(self, stream: int, chunk: bytes) -> None:
        self.total += len(chunk)
        buffer = self.data[stream]
        room = self.keep - len(buffer)
        if room < len(chunk):
            self.truncated = True
        if room > 0:
            buffer.extend(chunk[:room])
        if self.total > self.flood:
            self.flooded = True
            self.wake.set()

    def finish(self) -> None:
        """Called by the reader when the stream ended."""
        self.finished = True
        self.wake.set()

    def text(self, stream: int) -> str:
        return self.data[stream].decode("utf-8", errors="replace")
