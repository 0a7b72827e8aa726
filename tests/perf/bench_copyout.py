"""Copy-out time of a 10,000-file workspace, before and after the safe copy-out (one JSON object).

- `before`: what copy-out was until the hardening issue, `shutil.copytree(symlinks=True,
  dirs_exist_ok=True)` skipping FIFOs, sockets and devices (kept here verbatim as the baseline);
- `after`: `sabench.sandbox.copyout.copy_out`, which plans first (links resolved, caps checked),
  then rebuilds the tree from regular files and folders;
- each into a fresh folder and into the folder of the previous copy (what `sabench sandbox exec
  --workspace` does), median of 5 rounds, on the host side of a workspace (both backends bind a
  host folder, so this is what either pays), and through a real sandbox of each backend (local
  and docker; a backend that is unavailable says why instead).

The workspace: 100 folders of 100 files of 1 KB (10,000 files, 10 MB) and 100 links inside it.
CPU seconds of a reference workload are printed beside, to compare runs of different days.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import measure

from sabench.sandbox.copyout import copy_out
from sabench.sandbox.types import Limits

FOLDERS, FILES, ROUNDS = 100, 100, 5


def make_workspace(root: Path) -> Path:
    payload = b"x = 1\n" * 170
    for folder in range(FOLDERS):
        sub = root / f"pkg{folder:03d}"
        sub.mkdir(parents=True)
        for i in range(FILES):
            (sub / f"mod{i:03d}.py").write_bytes(payload)
        (sub / "latest.py").symlink_to(f"mod{FILES - 1:03d}.py")
    return root


def _special_files(folder: str, names: list[str]) -> set[str]:
    """The baseline's filter (sandbox/workspace.py before the hardening issue)."""
    skipped = set()
    for name in names:
        mode = os.lstat(os.path.join(folder, name)).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
            skipped.add(name)
    return skipped


def before(source: Path, dest: Path) -> None:
    shutil.copytree(source, dest, symlinks=True, dirs_exist_ok=True, ignore=_special_files)


def after(source: Path, dest: Path) -> None:
    limits = Limits()
    copy_out(source.parent, source, dest, max_bytes=limits.copy_out_bytes,
             max_files=limits.copy_out_files)


def timed(copy: Callable[[Path, Path], None], source: Path, scratch: Path,
          into_previous: bool) -> dict[str, float | str]:
    """Median and minimum seconds; or how the copy failed (the baseline cannot copy into a
    folder that holds links from the previous copy: `[Errno 17] File exists` per link)."""
    times = []
    for round_ in range(ROUNDS + 1):  # the first round warms the page cache; not counted
        dest = scratch / f"{copy.__name__}-{round_}"
        if into_previous:
            copy(source, dest)
        started = time.perf_counter()
        try:
            copy(source, dest)
        except shutil.Error as exc:
            errors = exc.args[0] if exc.args and isinstance(exc.args[0], list) else [exc]
            shutil.rmtree(dest)
            return {"failed": f"shutil.Error: {len(errors)} entries, first: "
                              f"{str(errors[0][-1]) if errors else exc}"[:200]}
        if round_:
            times.append(time.perf_counter() - started)
        shutil.rmtree(dest)
    return {"median_s": round(statistics.median(times), 3), "min_s": round(min(times), 3)}


def through_sandbox(source: Path, scratch: Path, backend: str) -> dict[str, float] | str:
    """Copy-in once, then copy-out timed through a real sandbox of `backend` (local:
    bubblewrap; docker: a container of the offline image)."""
    from sabench.sandbox.protocol import get_backend, open_sandbox
    from sabench.sandbox.types import SandboxSpec

    ok, why = get_backend(backend).available(SandboxSpec(backend=backend))
    if not ok:
        return f"{backend} backend unavailable: {why}"
    with open_sandbox(SandboxSpec(backend=backend)) as box:
        box.copy_in(source)
        times = []
        for round_ in range(ROUNDS):
            started = time.perf_counter()
            box.copy_out(scratch / f"{backend}-sandbox-{round_}")
            times.append(time.perf_counter() - started)
    return {"median_s": round(statistics.median(times), 3), "min_s": round(min(times), 3)}


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="sabench-bench-copyout-") as tmp:
        source = make_workspace(Path(tmp) / "ws" / "repo")
        scratch = Path(tmp) / "out"
        scratch.mkdir()
        figures = {
            "files": FOLDERS * FILES, "links": FOLDERS, "rounds": ROUNDS,
            "before_fresh": timed(before, source, scratch, into_previous=False),
            "after_fresh": timed(after, source, scratch, into_previous=False),
            "before_into_previous": timed(before, source, scratch, into_previous=True),
            "after_into_previous": timed(after, source, scratch, into_previous=True),
            "after_through_local_sandbox": through_sandbox(source, scratch, "local"),
            "after_through_docker_sandbox": through_sandbox(source, scratch, "docker"),
        }
    figures["after_over_before_fresh"] = round(
        figures["after_fresh"]["median_s"] / figures["before_fresh"]["median_s"], 2)
    figures["reference_cpu_s"] = measure.reference_cpu_seconds()
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
