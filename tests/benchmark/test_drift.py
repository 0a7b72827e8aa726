"""The drift-detection suite: each kind of injection, and `sabench drift-test` on real runs."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from sabench.benchmark.drift import (
    Outcome,
    Site,
    by_judge_naming,
    drift_operator,
    drift_remove,
    drift_stub,
    drift_swap,
    drift_value,
    drifted_setting,
    judge_names,
    operator_positions,
    value_positions,
)
from sabench.verifiers.spec import Claim, Dimension

SOURCE = '''\
LR = 0.0003
def loss(x, y):
    diff = x - y
    return diff * diff

def main():
    prepare()
    train()
'''


def site(tmp_path: Path, text: str, start: int, end: int) -> Site:
    (tmp_path / "m.py").write_text(SOURCE)
    claim = Claim(id="p-D1-001", dimension=Dimension.D1, text=text, source="")
    return Site(claim, (("m.py", start, end),))


def test_each_injection_changes_only_the_evidence(tmp_path: Path) -> None:
    rng = random.Random(0)
    assert drift_value(tmp_path, site(tmp_path, "The learning rate is 3e-4.", 1, 1), rng)
    assert (tmp_path / "m.py").read_text().splitlines()[0] == "LR = 0.003"
    assert drift_operator(tmp_path, site(tmp_path, "squared error", 3, 4), rng)
    assert "diff = x + y" in (tmp_path / "m.py").read_text()
    assert drift_stub(tmp_path, site(tmp_path, "squared error", 3, 4), rng)
    assert "def loss(x, y):\n    raise NotImplementedError\n\ndef main" in \
        (tmp_path / "m.py").read_text()
    assert drift_swap(tmp_path, site(tmp_path, "prepare then train", 7, 8), rng)
    assert (tmp_path / "m.py").read_text().endswith("    train()\n    prepare()\n")
    assert drift_remove(tmp_path, site(tmp_path, "the loss", 2, 4), rng)
    text = (tmp_path / "m.py").read_text()
    compile(text, "m.py", "exec")  # still valid Python
    assert "pass  # removed" in text and "diff" not in text.split("def main")[0]
    assert not drift_value(tmp_path, site(tmp_path, "The batch size is 64.", 1, 1), rng)


def test_a_stub_goes_to_a_function_that_does_something(tmp_path: Path) -> None:
    # the evidence covers an abstract method (docstring only) and its implementation: a stub
    # of the abstract one would change nothing that runs
    source = ('class Score:\n    def score(self, x):\n        """The score of x."""\n\n'
              "    def jacobian(self, x):\n        raise NotImplementedError\n\n\n"
              "class Gaussian(Score):\n    def score(self, x):\n        return -x\n")
    (tmp_path / "m.py").write_text(source)
    claim = Claim(id="p-D2-001", dimension=Dimension.D2, text="score of a Gaussian", source="")
    assert drift_stub(tmp_path, Site(claim, (("m.py", 2, 11),)), random.Random(0))
    text = (tmp_path / "m.py").read_text()
    assert text.startswith(source.split("class Gaussian")[0])  # the abstract part unchanged
    assert text.endswith("    def score(self, x):\n        raise NotImplementedError\n")
    (tmp_path / "m.py").write_text(source)
    assert not drift_stub(tmp_path, Site(claim, (("m.py", 2, 6),)), random.Random(0))
    assert (tmp_path / "m.py").read_text() == source


def test_a_stratified_draw_takes_the_dimensions_in_turn() -> None:
    from sabench.benchmark.drift import interleave_dimensions

    def plan(dimension: str, n: int) -> tuple:
        claim = Claim(id=f"p-{dimension}-{n:03d}", dimension=Dimension(dimension), text="x",
                      source="")
        return ("run", None, None, {claim.id: Site(claim, ())}, claim.id)

    plans = [plan("D1", n) for n in range(4)] + [plan("D4", 0), plan("D3", 0), plan("D3", 1)]
    order = [p[4] for p in interleave_dimensions(plans)]
    assert order == ["p-D1-000", "p-D3-000", "p-D4-000", "p-D1-001", "p-D3-001", "p-D1-002",
                     "p-D1-003"]


def test_a_phase_swap_leaves_prints_and_logging_alone(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text('def main():\n    print("start")\n    logger.info("go")\n'
                                   '    prepare()\n    train()\n')
    claim = Claim(id="p-D4-001", dimension=Dimension.D4, text="prepare then train", source="")
    assert drift_swap(tmp_path, Site(claim, (("m.py", 1, 5),)), random.Random(0))
    assert (tmp_path / "m.py").read_text().splitlines()[1:] == [
        '    print("start")', '    logger.info("go")', "    train()", "    prepare()"]


def test_value_drifts_change_values_not_names_or_labels() -> None:
    from sabench.benchmark.drift import claim_values

    assert claim_values("LLaMA-2 tokenizer (vocab_size=32000), Eq. 3, Figure 2, Stage 1: "
                        "lr 3e-4 for 2 epochs") == {"32000", "3e-4", "2"}
    # One number with its thousands separator; 0 and 1 are in every line, never drifted.
    assert claim_values("106,600 transitions from 3,000 episodes, 1 seed, dropout 0, "
                        "every 10,000 steps, (1, 2)") == {"106600", "3000", "10000", "2"}


def test_value_and_operator_drifts_change_code_never_comments_or_strings(tmp_path: Path) -> None:
    rng = random.Random(0)
    (tmp_path / "m.py").write_text(
        'def f(x):\n    """Scale by 0.5 - the paper\'s factor."""\n'
        '    print("x - 0.5")  # 0.5 - 1\n    return x * 0.5 - 1\n')
    claim = Claim(id="p-D1-001", dimension=Dimension.D1, text="a factor of 0.5", source="")
    where = Site(claim, (("m.py", 1, 4),))
    assert drift_value(tmp_path, where, rng)
    assert drift_operator(tmp_path, where, rng)
    lines = (tmp_path / "m.py").read_text().splitlines()
    assert lines[1:3] == ['    """Scale by 0.5 - the paper\'s factor."""',
                          '    print("x - 0.5")  # 0.5 - 1']
    assert lines[3] == "    return x * 5 + 1"
    (tmp_path / "c.yaml").write_text("lr: 0.5  # 0.5 in the paper\n")
    assert drift_value(tmp_path, Site(claim, (("c.yaml", 1, 1),)), rng)
    assert (tmp_path / "c.yaml").read_text() == "lr: 5  # 0.5 in the paper\n"


@pytest.mark.dataset
def test_drift_test_on_development_runs(sabench_data: Path, tmp_path: Path) -> None:
    subprocess.run(["sh", str(sabench_data / "unpack.sh"), str(tmp_path)], check=True,
                   capture_output=True)
    done = subprocess.run(
        [sys.executable, "-m", "sabench.benchmark.cli", "drift-test", str(tmp_path),
         "--papers", str(sabench_data / "papers"), "--sample", "12", "--json"],
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["n_injected"] == 12
    assert sum(k["n"] for k in report["by_kind"].values()) == 12
    assert set(report["by_dimension"]) <= {"D1", "D2", "D3", "D4"}
    assert 0 <= report["detection"] <= 1 and 0 <= report["false_alarm_rate"] <= 1
    # every value, stub and operator drift is on one side of the judge-naming split
    split = sum(side["n"] for sides in report["by_judge_naming"].values()
                for side in sides.values())
    assert split == sum(o["judge_named"] is not None for o in report["injections"]) == sum(
        k["n"] for name, k in report["by_kind"].items()
        if name.split()[-1] in ("value", "stub", "operator"))


def test_an_operator_drift_changes_arithmetic_not_output_or_assertions(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        'def f(x, n, name):\n    logger.info("\\n" + "=" * 70)\n    s = "a" + name\n'
        '    assert x + 1 > 0\n    return x / n\n')
    claim = Claim(id="p-D2-001", dimension=Dimension.D2, text="f = x / n", source="")
    assert drift_operator(tmp_path, Site(claim, (("m.py", 1, 5),)), random.Random(0))
    assert (tmp_path / "m.py").read_text().splitlines()[1:] == [
        '    logger.info("\\n" + "=" * 70)', '    s = "a" + name', "    assert x + 1 > 0",
        "    return x * n"]


def test_a_phase_swap_prefers_the_claims_own_steps(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "def main(cfg):\n    super().__init__()\n    cfg.seed_everything()\n    cfg.freeze()\n"
        "    model = pretrain_encoder(cfg)\n    model = finetune_decoder(model)\n")
    claim = Claim(id="p-D4-001", dimension=Dimension.D4, source="",
                  text="Pretrain the encoder, then finetune the decoder")
    assert drift_swap(tmp_path, Site(claim, (("m.py", 1, 6),)), random.Random(0))
    assert (tmp_path / "m.py").read_text().splitlines()[1:] == [
        "    super().__init__()", "    cfg.seed_everything()", "    cfg.freeze()",
        "    model = finetune_decoder(model)", "    model = pretrain_encoder(cfg)"]


def test_a_phase_swap_skips_assignments_that_do_not_read_each_other(tmp_path: Path) -> None:
    # swapped, `prompts` and `responses` are loaded all the same: that pair is no drift, so
    # the swap takes the next pair, where `model` reads what `responses` sets
    (tmp_path / "m.py").write_text(
        "def main(self):\n    prompts = self.loader.load_prompts()\n"
        "    responses = self.loader.load_responses()\n    model = fit_model(responses)\n"
        "    scores = model.score(prompts)\n")
    claim = Claim(id="p-D4-001", dimension=Dimension.D4, source="",
                  text="Load prompts and responses, fit the model, then score the prompts")
    assert drift_swap(tmp_path, Site(claim, (("m.py", 1, 5),)), random.Random(0))
    assert (tmp_path / "m.py").read_text().splitlines()[1:] == [
        "    prompts = self.loader.load_prompts()", "    model = fit_model(responses)",
        "    responses = self.loader.load_responses()", "    scores = model.score(prompts)"]

    # two independent assignments and nothing else: no swap to make
    (tmp_path / "m.py").write_text("def f(self, k):\n    a = self.tau(k + 1)\n"
                                   "    b = self.tau(k, self.n)\n")
    assert not drift_swap(tmp_path, Site(claim, (("m.py", 1, 3),)), random.Random(0))
    # bare calls run for their effects: swapped, they reorder whatever state they share
    (tmp_path / "m.py").write_text("def main():\n    set_seed()\n    build()\n")
    assert drift_swap(tmp_path, Site(claim, (("m.py", 1, 3),)), random.Random(0))


def test_a_value_drift_prefers_the_line_that_names_the_claims_quantity(tmp_path: Path) -> None:
    (tmp_path / "c.py").write_text("hidden_dim = 256  # batch\nbatch_size = 256\n")
    claim = Claim(id="p-D1-001", dimension=Dimension.D1, text="batch size 256", source="")
    assert drift_value(tmp_path, Site(claim, (("c.py", 1, 2),)), random.Random(0))
    assert (tmp_path / "c.py").read_text() == "hidden_dim = 256  # batch\nbatch_size = 2560\n"
    # no line names the claim's words: the first value is drifted
    (tmp_path / "c.py").write_text("width = 256\ndepth = 256\n")
    assert drift_value(tmp_path, Site(claim, (("c.py", 1, 2),)), random.Random(0))
    assert (tmp_path / "c.py").read_text() == "width = 2560\ndepth = 256\n"


def test_the_lines_an_injection_touches_are_the_lines_it_changed() -> None:
    from sabench.benchmark.drift import changed_lines

    before = b"def f(x):\n    a = x + 1\n    b = a * 2\n    return b\n\nLR = 3e-4\n"
    stub = b"def f(x):\n    raise NotImplementedError\n\nLR = 3e-4\n"
    assert changed_lines(before, stub) == [(2, 4)]  # the whole body, not one claim's line
    assert changed_lines(before, before.replace(b"3e-4", b"0.003")) == [(6, 6)]
    claim = Claim(id="p-D2-002", dimension=Dimension.D2, text="b doubles a", source="")
    assert Site(claim, (("m.py", 3, 3),)).touches({"m.py": [(2, 4)]})
    assert not Site(claim, (("m.py", 3, 3),)).touches({"m.py": [(6, 6)], "n.py": [(3, 3)]})


def test_an_operator_drift_prefers_a_line_that_names_the_claims_words(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("last = len(blocks) - 1\nstate = state + alpha * update\n")
    claim = Claim(id="p-D2-001", dimension=Dimension.D2, source="",
                  text="Residual update: state = state + alpha * update")
    assert drift_operator(tmp_path, Site(claim, (("m.py", 1, 2),)), random.Random(0))
    assert (tmp_path / "m.py").read_text() == \
        "last = len(blocks) - 1\nstate = state - alpha * update\n"


@pytest.mark.dataset
def test_one_kind_of_drift_is_measured_on_a_sample_of_its_own(sabench_data: Path,
                                                              tmp_path: Path) -> None:
    subprocess.run(["sh", str(sabench_data / "unpack.sh"), str(tmp_path)], check=True,
                   capture_output=True)
    command = [sys.executable, "-m", "sabench.benchmark.cli", "drift-test", str(tmp_path),
               "--papers", str(sabench_data / "papers"), "--sample", "6", "--json"]
    done = subprocess.run([*command, "--kind", "operator"], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["kinds"] == ["operator"] and list(report["by_kind"]) == ["D2 operator"]
    assert [i["kind"] for i in report["injections"]] == ["D2 operator"] * report["n_injected"]
    assert report["n_injected"] == 6
    for injection in report["injections"]:  # the line changed, one operator swapped
        change = injection["change"]
        swapped = [(a, b) for a, b in zip(change["before"], change["after"], strict=True)
                   if a != b]
        assert len(swapped) == 1 and set(swapped[0]) <= set("+-*/"), change
    # each injection's alarms among the claims it left untouched make up the rate
    alarms = sum(i["alarms"] for i in report["injections"])
    untouched = sum(i["untouched"] for i in report["injections"])
    assert untouched > 0 and report["false_alarm_rate"] == round(alarms / untouched, 4)
    wrong = subprocess.run([*command, "--kind", "sign"], capture_output=True, text=True,
                           timeout=600)
    assert wrong.returncode != 0
    assert "unknown kind of drift sign" in wrong.stderr and len(wrong.stderr.splitlines()) == 1


def test_a_swaps_record_shows_a_line_that_changed(tmp_path: Path) -> None:
    from sabench.benchmark.drift import changed_lines, first_change

    before = "def main():\n    prepare()\n    train()\n    report()\n"
    (tmp_path / "m.py").write_text(before.replace("    prepare()\n    train()",
                                                  "    train()\n    prepare()"))
    saved = {"m.py": before.encode()}
    changed = {"m.py": changed_lines(saved["m.py"], (tmp_path / "m.py").read_bytes())}
    change = first_change(tmp_path, saved, changed)
    assert change == {"file": "m.py", "line": 2, "before": "prepare()", "after": "train()"}


@pytest.mark.dataset
def test_the_draw_can_be_held_to_a_split_of_papers(sabench_data: Path, tmp_path: Path) -> None:
    subprocess.run(["sh", str(sabench_data / "unpack.sh"), str(tmp_path)], check=True,
                   capture_output=True)
    command = [sys.executable, "-m", "sabench.benchmark.cli", "drift-test", str(tmp_path),
               "--papers", str(sabench_data / "papers"), "--sample", "3", "--json",
               "--kind", "value"]
    done = subprocess.run([*command, "--paper", "ngpt"], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["papers"] == ["ngpt"] and report["n_injected"] == 3
    assert {i["run"].split("/")[1] for i in report["injections"]} == {"ngpt"}
    wrong = subprocess.run([*command, "--paper", "no-such-paper"], capture_output=True,
                           text=True, timeout=600)
    assert wrong.returncode != 0
    assert "no run of paper no-such-paper" in wrong.stderr and len(wrong.stderr.splitlines()) == 1


def test_the_positions_list_every_place_a_drift_may_go(tmp_path: Path) -> None:
    # the suite takes one of them; a measurement may take any
    (tmp_path / "m.py").write_text("LR = 3e-4  # 3e-4\nwarmup = 3e-4 * 10\n"
                                   "y = (a + b) * c - d\nprint(a + b)\n")
    claim = Claim(id="p-D1-001", dimension=Dimension.D1, text="learning rate 3e-4", source="")
    values = value_positions(tmp_path, Site(claim, (("m.py", 1, 4),)))
    assert [(p.line, p.replacement, p.named) for p in values] == [(0, "0.003", True),
                                                                  (1, "0.003", False)]
    every = operator_positions(tmp_path, Site(claim, (("m.py", 1, 4),)), every=True)
    assert sorted((p.line, p.replacement) for p in every) == [
        (1, " / "), (2, " + "), (2, " - "), (2, " / ")]
    first = operator_positions(tmp_path, Site(claim, (("m.py", 1, 4),)))
    assert [(p.line, p.replacement) for p in first] == [(1, " / "), (2, " - ")]


@pytest.mark.parametrize(("kind", "change", "reasoning", "named"), [
    # the setting a value drift changed, named as the judge wrote it
    ("value", {"file": "m.py", "line": 1, "before": "LR = 0.0003", "after": "LR = 0.003"},
     "The code sets LR = 0.0003 as the paper states.", True),
    ("value", {"file": "m.py", "line": 1, "before": "LR = 0.0003", "after": "LR = 0.003"},
     "The code sets the learning rate in train.py.", False),
    # a key's string is the setting's name; `get` and `cfg` name nothing
    ("value", {"file": "m.py", "line": 1, "before": 'lr = cfg.get("base_lr", 3e-4)',
               "after": 'lr = cfg.get("base_lr", 0.003)'}, "base_lr matches the paper.", True),
    # the function an operator swap is in (its line, in the file before the drift)
    ("operator", {"file": "m.py", "line": 3, "before": "diff = x - y", "after": "diff = x + y"},
     "loss() squares the difference.", True),
    ("operator", {"file": "m.py", "line": 3, "before": "diff = x - y", "after": "diff = x + y"},
     "The evaluation script reports the metric.", False),
    # a removal changes no one named thing
    ("remove", {"file": "m.py", "line": 7, "before": "prepare()", "after": "pass  # removed"},
     "prepare() runs first.", None),
])
def test_the_judge_naming_split_reads_what_the_drift_changed(
        tmp_path: Path, kind: str, change: dict, reasoning: str, named: bool | None) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    outcome = Outcome("c/p", "p-D1-001", "D1", kind, True, True, 0, 1, change)
    assert judge_names(reasoning, outcome, tmp_path) is named


def test_the_judge_naming_split_counts_detection_on_each_side() -> None:
    def outcome(named: bool, detected: bool) -> Outcome:
        return Outcome("c/p", "p-D1-001", "D1", "value", detected, detected, 0, 1, None, named)

    split = by_judge_naming([outcome(True, True), outcome(True, False), outcome(False, False)])
    assert split == {"D1 value": {"named": {"n": 2, "detection": 0.5},
                                  "not named": {"n": 1, "detection": 0.0}}}
    assert drifted_setting("self.n_heads = 16", "self.n_heads = 160") == "n_heads"
