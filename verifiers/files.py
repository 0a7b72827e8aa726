"""Reading JSON a user hands us: every way a file can be unusable becomes one line naming it.

Claim files, result files, `configs.json`, runs indexes and recordings all come from outside
(a release, another tool, a half-written copy). `json.loads` alone lets a file nested 100,000
deep end in a RecursionError, an invalid byte in a UnicodeDecodeError and a huge file in an
hour of parsing; here each becomes the caller's own error type with a one-line message.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

#: The largest JSON file read by default (the release's largest file is 0.3 MB).
MAX_JSON_BYTES = 64 << 20


def read_json(path: Path, error: type[Exception] = ValueError, context: str = "",
              max_bytes: int = MAX_JSON_BYTES) -> Any:
    """The parsed content of a JSON file.

    Args:
        path: the file.
        error: the exception type raised for every problem.
        context: what was being done, put between the path and the problem
            (`p.json: cannot read result JSON: not valid UTF-8 (byte 17)`).
        max_bytes: a larger file is refused before it is read.

    Raises:
        error: unreadable, too large, not UTF-8, empty, invalid or too deeply nested JSON; the
            one-line message names `path`.
    """
    path = Path(path)
    where = f"{path}: {context}: " if context else f"{path}: "
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise error(f"{where}{size / (1 << 20):.0f} MB is too large "
                        f"(at most {max_bytes >> 20} MB)")
        raw = path.read_bytes()
    except OSError as exc:
        raise error(f"{where}cannot read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"{where}not valid UTF-8 (byte {exc.start})") from None
    if not text.strip():
        raise error(f"{where}file is empty")
    return parse_json(text, where, error)


def parse_json(text: str, where: str, error: type[Exception] = ValueError) -> Any:
    """`json.loads(text)`, its failures raised as `error` whose message starts with `where`
    (e.g. `messages.jsonl: line 3: `)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{where}invalid JSON at line {exc.lineno}: {exc.msg}") from None
    except RecursionError:
        raise error(f"{where}invalid JSON: nested too deeply") from None


def inside(base: Path, relative: str | os.PathLike[str]) -> Path | None:
    """`base / relative` when it stays inside `base`, else None.

    Lexical: a `..` or an absolute path that leaves `base` is refused; a link the user placed
    inside `base` is theirs to place (test fixtures link runs roots to shared data).
    """
    root = os.path.normpath(os.path.abspath(base))
    joined = os.path.normpath(os.path.join(root, relative))
    if joined == root or joined.startswith(root.rstrip(os.sep) + os.sep):
        return Path(base) / relative
    return None


def plain_name(name: str) -> bool:
    """A name that is one path component: usable as a folder or file name under an output
    folder without leaving it (no separator, not `.` or `..`, no NUL, not empty)."""
    return bool(name) and name not in (".", "..") and not any(c in name for c in "/\\\0")
