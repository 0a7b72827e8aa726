"""What every sandbox backend must do, run against each backend on real engines."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from sabench.sandbox.protocol import Sandbox, open_sandbox
from sabench.sandbox.types import (
    BASE_ENV,
    SANDBOX_UID,
    CommandTimeout,
    Mount,
    SandboxBroken,
    SandboxSpec,
)

from .conftest import TEST_LIMITS

#: Lists the command lines of every process visible in the sandbox, one per line.
LIST_PROCS = ("import os\nfor p in os.listdir('/proc'):\n    if p.isdigit():\n        try:\n"
              "            print(open(f'/proc/{p}/cmdline').read().replace(chr(0), ' '))\n"
              "        except OSError:\n            pass\n")


def test_argv_and_shell_string(box: Sandbox) -> None:
    argv = box.exec(["printf", "%s|", "a b", "c"])
    shell = box.exec("echo out; echo err >&2")
    assert (argv.exit_code, argv.stdout) == (0, "a b|c|")
    assert (shell.stdout, shell.stderr) == ("out\n", "err\n")
    assert shell.ok and not shell.timed_out and not shell.truncated and not shell.oom_killed


@pytest.mark.parametrize("code", [1, 3, 42, 255])
def test_exit_codes_are_results_not_errors(box: Sandbox, code: int) -> None:
    result = box.exec(f"exit {code}")
    assert result.exit_code == code
    assert not result.ok


def test_missing_program_is_127(box: Sandbox) -> None:
    result = box.exec(["no-such-program-sabench"])
    assert result.exit_code == 127


def test_stdin_is_fed_and_defaults_to_empty(box: Sandbox) -> None:
    data = "line one\nline two\n" * 1000
    assert box.exec("cat", stdin=data).stdout == data
    assert box.exec(["wc", "-c"], stdin=b"\x00\x01\xff").stdout.strip() == "3"
    assert box.exec("cat").stdout == ""  # no stdin: immediate end of file, no hang


def test_environment_is_exactly_base_plus_caller(box: Sandbox) -> None:
    result = box.exec(["env", "-0"], env={"SABENCH_X": "1 2", "OTHER": "é"})
    seen = dict(item.split("=", 1) for item in result.stdout.split("\0") if item)
    seen.pop("PWD", None)  # set by the shell of some images, not by us
    assert seen == {**BASE_ENV, "SABENCH_X": "1 2", "OTHER": "é"}


def test_invalid_env_name_is_refused(box: Sandbox) -> None:
    with pytest.raises(ValueError, match="environment variable"):
        box.exec("true", env={"A=B": "x"})


def test_cwd_defaults_to_workspace_and_accepts_relative(box: Sandbox) -> None:
    box.exec("mkdir -p sub/dir")
    assert box.exec("pwd").stdout.strip() == "/workspace"
    assert box.exec("pwd", cwd="sub/dir").stdout.strip() == "/workspace/sub/dir"
    assert box.exec("pwd", cwd="/tmp").stdout.strip() == "/tmp"
    assert box.exec("pwd", cwd="missing").exit_code != 0


def test_runs_as_unprivileged_user(box: Sandbox) -> None:
    assert box.exec(["id", "-u"]).stdout.strip() == str(SANDBOX_UID)
    status = box.exec(["grep", "^CapEff", "/proc/self/status"]).stdout.split()
    assert int(status[1], 16) == 0


def test_timeout_kills_the_command_and_its_children(box: Sandbox) -> None:
    result = box.exec("sleep 300 & (setsid sleep 301 &) ; sleep 302", timeout=1)
    assert result.timed_out and not result.ok
    assert result.exit_code == 124  # the same on every backend, as GNU timeout reports it
    procs = box.exec(["python3", "-c", LIST_PROCS]).stdout
    assert not any(f"sleep {n}" in procs for n in (300, 301, 302)), procs


def test_timeout_can_raise(box: Sandbox) -> None:
    with pytest.raises(CommandTimeout) as caught:
        box.exec("echo started; sleep 300", timeout=1, raise_on_timeout=True)
    assert caught.value.result.timed_out
    assert caught.value.result.stdout == "started\n"


@pytest.mark.parametrize("timeout", [0, -1])
def test_non_positive_timeout_is_refused(box: Sandbox, timeout: float) -> None:
    with pytest.raises(ValueError, match="timeout"):
        box.exec("true", timeout=timeout)


def test_term_ignoring_command_is_still_killed(box: Sandbox) -> None:
    result = box.exec("trap '' TERM; while :; do :; done", timeout=1)
    assert result.timed_out


def test_background_leftovers_die_when_the_command_ends(box: Sandbox) -> None:
    assert box.exec("(setsid sleep 303 &); echo started").stdout == "started\n"
    assert "sleep 303" not in box.exec(["python3", "-c", LIST_PROCS]).stdout


def test_output_is_capped_per_stream(make_box) -> None:
    box = make_box(output_bytes=4096)
    result = box.exec("head -c 100000 /dev/zero | tr '\\0' a; "
                      "head -c 5000 /dev/zero | tr '\\0' b >&2")
    assert result.exit_code == 0 and result.truncated
    assert result.stdout == "a" * 4096
    assert result.stderr == "b" * 4096
    assert not box.exec("echo small").truncated


def test_file_round_trip(box: Sandbox) -> None:
    payload = bytes(range(256)) * 10
    box.write_file("round/trip.bin", payload)
    assert box.exec(["sha256sum", "round/trip.bin"]).exit_code == 0
    assert box.read_file("round/trip.bin") == payload
    assert box.read_file("/workspace/round/trip.bin") == payload
    box.exec("printf 'from inside' > round/made.txt")
    assert box.read_file("round/made.txt") == b"from inside"
    box.write_file("round/text.txt", "héllo")
    assert box.exec("cat round/text.txt").stdout == "héllo"


def test_written_files_are_editable_inside(box: Sandbox) -> None:
    box.write_file("deep/a/b/c.txt", "v1")
    assert box.exec("echo v2 > deep/a/b/c.txt && touch deep/a/new").exit_code == 0
    assert box.read_file("deep/a/b/c.txt") == b"v2\n"


def test_missing_and_escaping_files(box: Sandbox) -> None:
    with pytest.raises(FileNotFoundError, match="no-such-file"):
        box.read_file("no-such-file")
    with pytest.raises(PermissionError):
        box.read_file("../etc/passwd")
    with pytest.raises(PermissionError):
        box.read_file("/etc/passwd")
    box.exec("ln -sf /etc/passwd link-out")
    with pytest.raises(PermissionError, match="symbolic link"):
        box.read_file("link-out")
    with pytest.raises(PermissionError):
        box.write_file("link-out", "overwrite through the link")


def test_copy_directory_in_and_out(box: Sandbox, tmp_path: Path) -> None:
    source = tmp_path / "src"
    (source / "pkg").mkdir(parents=True)
    (source / "pkg" / "mod.py").write_text("VALUE = 41\n")
    (source / "main.py").write_text("from pkg.mod import VALUE\nprint(VALUE + 1)\n")
    box.copy_in(source, "project")
    assert box.exec(["python3", "main.py"], cwd="project").stdout == "42\n"
    box.exec("echo result > out.txt && ln -s /etc/shadow escape", cwd="project")
    dest = tmp_path / "back"
    report = box.copy_out(dest, "project")
    assert (dest / "out.txt").read_text() == "result\n"
    assert (dest / "pkg" / "mod.py").read_text() == "VALUE = 41\n"
    # A link out of the workspace is not recreated on the host: it is listed as skipped.
    assert not os.path.lexists(dest / "escape")
    assert [name for name, _ in report.skipped] == ["escape"]


def test_copy_out_of_missing_dir(box: Sandbox, tmp_path: Path) -> None:
    with pytest.raises(NotADirectoryError):
        box.copy_out(tmp_path / "x", "not-there")


def test_concurrent_sandboxes_are_independent(backend: str) -> None:
    outcomes: dict[int, tuple[str, str]] = {}
    errors: list[BaseException] = []

    def work(index: int) -> None:
        try:
            with open_sandbox(SandboxSpec(backend=backend, limits=TEST_LIMITS)) as sandbox:
                sandbox.write_file("mine.txt", f"sandbox {index}")
                seen = sandbox.exec("cat mine.txt; ls").stdout
                outcomes[index] = (seen, sandbox.read_file("mine.txt").decode())
        except BaseException as exc:  # reported below with the others
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(index,)) for index in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    for index in range(4):
        assert outcomes[index] == (f"sandbox {index}mine.txt\n", f"sandbox {index}")


def test_closed_sandbox_refuses_commands(backend: str) -> None:
    sandbox = open_sandbox(SandboxSpec(backend=backend, limits=TEST_LIMITS))
    with sandbox:
        assert sandbox.exec("true").ok
    sandbox.close()  # closing twice is harmless
    with pytest.raises(SandboxBroken):
        sandbox.exec("true")


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A host folder the sandbox uid may reach (pytest's tmp_path sits below a 0700 folder)."""
    folder = Path(tempfile.mkdtemp(prefix="sabench-test-mount-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


def test_extra_mounts_are_read_only_by_default(backend: str, shared_dir: Path) -> None:
    (shared_dir / "data.txt").write_text("shared data\n")
    spec = SandboxSpec(backend=backend, limits=TEST_LIMITS,
                       mounts=(Mount(source=str(shared_dir), target="/data"),))
    with open_sandbox(spec) as sandbox:
        assert sandbox.exec("cat /data/data.txt").stdout == "shared data\n"
        assert sandbox.exec("echo x > /data/new.txt").exit_code != 0
    assert sorted(p.name for p in shared_dir.iterdir()) == ["data.txt"]


def test_mount_target_must_be_absolute() -> None:
    with pytest.raises(ValueError, match="absolute"):
        Mount(source="/tmp", target="relative/dir")


def test_workspace_aliases_show_the_workspace_at_fixed_paths(backend: str) -> None:
    spec = SandboxSpec(backend=backend, limits=TEST_LIMITS, workspace_aliases=("/home",))
    with open_sandbox(spec) as sandbox:
        sandbox.write_file("paper/paper.md", "# Title\n")
        assert sandbox.exec("cat /home/paper/paper.md").stdout == "# Title\n"
        assert sandbox.exec("mkdir -p /home/submission && echo ok > /home/submission/a.txt").ok
        assert sandbox.read_file("submission/a.txt") == b"ok\n"
        # Nothing of the host's own /home shows through the alias.
        assert sorted(sandbox.exec("ls /home").stdout.split()) == ["paper", "submission"]


def test_workspace_alias_must_be_absolute_and_not_the_root() -> None:
    for bad in ("home", "/", "/workspace", "/a/../b"):
        with pytest.raises(ValueError, match="workspace alias"):
            SandboxSpec(workspace_aliases=(bad,))
