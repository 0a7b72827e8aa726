"""A throwaway PostgreSQL server for the tests, from Debian's `postgresql` package.

The session fixture `postgres_url` initialises a cluster in a temporary folder (as the
`postgres` user when the tests run as root: PostgreSQL refuses to run as root), starts it on a
free 127.0.0.1 port with trust authentication, creates a database, and stops and removes it
all at the end. Every step is bounded in time and a failure says which step failed and why.
Without the binaries the tests skip, unless SABENCH_REQUIRE_POSTGRES=1 (CI) makes that a
failure. `fresh_database(url, name)` gives a test a database of its own on that server.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

STEP_TIMEOUT_S = 60
START_ATTEMPTS = 3  # a free port may be taken by someone else before the server binds it
SERVER_USER = "postgres"  # created by Debian's postgresql-common


def postgres_bin() -> Path | None:
    """The newest installed PostgreSQL's bin folder (Debian layout), if any."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"),
                   key=lambda path: int(Path(path).parts[-3]) if Path(path).parts[-3].isdigit()
                   else 0)
    return Path(found[-1]).parent if found else None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def as_server_user(command: list[str]) -> list[str]:
    return ["runuser", "-u", SERVER_USER, "--", *command] if os.geteuid() == 0 else command


def run(command: list[str], what: str) -> None:
    """Run one server command (as the server user), failing with what went wrong."""
    try:
        done = subprocess.run(as_server_user(command), capture_output=True, text=True,
                              timeout=STEP_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"postgres {what}: no answer within {STEP_TIMEOUT_S} s") from None
    if done.returncode != 0:
        output = (done.stderr.strip() or done.stdout.strip())[-2000:]
        raise RuntimeError(f"postgres {what} failed (exit {done.returncode}): {output}")


def server_folder() -> Path:
    """A temporary folder the server user owns (under /tmp when root, which it can reach)."""
    if os.geteuid() != 0:
        return Path(tempfile.mkdtemp(prefix="sabench-pg-"))
    try:
        pwd.getpwnam(SERVER_USER)
    except KeyError:
        raise RuntimeError(f"postgres setup: no '{SERVER_USER}' user to run the server as "
                           "(PostgreSQL refuses root; reinstall Debian's postgresql)") from None
    folder = Path(tempfile.mkdtemp(prefix="sabench-pg-", dir="/tmp"))
    shutil.chown(folder, SERVER_USER, SERVER_USER)
    return folder


def start(binaries: Path, data: Path, folder: Path) -> int:
    """Start the server on a free port; the port it listens on."""
    for attempt in range(1, START_ATTEMPTS + 1):
        port = free_port()
        options = (f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off "
                   "-c shared_buffers=16MB")
        log = folder / "server.log"
        try:
            run([str(binaries / "pg_ctl"), "-D", str(data), "-o", options, "-w", "-t",
                 str(STEP_TIMEOUT_S), "-l", str(log), "start"], "start")
            return port
        except RuntimeError as exc:
            tail = log.read_text(errors="replace")[-1500:] if log.is_file() else ""
            if attempt == START_ATTEMPTS or "could not bind" not in tail:
                raise RuntimeError(f"{exc}; server log: {tail.strip()}") from None
    raise RuntimeError(f"postgres start: no free port in {START_ATTEMPTS} attempts")


def stop(binaries: Path, data: Path) -> None:
    subprocess.run(as_server_user([str(binaries / "pg_ctl"), "-D", str(data), "-m",
                                   "immediate", "-w", "-t", str(STEP_TIMEOUT_S), "stop"]),
                   capture_output=True, timeout=STEP_TIMEOUT_S + 10, check=False)


def fresh_database(url: str, name: str) -> str:
    """Create database `name` on the server of `url` (a session URL); its URL."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    return url.rsplit("/", 1)[0] + f"/{name}"


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """URL of a fresh database on a private server, for the whole test session."""
    from tests.conftest import require_or_skip  # conftest imports this module

    binaries = postgres_bin()
    require_or_skip(binaries is not None, "SABENCH_REQUIRE_POSTGRES",
                    "no PostgreSQL server binaries (apt-get install postgresql)")
    assert binaries is not None
    folder = server_folder()
    data = folder / "data"
    try:
        run([str(binaries / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres",
             "--no-sync"], "initdb")
        port = start(binaries, data, folder)
        try:
            run([str(binaries / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U",
                 "postgres", "sabench"], "createdb")
            yield f"postgresql://postgres@127.0.0.1:{port}/sabench"
        finally:
            stop(binaries, data)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
