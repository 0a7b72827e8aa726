"""The emulation of the official judge's evidence search: queries, windows, ranking and gates."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sabench.verifiers.index import RepoIndex
from sabench.verifiers.official_search import (
    KEEP,
    OfficialSearch,
    _Text,
    _Window,
    exact_queries,
    path_kind,
    regex_queries,
    stub_like,
)
from sabench.verifiers.spec import Claim, Dimension

TRAINER = """\
import torch


def cosine_warmup_schedule(step, warmup_steps=500, total_steps=20000):
    if step < warmup_steps:
        return step / warmup_steps
    progress = (step - warmup_steps) / (total_steps - warmup_steps)
    return 0.5 * (1 + torch.cos(torch.pi * torch.tensor(progress)))


def train(model, loader, learning_rate=3e-4, weight_decay=0.05):
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate,
                                  weight_decay=weight_decay)
    for step, batch in enumerate(loader):
        loss = model(batch).mean()
        loss.backward()
        optimizer.step()
        scale = cosine_warmup_schedule(step)
        for group in optimizer.param_groups:
            group["lr"] = learning_rate * scale
    return model
"""


def claim(text: str, dim: Dimension = Dimension.D1, source: str = "") -> Claim:
    return Claim(id=f"p-{dim}-001", dimension=dim, text=text, source=source)


def search_over(tmp_path: Path, files: dict[str, str]) -> OfficialSearch:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return OfficialSearch(RepoIndex.build(tmp_path))


@pytest.mark.parametrize(("path", "kind"), [
    ("src/train.py", "code"), ("kernels/attn.cu", "code"), ("configs/base.yaml", "config"),
    ("train_args.json", "config"), ("model_config.py", "code"), ("results.json", "other"),
    ("README.md", "docs"), ("docs/notes.py", "code"), ("tests/test_loss.py", "test"),
    ("test_loss.py", "test"), ("loss_test.py", "test"), ("notes.txt", "docs"),
])
def test_path_kinds(path: str, kind: str) -> None:
    assert path_kind(path) == kind


def test_queries_cover_numbers_phrases_words_and_hints() -> None:
    c = claim("AdamW with learning rate 3e-4 on 256×256 Tiny ImageNet crops")
    queries = exact_queries(c)
    # The official number pattern also cuts "256x256" into "25" and "56": kept, as it does.
    assert queries[:8] == ["256x256", "256×256", "256", "3e-4", "0.0003", "25", "56",
                           "Tiny ImageNet"]
    assert "adamw" in queries and len(queries) == 12
    assert len({q.lower() for q in queries}) == len(queries)
    # A short claim leaves room for the dimension's hint words.
    assert exact_queries(claim("Dropout 0.1"))[-7:] == ["lr", "learning_rate", "batch", "epoch",
                                                         "weight_decay", "beta", "config"]
    regexes = regex_queries(c)
    assert regexes[0] == ("pair", "256", "256")
    assert ("literal", "3e-4") in regexes and len(regexes) == 8
    assert regexes[-1][0] == "any" and "learning_rate" in regexes[-1]  # the hint regex, last


def test_text_search_matches_the_line_regexes_it_replaces() -> None:
    lines = ["alpha beta", "beta alpha", "xalphay zbetaz", "", "alpha", "beta", "Class  Foo(",
             "def foo_bar():", "undef foo()", "class Foo:", "ALPHA then BETA"]
    text = _Text("\n".join(x.lower() for x in lines),
                 [sum(len(x) + 1 for x in lines[:i]) for i in range(len(lines))],
                 [("f.py", i + 1) for i in range(len(lines))])
    pair = re.compile(r"alpha.*beta", re.IGNORECASE)
    assert text.find_pair("alpha", "beta", 99) == [i for i, x in enumerate(lines)
                                                   if pair.search(x)]
    definition = re.compile(r"(def|class)\s+foo\b", re.IGNORECASE)
    assert text.find_definition("foo", 99) == [i for i, x in enumerate(lines)
                                               if definition.search(x)]
    assert text.find("alpha", 2) == [0, 1]  # the limit counts lines, in order
    assert text.find_any(["then", "xalpha"], 99) == [2, 10]


def test_definition_marks_agree_with_the_regex_on_every_window(tmp_path: Path) -> None:
    # The ranking's `def`/`class` bonus is read from per-line marks; `\s+` may cross a line
    # break, as in a comment ending "... the base class" above a line starting "Wrapper".
    lines = ["x = 1", "# wraps the base class", "Wrapper around it", "y = 2", "z = 3",
             "w = 4", "v = 5", "u = 6", "t = 7", "s = 8", "r = 9", "q = 10",
             "def f():", "    return 0", "class", "", "    C"]
    search = search_over(tmp_path, {"m.py": "\n".join(lines) + "\n"})
    definition = re.compile(r"\b(def|class)\s+[A-Za-z_][A-Za-z0-9_]*")
    for start in range(1, len(lines) + 1):
        for end in range(start, len(lines) + 2):
            snippet = "\n".join(lines[start - 1:end])
            assert search._defines("m.py", start, end, snippet) == bool(
                definition.search(snippet)), (start, end)
    assert search._defines("m.py", 2, 3, "\n".join(lines[1:3]))
    assert not search._defines("m.py", 2, 2, lines[1])


def test_called_names_agree_with_the_regex_on_every_window(tmp_path: Path) -> None:
    # Round three's called names are read from per-line names; `\s*\(` may cross a line
    # break, as in `compute_loss` on one line and its arguments opening the next.
    lines = ["loss = compute_loss", "    (batch, model)", "print(range(3))", "x = evaluate(y)",
             "", "(a, b) = split_data(z)", "total = reduce_sum(", "    values)", "super().run()"]
    search = search_over(tmp_path, {"m.py": "\n".join(lines) + "\n"})
    called = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")

    def window(start: int, end: int) -> _Window:
        snippet = "\n".join(lines[start - 1:end])
        return _Window("m.py", start, end, "code", snippet, snippet, 0, "m", ("m.py", ""))

    for start in range(1, len(lines) + 1):
        for end in range(start, len(lines) + 2):
            snippet = "\n".join(lines[start - 1:end])
            expected = {n for n in called.findall(snippet)
                        if len(n) >= 4 and n not in ("range", "print", "super")}
            assert search._calls(window(start, end)) == expected, (start, end)
    assert search._calls(window(1, 2)) == {"compute_loss"}


def test_windows_are_eight_lines_around_hits_in_code_and_config_only(tmp_path: Path) -> None:
    search = search_over(tmp_path, {
        "trainer.py": TRAINER,
        "README.md": "We use AdamW with weight decay 0.05 and learning rate 3e-4.\n",
        "tests/test_trainer.py": "def test_lr():\n    assert 3e-4 == 0.0003\n",
        "configs/base.yaml": "optimizer:\n  name: adamw\n  lr: 3e-4\n  weight_decay: 0.05\n",
    })
    result = search.collect(claim("AdamW optimizer, learning rate 3e-4, weight decay 0.05"))
    assert result.items and len(result.items) <= KEEP
    assert {path_kind(i.file) for i in result.items} <= {"code", "config", "other"}
    for item in result.items:
        assert item.end - item.start == 7 or item.start == 1
        lines = search.index.files[item.file].lines
        assert item.snippet == "\n".join(lines[item.start - 1:item.end])
    spans = [(i.file, i.start, i.end) for i in result.items]
    for a in spans:  # kept windows never overlap within a file
        assert not any(a != b and a[0] == b[0] and a[1] <= b[2] and b[1] <= a[2] for b in spans)
    assert result.gate is None
    assert len(result.shown) == 2 and all(i.direct for i in result.shown)
    assert "3e-4" in "\n".join(i.snippet for i in result.shown)


def test_gates(tmp_path: Path) -> None:
    unrelated = search_over(tmp_path / "io", {
        "io_utils.py": "import json\n\n\ndef read(path):\n    with open(path) as f:\n"
                       "        return json.load(f)\n",
        "README.md": "Spectral renormalisation of the codebook is described in the paper.\n",
    })
    absent = unrelated.collect(claim("Spectral renormalisation of the codebook", Dimension.D2))
    assert absent.gate == "no_evidence" and not absent.items
    search = search_over(tmp_path / "trainer", {"trainer.py": TRAINER})
    experiment = search.collect(claim("The experiment trains for 77777 iterations",
                                      Dimension.D3))
    assert experiment.gate == "no_numbers"
    theory = search.collect(claim("The warmup schedule has an optimal convergence bound",
                                  Dimension.D2))
    assert theory.gate in ("theory", "weak")
    assert search.collect(claim("Cosine schedule with 500 warmup steps over 20000 total "
                                "steps")).gate is None


def test_weak_gate_when_only_single_words_match(tmp_path: Path) -> None:
    search = search_over(tmp_path, {"names.py": "MOMENTUM_NAME = 'momentum'\nOTHER = 1\n"})
    result = search.collect(claim("Momentum is kept", Dimension.D2))
    assert result.items and not result.strong
    assert result.gate == "weak"


@pytest.mark.parametrize(("snippet", "stub"), [
    ("def f(x):\n    pass  # TODO implement\n", True),
    ("def f(x):\n    return None\n", True),
    ('"""Only a docstring that restates the paper."""\n', True),
    # The official markers are plain substrings: "return 0.5 * ..." reads as `return 0`.
    (TRAINER.split("\n\n\n")[1], True),
    (TRAINER.split("\n\n\n")[2], False),
])
def test_stub_like_windows(snippet: str, stub: bool) -> None:
    assert stub_like(snippet) is stub


def test_results_do_not_depend_on_claim_order(tmp_path: Path) -> None:
    files = {"trainer.py": TRAINER, "configs/base.yaml": "lr: 3e-4\nwarmup_steps: 500\n"}
    claims = [claim("learning rate 3e-4"), claim("500 warmup steps", Dimension.D4),
              claim("cosine schedule", Dimension.D2)]
    first = search_over(tmp_path / "a", files)
    second = search_over(tmp_path / "b", files)
    forward = [first.collect(c) for c in claims]
    backward = [second.collect(c) for c in reversed(claims)][::-1]
    assert [[i.ref for i in r.items] for r in forward] == [[i.ref for i in r.items]
                                                            for r in backward]
