"""Checkpointers: where a run's LangGraph checkpoints live.

`open_checkpointer(None, default_path=...)` or a path gives a SQLite file (the default: one
file per run folder); `postgresql://...` gives PostgreSQL, for runs shared between machines
(the `postgres` extra: `pip install 'sabench[postgres]'`). Graphs run with
`durability="sync"`, so a step's checkpoint is written before the next step starts.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

POSTGRES_PREFIXES = ("postgresql://", "postgres://")


class CheckpointConfigError(ValueError):
    """A checkpoint target that cannot be used (one line)."""


@contextmanager
def open_checkpointer(target: str | Path | None, *,
                      default_path: Path | None = None) -> Iterator[BaseCheckpointSaver]:
    """The checkpointer `target` names, closed on exit.

    Args:
        target: None (SQLite at `default_path`), a file path or `sqlite:///path`, or a
            PostgreSQL URL.
        default_path: the SQLite file used when `target` is None.

    Raises:
        CheckpointConfigError: no target and no default, the postgres extra is missing, or
            the server cannot be reached.
    """
    text = str(target) if target is not None else None
    if text and text.startswith(POSTGRES_PREFIXES):
        with _postgres(text) as saver:
            yield saver
        return
    if text and text.startswith("sqlite:///"):
        text = text[len("sqlite://"):]
    path = Path(text) if text else default_path
    if path is None:
        raise CheckpointConfigError("no checkpoint store: give a SQLite path or a "
                                    "postgresql:// URL")
    with _sqlite(path) as saver:
        yield saver


@contextmanager
def _sqlite(path: Path) -> Iterator[BaseCheckpointSaver]:
    from langgraph.checkpoint.sqlite import SqliteSaver

    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        # LangGraph may save from its worker threads; SqliteSaver serialises access itself.
        connection = sqlite3.connect(path, check_same_thread=False)
        connection.execute("PRAGMA journal_mode=WAL")  # readers never wait for the writer
        # A committed write survives the process being killed (it is in the WAL, in the OS's
        # cache); NORMAL skips the fsync per commit that only power loss would need.
        connection.execute("PRAGMA synchronous=NORMAL")
    except sqlite3.Error as exc:
        raise CheckpointConfigError(f"{path}: cannot open the checkpoint file ({exc})") from exc
    try:
        yield SqliteSaver(connection)
    finally:
        connection.close()


@contextmanager
def _postgres(url: str) -> Iterator[BaseCheckpointSaver]:
    try:
        from langgraph.checkpoint.postgres import PostgresSaver
    except ImportError:
        raise CheckpointConfigError(
            "postgres checkpoints need the postgres extra: pip install 'sabench[postgres]'"
        ) from None
    import psycopg

    try:
        manager = PostgresSaver.from_conn_string(url)
        saver = manager.__enter__()
        saver.setup()
    except psycopg.Error as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CheckpointConfigError(f"{redact(url)}: cannot use this PostgreSQL server "
                                    f"({reason})") from None
    try:
        yield saver
    finally:
        manager.__exit__(None, None, None)


def redact(url: str) -> str:
    """The URL without its password."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)


def thread_config(thread_id: str, **configurable: Any) -> dict[str, Any]:
    """The run config that names a checkpoint thread."""
    return {"configurable": {"thread_id": thread_id, **configurable}}
