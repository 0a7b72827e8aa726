"""Copy-out keeps the host safe: links that leave the workspace, dangle or loop, and special
files are not recreated; links inside come back relative; caps; odd names; existing content."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sabench.sandbox.copyout import CopyLimitExceeded
from sabench.sandbox.protocol import Sandbox, open_sandbox
from sabench.sandbox.types import SandboxSpec
from tests.sandbox.conftest import TEST_LIMITS

PROBE = ("mkdir -p sub && echo kept > sub/kept.txt && echo new > made.txt && "
         "ln -s /etc/passwd pw && ln -s / rootlink && ln -s ../../../../etc/shadow up && "
         "ln -s sub/kept.txt inner && ln -s /workspace/probe/sub abs_inner && "
         "ln -s missing dangle && "
         "ln -s loop_b loop_a && ln -s loop_a loop_b && mkfifo fifo")


def listing(folder: Path) -> dict[str, str]:
    found = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        found[rel] = f"-> {os.readlink(path)}" if path.is_symlink() else (
            "dir" if path.is_dir() else path.read_text())
    return found


def test_links_out_dangling_looping_and_fifos_stay_in_the_sandbox(box: Sandbox,
                                                                  tmp_path: Path) -> None:
    box.exec("rm -rf /workspace/probe && mkdir /workspace/probe")
    assert box.exec(f"cd /workspace/probe && {PROBE}").ok
    report = box.copy_out(tmp_path / "out", "probe")
    got = listing(tmp_path / "out")
    assert got["made.txt"] == "new\n" and got["sub/kept.txt"] == "kept\n"
    assert got["inner"] == "-> sub/kept.txt" and got["abs_inner"] == "-> sub"
    for name in ("pw", "rootlink", "up", "dangle", "loop_a", "loop_b", "fifo"):
        assert name not in got, name
    reasons = dict(report.skipped)
    assert "outside" in reasons["pw"] and "outside" in reasons["rootlink"]
    assert "outside" in reasons["up"] and "dangles" in reasons["dangle"]
    assert "loops" in reasons["loop_a"] and "FIFO" in reasons["fifo"]
    assert report.files == 2 and report.links == 2


def test_copy_out_into_a_folder_with_files_and_links_replaces_them(box: Sandbox,
                                                                   tmp_path: Path) -> None:
    box.exec("rm -rf /workspace/again && mkdir -p /workspace/again/d && "
             "echo fresh > /workspace/again/a.txt && echo deep > /workspace/again/d/x")
    out = tmp_path / "out"
    (out / "d").mkdir(parents=True)
    (out / "inner").symlink_to("a.txt")
    outside = tmp_path / "host-secret.txt"
    outside.write_text("host\n")
    (out / "a.txt").symlink_to(outside)  # a planted link must be replaced, not written through
    box.copy_out(out, "again")
    assert (out / "a.txt").read_text() == "fresh\n" and not (out / "a.txt").is_symlink()
    assert outside.read_text() == "host\n"
    assert (out / "d" / "x").read_text() == "deep\n"


def test_caps_name_themselves(backend: str, tmp_path: Path) -> None:
    limits = TEST_LIMITS.model_copy(update={"copy_out_files": 3, "copy_out_bytes": 1000})
    with open_sandbox(SandboxSpec(backend=backend, limits=limits)) as sandbox:
        sandbox.exec("mkdir many && for i in 1 2 3 4; do echo $i > many/$i; done && "
                     "mkdir big && head -c 5000 /dev/zero > big/blob")
        (tmp_path / "a").mkdir()
        (tmp_path / "a" / "1").write_text("host\n")
        with pytest.raises(CopyLimitExceeded, match="copy_out_files"):
            sandbox.copy_out(tmp_path / "a", "many")
        with pytest.raises(CopyLimitExceeded, match="copy_out_bytes"):
            sandbox.copy_out(tmp_path / "b", "big")
    # The caps are checked before anything is written: a refused copy-out changes nothing.
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["1"]
    assert (tmp_path / "a" / "1").read_text() == "host\n" and not (tmp_path / "b").exists()


def test_names_that_are_not_utf8_come_back_intact(box: Sandbox, tmp_path: Path) -> None:
    box.exec("rm -rf /workspace/odd && mkdir /workspace/odd && "
             "printf x > \"/workspace/odd/$(printf 'caf\\351')\"")
    report = box.copy_out(tmp_path / "odd", "odd")
    names = os.listdir(os.fsencode(tmp_path / "odd"))
    assert names == [b"caf\xe9"] and report.files == 1


def test_copy_in_of_a_link_out_of_the_folder_shows_nothing_of_the_host(
        box: Sandbox, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret\n")
    source = tmp_path / "project"
    source.mkdir()
    (source / "leak").symlink_to(secret)
    (source / "leakdir").symlink_to(tmp_path)
    box.copy_in(source, "incoming")
    shown = box.exec("cat incoming/leak incoming/leakdir/secret.txt 2>&1; true").stdout
    assert "host secret" not in shown


def test_copy_in_skips_host_fifos_and_keeps_sparse_files_small(box: Sandbox,
                                                               tmp_path: Path) -> None:
    source = tmp_path / "project"
    source.mkdir()
    os.mkfifo(source / "pipe")  # opening it would block the host forever
    with open(source / "sparse.bin", "wb") as handle:
        handle.write(b"head")
        handle.seek(1 << 30)
        handle.write(b"tail")
    box.copy_in(source, "sparse_in")
    shown = box.exec("ls sparse_in; stat -c '%s %b %B' sparse_in/sparse.bin; "
                     "tail -c 4 sparse_in/sparse.bin").stdout.split("\n")
    assert shown[0] == "sparse.bin"
    size, blocks, block = (int(x) for x in shown[1].split())
    assert size == (1 << 30) + 4 and blocks * block < 1 << 20 and shown[2] == "tail"
    box.exec("rm -rf sparse_in")
