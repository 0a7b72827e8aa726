"""Bringing files out of a sandbox without letting anything of it reach the rest of the host.

What comes back is rebuilt on the host from regular files and folders. Sandboxed code controls
the workspace, so nothing here follows a link: a link whose target stays inside the copied
folder comes back as a relative link to the same place (it is part of the repository, and a
relative link can only point inside the copy); a link that points outside it, dangles or loops
is not recreated but listed as skipped with the reason, as are FIFOs, sockets and devices. A
file or folder already in the destination is replaced, never written through. The total size
and the number of files are capped (`Limits.copy_out_bytes`, `Limits.copy_out_files`); the
caps are checked on a plan made before anything is written, so a refused copy-out leaves the
destination as it was. Names are bytes to the OS: one that is not valid UTF-8 comes back as is.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from sabench.sandbox.types import WORKSPACE, SandboxError

MAX_LINK_HOPS = 40


class CopyLimitExceeded(SandboxError):
    """What a sandbox produced is larger than the copy-out caps allow (names the cap)."""


@dataclass
class CopyReport:
    """What a copy-out brought back and what it left in the sandbox, with reasons."""

    files: int = 0
    bytes: int = 0
    links: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class _Copy:
    """One copy-out: first a plan of what to bring back (nothing written yet, so a cap that is
    exceeded leaves the destination as it was), then the plan applied."""

    root: Path
    dest: Path
    max_bytes: int
    max_files: int
    aliases: tuple[str, ...] = ()
    report: CopyReport = field(default_factory=CopyReport)
    plan: list[tuple[str, Path, Path]] = field(default_factory=list)

    def run(self) -> CopyReport:
        self._folder(self.root, self.dest)
        # The destination is the caller's, not the sandbox's: a link to a folder is used as is.
        if os.path.lexists(self.dest) and not self.dest.is_dir():
            raise NotADirectoryError(f"{self.dest}: copy-out destination is not a folder")
        self.dest.mkdir(parents=True, exist_ok=True)
        for kind, source, target in self.plan:
            getattr(self, f"_apply_{kind}")(source, target)
        return self.report

    def _folder(self, source: Path, target: Path) -> None:
        with os.scandir(source) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                self._entry(Path(entry.path), target / entry.name)

    def _entry(self, source: Path, target: Path) -> None:
        info = os.lstat(source)
        rel = source.relative_to(self.root).as_posix()
        if stat.S_ISLNK(info.st_mode):
            self._link(source, target, rel)
        elif stat.S_ISDIR(info.st_mode):
            self.plan.append(("folder", source, target))
            self._folder(source, target)
        elif stat.S_ISREG(info.st_mode):
            self._file(info.st_size, source, target, rel)
        else:
            self.report.skipped.append((rel, "not a regular file, folder or link (FIFO, "
                                              "socket or device)"))

    def _file(self, size: int, source: Path, target: Path, rel: str) -> None:
        self.report.files += 1
        self.report.bytes += size
        if self.report.files > self.max_files:
            raise CopyLimitExceeded(f"copy-out refused at {rel}: more than {self.max_files} "
                                    f"files (Limits.copy_out_files); nothing was copied")
        if self.report.bytes > self.max_bytes:
            raise CopyLimitExceeded(f"copy-out refused at {rel}: more than {self.max_bytes} "
                                    f"bytes (Limits.copy_out_bytes); nothing was copied")
        self.plan.append(("file", source, target))

    def _link(self, source: Path, target: Path, rel: str) -> None:
        resolved, reason = self.resolve(source)
        if resolved is None:
            self.report.skipped.append((rel, f"link {os.readlink(source)!r}: {reason}"))
            return
        self.plan.append(("link", Path(os.path.relpath(self.dest / resolved, target.parent)),
                          target))
        self.report.links += 1

    @staticmethod
    def _apply_folder(source: Path, target: Path) -> None:
        prepare_folder(target)

    @staticmethod
    def _apply_file(source: Path, target: Path) -> None:
        clear(target)
        # O_NOFOLLOW and O_NONBLOCK: the entry may have been swapped for a link or a FIFO since
        # it was planned; the descriptor is checked before anything is read.
        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as data:
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):
                return
            os.set_blocking(fd, True)
            with open(target, "xb") as out:
                shutil.copyfileobj(data, out, 1 << 20)
        os.chmod(target, mode & 0o755)

    @staticmethod
    def _apply_link(link_text: Path, target: Path) -> None:
        clear(target)
        os.symlink(link_text, target)

    def resolve(self, link: Path) -> tuple[PurePosixPath | None, str]:
        """Where a link leads inside the copied folder, following chains inside it only."""
        current, hops = link, 0
        while hops < MAX_LINK_HOPS:
            text = os.readlink(current)
            inside = self.inside(current, text)
            if inside is None:
                return None, "points outside the copied folder (not recreated)"
            if any(os.path.islink(self.root.joinpath(*inside.parts[:i]))
                   for i in range(1, len(inside.parts))):
                return None, "goes through another link (not recreated)"
            candidate = self.root.joinpath(*inside.parts)
            if not os.path.lexists(candidate):
                return None, "dangles (not recreated)"
            if not os.path.islink(candidate):
                return inside, ""
            current, hops = candidate, hops + 1
        return None, "loops (not recreated)"

    def inside(self, link: Path, text: str) -> PurePosixPath | None:
        """The link's target relative to the copied folder, or None when it leaves it."""
        target = PurePosixPath(text)
        if target.is_absolute():
            for base in (WORKSPACE, *self.aliases):
                try:
                    target = target.relative_to(base)
                    break
                except ValueError:
                    continue
            else:
                return None
            start = PurePosixPath()
        else:
            start = PurePosixPath(link.parent.relative_to(self.workspace_root).as_posix())
        parts: list[str] = []
        for part in (start / target).parts:
            if part in ("", "."):
                continue
            if part == "..":
                if not parts:
                    return None
                parts.pop()
            else:
                parts.append(part)
        inner = PurePosixPath(*parts) if parts else PurePosixPath(".")
        try:
            return inner.relative_to(self.copied)
        except ValueError:
            return None

    # The copied folder is `root`, a folder of the workspace `workspace_root`; links are read
    # as the sandbox sees them (absolute targets start at /workspace or an alias of it).
    workspace_root: Path = Path("/")
    copied: PurePosixPath = PurePosixPath(".")


def prepare_folder(path: Path) -> None:
    """A real folder at `path`: whatever else is there (a file, a link) is removed first."""
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        path.unlink()
    path.mkdir(parents=True, exist_ok=True)


def clear(path: Path) -> None:
    """Nothing at `path` (a folder there is removed whole, links are removed, not followed)."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()


def copy_out(workspace: Path, source: Path, dest: Path, *, max_bytes: int, max_files: int,
             aliases: tuple[str, ...] = ()) -> CopyReport:
    """Copy `source` (a folder of the host workspace `workspace`) to `dest` safely."""
    job = _Copy(Path(source), Path(dest), max_bytes, max_files, tuple(aliases))
    job.workspace_root = Path(workspace)
    job.copied = PurePosixPath(Path(source).relative_to(workspace).as_posix())
    return job.run()
