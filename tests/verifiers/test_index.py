"""The repository index: Python structure, config keys, and bad input that must not break it."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest

from sabench.verifiers.index import RepoIndex
from sabench.verifiers.types import EvidenceKind

TRAIN = '''"""Training entry point.

Long module docstring that paraphrases the paper.
"""
import argparse
from dataclasses import dataclass

import torch


@dataclass
class Config:
    lr: float = 3e-4
    betas: tuple = (0.9, 0.95)
    steps: int = int(1e5)


def make_optimizer(params, lr=2e-5, *, weight_decay=0.01):
    # comment line
    return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay, eps=1e-8)


def stub_metric(x):
    """Not done yet."""
    raise NotImplementedError


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=256)
    args = parser.parse_args()
    cfg = {"warmup_steps": 500, "schedule": {"h": 1 / 40}}
    opt = make_optimizer([], lr=cfg["warmup_steps"])
    train(opt)
    evaluate()


if __name__ == "__main__":
    main()
'''


def write(root: Path, rel: str, data: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    write(root, "train.py", TRAIN)
    write(root, "configs/base.yaml",
          "optim:\n  lr: 0.0003  # paper value\n  betas: [0.9, 0.95]\nmodel:\n  depth: 24\n")
    write(root, "settings.json", '{\n  "model": {\n    "heads": 16\n  }\n}\n')
    write(root, "pyproject.toml", "[tool.train]\nwarmup = 2000\n")
    write(root, "setup.cfg", "[metadata]\nname = demo\n")
    write(root, "README.md", "Uses a learning rate of 3e-4.\n")
    write(root, "tests/test_train.py", "def test_x():\n    assert 1 == 1\n")
    return root


def values(index: RepoIndex) -> dict[str, list]:
    out: dict[str, list] = {}
    for a in index.assignments:
        out.setdefault(a.name, []).append(a.value)
    return out


def test_python_definitions_calls_and_stubs(repo: Path) -> None:
    index = RepoIndex.build(repo)
    defs = {d.qualname: d for d in index.definitions}
    assert defs["Config"].kind == "class"
    assert defs["make_optimizer"].start == 18 and defs["make_optimizer"].end == 20
    assert [name for name, _ in defs["main"].calls][:3] == ["ArgumentParser", "add_argument",
                                                            "parse_args"]
    calls = [name for name, _ in defs["main"].calls]
    assert calls.index("train") < calls.index("evaluate")
    assert defs["stub_metric"].stub == "raises NotImplementedError"
    assert defs["make_optimizer"].stub is None
    assert index.files["train.py"].entry_point


def test_assignment_sources_and_constant_values(repo: Path) -> None:
    index = RepoIndex.build(repo)
    found = values(index)
    assert 3e-4 in found["lr"]  # dataclass field
    assert 2e-5 in found["lr"]  # keyword default
    assert 0.01 in found["weight_decay"]
    assert 1e-8 in found["eps"]  # call keyword
    assert 256 in found["batch_size"]  # argparse default
    assert 500 in found["warmup_steps"]  # dict literal
    assert 0.025 in found["h"]  # evaluated 1 / 40
    assert 100000 in found["steps"]  # int(1e5)
    assert [0.9, 0.95] in found["betas"]
    sources = {(a.name, a.source) for a in index.assignments}
    assert {("lr", "field"), ("lr", "default"), ("batch_size", "argparse"),
            ("warmup_steps", "dict"), ("eps", "kwarg")} <= sources


def test_config_key_paths(repo: Path) -> None:
    index = RepoIndex.build(repo)
    paths = {(a.path, a.value, a.line) for a in index.assignments if a.source == "config"}
    assert ("optim.lr", "0.0003", 2) in paths
    assert ("model.depth", "24", 5) in paths
    assert ("model.heads", "16", 3) in paths
    assert ("tool.train.warmup", "2000", 2) in paths
    assert ("metadata.name", "demo", 2) in paths


def test_line_roles_keep_docs_apart_from_code(repo: Path) -> None:
    index = RepoIndex.build(repo)
    train = index.files["train.py"]
    assert train.roles[0] == train.roles[2] == "docstring"
    assert train.roles[18] == "comment"
    assert train.roles[19] == "code"
    assert train.roles[23] == "docstring"  # function docstring
    assert index.files["README.md"].kind == EvidenceKind.DOCS
    assert index.files["tests/test_train.py"].kind == EvidenceKind.TEST
    assert index.files["configs/base.yaml"].kind == EvidenceKind.CONFIG


def test_numbers_are_indexed_by_normalised_value(repo: Path) -> None:
    index = RepoIndex.build(repo)
    where = {index.locate(gid) for gid in index.number_lines["0.0003"]}
    assert ("configs/base.yaml", 2) in where and ("train.py", 13) in where
    assert ("train.py", 32) in {  # from the AST value of 1 / 40
        index.locate(gid) for gid in index.number_lines["0.025"]}


def test_symlinks_leaving_the_repository_are_skipped(tmp_path: Path) -> None:
    outside = write(tmp_path, "secret/key.py", "TOKEN = 'do-not-read'\n")
    root = tmp_path / "repo"
    write(root, "ok.py", "x = 1\n")
    os.symlink(outside, root / "leak.py")
    os.symlink(outside.parent, root / "leakdir")
    os.symlink(root / "ok.py", root / "alias.py")
    index = RepoIndex.build(root)
    reasons = {s.path: s.reason for s in index.skipped}
    assert "leak.py" in reasons and "leakdir" in reasons
    assert "leak.py" not in index.files
    assert "alias.py" in index.files
    assert all("do-not-read" not in line for f in index.files.values() for line in f.lines)


def test_binaries_huge_files_and_bad_encodings(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(root, "weights.bin", b"\x00\x01" * 10)
    write(root, "blob.dat", b"abc\x00def")
    write(root, "huge.py", "x = 1\n" * 1000)
    write(root, "latin.py", "name = 'caf\xe9'\nlr = 0.001\n".encode("latin-1"))
    index = RepoIndex.build(root, max_file_bytes=2000)
    reasons = {s.path: s.reason for s in index.skipped}
    assert reasons["weights.bin"] == "binary file"
    assert reasons["blob.dat"] == "binary file"
    assert reasons["huge.py"].startswith("larger than 2000 bytes")
    assert "\ufffd" in index.files["latin.py"].lines[0]
    assert 0.001 in values(index)["lr"]


def test_python_that_does_not_parse_falls_back(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(root, "fenced.py", "```python\nlr = 0.002\n\ndef f():\n    return lr\n```\n")
    write(root, "cut.py", "depth = 12\n\ndef g():\n    s = '''never closed\n")
    write(root, "garbage.py", "def (:\n  ???\nlr = 5e-5\n")
    index = RepoIndex.build(root)
    assert index.files["fenced.py"].parse_error and 0.002 in values(index)["lr"]
    assert any(d.name == "f" for d in index.definitions)
    assert 12 in values(index)["depth"]
    assert index.files["garbage.py"].parse_error
    assert ("garbage.py", 3) in {  # still searchable as text
        index.locate(gid) for gid in index.number_lines["5e-5"]}


def test_deep_trees_and_many_files(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    deep = root.joinpath(*["d"] * 120)
    write(deep, "leaf.py", "depth_marker = 4242\n")
    for i in range(30):
        write(root, f"many/m{i}.py", f"v{i} = {i}\n")
    index = RepoIndex.build(root, max_files=20)
    assert "4242" in index.number_lines
    assert len(index.files) == 20
    assert sum(s.reason.startswith("over the") for s in index.skipped) == 11


def test_empty_repository(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    index = RepoIndex.build(tmp_path / "empty")
    assert index.files == {} and index.executable_lines() == 0


def test_warnings_of_the_scored_code_stay_quiet(tmp_path: Path) -> None:
    (tmp_path / "paths.py").write_text('PATTERN = "C:\\home\\data"  # invalid escapes\n')
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning the parse let through would fail here
        index = RepoIndex.build(tmp_path)
    assert index.files["paths.py"].parse_error is None
    assert [a.name for a in index.assignments] == ["PATTERN"]


def test_cycle_collection_is_paused_only_inside_and_always_restored() -> None:
    import gc

    from sabench.verifiers.index import cycle_collection_paused

    assert gc.isenabled()
    with cycle_collection_paused():
        assert not gc.isenabled()
        with cycle_collection_paused():  # nested: leaves the outer pause alone
            pass
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), cycle_collection_paused():
        raise RuntimeError("scoring failed")
    assert gc.isenabled()


def test_released_index_is_freed_without_the_cycle_collector(repo: Path) -> None:
    import gc
    import weakref

    from sabench.verifiers.checks import check_claim
    from sabench.verifiers.spec import Claim, Dimension

    index = RepoIndex.build(repo)
    check_claim(index, Claim(id="p-D1-001", dimension=Dimension.D1, text="learning rate 3e-4"))
    assert index.cache  # the official search (which refers back to the index) among others
    index.release()
    ref = weakref.ref(index)
    gc.disable()
    try:
        del index
        assert ref() is None  # freed by reference counting alone
    finally:
        gc.enable()


def test_python_is_parsed_one_thread_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """`ast.parse` in two threads at once can fail inside CPython (gh-106905), and LangGraph
    runs the check's parallel branches in threads: every parse goes through one lock."""
    import ast
    import threading
    import time
    from concurrent.futures import ThreadPoolExecutor

    from sabench.verifiers.index import parse_python

    inside, most, lock = [0], [0], threading.Lock()
    real = ast.parse

    def slow_parse(text: str, *args: object, **kwargs: object) -> ast.AST:
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        time.sleep(0.01)
        with lock:
            inside[0] -= 1
        return real(text, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", slow_parse)
    with ThreadPoolExecutor(4) as pool:
        trees = list(pool.map(parse_python, ["x = 1"] * 8))
    assert most[0] == 1 and all(isinstance(t, ast.Module) for t in trees)


def test_no_module_of_ours_calls_ast_parse_around_the_lock() -> None:
    root = Path(__file__).resolve().parents[2]
    callers = [str(path.relative_to(root)) for folder in ("sandbox", "verifiers", "agent",
                                                         "scaffolds", "benchmark")
               for path in (root / folder).rglob("*.py")
               if "ast.parse(" in path.read_text(encoding="utf-8") and "demo" not in path.parts]
    assert callers == ["verifiers/index.py"]


def test_a_broken_line_in_the_middle_hides_no_code_after_it() -> None:
    from sabench.verifiers.index import parse_recovering, parse_tolerant

    text = ("def first(x):\n    return x if x else\n\n\n"  # a conditional missing its else
            "def second(a, b):\n        return a - b\n"  # and a line indented too far
            "\n\ndef third(a, b):\n    return a + b\n")
    cut, error = parse_tolerant(text)
    assert error and cut is not None
    assert [f.name for f in cut.body] == []
    mended = parse_recovering(text)
    assert mended is not None
    assert [f.name for f in mended.body] == ["first", "second", "third"]
    assert mended.body[2].lineno == 9  # line numbers are the file's
