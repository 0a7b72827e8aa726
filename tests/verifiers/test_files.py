"""Reading user JSON: each way a file is unusable is one error naming it; paths stay inside."""

from __future__ import annotations

from pathlib import Path

import pytest

from sabench.verifiers.files import inside, plain_name, read_json


class BadFile(ValueError):
    pass


@pytest.mark.parametrize(("content", "problem"), [
    (b"", "file is empty"),
    (b'{"a": [', "invalid JSON at line 1"),
    (b'{"a": "\xff"}', "not valid UTF-8 (byte 7)"),
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
])
def test_each_problem_is_one_line_naming_the_file(tmp_path: Path, content: bytes,
                                                  problem: str) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(content)
    with pytest.raises(BadFile) as caught:
        read_json(path, BadFile, "cannot read the thing")
    message = str(caught.value)
    assert message.startswith(f"{path}: cannot read the thing: ")
    assert problem in message and "\n" not in message


def test_large_and_missing_files(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_bytes(b"[" + b"0," * (1 << 20) + b"0]")
    with pytest.raises(BadFile, match="big.json: 2 MB is too large"):
        read_json(big, BadFile, max_bytes=1 << 20)
    with pytest.raises(BadFile, match="gone.json: cannot read: No such file"):
        read_json(tmp_path / "gone.json", BadFile)
    assert read_json(big)[:2] == [0, 0]


def test_inside_refuses_paths_that_leave_the_base(tmp_path: Path) -> None:
    assert inside(tmp_path, "runs/a/repo") == tmp_path / "runs/a/repo"
    assert inside(tmp_path, "runs/../runs/a") == tmp_path / "runs/../runs/a"
    for away in ("../x", "runs/../../x", "/etc", str(tmp_path.parent)):
        assert inside(tmp_path, away) is None, away


def test_plain_names() -> None:
    assert plain_name("claude-sonnet_basic") and plain_name("adjoint-matching")
    for bad in ("", ".", "..", "a/b", "../x", "a\\b", "a\0b"):
        assert not plain_name(bad), bad
