"""Facts of the two windows the official LLM judge is shown (`verifiers/shown.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sabench.verifiers.index import RepoIndex
from sabench.verifiers.official_search import Item
from sabench.verifiers.shown import (
    PaperTerms,
    ShownWindows,
    claim_operations,
    shown_windows,
    snippet_terms,
)
from sabench.verifiers.terms import term_set

SCHEDULE = """\
def warmup_cosine(step, warmup_steps=500, total_steps=20000):
    # linear warmup, then cosine decay
    if step < warmup_steps:
        return step / warmup_steps
    progress = (step - warmup_steps) / (total_steps - warmup_steps)
    return 0.5 * (1 + math.cos(math.pi * progress))
"""
CONFIG = "optimizer: adamw\nlearning_rate: 3e-4\nweight_decay: 0.05  # AdamW decay\n"
STUB = ('def attention_entropy(scores):\n    """Entropy of the attention scores."""\n'
        '    pass  # TODO\n')


def item(file: str, text: str, kind: str = "code", start: int = 1) -> Item:
    return Item(file, start, start + 7, "direct", kind, text)


@pytest.fixture
def index(tmp_path: Path) -> RepoIndex:
    (tmp_path / "schedule.py").write_text(SCHEDULE)
    (tmp_path / "config.yaml").write_text(CONFIG)
    (tmp_path / "entropy.py").write_text(STUB)
    return RepoIndex.build(tmp_path)


def test_snippet_terms_are_the_terms_of_the_joined_lines(tmp_path: Path) -> None:
    lines = ["# the \\alpha-weighted KL term", "β2 = 0.999  # Adam's second moment", "",
             "def klDivergence(p, q):", "    return (p * (p / q).log()).sum()", "\\",
             "lambda_reg = 1e-2"]
    (tmp_path / "m.py").write_text("\n".join(lines) + "\n")
    index = RepoIndex.build(tmp_path)
    for start in range(1, len(lines) + 1):
        for end in range(start, len(lines) + 3):
            snippet = "\n".join(lines[start - 1:end])
            window = Item("m.py", start, end, "direct", "code", snippet)
            assert snippet_terms(index, [window]) == term_set(snippet), (start, end)


def test_no_windows_gives_empty_facts(index: RepoIndex) -> None:
    assert shown_windows(index, "Anything at all", []) == ShownWindows()


def test_terms_numbers_and_bound_values(index: RepoIndex) -> None:
    shown = [item("config.yaml", CONFIG, "config")]
    facts = shown_windows(index, "AdamW, learning rate 3e-4, weight decay 0.05", shown)
    assert facts.windows == 1 and facts.terms == 1.0
    assert facts.numbers == 1.0 and facts.bound_numbers == 1.0
    # "learning rate", "weight decay" and "AdamW learning" are written together; "rate weight" not
    assert facts.bigrams == 0.75
    missing = shown_windows(index, "Dropout 0.37 on attention weights", shown)
    assert missing.numbers == 0.0 and missing.terms < 0.5


def test_title_and_operations_count_only_executable_code(index: RepoIndex) -> None:
    shown = [item("schedule.py", SCHEDULE)]
    claim = "Warmup cosine schedule: cosine decay after linear warmup over 500 steps"
    facts = shown_windows(index, claim, shown)
    assert facts.title_terms > 0.5  # the title "Warmup cosine schedule", mostly on code lines
    assert facts.operations == 1.0  # the claim names cosine; the code calls cos(...)
    only_comment = [item("schedule.py", "# warmup cosine schedule\n# uses cosine decay\n")]
    comment = shown_windows(index, claim, only_comment)
    assert comment.title_terms == 0.0 and comment.operations == 0.0 and comment.terms > 0.5


def test_operations_seen_across_the_two_windows(index: RepoIndex) -> None:
    claim = "Attention weights are the softmax of the scores"
    # The call is split between the windows: `torch.softmax` ends one, `(scores)` opens the next.
    split = [item("a.py", "weights = torch.softmax"), item("b.py", "(scores, dim=-1)")]
    assert shown_windows(index, claim, split).operations == 1.0
    apart = [item("a.py", "weights = softmax_table"), item("b.py", "scores = scores - 1")]
    assert shown_windows(index, claim, apart).operations == 0.0  # named, never called
    second = [item("a.py", "scores = q @ k.T"), item("b.py", "w = F.softmax(scores, -1)")]
    assert shown_windows(index, claim, second).operations == 1.0


def test_stubs_and_same_file(index: RepoIndex) -> None:
    shown = [item("entropy.py", STUB), item("entropy.py", STUB, start=9)]
    facts = shown_windows(index, "Attention entropy of the scores", shown)
    assert facts.stub_markers == 2 and facts.same_file  # the TODO, in each window
    assert shown_windows(index, "x", [item("a.py", "x = 1"), item("b.py", "y = 2")]).same_file \
        is False


def test_defined_name_assigned_and_symbols(index: RepoIndex) -> None:
    shown = [item("attn.py", "w_o = nn.Linear(d, d)\nscale = 1 / math.sqrt(d_head)\n")]
    assert shown_windows(index, "Scale = 1/sqrt(d_head) for the W_O output", shown) \
        .assigned_name == 1.0
    facts = shown_windows(index, "Output projection W_{O} and gate g_v", shown)
    assert facts.symbols == 0.5  # w_o is a code name, g_v is not


def test_rarity_weights_favour_distinctive_terms(index: RepoIndex) -> None:
    paper = PaperTerms.of(["the model uses warmup", "the model uses decay",
                           "the model uses cosine warmup"])
    assert paper.weight("model") < paper.weight("cosine") < paper.weight("never-seen")
    shown = [item("schedule.py", SCHEDULE)]
    facts = shown_windows(index, "model warmup", shown, paper)
    # What the window holds ("warmup") is rarer in the paper than what it misses ("model").
    assert facts.paper_rare_terms > facts.terms


@pytest.mark.parametrize(("text", "calls"), [
    ("p = softmax(z / τ)", {("softmax", "log_softmax")}),
    ("Use the logits of the log-likelihood", {("log", "log_softmax", "logsumexp", "log1p")}),
    ("Loss ||x - y||^2 averaged", {("norm",), ("mean",)}),
    ("No operations here", set()),
])
def test_claim_operations(text: str, calls: set[tuple[str, ...]]) -> None:
    assert claim_operations(text) == calls
