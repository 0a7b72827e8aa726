"""A throwaway PostgreSQL server for the tests, from Debian's `postgresql` package.

The session fixture `postgres_url` initialises a cluster in a temporary folder (as the
`postgres` user when the tests run as root: PostgreSQL refuses to run as root), starts it on a
free 127.0.0.1 port with trust authentication, and removes it at the end. Without the binaries
the tests skip, unless SABENCH_REQUIRE_POSTGRES=1 (CI) makes that a failure.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

START_TIMEOUT_S = 60


def postgres_bin() -> Path | None:
    """The newest installed PostgreSQL's bin folder (Debian layout), if any."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    return Path(found[-1]).parent if found else None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def as_server_user(command: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


def run(command: list[str], what: str) -> None:
    done = subprocess.run(as_server_user(command), capture_output=True, text=True,
                          timeout=START_TIMEOUT_S, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"postgres {what} failed: {(done.stderr or done.stdout).strip()}")


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """URL of a fresh database on a private server, for the whole test session."""
    from tests.conftest import require_or_skip  # conftest imports this module

    binaries = postgres_bin()
    require_or_skip(binaries is not None, "SABENCH_REQUIRE_POSTGRES",
                    "no PostgreSQL server binaries (apt-get install postgresql)")
    assert binaries is not None
    folder = Path(tempfile.mkdtemp(prefix="sabench-pg-"))
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    data, port = folder / "data", free_port()
    run([str(binaries / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres",
         "--no-sync"], "initdb")
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off"
    run([str(binaries / "pg_ctl"), "-D", str(data), "-o", options, "-w", "-t",
         str(START_TIMEOUT_S), "-l", str(folder / "server.log"), "start"], "start")
    try:
        run([str(binaries / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "postgres",
             "sabench"], "createdb")
        yield f"postgresql://postgres@127.0.0.1:{port}/sabench"
    finally:
        subprocess.run(as_server_user([str(binaries / "pg_ctl"), "-D", str(data), "-m",
                                       "immediate", "stop"]), capture_output=True, timeout=60)
        shutil.rmtree(folder, ignore_errors=True)
