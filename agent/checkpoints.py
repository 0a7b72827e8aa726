"""Checkpointers: where a run's LangGraph checkpoints live, and whether a thread has finished.

`open_checkpointer(None, default_path=...)` or a file path gives a SQLite file (the default:
one file per run folder); `postgresql://...` gives PostgreSQL, for runs shared between
machines (the `postgres` extra: `pip install 'sabench[postgres]'`).

Graphs run with `durability="sync"`: a step's checkpoint is written before the next step
starts, so a process killed with SIGKILL resumes after its last completed step. With
LangGraph's default ("async") the write overlaps the next step and a kill loses the last
completed steps about half the time when the next step is quick; with "exit" it loses the
whole run (tests/agent/test_checkpoints.py shows both).
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver

if TYPE_CHECKING:
    from langgraph.pregel import Pregel
    from langgraph.types import StateSnapshot

POSTGRES_PREFIXES = ("postgresql://", "postgres://")
SQLITE_PREFIX = "sqlite:///"
CONNECT_TIMEOUT_S = 10
SQLITE_BUSY_TIMEOUT_S = 30.0
SETUP_WAIT_S = 120
# Any constant shared by every sabench process: concurrent first uses of one database take
# turns creating the tables (LangGraph's setup() is not safe to run concurrently).
SETUP_LOCK_KEY = 0x5AB3_C4EC


class CheckpointConfigError(ValueError):
    """A checkpoint target that cannot be used (one line, for the user)."""


@contextmanager
def open_checkpointer(target: str | Path | None, *,
                      default_path: Path | None = None) -> Iterator[BaseCheckpointSaver]:
    """The checkpointer `target` names, open for the block and closed on exit.

    Args:
        target: None (SQLite at `default_path`); a file path or `sqlite:///path`
            (SQLAlchemy's form: `sqlite:///relative` or `sqlite:////absolute`); or a
            `postgresql://` / `postgres://` URL.
        default_path: the SQLite file used when `target` is None.

    Yields:
        A ready checkpointer: SQLite in WAL mode, or PostgreSQL with its tables set up.

    Raises:
        CheckpointConfigError: no target and no default, a target of another kind, a file
            that is not a SQLite database, the postgres extra missing, or a server that
            cannot be reached.
    """
    kind, where = parse_target(target, default_path)
    opener = _postgres if kind == "postgres" else _sqlite
    with opener(where) as saver:
        yield saver


def parse_target(target: str | Path | None,
                 default_path: Path | None = None) -> tuple[str, Any]:
    """("sqlite", Path) or ("postgres", url) for a checkpoint target; see open_checkpointer."""
    if target is None:
        if default_path is None:
            raise CheckpointConfigError("no checkpoint store: give a SQLite file path or a "
                                        "postgresql:// URL")
        return "sqlite", Path(default_path)
    if isinstance(target, Path):
        return "sqlite", target
    text = target.strip()
    if text.startswith(POSTGRES_PREFIXES):
        return "postgres", text
    if text.startswith(SQLITE_PREFIX) and len(text) > len(SQLITE_PREFIX):
        return "sqlite", Path(text[len(SQLITE_PREFIX):])
    if not text or "://" in text or text.startswith("sqlite:"):
        raise CheckpointConfigError(
            f"unsupported checkpoint target {redact(text)!r}: give a SQLite file path, "
            "sqlite:///path or a postgresql:// URL")
    return "sqlite", Path(text)


@contextmanager
def _sqlite(path: Path) -> Iterator[BaseCheckpointSaver]:
    from langgraph.checkpoint.sqlite import SqliteSaver

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # LangGraph may save from its worker threads; SqliteSaver serialises access itself.
        connection = sqlite3.connect(path, timeout=SQLITE_BUSY_TIMEOUT_S,
                                     check_same_thread=False)
    except (OSError, sqlite3.Error) as exc:
        raise CheckpointConfigError(f"{path}: cannot open the checkpoint file ({exc})") from None
    try:
        saver = _sqlite_saver(SqliteSaver, connection, path)
        yield saver
    finally:
        connection.close()


def _sqlite_saver(saver_class: Any, connection: sqlite3.Connection,
                  path: Path) -> BaseCheckpointSaver:
    try:
        connection.execute("PRAGMA journal_mode=WAL")  # readers never wait for the writer
        # A committed write survives the process being killed (it is in the WAL, in the OS's
        # cache); NORMAL skips the fsync per commit that only a power loss would need.
        connection.execute("PRAGMA synchronous=NORMAL")
        saver = saver_class(connection)
        saver.setup()  # now, so that a bad file fails here rather than mid-run
    except sqlite3.Error as exc:
        raise CheckpointConfigError(f"{path}: not a usable checkpoint file ({exc})") from None
    return saver


@contextmanager
def _postgres(url: str) -> Iterator[BaseCheckpointSaver]:
    saver_class, pool_class = _postgres_classes()
    _set_up_database(saver_class, url)
    # A pool of one connection, checked before each use: a run of hours outlives a server
    # restart or a dropped idle connection. The saver's own lock serialises its queries.
    pool = pool_class(url, min_size=1, max_size=1, kwargs=_connection_options(url),
                      check=pool_class.check_connection, open=False,
                      name="sabench-checkpoints")
    try:
        pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
    except Exception as exc:
        pool.close()
        raise CheckpointConfigError(f"{redact(url)}: cannot connect to PostgreSQL "
                                    f"({first_line(exc)})") from None
    try:
        yield saver_class(pool)
    finally:
        pool.close()


def _postgres_classes() -> tuple[Any, Any]:
    try:
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg_pool import ConnectionPool
    except ImportError:
        raise CheckpointConfigError(
            "postgres checkpoints need the postgres extra: pip install 'sabench[postgres]'"
        ) from None
    return PostgresSaver, ConnectionPool


def _connection_options(url: str) -> dict[str, Any]:
    """What LangGraph's saver needs of a connection, and a bounded connect time."""
    from psycopg.conninfo import conninfo_to_dict
    from psycopg.rows import dict_row

    options: dict[str, Any] = {"autocommit": True, "prepare_threshold": 0,
                               "row_factory": dict_row}
    try:
        given = conninfo_to_dict(url)
    except Exception as exc:
        raise CheckpointConfigError(f"{redact(url)}: not a PostgreSQL URL "
                                    f"({first_line(exc)})") from None
    if "connect_timeout" not in given:
        options["connect_timeout"] = CONNECT_TIMEOUT_S
    return options


def _set_up_database(saver_class: Any, url: str) -> None:
    """Connect once (a clear error when that fails) and create the tables, one process at
    a time."""
    import psycopg

    try:
        with psycopg.Connection.connect(url, **_connection_options(url)) as connection:
            _take_turn(connection, url)
            saver_class(connection).setup()  # the lock goes with the connection
    except psycopg.Error as exc:
        raise CheckpointConfigError(f"{redact(url)}: cannot use this PostgreSQL server "
                                    f"({first_line(exc)})") from None


def _take_turn(connection: Any, url: str) -> None:
    """Hold the setup lock. Polled, not waited for: setup() creates indexes concurrently,
    which waits for every open transaction, a blocked pg_advisory_lock call included (the
    server reports a deadlock)."""
    deadline = time.monotonic() + SETUP_WAIT_S
    while not connection.execute("SELECT pg_try_advisory_lock(%s)",
                                 (SETUP_LOCK_KEY,)).fetchone()["pg_try_advisory_lock"]:
        if time.monotonic() > deadline:
            raise CheckpointConfigError(f"{redact(url)}: another process has been setting up "
                                        f"the checkpoint tables for {SETUP_WAIT_S} s")
        time.sleep(0.05)


def first_line(exc: BaseException) -> str:
    """The first non-empty line of an exception's message, or its type's name."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


def redact(url: str) -> str:
    """The URL without its password (in the user part or a `password=` parameter)."""
    url = re.sub(r"(://[^:/@?]*):[^@]*@", r"\1:***@", url)
    return re.sub(r"(password=)[^&\s]*", r"\1***", url)


def thread_config(thread_id: str, **extra: Any) -> RunnableConfig:
    """The run config that names a checkpoint thread.

    Args:
        thread_id: the checkpoint thread.
        **extra: RunnableConfig keys (`recursion_limit`, `tags`, ...) go to the top level;
            any other key goes to `configurable` beside the thread id.
    """
    top = {key: value for key, value in extra.items() if key in RunnableConfig.__annotations__}
    configurable = {key: value for key, value in extra.items() if key not in top}
    return {**top, "configurable": {"thread_id": thread_id, **configurable}}  # type: ignore[typeddict-item]


def latest_state(graph: Pregel, thread_id: str) -> StateSnapshot | None:
    """The thread's latest state as `graph` sees it, or None when nothing was checkpointed."""
    snapshot = graph.get_state(thread_config(thread_id))
    return snapshot if snapshot.created_at is not None else None


def completed(graph: Pregel, thread_id: str) -> bool:
    """Whether the thread ran to its end: checkpointed, with no step left to run (a failed,
    killed or interrupted thread still has its pending step in `next`)."""
    snapshot = latest_state(graph, thread_id)
    return snapshot is not None and not snapshot.next
