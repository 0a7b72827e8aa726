"""`sabench sandbox ...`: run one command isolated, build images, check backends, reap leftovers."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from sabench.sandbox.protocol import BACKENDS, get_backend, open_sandbox
from sabench.sandbox.types import ExecResult, Limits, SandboxError, SandboxSpec

sandbox_app = typer.Typer(help="Run untrusted code in isolation; build and check sandbox images.",
                          no_args_is_help=True)
console = Console()
err_console = Console(stderr=True)
SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$", re.IGNORECASE)
SIZE_FACTORS = {"k": 1 / 1024, "": 1, "m": 1, "g": 1024, "t": 1024 * 1024}


def parse_memory(text: str) -> int:
    """'512', '512m', '2g', '1.5GiB' -> megabytes (a bare number means megabytes)."""
    match = SIZE.match(text)
    if not match:
        raise typer.BadParameter(f"{text!r} is not a size such as 512m or 2g")
    megabytes = int(float(match.group(1)) * SIZE_FACTORS[match.group(2).lower()])
    if megabytes < 16:
        raise typer.BadParameter(f"{text!r}: at least 16m is needed")
    return megabytes


@sandbox_app.command("exec", context_settings={"allow_interspersed_args": False})
def exec_command(
    command: Annotated[list[str], typer.Argument(help="The command and its arguments (after --).")],
    backend: Annotated[str, typer.Option(help="docker or local (bubblewrap).")] = "docker",
    image: Annotated[str | None, typer.Option(
        help="Docker image (default: the built one).")] = None,
    workspace: Annotated[Path | None, typer.Option(
        help="Host folder copied into /workspace before and back out after the command.")] = None,
    timeout: Annotated[float, typer.Option(help="Seconds before the command is killed.")] = 60.0,
    memory: Annotated[str, typer.Option(help="Memory limit, e.g. 512m or 2g.")] = "1g",
    allow_unsafe: Annotated[bool, typer.Option(
        "--allow-unsafe", help="local only: run UNISOLATED if bubblewrap is missing.")] = False,
) -> None:
    """Run one command in a fresh sandbox with default limits; exit with its exit code."""
    if backend not in BACKENDS:
        raise typer.BadParameter(f"unknown backend {backend!r} (known: {', '.join(BACKENDS)})")
    if workspace is not None and not workspace.is_dir():
        raise NotADirectoryError(f"--workspace {workspace}: not a directory")
    limits = Limits(memory_mb=parse_memory(memory), timeout_s=timeout)
    spec = SandboxSpec(backend=backend, image=image, limits=limits, allow_unsafe=allow_unsafe)
    with open_sandbox(spec) as box:
        if workspace is not None:
            box.copy_in(workspace)
        result = box.exec(command, timeout=timeout)
        # The command's output is shown before the copy-out, which may be refused (a cap).
        _show_result(result, timeout, memory)
        if workspace is not None:
            for name, reason in box.copy_out(workspace).skipped:
                err_console.print(f"[yellow]not copied back:[/yellow] {name}: {reason}",
                                  highlight=False)
    raise typer.Exit(result.exit_code)


def _show_result(result: ExecResult, timeout: float, memory: str) -> None:
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    sys.stdout.flush()
    for flag, why in ((result.truncated, "output truncated"),
                      (result.timed_out, f"killed at its {timeout:g}s timeout"),
                      (result.oom_killed, f"killed: out of memory ({memory})")):
        if flag:
            err_console.print(f"[yellow]sandbox:[/yellow] {why}", highlight=False)


@sandbox_app.command("build")
def build(
    offline: Annotated[bool, typer.Option(
        "--offline", help="No registry: debootstrap Debian bookworm, docker import it.")] = False,
    with_torch: Annotated[bool, typer.Option(
        "--with-torch", help="Offline image with Debian's python3-torch too.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Rebuild even if present.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Build the sandbox image (reused when its recipe hash is already present)."""
    from sabench.sandbox.images import build_dockerfile, build_offline

    def log(line: str) -> None:
        err_console.print(f"[dim]{line}[/dim]", highlight=False)

    if with_torch and not offline:
        raise typer.BadParameter("--with-torch goes with --offline (the Dockerfile has torch)")
    report = (build_offline(with_torch=with_torch, force=force, log=log) if offline
              else build_dockerfile(force=force, log=log))
    if as_json:
        print(report.model_dump_json())
        return
    verb = "reused" if report.reused else f"built in {report.seconds:.0f}s"
    console.print(f"{report.image}: {verb}, {report.size_mb:.0f} MB", highlight=False)


def _image_rows() -> list[tuple[str, bool, str]]:
    from sabench.sandbox.images import Recipe, dockerfile_tag, image_present

    tags = {"offline image": Recipe.make().tag, "offline torch image": Recipe.make(True).tag,
            "dockerfile image": dockerfile_tag()}
    try:
        return [(name, image_present(tag), tag) for name, tag in tags.items()]
    except SandboxError as exc:
        return [(name, False, str(exc)) for name in tags]


def _backend_rows() -> list[tuple[str, bool, str]]:
    from sabench.sandbox.cgroups import CgroupSet

    rows = []
    for name in BACKENDS:
        ok, why = get_backend(name).available(SandboxSpec(backend=name))
        rows.append((f"backend {name}", ok, why))
    probe = CgroupSet.create(Limits())
    detail = f"cgroup v{probe.version}" if probe else "unavailable: rlimits + unprivileged uid"
    rows.append(("local cgroup limits", probe is not None, detail))
    if probe is not None:
        probe.remove()
    return rows


@sandbox_app.command("check")
def check(as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
          ) -> None:
    """Say which backends and images work on this machine; exit 1 if no backend works."""
    rows = _backend_rows() + _image_rows()
    if as_json:
        print(json.dumps({name: {"ok": ok, "detail": detail} for name, ok, detail in rows},
                         indent=1))
    else:
        table = Table(title="sabench sandbox")
        for column in ("item", "ok", "detail"):
            table.add_column(column)
        for name, ok, detail in rows:
            table.add_row(name, "[green]yes[/green]" if ok else "[red]no[/red]", detail)
        console.print(table)
    if not any(ok for name, ok, _ in rows if name.startswith("backend")):
        raise typer.Exit(1)


@sandbox_app.command("reap")
def reap(
    everything: Annotated[bool, typer.Option(
        "--all", help="Remove every sandbox, not only those whose owner process died.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Remove sandbox containers, workspaces and cgroups left behind by dead processes."""
    from sabench.sandbox.reaper import reap as do_reap

    report = do_reap(everything=everything)
    if as_json:
        print(report.model_dump_json())
        return
    console.print(f"removed {len(report.containers)} containers, {len(report.workspaces)} "
                  f"workspaces, {len(report.cgroups)} cgroups", highlight=False)
    if report.docker_error:
        err_console.print(f"[yellow]docker skipped:[/yellow] {report.docker_error}",
                          highlight=False)


def register(app: typer.Typer) -> None:
    """Add `sabench sandbox ...` to the main app."""
    app.add_typer(sandbox_app, name="sandbox")
