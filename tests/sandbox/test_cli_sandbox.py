"""`sabench sandbox ...`: in process through typer for speed, and through the real console
entry point where the one-line error handling of `sabench` itself is what is tested."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from sabench.benchmark import cli_sandbox

from .conftest import require_backend

BACKENDS = [pytest.param("docker", marks=pytest.mark.docker), "local"]


class Done:
    """The parts of a finished command the tests look at (same shape for both ways of running)."""

    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def sabench(*args: str) -> Done:
    """Run `sabench <args>` in process on an app holding only the sandbox commands."""
    app = typer.Typer()
    cli_sandbox.register(app)
    app.command("noop", hidden=True)(lambda: None)  # keeps `sandbox` a sub-command
    result = CliRunner().invoke(app, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Done(result.exit_code, result.stdout, result.stderr)


def sabench_process(*args: str) -> Done:
    """Run the real `sabench` entry point in a child process."""
    code = "from sabench.benchmark.cli import main; main()"
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=300, check=False)
    return Done(done.returncode, done.stdout, done.stderr)


@pytest.mark.parametrize("backend", BACKENDS)
def test_exec_passes_output_and_exit_code(backend: str) -> None:
    require_backend(backend)
    done = sabench("sandbox", "exec", "--backend", backend, "--",
                   "sh", "-c", "echo out; echo err >&2; exit 7")
    assert (done.returncode, done.stdout, done.stderr) == (7, "out\n", "err\n")


@pytest.mark.parametrize("backend", BACKENDS)
def test_exec_syncs_the_workspace_folder(backend: str, tmp_path: Path) -> None:
    require_backend(backend)
    (tmp_path / "in.txt").write_text("21")
    done = sabench("sandbox", "exec", "--backend", backend, "--workspace", str(tmp_path), "--",
                   "sh", "-c", "echo $(( $(cat in.txt) * 2 )) > out.txt")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out.txt").read_text() == "42\n"


@pytest.mark.parametrize("backend", BACKENDS)
def test_exec_brings_back_no_link_out_of_the_workspace(backend: str, tmp_path: Path) -> None:
    require_backend(backend)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "kept.txt").write_text("kept\n")
    (tmp_path / "inner").symlink_to("sub/kept.txt")  # a link already there: no crash
    done = sabench_process("sandbox", "exec", "--backend", backend, "--workspace",
                           str(tmp_path), "--", "sh", "-c",
                           "ln -s /etc/passwd pw; ln -s / rootlink; echo new > made.txt")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["inner", "made.txt", "sub"]
    assert (tmp_path / "inner").read_text() == "kept\n"
    assert "not copied back: pw" in done.stderr and "not copied back: rootlink" in done.stderr


@pytest.mark.parametrize("backend", BACKENDS)
def test_exec_shows_the_output_when_the_copy_back_is_refused(backend: str,
                                                             tmp_path: Path) -> None:
    require_backend(backend)
    (tmp_path / "kept.txt").write_text("before\n")
    done = sabench_process("sandbox", "exec", "--backend", backend, "--workspace",
                           str(tmp_path), "--", "sh", "-c",
                           "echo ran; echo after > kept.txt; truncate -s 2G big")
    assert done.returncode == 2 and done.stdout == "ran\n", done.stderr
    error = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(error) == 1 and "big" in error[0] and "copy_out_bytes" in error[0], error
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.txt"]
    assert (tmp_path / "kept.txt").read_text() == "before\n"  # nothing half-copied


@pytest.mark.parametrize("backend", BACKENDS)
def test_exec_timeout_and_memory_options(backend: str) -> None:
    require_backend(backend)
    slow = sabench("sandbox", "exec", "--backend", backend, "--timeout", "1", "--", "sleep", "30")
    assert slow.returncode == 124 and "timeout" in slow.stderr
    bomb = sabench("sandbox", "exec", "--backend", backend, "--memory", "64m", "--", "python3",
                   "-c", "b = []\nwhile True: b.append(bytearray(8 << 20))")
    assert bomb.returncode == 137 and "out of memory" in bomb.stderr


def test_bad_input_is_one_line() -> None:
    bad_memory = sabench_process("sandbox", "exec", "--memory", "lots", "--", "true")
    assert bad_memory.returncode == 2 and "lots" in bad_memory.stderr
    missing = sabench_process("sandbox", "exec", "--backend", "local",
                              "--workspace", "/no/such/dir", "--", "true")
    assert missing.returncode == 2
    assert missing.stderr.strip().count("\n") == 0 and "/no/such/dir" in missing.stderr


@pytest.mark.docker
def test_missing_image_is_one_line_and_never_pulled() -> None:
    require_backend("docker")
    done = sabench_process("sandbox", "exec", "--image", "sabench-no-such-image:0", "--", "true")
    assert done.returncode == 2
    assert "sabench-no-such-image:0" in done.stderr and "Traceback" not in done.stderr
    assert "build --offline" in done.stderr


def test_check_reports_backends_as_json() -> None:
    done = sabench("sandbox", "check", "--json")
    report = json.loads(done.stdout)
    assert {"backend docker", "backend local", "offline image"} <= set(report)
    assert all(isinstance(row["ok"], bool) and row["detail"] for row in report.values())
    assert done.returncode == (0 if any(v["ok"] for k, v in report.items()
                                        if k.startswith("backend")) else 1)


def test_reap_reports_as_json() -> None:
    done = sabench("sandbox", "reap", "--json")
    assert done.returncode == 0, done.stderr
    assert set(json.loads(done.stdout)) >= {"containers", "workspaces", "cgroups"}
