"""The alignment-first check step on the demo paper's reproductions, and on copies of the
faithful one with one thing broken at a time (real repositories, real index, no model)."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from sabench.benchmark.dataset import load_paper
from sabench.benchmark.demo_run import drifted_claims
from sabench.scaffolds import alignment_rules as rules
from sabench.scaffolds import alignment_sizes, alignment_values
from sabench.scaffolds.alignment_check import (
    CHECKERS,
    THRESHOLDS,
    UnknownChecker,
    check_alignment,
    claim_locations,
    get_checker,
)
from sabench.scaffolds.alignment_formulas import formula_pieces
from sabench.verifiers.checks import ClaimCheck
from sabench.verifiers.index import RepoIndex
from sabench.verifiers.spec import Claim, Dimension
from sabench.verifiers.types import Evidence

DEMO = Path(__file__).resolve().parents[2] / "benchmark" / "demo"
PAPER = load_paper(DEMO / "papers" / "smoothlr")
FAITHFUL = DEMO / "repos" / "faithful"


def results(repo: Path, paper=PAPER) -> dict:  # noqa: ANN001 - PaperSpec
    return {r.id: r for r in check_alignment(paper, repo)}


def write_repo(root: Path, files: dict[str, str]) -> Path:
    """A new repository holding `files`."""
    root.mkdir(parents=True)
    for name, text in files.items():
        (root / name).write_text(text)
    return root


def toy_check(repo: Path, files: dict[str, str], *claims: Claim) -> dict:
    """The check of a toy paper made of `claims` on a new repository holding `files`."""
    paper = PAPER.model_copy(update={"paper_id": "toy", "claims": claims})
    return results(write_repo(repo, files), paper)


def toy_claim(cid: str, text: str) -> Claim:
    """A claim of the toy paper; its dimension is the one its id names (`toy-D1-001`)."""
    return Claim(id=cid, dimension=Dimension(cid.split("-")[1]), source="", text=text)


def all_pass(checked: dict) -> bool:
    return all(r.passed for r in checked.values())


def broken(tmp_path: Path, file: str, old: str, new: str) -> Path:
    """A copy of the faithful reproduction with one replacement in one file."""
    repo = tmp_path / "repo"
    shutil.copytree(FAITHFUL, repo)
    text = (repo / file).read_text()
    assert old in text, f"{old!r} not in {file}"
    (repo / file).write_text(text.replace(old, new, 1))
    return repo


def test_every_claim_of_the_faithful_reproduction_passes() -> None:
    failing = {cid: r.reasons for cid, r in results(FAITHFUL).items() if not r.passed}
    assert failing == {}


def test_the_drifted_reproduction_fails_on_its_drifted_claims_only() -> None:
    drifted = drifted_claims()
    assert len(drifted) == 17
    failing = {cid for cid, r in results(DEMO / "repos" / "drifted").items() if not r.passed}
    assert failing == drifted  # no claim that was left unchanged is flagged, none is missed


def test_a_drifted_value_fails_with_the_conflicting_line(tmp_path: Path) -> None:
    repo = broken(tmp_path, "config.py", "epochs: int = 40", "epochs: int = 400")
    result = results(repo)["smoothlr-D1-005"]
    assert not result.passed and result.findings == ["value_conflict"]
    line = next(n for n, text in enumerate((repo / "config.py").read_text().splitlines(), 1)
                if "epochs: int = 400" in text)
    assert result.fix_in == [f"config.py:{line}"]
    assert any("400" in reason and "40" in reason for reason in result.reasons)


def test_a_value_changed_where_the_claim_is_implemented_fails_though_bound_elsewhere(
        tmp_path: Path) -> None:
    # The stated 40 stays bound to another name of the quantity, in another file, so the
    # value is "bound somewhere"; but the code the check finds for the claim sets 400.
    repo = broken(tmp_path, "config.py", "epochs: int = 40", "epochs: int = 400")
    (repo / "metrics.py").write_text((repo / "metrics.py").read_text() +
                                     "\n\nREPORTED_TRAINING_EPOCHS = 40\n")
    result = results(repo)["smoothlr-D1-005"]
    assert not result.passed and result.findings == ["value_conflict"]
    assert any("where the claim is implemented" in r and "400" in r for r in result.reasons)


def side_by_side(tmp_path: Path, short_epochs: int) -> Path:
    """The demo's reproduction with two runs configured side by side: a short one with
    `short_epochs` epochs, and the paper's."""
    repo = broken(tmp_path, "config.py", "    epochs: int = 40\n", "")
    (repo / "config.py").write_text((repo / "config.py").read_text() + (
        f'\n\nSHORT_RUN = {{"batch_size": 128, "epochs": {short_epochs}}}  # T training epochs\n'
        'PAPER_RUN = {"batch_size": 128, "epochs": 40}  # T training epochs\n'))
    return repo


def test_a_second_configuration_the_paper_states_is_no_conflict(tmp_path: Path) -> None:
    # The paper also describes a short schedule of 4 epochs: the short run is that second
    # configuration, not a drift of the paper's.
    ablation = toy_claim("smoothlr-D3-099", "Short-schedule ablation: 4 training epochs.")
    paper = PAPER.model_copy(update={"claims": (*PAPER.claims, ablation)})
    result = results(side_by_side(tmp_path, 4), paper)["smoothlr-D1-005"]
    assert result.passed, result.reasons


def test_a_second_configuration_holding_another_quantitys_number_conflicts(
        tmp_path: Path) -> None:
    # 5 is a number the paper states, but as the clipping threshold (tau = 5.0) and a count
    # of seeds, never as epochs: 5 epochs beside the paper's 40 is no configuration it
    # describes.
    result = results(side_by_side(tmp_path, 5))["smoothlr-D1-005"]
    assert not result.passed and result.findings == ["value_conflict"], result.reasons
    assert any("epochs = 5" in r for r in result.reasons), result.reasons


def test_a_configuration_key_conflicts_only_within_its_own_stage(tmp_path: Path) -> None:
    claim = toy_claim("toy-D1-001",
                      "Stage 2 fine-tuning hyperparameters: lr=5e-5 for 40 training epochs.")
    paper = PAPER.model_copy(update={"paper_id": "toy", "claims": (claim,)})
    for stage2_lr, fails in (("5e-5", False), ("5e-4", True)):
        repo = tmp_path / stage2_lr
        repo.mkdir()
        (repo / "config.yaml").write_text(
            "stage1:\n  lr: 1e-4\n  epochs: 10\nstage2:\n"
            f"  lr: {stage2_lr}\n  epochs: 40\n")
        (repo / "train.py").write_text(
            "import yaml\n\n\ndef finetune_stage2(model, path='config.yaml'):\n"
            "    cfg = yaml.safe_load(open(path))['stage2']\n"
            "    for epoch in range(cfg['epochs']):\n        model.step(cfg['lr'])\n")
        result = check_alignment(paper, repo)[0]
        assert (not result.passed) is fails, result
    # stage1's lr and epochs are another stage's: only stage2's lr is named (as the setting
    # of the claim's `lr`, which is also where the claim is implemented)
    assert result.reasons == ["stage2.lr = 5e-4 at config.yaml:5 is the setting of what the "
                              "claim states as 5e-5"], result.reasons


def test_stated_values_read_sizes_grouped_digits_rates_and_counts() -> None:
    from sabench.scaffolds.alignment_values import stated_values

    assert [v.keys for v in stated_values("Image resolution: 512×512")] == [frozenset({"512"})]
    images = stated_values("256x256 resolution, 1,281,167 training images")
    assert [v.text for v in images] == ["256", "1281167"] and "resolution" in images[0].quantity
    price = stated_values("proprietary models $5.25 per 1M output tokens")
    assert [(v.whole, v.per) for v in price] == [(False, False), (True, True)]
    # what a value counts: "20.7k A100 GPU hours" are hours (a `gpus` setting is not it)
    assert [v.head for v in stated_values("compute: 20.7k A100 GPU hours")] == ["hour"]
    # ... and a hyphenated noun's head is its last part
    assert [v.head for v in stated_values("PPO: 4 mini-batches, 8 self-attention heads",
                                          small=True)] == ["batch", "head"]
    # ... and a value followed by a preposition counts nothing
    assert [v.head for v in stated_values("timesteps K=40 for fine-tuning")] == [""]
    # values for other model sizes after a slash are alternatives, a fraction is no value
    assert [(v.text, v.symbol) for v in stated_values("n_layers=24/36, ratio r=1/3")] == [
        ("24", "n_layers")]
    # the bounds of index ranges are positions, not values
    assert [v.text for v in stated_values(
        "observation: 48 dims, base vel[0:3], command[9:12]; Phase 1: 32 steps")] == ["48", "32"]


def test_a_second_configuration_excuses_only_a_value_the_paper_states(tmp_path: Path) -> None:
    # Two settings classes side by side, each with a `cfg_scale`: the other one may hold the
    # value the paper states for the guidance scale of another setting (5.0, stated by
    # another claim), not any value, nor a number the paper states for something else
    # (5.0 FPS).
    t2v = toy_claim("toy-D1-001", "CFG scale for T2V: classifier-free guidance scale=7.5")
    vp_scale = "Video prediction sampling: classifier-free guidance scale=5.0"
    vp_fps = "Video prediction sampling uses no guidance at 5.0 FPS conditioning"
    for case, (other, vp, fails) in enumerate((("5.0", vp_scale, False), ("5.0", vp_fps, True),
                                               ("75.0", vp_scale, True))):
        files = {"config.py": (
            "from dataclasses import dataclass\n\n\n@dataclass\nclass T2VConfig:\n"
            f"    cfg_scale: float = {other}  # classifier-free guidance scale\n\n\n"
            "@dataclass\nclass SamplingConfig:\n"
            "    cfg_scale: float = 7.5  # classifier-free guidance scale\n")}
        result = toy_check(tmp_path / str(case), files, t2v, toy_claim("toy-D1-002", vp))[
            "toy-D1-001"]
        assert (not result.passed) is fails, (other, vp, result.reasons)
    assert "T2VConfig.cfg_scale = 75.0" in result.reasons[0]


def test_a_bound_the_paper_states_for_a_quantity_excuses_a_second_configuration(
        tmp_path: Path) -> None:
    # "max = 4e-4" of a learning-rate schedule is a learning rate the paper states: a second
    # configuration's `learning_rate = 0.0004` beside the Sudoku run's is no drift of it.
    sudoku = toy_claim("toy-D1-001", "Sudoku: learning rate = 0.001, batch size = 128")
    schedule = toy_claim("toy-D1-002", "Learning rate schedule: cosine decay, max = 4e-4, "
                                       "min = 4e-5")
    files = {"config.py": (
        "RUNS = {\n    'pretrain': {'learning_rate': 0.0004, 'batch_size': 128},\n"
        "    'sudoku': {'learning_rate': 0.001, 'batch_size': 128},\n}\n")}
    result = toy_check(tmp_path / "stated", files, sudoku, schedule)["toy-D1-001"]
    assert result.passed, result.reasons
    # without the schedule claim, nothing the paper states is that second configuration
    result = toy_check(tmp_path / "unstated", files, sudoku)["toy-D1-001"]
    assert not result.passed and result.findings == ["value_conflict"], result.reasons


def test_a_name_may_take_words_of_the_claim_besides_its_quantitys(tmp_path: Path) -> None:
    # `downstream_epochs` is "Downstream task: 500 epochs"; `N` is "latent variables N = 20"
    downstream = toy_claim("toy-D1-001",
                           "Downstream task config: lr=1e-3, 500 epochs with cosine decay")
    latent = toy_claim("toy-D1-002",
                       "NAE-SAT latent model: latent variables N = 20, observations P = 280")
    files = {"config.py": (
        "from dataclasses import dataclass\n\n\n@dataclass\nclass Config:\n"
        "    pretrain_epochs: int = 1000\n    downstream_lr: float = 1e-3\n"
        "    downstream_epochs: int = 5000  # cosine decay\n\n\n@dataclass\n"
        "class NAESATConfig:\n    N: int = 200  # latent variables\n    P: int = 280\n")}
    fno = toy_claim("toy-D1-003", "FNO baseline hyperparameters: modes=16, width=64")
    files["fno.py"] = "class FNOConfig:\n    fno_modes = 160\n    fno_width = 64\n"
    files["spectral.py"] = "SPECTRAL_MODES = 16  # kept by another model\n"
    checked = toy_check(tmp_path / "repo", files, downstream, latent, fno)
    assert checked["toy-D1-003"].reasons[0].startswith("FNOConfig.fno_modes = 160")
    assert "Config.downstream_epochs = 5000" in checked["toy-D1-001"].reasons[0]
    assert "NAESATConfig.N = 200" in checked["toy-D1-002"].reasons[0]
    assert not checked["toy-D1-001"].passed and not checked["toy-D1-002"].passed


def test_defaults_of_lookups_and_lists_are_values_where_the_claim_is_implemented(
        tmp_path: Path) -> None:
    # `cfg.get("sampling_steps", 500)` runs 500 when nothing sets it; `hidden_shape = [1280,
    # 128, 128]` is the claim's list of 128s with one element changed
    steps = toy_claim("toy-D1-001",
                      "Sudoku: reverse sampling steps = 50, Gumbel noise coefficient = 0.5")
    mlp = toy_claim("toy-D1-002", "Policy network: MLP with 3 hidden layers of 128 units each")
    # a function's parameter named as the quantity (`hidden_dim=2560`, a size in dims;
    # `gpu_count`) is a binding whatever the function is called
    width = toy_claim("toy-D1-003", "Baseline policy MLP: 2 hidden layers of width 256 on 8 GPUs")
    mlp_code = ("def build_mlp(input_dim, hidden_dim={}, num_layers=2):\n"
                "    return [input_dim] + [hidden_dim] * num_layers\n\n\n"
                "GPU_COUNT = {}\n")
    for hidden, gpus, fails in ((256, 8, False), (2560, 8, True), (256, 80, True)):
        result = toy_check(tmp_path / f"mlp{hidden}-{gpus}",
                           {"mlp.py": mlp_code.format(hidden, gpus)}, width)["toy-D1-003"]
        assert (not result.passed) is fails, result.reasons
    code = ("class Sampler:\n    def __init__(self, config):\n"
            "        self.sampling_steps = config.get(\"sampling_steps\", {})\n"
            "        self.gumbel_noise_coefficient = config.get(\"gumbel\", 0.5)\n\n\n"
            "class PolicyConfig:\n    def __init__(self):\n"
            "        self.policy_mlp_hidden_shape = [{}, 128, 128]\n")
    faithful = toy_check(tmp_path / "faithful", {"sampler.py": code.format(50, 128)},
                         steps, mlp)
    assert all_pass(faithful), {k: r.reasons for k, r in faithful.items()}
    drifted = toy_check(tmp_path / "drifted", {"sampler.py": code.format(500, 1280)},
                        steps, mlp)
    assert drifted["toy-D1-001"].reasons[0].startswith("sampling_steps = 500 at sampler.py:3")
    assert "holds 1280, but the claim states 128" in drifted["toy-D1-002"].reasons[0]
    assert not any(r.passed for r in drifted.values())


def test_small_counts_compare_with_names_that_count_their_noun(tmp_path: Path) -> None:
    # "4 H100 GPUs" is `n_gpus`, not a `seed`; "(200 warmup)" makes `warmup_epochs` the
    # warmup's, not the 1000 epochs'; a fraction set to 1 (`weight_decay = 1`) is a value
    gpus = toy_claim("toy-D1-001",
                     "Training runs on 4 H100 GPUs with 5 random seeds, 1,000 queries per "
                     "prompt")
    epochs = toy_claim("toy-D1-002",
                       "Pre-training config: 1000 epochs (200 warmup), weight_decay=0.1")
    config = ("from dataclasses import dataclass\n\n\n@dataclass\nclass TrainConfig:\n"
              "    n_gpus: int = {}\n    gpu_type: str = 'H100'\n    seed: int = 42\n"
              "    num_queries_per_prompt: int = {}\n"
              "    random_seeds: tuple = (0, 1, 2, 3, 4)\n"
              "    pretrain_epochs: int = 1000\n    warmup_epochs: int = 200\n"
              "    weight_decay: float = {}\n")
    faithful = toy_check(tmp_path / "faithful", {"config.py": config.format(4, 1000, 0.1)},
                         gpus, epochs)
    assert all_pass(faithful), {k: r.reasons for k, r in faithful.items()}
    drifted = toy_check(tmp_path / "drifted", {"config.py": config.format(40, 1000, 1)},
                        gpus, epochs)
    assert drifted["toy-D1-001"].reasons[0].startswith("TrainConfig.n_gpus = 40")
    queries = toy_check(tmp_path / "queries", {"config.py": config.format(4, 10000, 0.1)},
                        gpus, epochs)["toy-D1-001"]
    assert queries.reasons[0].startswith("TrainConfig.num_queries_per_prompt = 10000")
    assert drifted["toy-D1-002"].reasons[0].startswith("TrainConfig.weight_decay = 1 ")
    assert not any(r.passed for r in drifted.values())


def test_names_written_as_the_claim_writes_its_words(tmp_path: Path) -> None:
    # `p2vae_batch_size` is "P2VAE ... batch size", `stage3_batch_size` "Stage 3", and
    # `finetune_epochs` "fine-tuning"; a warmup of 10% of 100k steps is 10,000 steps
    claim = toy_claim("toy-D1-001",
                      "P2VAE training: batch size 256, 200 epochs of fine-tuning, 100k steps "
                      "with 10% warmup")
    stage = toy_claim("toy-D1-002", "Stage 3 training uses batch size 768")
    config = ("from dataclasses import dataclass\n\n\n@dataclass\nclass TrainConfig:\n"
              "    p2vae_batch_size: int = {}\n    finetune_epochs: int = {}\n"
              "    p2vae_steps: int = 100000\n    p2vae_warmup_steps: int = 10000\n"
              "    stage3_batch_size: int = {}\n")
    faithful = toy_check(tmp_path / "faithful", {"config.py": config.format(256, 200, 768)},
                         claim, stage)
    assert all_pass(faithful), {k: r.reasons for k, r in faithful.items()}
    for drifted in ((2560, 200, 768), (256, 2000, 768), (256, 200, 7680)):
        checked = toy_check(tmp_path / "-".join(map(str, drifted)),
                            {"config.py": config.format(*drifted)}, claim, stage)
        failing = [f"{k}: {r.reasons[0]}" for k, r in checked.items() if not r.passed]
        assert len(failing) == 1 and str(max(drifted)) in failing[0], failing


def test_a_small_round_value_assigned_by_the_claim_is_checked(tmp_path: Path) -> None:
    repo = broken(tmp_path, "config.py", "label_smoothing: float = 0.1",
                  "label_smoothing: float = 0.3")
    assert results(repo)["smoothlr-D1-001"].findings == ["value_conflict"]


def test_a_number_joined_to_a_word_counts_it() -> None:
    # "32-frame" is 32 frames, not 32 minus something; `t-1` stays a formula
    values = alignment_values.stated_values("Stage 1: batch_size=288, 32-frame, causal; "
                                            "noise at t-1", small=True)
    assert [(v.text, v.head) for v in values] == [("288", ""), ("32", "frame")]


def test_a_value_assigned_inside_brackets_is_a_stated_value() -> None:
    from sabench.scaffolds.alignment_values import stated_values

    aside = stated_values("Data: OpenWebText with the LLaMA-2 tokenizer (vocab_size=32000).")
    assert [(v.text, v.symbol) for v in aside] == [("32000", "vocab_size")]
    assert stated_values("the weight is sqrt(1 - 0.5)") == []  # an operand, not a setting


def test_a_stub_fails_its_claims_and_names_the_function(tmp_path: Path) -> None:
    repo = broken(tmp_path, "train.py", "    model.w -= lr * weight_decay * model.w\n",
                  "    raise NotImplementedError\n")
    result = results(repo)["smoothlr-D2-004"]
    assert not result.passed and "stub" in result.findings
    assert any("decoupled_weight_decay is a stub" in r for r in result.reasons)
    assert result.fix_in[0].startswith("train.py:")


def test_code_that_calls_a_stub_about_the_claim_fails(tmp_path: Path) -> None:
    repo = broken(tmp_path, "model.py", "    return lr_min + 0.5 * (lr_max - lr_min) * "
                  "(1.0 + np.cos(np.pi * epoch / total_epochs))", "    raise NotImplementedError")
    checked = results(repo)
    # The epoch order names the cosine schedule, and train() calls the stub to get it.
    order = checked["smoothlr-D4-003"]
    assert not order.passed and "stub" in order.findings
    assert any("calls cosine_lr" in reason for reason in order.reasons)
    # A claim whose code calls the stub but says nothing of a schedule is not failed by it.
    assert checked["smoothlr-D1-002"].passed


def test_an_abstract_method_implemented_elsewhere_is_no_stub(tmp_path: Path) -> None:
    repo = broken(tmp_path, "train.py", "\n\ndef decoupled_weight_decay(", '''

class Regulariser:
    def decoupled_weight_decay(self, model, lr, weight_decay):
        raise NotImplementedError


def decoupled_weight_decay(''')
    assert "stub" not in results(repo)["smoothlr-D2-004"].findings


def test_a_class_named_after_the_claim_that_cannot_be_built_is_a_stub(tmp_path: Path) -> None:
    claim = toy_claim("toy-D2-001",
                      "Output gating module: gated = sigmoid(W_g h) * h after attention.")
    paper = PAPER.model_copy(update={"paper_id": "toy", "claims": (claim,)})
    body = ("    def forward(self, h):\n        return sigmoid(self.w_g @ h) * h\n\n\n"
            "def sigmoid(x):\n    return 1 / (1 + np.exp(-x))\n")
    concrete = ("import numpy as np\n\n\nclass OutputGating:\n"
                "    def __init__(self, dim):\n        raise NotImplementedError\n\n" + body)
    # the same constructor in a base class that a subclass builds: abstract, not a stub
    abstract = ("import numpy as np\n\n\nclass GatingBase:\n"
                "    def __init__(self, dim):\n        raise NotImplementedError\n\n\n"
                "class OutputGating(GatingBase):\n"
                "    def __init__(self, dim):\n        self.w_g = np.eye(dim)\n\n" + body)
    for name, code, fails in (("concrete", concrete, True), ("abstract", abstract, False)):
        repo = tmp_path / name
        repo.mkdir()
        (repo / "gating.py").write_text(code)
        result = check_alignment(paper, repo)[0]
        assert ("stub" in result.findings) is fails, (name, result)
        if fails:
            assert "OutputGating.__init__ is a stub (raises NotImplementedError) of a class " \
                   "nothing else implements" in result.reasons


def test_a_class_carrying_the_claim_that_cannot_be_built_fails_it(tmp_path: Path) -> None:
    # the class is not named after the claim, but its method carries it: a constructor
    # that raises stops that method too
    claim = toy_claim("toy-D2-001", "Relative L2 error: rel_l2 = ||x_pred - x_gt||_2 / ||x_gt||_2")
    helpers = "".join(f"\n    def log_{i}(self, writer):\n        writer.add(self.model, {i})\n"
                      for i in range(6))
    code = ("import numpy as np\n\n\nclass Evaluator:\n    def __init__(self, model):\n"
            "        {}\n" + helpers + "\n    def relative_l2_error(self, x_pred, x_gt):\n"
            "        return np.linalg.norm(x_pred - x_gt) / np.linalg.norm(x_gt)\n")
    for built, fails in (("self.model = model", False), ("raise NotImplementedError", True)):
        result = toy_check(tmp_path / str(fails), {"evaluate.py": code.format(built)},
                           claim)["toy-D2-001"]
        assert ("stub" in result.findings) is fails, result.reasons


def test_a_stub_named_for_what_it_does_to_the_claims_thing_fails_it(tmp_path: Path) -> None:
    # `apply_` says what the function does, `stage_freezing` which claim it implements
    claim = toy_claim("toy-D2-001", "Two-stage training with a parameter freezing schedule: "
                                    "stage 1 trains the projector, stage 2 everything")
    code = ("def train(model, data, stage):\n    apply_stage_freezing(model, stage)\n"
            "    return model.fit(data)\n\n\n"
            "def log_metrics(writer, step):\n    writer.add(step)\n\n\n"
            "def apply_stage_freezing(model, stage):\n    raise NotImplementedError\n")
    found = rules.stub_findings(RepoIndex.build(write_repo(tmp_path / "repo", {"train.py": code})),
                                claim, ClaimCheck(claim_id=claim.id, dimension=Dimension.D2,
                                                  function="train"))
    assert [f.reason for f in found] == ["apply_stage_freezing is a stub (raises "
                                         "NotImplementedError)"]


def test_a_function_carrying_a_method_claim_that_raises_fails_it(tmp_path: Path) -> None:
    # The claim's code evidence reaches `noise_covariance`, whose name is only partly the
    # claim's: a function there that raises is an unimplemented part of the method. One that
    # returns zeros may be a real initialiser, a value claim is not failed by it, and a stub
    # that only borders the claim's code (`cosine_lr`, no word of the claim) is another
    # claim's.
    method = toy_claim("toy-D2-001", "Forward process step: X_t = sqrt(alpha_t) * X_prev + "
                                     "sqrt(1 - alpha_t) * W_t with Gaussian noise W_t")
    value = toy_claim("toy-D1-001", "Forward process: alpha_t = 0.98 for every step")
    code = ("import numpy as np\n\n\ndef forward_step(x_prev, alpha_t, rng):\n"
            "    return np.sqrt(alpha_t) * x_prev + np.sqrt(1 - alpha_t) * rng.normal()\n\n\n"
            "def noise_covariance(alpha_bar, dim):\n    {}\n\n\n"
            "def cosine_lr(epoch, total_epochs, lr_max, lr_min):\n"
            "    raise NotImplementedError\n")
    for body, fails in (("raise NotImplementedError", True), ("return np.zeros((dim, dim))",
                                                              False)):
        index = RepoIndex.build(write_repo(tmp_path / str(fails),
                                           {"process.py": code.format(body)}))
        for claim, expected in ((method, fails), (value, False)):
            check = ClaimCheck(claim_id=claim.id, dimension=claim.dimension,
                               function="forward_step",
                               evidence=[Evidence(file="process.py", start_line=4, end_line=14)])
            found = [f.reason for f in rules.stub_findings(index, claim, check)]
            assert found == (["noise_covariance is a stub (raises NotImplementedError)"]
                             if expected else []), (body, claim.id)


def test_a_method_of_a_class_the_evidence_shows_that_raises_fails_the_claim(
        tmp_path: Path) -> None:
    # the evidence is the class's docstring; a method named with a word of the claim raises
    claim = toy_claim("toy-D2-001", "Hypersphere weight normalization: after every optimizer "
                                    "step, each weight row is normalized to unit norm.")
    code = ("class NGPTLinear:\n"
            '    """Linear layer whose rows stay on the hypersphere."""\n\n'
            "    def __init__(self, weight):\n        self.weight = weight\n\n"
            "    def {}(self):\n        raise NotImplementedError\n")
    shown_head = ClaimCheck(claim_id=claim.id, dimension=Dimension.D2, function="",
                            evidence=[Evidence(file="layers.py", start_line=1, end_line=2)])
    for method, fails in (("normalize_after_update", True), ("export_onnx", False)):
        repo = tmp_path / method
        repo.mkdir()
        (repo / "layers.py").write_text(code.format(method))
        found = rules.concrete_stub_findings(RepoIndex.build(repo), claim, shown_head)
        assert [f.reason for f in found] == ([
            f"NGPTLinear.{method} is a stub (raises NotImplementedError) of a class nothing "
            "else implements"] if fails else [])


def test_a_class_the_evidence_shows_whose_constructor_raises_fails_the_claim(
        tmp_path: Path) -> None:
    # the evidence is a config's fields; its `__post_init__` raises, so no config is built
    claim = toy_claim("toy-D1-001", "Model architecture: 16 routed experts, top-k=4")
    code = ("from dataclasses import dataclass\n\n\n@dataclass\nclass Config:\n"
            "    routed_experts: int = 16\n    top_k: int = 4\n\n"
            "    def __post_init__(self):\n        {}\n")
    shown_fields = ClaimCheck(claim_id=claim.id, dimension=Dimension.D1, function="",
                              evidence=[Evidence(file="config.py", start_line=5, end_line=7)])
    for body, fails in (("raise NotImplementedError", True), ("assert self.top_k > 0", False)):
        repo = tmp_path / str(fails)
        repo.mkdir()
        (repo / "config.py").write_text(code.format(body))
        found = rules.concrete_stub_findings(RepoIndex.build(repo), claim, shown_fields)
        assert [f.reason for f in found] == ([
            "Config.__post_init__ is a stub (raises NotImplementedError) of a class nothing "
            "else implements"] if fails else [])


def test_a_class_carrying_the_claim_that_cannot_run_fails_it(tmp_path: Path) -> None:
    # the claim is found in the constructor (the headwise gate's weights); the method that
    # does the class's work raises: the claim's code cannot run
    claim = toy_claim("toy-D2-001", "Headwise output gating: gate = sigmoid(W_head h) per head")
    code = ("import numpy as np\n\n\nclass Block:\n    def __init__(self, dim, heads):\n"
            "        self.w_head = np.zeros((heads, dim))  # one gate per head\n\n"
            "    def {}(self, h, o):\n        raise NotImplementedError\n")
    found_in_constructor = ClaimCheck(claim_id=claim.id, dimension=Dimension.D2,
                                      function="Block.__init__",
                                      evidence=[Evidence(file="block.py", start_line=5,
                                                         end_line=6)])
    for method, fails in (("forward", True), ("export_onnx", False)):
        repo = tmp_path / method
        repo.mkdir()
        (repo / "block.py").write_text(code.format(method))
        found = rules.concrete_stub_findings(RepoIndex.build(repo), claim, found_in_constructor)
        assert [f.reason for f in found] == ([
            "Block.forward is a stub (raises NotImplementedError) of a class nothing else "
            "implements"] if fails else [])


def test_an_operation_of_the_formula_that_no_code_computes(tmp_path: Path) -> None:
    repo = broken(tmp_path, "model.py", "(1.0 + np.cos(np.pi * epoch / total_epochs))",
                  "(2.0 - 2.0 * epoch / total_epochs)")
    result = results(repo)["smoothlr-D2-003"]
    assert not result.passed and result.findings == ["operations"]


def test_a_sign_the_paper_does_not_have_fails_the_formula(tmp_path: Path) -> None:
    claim = toy_claim("toy-D2-001",
                      "Interpolation kernel: mu_t = t*x_1 + k*(1-t)*x_0, then noise is added.")
    for sign, fails in (("+", False), ("-", True)):
        result = toy_check(tmp_path / f"repo{sign}", {"kernel.py": (
            "def interpolation_kernel(t, k, x0, x1):\n"
            f"    mu_t = t * x1 {sign} k * (1 - t) * x0\n    return mu_t\n")}, claim)[claim.id]
        assert ("operations" in result.findings) is fails, result
    assert any("other signs" in reason and "kernel.py:2" in reason for reason in result.reasons)


def test_terms_the_code_names_otherwise_still_keep_the_claims_signs(tmp_path: Path) -> None:
    # The code names the interpolated weights otherwise (w_ft, w_pre), but each term still
    # shares a factor of its own with the claim's: alpha, and (1 - alpha).
    claim = toy_claim("toy-D2-001",
                      "Weight interpolation: param_wise = alpha * param_tuned + (1 - alpha) * "
                      "param_pretrained — a linear path between the two models.")
    for sign, fails in (("+", False), ("-", True)):
        result = toy_check(tmp_path / f"repo{sign}", {"interpolate.py": (
            "def interpolate_weights(alpha, w_pre, w_ft, head_pre, head_ft):\n"
            "    head = (1 - alpha) * head_pre + alpha * head_ft\n"
            f"    params = (1 - alpha) * w_pre {sign} alpha * w_ft\n    return params, head\n"
        )}, claim)[claim.id]
        assert ("operations" in result.findings) is fails, result
    assert any("other signs" in reason and "interpolate.py:3" in reason
               for reason in result.reasons)


def test_a_scale_the_code_divides_by_where_the_paper_multiplies(tmp_path: Path) -> None:
    scale = toy_claim("toy-D2-001",
                      "Attention logits of unit-norm queries and keys: scores = (q @ k^T) * "
                      "sqrt(d_k), then softmax over the keys.")
    norm = toy_claim("toy-D2-002",
                     "Unit-norm projection of every hidden vector: Norm(x) = x / ||x||_2.")
    paper = PAPER.model_copy(update={"paper_id": "toy", "claims": (scale, norm)})
    for scaled, normed in (("*", "/"), ("/", "*")):
        repo = tmp_path / ("paper" if scaled == "*" else "drifted")
        repo.mkdir()
        (repo / "attention.py").write_text(
            "import math\n\n\ndef attention_scores(q, k, d_k):\n"
            f"    scores = (q @ k.T) {scaled} math.sqrt(d_k)\n    return scores.softmax(-1)\n")
        (repo / "norms.py").write_text(
            f"def unit_norm(x):\n    return x {normed} x.norm(dim=-1, keepdim=True)\n")
        found = {r.id: r for r in check_alignment(paper, repo)}
        drifted = scaled == "/"
        assert ("operations" in found["toy-D2-001"].findings) is drifted, found
        assert ("operations" in found["toy-D2-002"].findings) is drifted, found
    assert "the claim multiplies by dk^0.5; the code divides by it at attention.py:5" in \
        found["toy-D2-001"].reasons
    # a name the paper multiplies by, which the code divides by (`z = z ⊙ s_z`)
    logits = toy_claim("toy-D2-003", "Logits with element-wise scaling: z = z ⊙ s_z")
    for op in ("*", "/"):
        result = toy_check(tmp_path / f"logits{op == '/'}", {"head.py": (
            "class Head:\n    def scaled_logits(self, z):\n"
            f"        return z {op} self.s_z\n")}, logits)["toy-D2-003"]
        assert ("operations" in result.findings) is (op == "/"), result.reasons
    assert result.reasons[0] == "the claim multiplies by sz; the code divides by it at head.py:3"
    assert "the claim divides by norm(x); the code multiplies by it at norms.py:2" in \
        found["toy-D2-002"].reasons


def test_an_operation_the_paper_multiplies_by_compares_whatever_its_operand_is_named(
        tmp_path: Path) -> None:
    # the code names the paper's ν `v`: SiLU of it is still the factor the paper multiplies by
    swiglu = toy_claim("toy-D2-001", "SwiGLU activation: SiLU(nu) = nu ⊙ sigma(nu), "
                                     "SwiGLU(u, nu) = u ⊙ SiLU(nu)")
    for op in ("*", "/"):
        result = toy_check(tmp_path / f"mlp{op == '/'}", {"mlp.py": (
            "import torch.nn.functional as F\n\n\ndef swiglu(u, v):\n"
            f"    return u {op} F.silu(v)\n")}, swiglu)["toy-D2-001"]
        assert ("operations" in result.findings) is (op == "/"), result.reasons
    assert "the claim multiplies by silu(nu); the code divides by silu(v) at mlp.py:5" in \
        result.reasons


@pytest.mark.parametrize(("code", "where"), [
    # a local name
    ("import math\n\nimport torch\n\n\ndef ngpt_attention_scores(q, k, d_k):\n"
     "    scale = math.sqrt(d_k)\n"
     "    scores = torch.matmul(q, k.transpose(-2, -1)) {} scale\n    return scores\n",
     "attention.py:8"),
    # an attribute the constructor sets, of another name than the paper's
    ("import math\n\nimport torch\n\n\nclass NGPTAttention:\n"
     "    def __init__(self, head_dim):\n        self.softmax_scale = math.sqrt(head_dim)\n\n"
     "    def attention_scores(self, q, k):\n"
     "        return torch.matmul(q, k.transpose(-2, -1)) {} self.softmax_scale\n",
     "attention.py:11"),
])
def test_a_name_for_an_operation_is_read_as_that_operation(tmp_path: Path, code: str,
                                                           where: str) -> None:
    # the code names the square root first: dividing by `scale` divides by sqrt(d_k)
    attention = toy_claim("toy-D2-001", "nGPT attention with a modified scaling factor: "
                                        "scores = (q @ k^T) * sqrt(d_k)")
    for op in ("*", "/"):
        result = toy_check(tmp_path / f"attn{op == '/'}", {"attention.py": code.format(op)},
                           attention)["toy-D2-001"]
        assert ("operations" in result.findings) is (op == "/"), result.reasons
    assert any(r.startswith("the claim multiplies by dk^0.5; the code divides by ") and
               r.endswith(f" at {where}") for r in result.reasons), result.reasons


def test_signs_compare_through_abbreviated_names(tmp_path: Path) -> None:
    # the code writes the paper's `c_xy` as `cmd_xy` and `x_t^k` as `x_t_k`
    track = toy_claim("toy-D2-001",
                      "Velocity tracking reward: r = exp(-||c_xy - v_xy||^2 / sigma^2)")
    target = toy_claim("toy-D2-002", "Sample-wise velocity target: u = (x_1 - x_t^k) / (1 - t)")
    for sign in ("-", "+"):
        found = toy_check(tmp_path / f"repo{sign}", {"rewards.py": (
            "import torch\n\n\ndef velocity_tracking_reward(cmd_xy, v_xy, sigma):\n"
            f"    error = ((cmd_xy {sign} v_xy) ** 2).sum(dim=-1)\n"
            "    return torch.exp(-error / sigma ** 2)\n\n\n"
            "def velocity_target(x1, x_t_k, t):\n"
            f"    return (x1 {sign} x_t_k) / (1 - t)\n")}, track, target)
        for result in found.values():
            assert ("operations" in result.findings) is (sign == "+"), result.reasons
    assert found["toy-D2-001"].reasons[0].startswith(
        "the claim computes c_xy - v_xy; the code computes cmd_xy + v_xy at rewards.py:5")


def test_a_formula_of_calls_with_several_arguments_keeps_its_signs(tmp_path: Path) -> None:
    """The right-hand side runs on past the commas inside its calls, `y*` (the optimum) is a
    name, and `r(y2, y*)` is the code's `r2`."""
    bonus = toy_claim("toy-D2-001", "Shaping bonus: b(y2 | y1, y*) = alpha * (r(y2, y*) - "
                                    "r(y1, y*)), where alpha is a positive constant.")
    for sign in ("-", "+"):
        result = toy_check(tmp_path / f"repo{sign}", {"rewards.py": (
            "def shaping_bonus(r1, r2, alpha):\n"
            f"    return alpha * (r2 {sign} r1)\n")}, bonus)[bonus.id]
        assert ("operations" in result.findings) is (sign == "+"), result.reasons


def test_the_sign_and_scale_rules_read_the_papers_subscripts_and_primes() -> None:
    pieces = formula_pieces("Trick: param_actual = (s_{a,init} / s_{a,scale}) * param_stored; "
                            "step: x' = x_{t-1} + h²")
    assert pieces[:2] == ["(s_a_init / s_a_scale) * param_stored", "x_t_1 + h**2"]


def test_a_number_written_before_a_symbol_multiplies_it(tmp_path: Path) -> None:
    # the paper's `2η_t` is twice eta_t, not a name the parser cannot read
    assert formula_pieces("Memoryless schedule: σ(t)² = 2η_t, and 1e-4 in 3D")[0] == "2*eta_t"
    memoryless = toy_claim("toy-D2-001", "Memoryless noise schedule: σ(t)² = 2η_t, so that X_0 "
                                         "and X_1 are independent.")
    for op in ("*", "/"):
        result = toy_check(tmp_path / f"sched{op == '/'}", {"schedule.py": (
            "import torch\n\n\ndef memoryless_sigma(eta_t):\n"
            f"    return torch.sqrt(2 {op} eta_t)\n")}, memoryless)["toy-D2-001"]
        assert ("operations" in result.findings) is (op == "/"), result.reasons


def test_a_factor_the_claim_puts_on_both_sides_has_no_side_to_keep(tmp_path: Path) -> None:
    """nGPT's trick multiplies by `s_init` in one formula and divides by it in the next: code
    that only multiplies by it (the ratio is logged nowhere) has no factor on the wrong side."""
    trick = toy_claim("toy-D2-001", "Init/scale trick: param_actual = (s_a_init / s_a_scale) * "
                                    "param_stored; effective_LR_ratio = s_a_scale / s_a_init.")
    code = ("def restore(param_stored, s_a_init, s_a_scale):\n"
            "    return param_stored * s_a_init / s_a_scale\n")
    result = toy_check(tmp_path / "repo", {"scaling.py": code}, trick)[trick.id]
    assert "operations" not in result.findings, result.reasons


def test_a_step_that_reads_what_a_later_step_computes_fails_the_order(tmp_path: Path) -> None:
    split = ("    train_idx, val_idx, test_idx = stratified_split(labels, cfg.split_fractions, "
             "rng)\n")
    noise = ("    train_y = inject_label_noise(labels[train_idx], cfg.label_noise, cfg.n_classes, "
             "rng)\n")
    repo = broken(tmp_path, "run.py", split + noise, noise + split)
    result = results(repo)["smoothlr-D4-001"]
    assert not result.passed and "order" in result.findings
    assert any("reads train_idx" in reason for reason in result.reasons), result.reasons


def test_a_constructor_reading_an_attribute_it_sets_later_fails_the_order(
        tmp_path: Path) -> None:
    claim = toy_claim("toy-D4-001", "Leaderboard simulation: register the models, then count "
                                    "the models, then start the rating of every model")
    code = ("class LeaderboardSimulation:\n"
            "    def __init__(self, model_names):\n"
            "{}"
            "        self.ratings = {{m: 1000.0 for m in self.model_names}}\n")
    steps = ("        self.model_names = list(model_names)\n",
             "        self.n_models = len(self.model_names)\n")
    for label, order, fails in (("good", steps, False), ("swapped", steps[::-1], True)):
        checked = toy_check(tmp_path / label, {"simulation.py": code.format("".join(order))},
                            claim)[claim.id]
        assert ("order" in checked.findings) is fails, checked
    assert any("reads self.model_names" in r for r in checked.reasons), checked.reasons


def test_an_attribute_the_class_body_defines_may_be_read_first(tmp_path: Path) -> None:
    claim = toy_claim("toy-D4-001", "Leaderboard simulation: count the models, then register "
                                    "the models")
    code = ("class LeaderboardSimulation:\n    model_names = ('a', 'b')\n\n"
            "    def __init__(self, model_names):\n"
            "        self.n_models = len(self.model_names)\n"
            "        self.model_names = list(model_names)\n")
    checked = toy_check(tmp_path / "repo", {"simulation.py": code}, claim)[claim.id]
    assert "order" not in checked.findings, checked


def test_steps_that_run_out_of_order(tmp_path: Path) -> None:
    repo = broken(tmp_path, "train.py",
                  "    grad_w, grad_b = loss_gradients(batch_x, probs, targets)\n"
                  "    grad_w, grad_b = clip_by_global_norm(grad_w, grad_b, cfg.clip_norm)\n",
                  "    decoupled_weight_decay(model, lr, cfg.weight_decay)\n"
                  "    grad_w, grad_b = loss_gradients(batch_x, probs, targets)\n"
                  "    grad_w, grad_b = clip_by_global_norm(grad_w, grad_b, cfg.clip_norm)\n")
    text = (repo / "train.py").read_text()
    (repo / "train.py").write_text(text.replace(
        "    model.b -= lr * velocity.b\n    decoupled_weight_decay(model, lr, cfg.weight_decay)\n",
        "    model.b -= lr * velocity.b\n"))
    result = results(repo)["smoothlr-D4-002"]
    assert not result.passed and result.findings == ["order"]


def test_a_claim_restated_in_comments_only(tmp_path: Path) -> None:
    claim = Claim(id="smoothlr-D2-099", dimension=Dimension.D2, source="test", text=(
        "Mixup augmentation interpolates random pairs of training examples and their labels "
        "with a Beta-distributed mixing coefficient."))
    paper = PAPER.model_copy(update={"claims": (*PAPER.claims, claim)})
    repo = broken(tmp_path, "model.py", "\n\nclass SoftmaxRegression:", '''


# Mixup augmentation: interpolate random pairs of training examples and their labels with a
# Beta-distributed mixing coefficient.


class SoftmaxRegression:''')
    result = results(repo, paper)["smoothlr-D2-099"]
    assert not result.passed and "docs_only" in result.findings
    assert result.fix_in[0].startswith("model.py:")
    assert results(FAITHFUL, paper)["smoothlr-D2-099"].findings == []


def test_claim_tags_locate_their_lines(tmp_path: Path) -> None:
    repo = broken(tmp_path, "config.py", "epochs: int = 40",
                  "epochs: int = 40  # smoothlr-D1-005")
    (repo / "notes.py").write_text("# smoothlr-D1-001 is only mentioned here\n")
    where = claim_locations(repo, ["smoothlr-D1-005", "smoothlr-D1-001", "smoothlr-D1-00"])
    line = next(n for n, text in enumerate((repo / "config.py").read_text().splitlines(), 1)
                if "smoothlr-D1-005" in text)
    assert where == {"smoothlr-D1-005": f"config.py:{line}"}


def test_checkers_by_name() -> None:
    assert {"alignment", "offline"} <= set(CHECKERS)
    only = get_checker("offline")(PAPER, DEMO / "repos" / "drifted", ["smoothlr-D1-002"])
    assert [r.id for r in only] == ["smoothlr-D1-002"] and not only[0].passed
    with pytest.raises(UnknownChecker, match="known: alignment, offline"):
        get_checker("nope")


def good_and_bad(tmp_path: Path, claim: Claim, code: str, good: object, bad: object,
                 file: str = "config.py", *others: Claim) -> list:
    """The claim's check with `code` formatted with the paper's value, and with a drifted
    one."""
    return [toy_check(tmp_path / f"{claim.id}-{label}", {file: code.format(value)}, claim,
                      *others)[claim.id] for label, value in (("good", good), ("bad", bad))]


def drifted_and_faithful(tmp_path: Path, claim: Claim, code: str, good: object, bad: object,
                         file: str = "config.py", *others: Claim) -> tuple[bool, bool]:
    """Whether the claim passes with `code` formatted with the paper's value, and with a
    drifted one. The codes also hold the paper's value under an unrelated name, as real
    repositories do, so that only the rule about the claim's own name can tell."""
    faithful, drifted = good_and_bad(tmp_path, claim, code, good, bad, file, *others)
    return faithful.passed, drifted.passed


@pytest.mark.parametrize(("text", "code", "good", "bad"), [
    # an assigned 2000 is a value, not a year; and 0.1's quantity stops before "and"
    ("Optimizer: weight_decay=0.1 and warmup_steps=2000 for every run",
     "class OptimConfig:\n    weight_decay = 0.1\n    warmup_steps = {}\n", 2000, 20000),
    # "identity" only qualifies another value's noun (prompts): it may name the queries
    ("Identity-probing evaluation: 5 identity-probing prompts; 1,000 queries per prompt",
     "class DetectorConfig:\n    num_identity_prompts = 5\n    num_identity_queries = {}\n",
     1000, 10000),
    # "per prompt" is still the queries' quantity
    ("Identity-probing evaluation: 5 identity-probing prompts; 1,000 queries per prompt",
     "class DetectorConfig:\n    num_prompts = 5\n    num_queries_per_prompt = {}\n"
     "    log_every = 1000\n", 1000, 10000),
    # "tokens" is the unit of a symbol's value, not a noun the name must count
    ("Training context length: L=2048 tokens for language modelling",
     "class LanguageModelTrainingConfig:\n    context_length = {}  # tokens\n"
     "    log_every = 2048\n", 2048, 20480),
    # `N_r` is the paper's notation: the quantity's words name it (`num_routed_experts`)
    ("Model architecture: N_r=16 routed experts, N_s=2 shared experts",
     "class ModelConfig:\n    num_routed_experts = {}\n    num_shared_experts = 2\n"
     "    log_every = 16\n", 16, 160),
    # `chunk_len` is the claim's `chunk` measured as a length
    ("Baseline autoregressive config: GenLV overlap=8, StreamT2V chunk=24",
     "class BaselineConfig:\n    genlv_overlap = 8\n    chunk_len = {}\n    save_every = 24\n",
     24, 240),
    # 1e-3 is the claim's KL weight `beta`, no alternative learning rate
    ("VAE training: base learning rate 1e-4, batch size 256, KL weight beta=1e-3",
     "class VAEConfig:\n    learning_rate = {}\n    batch_size = 256\n    beta = 1e-3\n",
     "1e-4", "1e-3"),
    # the claim's list with one element changed
    ("Adapter sweep: scale_factor range [0.01, 0.1, 1, 10], bottleneck range [4, 8, 16, 32]",
     "class SweepConfig:\n    scale_factors = {}\n    bottlenecks = [4, 8, 16, 32]\n"
     "    tolerance = 0.01\n",
     "[0.01, 0.1, 1.0, 10.0]", "[0.1, 0.1, 1.0, 10.0]"),
    # "applied to ..." says what the value applies to: no noun the name must count
    ("MDM training weight decay: 0.1 applied to all model parameters",
     "import torch\n\n\nclass MDMTrainingConfig:\n    weight_decay = {}\n    dropout = 0.1\n"
     "\n\ndef mdm_optimizer(model, config):\n    return torch.optim.AdamW(model.parameters(), "
     "weight_decay=config.weight_decay)\n", 0.1, 1),
    # a Greek letter in the code's name is a part of it, spelt out: `wωz` is `w_omega_z`
    ("Reward weights: w_v_xy=1.0, w_omega_z=0.5, w_g=-5.0",
     "REWARD_WEIGHTS = {{'w_v_xy': 1.0, 'wωz': {}, 'w_g': -5.0}}\nSMOOTHING = 0.5\n",
     0.5, 5),
    # a probability above one, whatever quantity its name is ("...: 0.25" names none)
    ("Probability of randomly dropping the relevance condition y during diffusion training to "
     "enable classifier-free guidance at sampling: 0.25.",
     "import torch\n\n\nclass DiffusionConfig:\n    uncond_prob = {}\n    guidance_scale = 3.0\n"
     "    warmup_ratio = 0.25\n\n\ndef drop_condition(cond, config):\n"
     "    keep = torch.rand(cond.shape[0]) >= config.uncond_prob\n"
     "    return cond * keep[:, None]\n", 0.25, 2.5),
    # an index range whose start moved past its end takes nothing
    ("Policy observation space: 48 dims — base velocity[0:3], joint positions[12:24], "
     "joint velocities[24:36], last actions[36:48]",
     "OBS_SLICES = {{'base_vel': (0, 3), 'q_pos': (12, 24), 'q_vel': {}, "
     "'last_action': (36, 48)}}\nOBS_DIM = 48\n\n\ndef joint_velocities(obs):\n"
     "    start, end = OBS_SLICES['q_vel']\n    return obs[..., start:end]\n",
     "(24, 36)", "(240, 36)"),
    # five numbers in the claim's order, one changed, are the claim's list whatever the name
    ("Inference timesteps ablated: [10, 20, 40, 100, 200] (fine-tuning always at K=40)",
     "class InferenceConfig:\n    sweep = {}\n    finetune_timesteps = 40\n\n\n"
     "def ablate_inference_timesteps(sample, config):\n"
     "    return [sample(timesteps=n) for n in config.sweep]\n",
     "[10, 20, 40, 100, 200]", "[100, 20, 40, 100, 200]"),
    # `sigma` is either of the claim's sigmas: both are 0.25
    ("Velocity tracking reward temperatures: sigma_v_xy=0.25 for linear velocity tracking, "
     "sigma_omega_z=0.25 for angular velocity tracking",
     "import torch\n\nSMOOTHING = 0.25\n\n\ndef velocity_tracking_reward(error, sigma={}):\n"
     "    return torch.exp(-error / sigma)\n\n\n"
     "def linear_velocity_tracking(command, velocity):\n"
     "    return velocity_tracking_reward(((command - velocity) ** 2).sum(-1))\n", 0.25, 2.5),
    # a bare `epochs` counts the epochs of the regime its settings section is named for
    ("OOD training regime: 1000 training trajectories, 1000 epochs, AdamW optimizer",
     "class TrainingConfig:\n    epochs = {}\n    optimizer = 'adamw'\n\n\n"
     "class DataConfig:\n    n_train_trajectories = 1000\n", 1000, 10000),
    # the class says the rest of the identifier: `Attention`'s `heads` is `attn_heads`
    ("U-Net hyperparameters: init_dim=128, down_up_layers=4, attn_hidden_dim=32, attn_heads=4",
     "import torch.nn as nn\n\nINIT_DIM = 128\nDOWN_UP_LAYERS = 4\n\n\n"
     "class Attention(nn.Module):\n    def __init__(self, dim, heads={}, dim_head=32):\n"
     "        super().__init__()\n        self.heads = heads\n"
     "        self.to_qkv = nn.Linear(dim, heads * dim_head * 3)\n\n\n"
     "class LinearAttention(nn.Module):\n    def __init__(self, dim, heads=4, dim_head=32):\n"
     "        super().__init__()\n        self.heads = heads\n", 4, 40),
    # a language model's context length is the sequence length it reads
    ("Training infrastructure: context_length=4096, total_tokens=3.5T, optimizer=AdamW",
     "class TrainingConfig:\n    seq_len = {}\n    optimizer = 'adamw'\n    log_every = 4096\n",
     4096, 40960),
    # a hyphenated noun counts what its last part names: "4 mini-batches" are batches
    ("PPO hyperparameters: learning rate=0.001, 5 learning epochs per update, 4 mini-batches",
     "class PPOConfig:\n    def __init__(self):\n        self.learning_rate = 0.001\n"
     "        self.learning_epochs = 5\n        self.mini_batches = {}\n", 4, 40),
])
def test_a_value_is_told_apart_from_the_claims_other_values(
        tmp_path: Path, text: str, code: str, good: object, bad: object) -> None:
    claim = toy_claim("toy-D1-001", text)
    assert drifted_and_faithful(tmp_path, claim, code, good, bad) == (True, False)


@pytest.mark.parametrize(("text", "code", "good", "bad"), [
    # a dataclass field's list default is the list its factory returns
    ("Classifier-free guidance weights evaluated: w in [0.0, 1.0, 4.0]",
     "from dataclasses import dataclass, field\n\n\n@dataclass\nclass GuidanceEvalConfig:\n"
     "    classifier_free_guidance_weights: list = field(default_factory=lambda: {})\n"
     "    n_images = 4\n",
     "[0.0, 1.0, 4.0]", "[0.0, 1.0, 40]"),
    # a keyword argument of a call the claim names sets the claim's quantity
    ("Cutoff levels: 200 total cutoff levels, constructed from 25 handcrafted base levels",
     "def build_cutoff_levels(num_base_levels, total=200):\n    return list(range(total))\n\n"
     "\nlevels = build_cutoff_levels(num_base_levels={})\n", 25, 250),
    # the square's base of a normal distribution's variance is its standard deviation
    ("Weight initialization: GPT uses N(0, 0.02^2); the output projection is scaled by "
     "sqrt(2*n_layers)",
     "import math\n\nimport torch.nn as nn\n\n\ndef init_gpt_weights(module, n_layers, "
     "output_projection=False):\n    nn.init.normal_(module.weight, mean=0.0, std={})\n"
     "    if output_projection:\n        module.weight.data /= math.sqrt(2 * n_layers)\n",
     0.02, 0.2),
])
def test_a_value_set_where_the_claim_is_implemented_is_read_however_it_is_written(
        tmp_path: Path, text: str, code: str, good: object, bad: object) -> None:
    claim = toy_claim("toy-D1-001", text)
    assert drifted_and_faithful(tmp_path, claim, code, good, bad) == (True, False)


@pytest.mark.parametrize(("embedding_std", "fails"), [("0.2", True), ("0.02", False),
                                                     ("1.0 / math.sqrt(d_model)", False)])
def test_the_function_that_holds_the_evidence_initialises_as_the_claims_normal_does(
        tmp_path: Path, embedding_std: str, fails: bool) -> None:
    # the evidence shows the linear layers' branch; the embeddings' branch, further down the
    # same function, draws from the claim's normal distribution as well
    padding = "".join(f"    # note {i}\n" for i in range(12))
    (tmp_path / "model.py").write_text(
        "import math\n\nimport torch.nn as nn\n\n\ndef init_weights(module, d_model):\n"
        "    if isinstance(module, nn.Linear):\n"
        "        nn.init.normal_(module.weight, mean=0.0, std=0.02)\n" + padding +
        "    if isinstance(module, nn.Embedding):\n"
        f"        nn.init.normal_(module.weight, mean=0.0, std={embedding_std})\n")
    claim = toy_claim("toy-D1-001", "Weight initialization: GPT uses N(0, 0.02^2)")
    found = alignment_values.normal_std_conflicts(
        RepoIndex.build(tmp_path), claim, [], [("model.py", 6, 9)],
        alignment_values.mentioned_numbers(claim.text))
    assert [f.where for f in found] == (["model.py:22"] if fails else [])


@pytest.mark.parametrize(("module", "fails"), [("training_dynamics.py", True),
                                               ("robustness.py", False)])
def test_a_section_named_as_the_module_that_implements_the_claim_is_the_claims(
        tmp_path: Path, module: str, fails: bool) -> None:
    # the repository calls the claim's code `dynamics`; its section of the configuration is
    # the claim's, another module's is not
    (tmp_path / "config.yaml").write_text("dynamics:\n  thinking_steps: 50\n")
    (tmp_path / module).write_text("def evaluate(levels, thinking_steps):\n    return levels\n")
    claim = toy_claim("toy-D1-001", "Test-time compute: levels are evaluated with a number "
                                    "of thinking steps ranging from 0 to 5")
    index = RepoIndex.build(tmp_path)
    near = [a for a in index.assignments if a.file == "config.yaml"]
    found = alignment_values.range_conflicts(
        claim, near, alignment_values.claim_context(claim.text),
        [("config.yaml", 1, 2), (module, 1, 2)])
    assert [f.where for f in found] == (["config.yaml:2"] if fails else [])


@pytest.mark.parametrize(("setting", "fails"), [
    ("masking_ratio_phase1_min = {}", True),
    # a quantity that shares the range's words but is no end of it
    ("num_masking_ratio_phase1 = {}", False)])
@pytest.mark.parametrize("value", ["0.7", "7.0"])
def test_a_setting_of_one_end_of_the_claims_range_holds_a_number_in_it_wherever_it_is(
        tmp_path: Path, setting: str, fails: bool, value: str) -> None:
    # the setting is in no window where the check finds the claim: its name makes it the
    # configuration's end of the range the claim bounds
    (tmp_path / "config.py").write_text(
        "class TrainConfig:\n    " + setting.format(value) +
        "\n    masking_ratio_phase1_max = 1.0\n")
    claim = toy_claim("toy-D1-001", "Masking ratio configuration: Phase 1 uniformly sampled "
                                    "from [0.7, 1.0]; Phase 2 uses a cosine masking schedule.")
    found = alignment_values.bound_setting_conflicts(
        RepoIndex.build(tmp_path), claim, alignment_values.claim_context(claim.text),
        [("model.py", 1, 8)])
    assert [f.where for f in found] == (["config.py:2"] if fails and value == "7.0" else [])


def test_adams_betas_hold_no_number_above_one_in_any_stage(tmp_path: Path) -> None:
    # Adam's betas lie in [0, 1) in every stage, though another stage's section is not the
    # claim's; a KL weight `kl_beta` is no Adam beta and may be above one
    claim = toy_claim("toy-D1-001", "Stage 3 AdamW optimizer betas and epsilon: β1=0.9, "
                                    "β2=0.95, ε=1e-6")
    code = ("training:\n  stage2:\n    kl_beta: 4.0\n    optimizer:\n      name: AdamW\n"
            "      betas: {}\n  stage3:\n    optimizer:\n      name: AdamW\n"
            "      betas: [0.9, 0.95]\n      eps: 1.0e-6\n")
    assert drifted_and_faithful(tmp_path, claim, code, "[0.9, 0.95]", "[9, 0.95]",
                                "config.yaml") == (True, False)


@pytest.mark.parametrize(("text", "code", "good", "bad"), [
    # a pair that keeps one end of the claim's range and starts past its end: the range with
    # one end drifted, whatever section holds it (COCO's own range shares an end, and is one)
    ("Masking ratio configuration: Phase 1 uniformly sampled from [0.7, 1.0]; Phase 2 uses a "
     "cosine masking schedule.",
     "training:\n  imagenet:\n    phase1_masking_params: {}\n    phase2_masking: cosine\n"
     "  coco:\n    phase1_masking_params: [0.7, 0.9]\n", "[0.7, 1.0]", "[7, 1.0]"),
    # a search range whose ends coincide searches nothing
    ("VTAB-1K hyperparameter search: learning_rate range [0.001, 0.01], weight_decay range "
     "[0.0001, 0.001], grid search over method-specific ranges",
     "experiments:\n  epochs: 100\n  learning_rate_search: {}\n"
     "  weight_decay_search: [1e-4, 1e-3]\n", "[1e-3, 1e-2]", "[0.01, 1e-2]"),
])
def test_a_range_with_one_end_drifted_past_the_other_fails_its_claim(
        tmp_path: Path, text: str, code: str, good: str, bad: str) -> None:
    claim = toy_claim("toy-D1-001", text)
    assert drifted_and_faithful(tmp_path, claim, code, good, bad, "config.yaml") == (True, False)


def test_a_momentum_above_one_fails_its_claim_wherever_it_is_set(tmp_path: Path) -> None:
    # The claim's two best windows are the ImageNet setting and the training loop; the MS-COCO
    # copy of the setting is further down, and the ImageNet copy holds the claim's value. A
    # momentum of 9.999 is still no momentum of any training run.
    claim = toy_claim("toy-D1-001", "Exponential moving average momentum: ema_momentum=0.9999 "
                                    "(applied to both ImageNet and MS-COCO training)")
    files = {
        "imagenet.py": "class ImageNetConfig:\n    ema_momentum = 0.9999\n    lr = 1e-4\n\n\n"
                       "def update_ema(ema_model, model, momentum=ImageNetConfig.ema_momentum):\n"
                       "    # exponential moving average of the weights\n"
                       "    for ema_p, p in zip(ema_model.parameters(), model.parameters()):\n"
                       "        ema_p.mul_(momentum).add_(p, alpha=1 - momentum)\n",
        "train.py": "from imagenet import update_ema\n\n\ndef train(model, ema_model, config, "
                    "data):\n    # exponential moving average momentum, the same for ImageNet "
                    "and MS-COCO\n    for batch in data:\n        model.step(batch)\n"
                    "        update_ema(ema_model, model, momentum=config.ema_momentum)\n",
        "coco.py": "class CocoConfig:\n    image_size = 256\n    lr = 2e-4\n"
                   "    ema_momentum = {}\n"}
    verdicts = {}
    for value in ("0.9999", "9.999"):
        repo = {**files, "coco.py": files["coco.py"].format(value)}
        verdicts[value] = toy_check(tmp_path / value, repo, claim)["toy-D1-001"]
    assert verdicts["0.9999"].passed
    assert not verdicts["9.999"].passed
    assert "CocoConfig.ema_momentum = 9.999 at coco.py:4 is a momentum outside [0, 1]: no " \
           "setting of it can be" in verdicts["9.999"].reasons


@pytest.mark.parametrize(("setting", "fails"), [
    # a decay under another name than the claim's, in a class of its own: still no decay
    ("class EvalConfig:\n    ema_decay = 9.999\n", True),
    # an optimizer's beta, named by its section
    ("optimizer:\n  name: adamw\n  beta2: 9.5\n", True),
    # a noise schedule's beta is no Adam beta, and may be above one
    ("noise_schedule:\n  beta: 12.0\n", False),
])
def test_a_named_fraction_outside_its_interval_fails_wherever_it_is_set(
        tmp_path: Path, setting: str, fails: bool) -> None:
    claim = toy_claim("toy-D1-001", "Training uses AdamW with beta1=0.9, beta2=0.95 and an "
                                    "EMA of the weights with decay 0.9999")
    name = "eval.py" if setting.startswith("class") else "config.yaml"
    (tmp_path / name).write_text(setting)
    index = RepoIndex.build(tmp_path)
    found = alignment_values.fraction_conflicts(
        claim, alignment_values.fraction_settings(index),
        alignment_values.stated_values(claim.text))
    assert bool(found) is fails, found


BATCH_CLAIM = toy_claim("toy-D1-001", "Training batch size: 256 sequences on 8 GPUs")


@pytest.mark.parametrize(("setting", "good", "bad"), [
    # a dropout rate of 1 zeroes every activation: 1 is out, not only numbers above it
    ("    hidden_dropout_prob = {}\n", "0.1", "1"),
    ("    drop_path_rate = {}\n", "0.1", "1.0"),
    # a decay named only `decay`, in a class its name says is a moving average
    ("\n\nclass EMAModel:\n    def __init__(self, model, decay: float = {}):\n"
     "        self.decay = decay\n", "0.9999", "9.999"),
    # an Adam beta, where its optimizer is named
    ("    optimizer_betas = ({}, 0.95)\n", "0.9", "9"),
])
def test_a_fraction_no_paper_can_set_fails_the_claim_found_beside_it(
        tmp_path: Path, setting: str, good: str, bad: str) -> None:
    # The claim names no fraction: the setting beside its value is no value of the claim,
    # but the code the claim is found in cannot train as written.
    code = "class TrainConfig:\n    batch_size = 256\n" + setting
    assert drifted_and_faithful(tmp_path, BATCH_CLAIM, code, good, bad) == (True, False)


@pytest.mark.parametrize("setting", [
    "    uncond_prob = 1.0\n",  # a probability may be 1: always drop the condition
    "    log_prob_floor = -20.0\n",  # a log-probability is no probability
    "    kl_beta = 2.0\n",  # a bare beta is Adam's only where an optimizer is named
    "    beta2 = 9.5\n",
    "    momentum_encoder_dim = 256\n",  # a name with another word than the fraction's
    "    ema_decay_steps = 10\n",  # when the decay starts, not what it is
    "    dropout_every = 2\n",
])
def test_a_setting_that_only_looks_like_a_fraction_is_left_alone(
        tmp_path: Path, setting: str) -> None:
    code = "class TrainConfig:\n    batch_size = 256\n" + setting
    assert toy_check(tmp_path / "repo", {"config.py": code}, BATCH_CLAIM)[BATCH_CLAIM.id].passed


@pytest.mark.parametrize(("code", "file"), [
    # the head count beside the claim's value, in one class
    ("class ModelConfig:\n    batch_size = 256\n    d_model = 1024\n    n_heads = {}\n",
     "config.py"),
    # a block named the same way (`encoder_`), in a configuration file
    ("train:\n  batch_size: 256\nmodel:\n  encoder_hidden_size: 768\n"
     "  encoder_num_attention_heads: {}\n", "config.yaml"),
])
def test_a_head_count_that_does_not_divide_its_width_fails(tmp_path: Path, code: str,
                                                           file: str) -> None:
    assert drifted_and_faithful(tmp_path, BATCH_CLAIM, code, 16 if "1024" in code else 12,
                                160 if "1024" in code else 120, file) == (True, False)


@pytest.mark.parametrize("code", [
    # heads given a size of their own need not split the width
    "class ModelConfig:\n    batch_size = 256\n    dim = 100\n    heads = 8\n"
    "    dim_head = 64\n",
    # another block's width (`decoder_dim`) is not what the encoder's heads split
    "class ModelConfig:\n    batch_size = 256\n    decoder_dim = 100\n"
    "    encoder_heads = 8\n",
    # a size per model, each head count beside its own width
    "class ModelConfig:\n    batch_size = 256\n    if large:\n        d_model = 1280\n"
    "        n_heads = 20\n    else:\n        d_model = 1024\n        n_heads = 16\n",
])
def test_a_head_count_beside_a_width_it_need_not_split_is_left_alone(tmp_path: Path,
                                                                      code: str) -> None:
    assert toy_check(tmp_path / "repo", {"config.py": code}, BATCH_CLAIM)[BATCH_CLAIM.id].passed


def test_a_claim_about_heads_reads_every_head_count(tmp_path: Path) -> None:
    # the claim is found in the training script; the model's configuration is elsewhere,
    # and its head count is no value of the claim
    claim = toy_claim("toy-D1-001", "A learned scale per attention head; batch size 256")
    files = {"train.py": "BATCH_SIZE = 256\n\n\ndef train(model, data):\n"
                         "    for batch in data.batches(BATCH_SIZE):\n        model.step(batch)\n",
             "model.yaml": "unet:\n  attention_dim: 32\n  attention_heads: {}\n"}
    verdicts = [toy_check(tmp_path / str(heads), {**files, "model.yaml": files[
        "model.yaml"].format(heads)}, claim)[claim.id].passed for heads in (4, 40)]
    assert verdicts == [True, False]


def test_a_bare_plural_counts_its_noun_in_a_section_the_claim_names(tmp_path: Path) -> None:
    # `hardware.nodes` counts the nodes of "the same hardware"; a bare `epochs` of an
    # unnamed section might count any epochs of the system
    claim = toy_claim("toy-D1-001", "Training infrastructure: 64 A100 GPUs across 8 compute "
                                    "nodes; the same hardware for both model sizes.")
    code = "hardware:\n  gpus: 64\n  gpu_model: A100\n  nodes: {}\nlogging:\n  every: 8\n"
    assert drifted_and_faithful(tmp_path, claim, code, 8, 80, "config.yaml") == (True, False)
    unnamed = code.replace("hardware:", "cluster:")
    assert drifted_and_faithful(tmp_path / "unnamed", claim, unnamed, 8, 80, "config.yaml") == (
        True, True)


def test_a_list_one_element_off_where_the_claim_is_implemented_is_its_list(
        tmp_path: Path) -> None:
    # a section the claim does not name (`fine_tuning`) still holds the claim's list, one
    # element changed to a number the claim never mentions
    claim = toy_claim("toy-D1-001", "Reward scaling factor λ values: [1000, 2500, 12500] for "
                                    "the tradeoff sweep")
    code = ("fine_tuning:\n  lambda_values: {}   # reward scaling coefficients\n"
            "  num_timesteps: 40\n  noise_schedule: memoryless\n")
    assert drifted_and_faithful(tmp_path, claim, code, "[1000, 2500, 12500]",
                                "[10000, 2500, 12500]", "config.yaml") == (True, False)
    # the stated list kept in a dataclass elsewhere does not excuse it: no section the claim
    # names holds it, so the drifted copy may well be the one that runs
    files = {"config.yaml": code.format("[10000, 2500, 12500]"),
             "defaults.py": "class Defaults:\n    lambda_values = [1000, 2500, 12500]\n"}
    assert not toy_check(tmp_path / "copies", files, claim)[claim.id].passed
    # a number the claim mentions is no drift: the list may be the claim's other setting
    other = toy_claim("toy-D1-002", "Reward scaling factor λ values: [1000, 2500, 12500]; "
                                    "the reported runs use 5000")
    assert drifted_and_faithful(tmp_path / "other", other, code, "[1000, 2500, 12500]",
                                "[5000, 2500, 12500]", "config.yaml") == (True, True)


def test_a_sweep_over_part_of_the_claims_list_holds_only_its_values(tmp_path: Path) -> None:
    # the code sweeps three of the claim's four ranks; one changed to a number the claim never
    # mentions is the claim's sweep drifted
    claim = toy_claim("toy-D1-001", "LoRA: bottleneck rank r range [1, 8, 16, 32] applied to "
                                    "W_Q and W_V")
    code = "lora:\n  bottleneck_ranks: {}\n  target_modules: [w_q, w_v]\n"
    faithful, drifted = good_and_bad(tmp_path, claim, code, "[8, 16, 32]", "[8, 16, 320]",
                                     "config.yaml")
    changed = "the claim's [1, 8, 16, 32] with one element changed"
    assert faithful.passed
    assert not drifted.passed and any(changed in reason for reason in drifted.reasons)
    # a list out of the claim's order is another sweep
    _, other = good_and_bad(tmp_path / "order", claim, code, "[8, 16, 32]", "[32, 16, 80]",
                            "config.yaml")
    assert not any(changed in reason for reason in other.reasons)


def test_a_quantity_the_claim_bounds_holds_a_number_in_its_range(tmp_path: Path) -> None:
    # "ranging from 0 to 5" bounds the thinking steps; `EvalConfig` is the claim's section,
    # cut short from "evaluate"
    claim = toy_claim("toy-D1-001", "Test-time compute: 1,000 hard levels tested with the "
                                    "number of thinking steps ranging from 0 to 5 to evaluate "
                                    "planning")
    code = ("class EvalConfig:\n    THINKING_STEPS = {}\n    HARD_LEVELS = 1000\n"
            "    SEED = 5\n")
    assert drifted_and_faithful(tmp_path, claim, code, 5, 50) == (True, False)
    # another part of the system (`RobustnessConfig`) keeps its own settings
    other = code.replace("EvalConfig", "RobustnessConfig")
    assert drifted_and_faithful(tmp_path / "other", claim, other, 5, 50) == (True, True)


def test_each_branch_of_a_conditional_setting_is_a_value_it_holds(tmp_path: Path) -> None:
    # `0.0 if is_ngpt else 0.1` sets the claim's two values, one per model
    claim = toy_claim("toy-D1-001", "Optimizer: GPT uses AdamW with weight_decay=0.1 and "
                                    "warmup_steps=2000; nGPT uses weight_decay=0.0")
    code = ("class OptimConfig:\n    def __init__(self, is_ngpt):\n"
            "        self.weight_decay = 0.0 if is_ngpt else {}\n"
            "        self.warmup_steps = 0 if is_ngpt else 2000\n")
    assert drifted_and_faithful(tmp_path, claim, code, 0.1, 0.5) == (True, False)


def test_a_section_named_by_the_claim_holds_its_value(tmp_path: Path) -> None:
    # a YAML list in the claim's own section (`pfeif_adapter`) of a collection
    # (`peft_methods`) is the claim's list with one element changed
    adapter = toy_claim("toy-D1-001", "Pfeiffer Adapter: scale_factor range [0.01, 0.1, 1, 10], "
                                      "bottleneck range [4, 8, 16, 32]")
    sweep = ("peft_methods:\n  pfeif_adapter:\n    scale_factors: {}\n"
             "    bottlenecks: [4, 8, 16, 32]\n  lora:\n    bottlenecks: [1, 8, 16, 32]\n"
             "tolerance: 0.01\n")
    assert drifted_and_faithful(tmp_path, adapter, sweep, "[0.01, 0.1, 1.0, 10.0]",
                                "[0.1, 0.1, 1.0, 10.0]", "config.yaml") == (True, False)
    # another stage's section holding the stated value does not excuse the claim's own
    # section holding another value the paper states elsewhere
    vae = toy_claim("toy-D1-002", "P2VAE training: AdamW, base learning rate 1e-4, batch size 256")
    finetune = toy_claim("toy-D1-003", "Fine-tuning: learning rate 1e-3 for 5k steps")
    stages = ("p2vae:\n  optimizer:\n    lr: {}\n    batch_size: 256\n"
              "fmt:\n  optimizer:\n    lr: 1e-4\n    batch_size: 256\n")
    assert drifted_and_faithful(tmp_path, vae, stages, "1e-4", "1e-3", "config.yaml",
                                finetune) == (True, False)


@pytest.mark.parametrize(("setting", "fails"), [("10000.0", False), ("100000", True)])
def test_the_setting_of_the_claims_identifier_is_what_runs(
        tmp_path: Path, setting: str, fails: bool) -> None:
    # a function's default keeps the paper's value; the settings class the entry point reads
    # holds another: the setting is what runs
    (tmp_path / "layers.py").write_text("def rotary(x, rope_base=10000.0):\n    return x\n")
    (tmp_path / "config.py").write_text(f"class ModelConfig:\n    rope_base: float = {setting}\n"
                                        "    activated_experts: int = 1\n")
    # 1 is another value only for a fraction: `activated_experts = 1` is no 2.4B
    assert settings_conflicts(tmp_path, "RoPE base frequency: rope_base=10000; "
                                        "activated_experts=2.4B parameters") == \
        (["config.py:2"] if fails else [])


@pytest.mark.parametrize(("setting", "fails"), [("1000", False), ("10000", True)])
def test_the_setting_that_counts_the_claims_noun_is_what_runs(
        tmp_path: Path, setting: str, fails: bool) -> None:
    # "1,000 classes": `num_classes` of the settings class, whatever the model's default; a
    # section that switches classes off (`= 0`) holds no number of the claim
    (tmp_path / "model.py").write_text("def build(num_classes=1000):\n    return num_classes\n")
    (tmp_path / "config.py").write_text(f"class ModelConfig:\n    num_classes: int = {setting}\n"
                                        "\n\ndef coco_config():\n    cfg = ModelConfig()\n"
                                        "    cfg.num_classes = 0\n    return cfg\n")
    assert settings_conflicts(tmp_path, "ImageNet dataset: 1,281,167 training images from "
                                        "1,000 classes") == (["config.py:2"] if fails else [])


@pytest.mark.parametrize(("file", "code", "fails"), [
    ("config.py", "class EvalConfig:\n    test_pairs: int = 2500\n    valid_pairs: int = 250\n",
     True),
    ("config.py", "class EvalConfig:\n    test_pairs: int = 250\n    valid_pairs: int = 250\n",
     False),
    # a setting named with the quantity's words and the claim's holds the value: the claim's
    # variant is configured beside another one
    ("config.py", "class EvalConfig:\n    test_pairs: int = 2500\n    test_pairs_pde: int = 250\n",
     False),
    # a configuration file's key is a setting as much as a settings class's field
    ("config.yaml", "evaluation:\n  test_pairs: 2500\n  valid_pairs: 250\n", True),
    # the value counts pairs: a name without them is another quantity's (the model's size)
    ("config.yaml", "evaluation:\n  test_rmse: 2500\n  valid_pairs: 250\n", False),
])
def test_a_setting_named_with_the_quantitys_words_alone_is_what_runs(
        tmp_path: Path, file: str, code: str, fails: bool) -> None:
    (tmp_path / file).write_text(code)
    assert settings_conflicts(tmp_path, "PDE evaluation: 250 test pairs per dataset, RMSE") \
        == ([f"{file}:2"] if fails else [])


@pytest.mark.parametrize(("default", "call", "fails"), [
    ("40", "SokobanEnv(config)", True),
    ("4", "SokobanEnv(config)", False),
    # a call that passes the parameter, by keyword or by position, overrides the default
    ("40", "SokobanEnv(config, num_boxes=config.num_boxes)", False),
    ("40", "SokobanEnv(config, (8, 8), 4)", False),
    ("40", "SokobanEnv(*args)", False),
    # a configuration file's key of the parameter's name: a config system may pass it
    ("40", "instantiate(config.env)", False),
])
def test_a_default_every_call_keeps_is_what_runs(tmp_path: Path, default: str, call: str,
                                                 fails: bool) -> None:
    # the settings class holds the claim's 4 boxes, but the environment places as many boxes
    # as its own default says whenever no call passes another number
    (tmp_path / "config.py").write_text("class EnvConfig:\n    num_boxes: int = 4\n")
    (tmp_path / "env.py").write_text(
        f"class SokobanEnv:\n    def __init__(self, config, dim_maze=(8, 8), num_boxes={default}):"
        "\n        self.num_boxes = num_boxes\n")
    (tmp_path / "main.py").write_text(f"def main(config, args):\n    return {call}\n")
    if call.startswith("instantiate"):
        (tmp_path / "main.py").write_text("def main(config):\n    env = SokobanEnv(config)\n"
                                          "    return instantiate(config.env)\n")
        (tmp_path / "env.yaml").write_text("env:\n  _target_: env.SokobanEnv\n"
                                           "  num_boxes: 4\n")
    claim = toy_claim("toy-D1-001", "Sokoban: an 8x8 grid world with 4 boxes")
    found = alignment_values.default_conflicts(
        RepoIndex.build(tmp_path), claim, alignment_values.claim_context(claim.text))
    assert [f.where for f in found] == (["env.py:2"] if fails else [])


def settings_conflicts(repo: Path, text: str, *others: str) -> list[str]:
    """Where the settings rule finds conflicts for a claim of `text` in `repo`, in a paper
    whose other claims are `others`."""
    claim = toy_claim("toy-D1-001", text)
    paper = alignment_values.paper_values([text, *others])
    found = alignment_values.settings_conflicts(RepoIndex.build(repo), claim,
                                                alignment_values.claim_context(claim.text),
                                                paper)
    return [f.where for f in found]


STAGE_2 = "Stage 2 training hyperparameters: lr=1e-4, batch_size=768, steps=200k"


@pytest.mark.parametrize(("setting", "fails"), [("768", False), ("7680", True)])
def test_a_setting_scoped_as_the_global_one_is_the_claims_quantity(
        tmp_path: Path, setting: str, fails: bool) -> None:
    # `global_batch_size` is the batch size in force, not another quantity
    (tmp_path / "config.yaml").write_text(
        "stage1:\n  global_batch_size: 1536\n  learning_rate: 1e-4\n"
        f"stage2:\n  global_batch_size: {setting}\n  learning_rate: 1e-4\n")
    assert settings_conflicts(tmp_path, STAGE_2) == (["config.yaml:5"] if fails else [])


@pytest.mark.parametrize(("setting", "fails"), [("1536", False), ("2048", True)])
def test_one_global_setting_may_hold_another_stages_stated_value(
        tmp_path: Path, setting: str, fails: bool) -> None:
    # one setting for every stage, holding stage 1's batch size as the paper states it
    (tmp_path / "config.py").write_text(f"class TrainingConfig:\n    global_batch_size: int = "
                                        f"{setting}\n")
    assert settings_conflicts(tmp_path, STAGE_2.replace("768", "384"),
                              "Stage 1 training hyperparameters: batch_size=1536") == \
        (["config.py:2"] if fails else [])


def sibling_conflicts(repo: Path, text: str, *others: str) -> list[str]:
    """Where the sibling rule finds conflicts for a claim of `text` in a paper whose other
    claims are `others`."""
    claim = toy_claim("toy-D1-001", text)
    found = alignment_values.sibling_conflicts(
        RepoIndex.build(repo), claim, alignment_values.claim_context(claim.text),
        alignment_values.paper_values([text, *others]))
    return [f.where for f in found]


LEARNING_RATE = "Learning rate schedule: cosine decay, max = 4e-4, min = 4e-5"
SUDOKU = "Sudoku training: learning rate = 0.001, batch size = 128, epochs = 300"


@pytest.mark.parametrize(("section", "fails"), [
    ("training:\n  learning_rate: 0.004\n", True),  # a value the paper gives nowhere
    ("training:\n  learning_rate: 0.001\n", False),  # the Sudoku stage's, as stated
    ("sudoku:\n  learning_rate: 0.003\n", False),  # another stage's section
    ("stage1:\n  learning_rate: 0.003\n", False),  # a numbered one the claim does not name
])
def test_a_setting_whose_sibling_holds_the_claims_value_holds_no_value_of_its_own(
        tmp_path: Path, section: str, fails: bool) -> None:
    # the defaults hold the paper's learning rate; a section beside them holds another
    (tmp_path / "config.yaml").write_text(f"{section}pretraining:\n  learning_rate: 4.0e-4\n")
    assert sibling_conflicts(tmp_path, LEARNING_RATE, SUDOKU) == \
        (["config.yaml:2"] if fails else [])


@pytest.mark.parametrize(("function", "fails"), [("get_training_config", True),
                                                 ("get_sudoku_training_config", False)])
def test_a_sibling_set_for_another_configuration_of_the_paper_is_not_the_claims(
        tmp_path: Path, function: str, fails: bool) -> None:
    # a function named for the Sudoku runs builds their settings, whatever they hold
    (tmp_path / "config.py").write_text(
        "class TrainingConfig:\n    learning_rate: float = 4e-4\n\n\n"
        f"def {function}():\n    return TrainingConfig(learning_rate=3e-3)\n")
    assert sibling_conflicts(tmp_path, LEARNING_RATE, SUDOKU) == \
        (["config.py:6"] if fails else [])


@pytest.mark.parametrize(("file", "code", "fails"), [
    ("data.py", "def load(image):\n    return image.resize((5120, 512))\n", True),
    ("data.py", "def load(image):\n    return image.resize((512, 512))\n", False),
    # a pair of the size and a number on a line that speaks of nothing the claim names
    ("data.py", "def buffer():\n    return zeros((512, 3))\n", False),
    # the other entry is a number the claim mentions
    ("data.py", "def load(image):\n    return image.resize((512, 256))\n", False),
    ("config.yaml", "vae:\n  image_resolution: [512, 5120]\n", True),
    ("config.yaml", "vae:\n  image_resolution: [512, 512]\n", False),
])
def test_a_sequence_of_the_claims_repeated_size_holds_it_in_every_entry(
        tmp_path: Path, file: str, code: str, fails: bool) -> None:
    (tmp_path / file).write_text(code)
    claim = toy_claim("toy-D1-001", "Image resolution for training: 512×512, latents of 256 "
                                    "channels")
    found = alignment_sizes.size_findings(RepoIndex.build(tmp_path), claim)
    assert [f.where for f in found] == ([f"{file}:2"] if fails else [])


def test_a_sum_with_a_constant_keeps_the_papers_signs(tmp_path: Path) -> None:
    # the constant pairs with the constant, `alpha` is `alpha_k` with its index dropped
    claim = toy_claim("toy-D2-001", "Noise schedule signal fraction: kept signal = "
                                    "1 - alpha_k, for each noising step k")
    code = ("def signal_fraction(alpha):\n"
            '    """Noise schedule: the kept signal fraction at each noising step."""\n'
            "    kept_signal = 1.0 {} alpha\n    return kept_signal\n")
    assert drifted_and_faithful(tmp_path, claim, code, "-", "+", "model.py") == (True, False)


def test_a_config_key_that_is_only_a_label_is_read_with_its_section(tmp_path: Path) -> None:
    # `phase1` alone names no quantity; under `inference_steps` it is the steps of phase 1
    claim = toy_claim("toy-D1-001", "Inference configuration: Phase 1 uses 32 autoregressive "
                                    "steps, Phase 2 uses 4 autoregressive steps")
    config = ("inference:\n  schedule: cosine\n  autoregressive_inference_steps:\n"
              "    phase1: {}\n    phase2: 4\nlogging:\n  every: 32\n")
    assert drifted_and_faithful(tmp_path, claim, config, 32, 320, "config.yaml") == (True, False)


@pytest.mark.parametrize(("text", "code", "good", "bad"), [
    # indexed symbols are one tuple in code, element by element
    ("Optimizer: AdamW with beta1=0.9, beta2=0.95 and weight decay 0.01",
     "import torch\n\n\ndef make_optimizer(params):\n"
     "    return torch.optim.AdamW(params, lr=1e-4, betas={}, weight_decay=0.01)\n",
     "(0.9, 0.95)", "(0.9, 0.999)"),
    # Greek letters with subscript digits; a config list named after the stem
    ("Adam optimizer: β₁=0.95, β₂=0.999, ε=1e-8",
     "optimizer:\n  adam_betas: {}\n  eps: 1.0e-8\n", "[0.95, 0.999]", "[0.9, 0.999]"),
])
def test_indexed_symbols_are_compared_with_the_list_named_after_them(
        tmp_path: Path, text: str, code: str, good: str, bad: str) -> None:
    claim = toy_claim("toy-D1-001", text)
    file = "config.yaml" if code.startswith("optimizer:") else "train.py"
    assert drifted_and_faithful(tmp_path, claim, code, good, bad, file) == (True, False)


def test_another_stages_list_does_not_excuse_the_claims_stage(tmp_path: Path) -> None:
    # stage 3 keeps the betas the claim gives stage 2; stage 2's own list is drifted
    claim = toy_claim("toy-D1-001", "Stage 2 AdamW optimizer betas: β1=0.9, β2=0.95, ε=1e-6")
    stages = "".join(f"stage{n}:\n  optimizer:\n    betas: {betas}\n    eps: 1.0e-6\n"
                     for n, betas in ((1, "[0.9, 0.999]"), (2, "{}"), (3, "[0.9, 0.95]")))
    assert drifted_and_faithful(tmp_path, claim, stages, "[0.9, 0.95]", "[9, 0.95]",
                                "config.yaml") == (True, False)


def test_a_list_numbered_for_the_claims_stage_holds_its_indexed_symbols(tmp_path: Path) -> None:
    # `stage3_betas` is the Stage 3 claim's; `stage1_betas` another stage's, whatever it holds
    claim = toy_claim("toy-D1-001", "Stage 3 AdamW optimizer betas and epsilon: β1=0.9, β2=0.95, "
                                    "ε=1e-6")
    code = ("class TrainingConfig:\n    stage1_betas = (0.9, 0.999)\n"
            "    stage2_betas = (0.9, 0.95)\n    stage3_betas = {}\n    eps = 1e-6\n")
    assert drifted_and_faithful(tmp_path, claim, code, "(0.9, 0.95)", "(9, 0.95)") == \
        (True, False)


def test_a_second_optimiser_keeping_its_own_betas_is_no_conflict(tmp_path: Path) -> None:
    # the critic's betas differ, but the claim's are set for the generator
    claim = toy_claim("toy-D1-001", "Optimizer: Adam with beta1=0.5, beta2=0.999 for training")
    code = ("import torch\n\n\ndef make_optimizers(gen, critic):\n"
            "    return (torch.optim.Adam(gen, lr=2e-4, betas=(0.5, 0.999)),\n"
            "            torch.optim.Adam(critic, lr=2e-4, betas=(0.0, 0.9)))\n")
    checked = toy_check(tmp_path / "repo", {"train.py": code}, claim)[claim.id]
    assert "value_conflict" not in checked.findings, checked


@pytest.mark.parametrize(("text", "code", "good", "bad"), [
    # the claim's symbol is the initials of the name's words
    ("Learning setup: lr=2e-5 with the AdamW optimizer",
     "class TrainConfig:\n    learning_rate = {}\n    ema_decay = 2e-5\n", "2e-5", "2e-4"),
    # a symbol with an index is one part of the name, as the claim writes it
    ("MDM training uses Adam optimizer with beta1=0.9, beta2=0.95 across all experiments",
     "class OptimConfig:\n    adam_beta1 = {}\n    adam_beta2 = 0.95\n    momentum = 0.9\n",
     "0.9", "9"),
    # the claim's identifier with a word of the claim cut short
    ("Video prediction training config: batch_size=8, steps=11k (video prediction)",
     "class VideoConfig:\n    batch_size_video_pred = {}\n    num_frames = 8\n", 8, 80),
    # the claim's one-letter symbol is a part of the name, the rest the quantity's words
    ("Number of discretization timesteps K=40 for fine-tuning",
     "K_TIMESTEPS = {}\nLOG_EVERY = 40\n", 40, 400),
    # the claim's identifier shortens the name's words (`init` of `initial`)
    ("U-Net architecture hyperparameters: init_dim=128, down_up_layers=4",
     "class UNetConfig:\n    initial_dim = {}\n    down_up_layers = 4\n    time_dim = 128\n",
     128, 1280),
    # a Greek letter is the paper's notation: the quantity's words name it
    ("Agent training: IMPALA on 900,000 levels with discount factor gamma=0.97",
     "class AgentConfig:\n    discount_rate = {}\n    clip_range = 0.97\n", 0.97, 9.7),
    # a name's part shortens a word of the quantity (`res` of "resolution")
    ("Low-data datasets: spatial resolution 256, temporal resolution 59",
     "class DataConfig:\n    spatial_res = {}\n    temporal_res = 59\n    width = 256\n",
     256, 2560),
    # a tuple of one number is that number
    ("FNO architecture uses 4 Fourier blocks with 12 Fourier modes per spatial dimension",
     "class FNOConfig:\n    n_blocks = 4\n    n_modes = ({},)\n    width = 12\n", 12, 120),
    # "every 10,000 steps" is a period: a name says so (`interval`) without counting steps
    ("Inner loop (diffusion retraining): once every 10,000 environment steps",
     "class PGRConfig:\n    inner_loop_interval = {}\n    capacity = 10000\n", 10000, 100000),
    # a Greek letter with an index is the identifier it spells (`β1` is `beta1`)
    ("Stage 1 AdamW optimizer betas and epsilon: β1=0.9, β2=0.999, ε=1e-6",
     "class StageConfig:\n    optimizer_beta1 = {}\n    optimizer_beta2 = 0.999\n"
     "    ema_decay = 0.9\n", 0.9, 9),
    # a bound the claim does not speak of (`max_`) on a name that says the whole quantity
    ("Training sequence length: L=2048 tokens for standard language modeling setup",
     "class ModelConfig:\n    max_seq_length = {}\n    max_steps = 10\n    vocab_chunk = 2048\n",
     2048, 20480),
    # a list named by a symbol alone takes the claim's head (guidance weights)
    ("Classifier-free guidance weights evaluated: w ∈ [0.0, 1.0, 4.0]",
     "class EvalConfig:\n    guidance_weights = {}\n    num_steps = 4\n",
     "[0.0, 1.0, 4.0]", "[0.0, 1.0, 40.0]"),
    # the claim's letter beside its words (`D=3` of "3 recurrent layers") may name the field
    ("Network: the agent uses 3 recurrent layers (D=3) and 3 ticks (N=3) per step",
     "class CoreConfig:\n    D_RECURRENT_LAYERS = {}\n    N_TICKS = 3\n", 3, 30),
    # a label the claim writes in parentheses says which variant a name sets
    ("Decoder width per model size: dec_hidden=640 (S) / 640 (M) / 896 (L)",
     "class SizeConfig:\n    dec_hidden_size_S = {}\n    dec_hidden_size_M = 640\n"
     "    dec_hidden_size_L = 896\n", 640, 6400),
    # a diffusion model samples at inference: its inference steps are its sampling steps
    ("Sampler: reverse sampling steps = 25 for every benchmark",
     "class SamplerConfig:\n    inference_steps = {}\n    guidance_scale = 7.5\n", 25, 250),
    # a name's word that says how a quantity is measured is no other quantity (`pad_len`)
    ("Sequence padding: pad tokens = 212 for every instance",
     "class DataConfig:\n    pad_len = {}\n    seq_len = 512\n", 212, 2120),
    # a loop's iterations are its steps
    ("DDIM sampling config: DDIM_sampling_steps=50 for every benchmark",
     "class DiffusionConfig:\n    ddim_sampling_iterations = {}\n    eta = 1.0\n", 50, 500),
    # indexed symbols stay apart: beta2's value is no alternative for beta1
    ("KL coefficients: beta1=0.01 for every stage, beta2=0.1 for the first attempt",
     "class RLConfig:\n    beta1 = {}\n    beta2 = 0.1\n", "0.01", "0.1"),
    # an identifier abbreviated by letters of each word, not only its initials
    ("Dense variants: 400B tokens (bsz=1024, max_lr=0.004)",
     "class TrainingConfig:\n    batch_size = {}\n    seq_len = 4096\n", 1024, 10240),
    # 10% is a share of a count (steps), not of the weight decay: 1e-3 is no stated value
    ("FMT training: base learning rate 1e-4, 10% linear warmup, weight decay 0.01",
     "class FMTConfig:\n    learning_rate = {}\n    weight_decay = 0.01\n    eps = 1e-4\n",
     "1e-4", "1e-3"),
])
def test_names_abbreviate_the_claims_words_and_symbols(tmp_path: Path, text: str, code: str,
                                                       good: object, bad: object) -> None:
    claim = toy_claim("toy-D1-001", text)
    assert value_conflicts(tmp_path, claim, "config.py", code, good, bad) == [False, True]


def test_a_bound_on_one_word_of_the_quantity_is_not_the_quantity(tmp_path: Path) -> None:
    # `max_steps` bounds some steps (training's): not the claim's sampling steps
    claim = toy_claim("toy-D1-001", "Sampling: reverse sampling steps = 50 for every dataset")
    code = "class SamplerConfig:\n    max_steps = {}\n    sampling_steps = 50\n"
    assert value_conflicts(tmp_path, claim, "config.py", code, 100000, 1000000) == [False, False]


def test_training_steps_are_not_the_diffusion_timesteps(tmp_path: Path) -> None:
    # "timesteps" ends in "steps", but a training run's steps are not the noise schedule's
    claim = toy_claim("toy-D1-001", "Noise schedule: T=1000 timesteps, linear betas")
    code = "class TrainConfig:\n    num_steps = {}\n    timesteps = 1000\n"
    assert value_conflicts(tmp_path, claim, "config.py", code, 21000, 210000) == [False, False]


def test_a_fractions_setting_of_one_in_a_config_file_is_another_value(tmp_path: Path) -> None:
    # 1 is another weight decay than 0.1, in YAML as in Python
    claim = toy_claim("toy-D1-001", "Optimizer: GPT uses AdamW with weight_decay=0.1; nGPT uses "
                                    "AdamW with weight_decay=0.0")
    sections = ("training:\n  gpt:\n    weight_decay: {}\n  ngpt:\n    weight_decay: 0.0\n"
                "model:\n  dropout: 0.1\n")
    assert drifted_and_faithful(tmp_path, claim, sections, "0.1", "1", "config.yaml") == \
        (True, False)


def test_a_price_is_a_value_the_claim_states(tmp_path: Path) -> None:
    # "$5.00" is stated as surely as an assigned value: the name holding it is no conflict
    # with the "1M" tokens its price is per
    claim = toy_claim("toy-D1-001", "Detector cost: proprietary models $5.00 per 1M output "
                                    "tokens; open-source models $1.80 per 1M output tokens")
    code = ("def detector_cost(n_tokens, proprietary_cost_per_1m_tokens={}):\n"
            "    return n_tokens / 1e6 * proprietary_cost_per_1m_tokens\n")
    faithful, _ = good_and_bad(tmp_path, claim, code, 5.0, 50.0, "cost.py")
    assert "value_conflict" not in faithful.findings, faithful.reasons


def test_a_keyword_argument_named_as_the_claim_writes_it_sets_the_value(tmp_path: Path) -> None:
    # the called function's name says nothing of the claim; the keyword is the claim's own
    claim = toy_claim("toy-D1-001", "L&O-NAE-SAT: masked latent tokens ell = 11, repeat "
                                    "trials = 1000")
    code = ("def evaluate_proxy(model, ell, n_repeats):\n    return model, ell, n_repeats\n\n\n"
            "def run_all(model):\n    return evaluate_proxy(model, ell={}, n_repeats=1000)\n")
    assert value_conflicts(tmp_path, claim, "experiment.py", code, 11, 110) == [False, True]


@pytest.mark.parametrize(("text", "file", "code", "good", "bad"), [
    # a dotted key read with a default sets its last part
    ("Latent space: resolution=256, VAE downsample=8x", "model.py",
     "class Transformer:\n    def __init__(self, config):\n"
     "        self.latent = config.get('vae.resolution', {}) // "
     "config.get('vae.downsample_factor', 8)\n", 256, 2560),
    # `MBPPOConfig` is not how the claim writes "MBPO-PPO", but it holds the system's settings
    ("MBPO-PPO policy network: an MLP with 3 hidden layers of 128 units each and ELU "
     "activation", "config.py",
     "class MBPPOConfig:\n    def __init__(self):\n"
     "        self.policy_mlp_hidden_shape = [{}, 128, 128]\n"
     "        self.policy_mlp_activation = 'ELU'\n", 128, 1280),
    # the "1K" of "VTAB-1K" does not count searches: "search" still names the learning rates
    ("VTAB-1K hyperparameter search: learning_rate range [0.001, 0.01], weight_decay range "
     "[0.0001, 0.001]", "config.py",
     "class SearchConfig:\n    def __init__(self):\n"
     "        self.learning_rate_search = [{}, 0.01]\n"
     "        self.weight_decay_search = [0.0001, 0.001]\n", 0.001, 0.01),
    # `channels` holds the 32 the claim gives G_d: the value is set, whatever the name
    ("DRC agent: 3 ConvLSTM layers (D=3) and 32 channels per layer (G_d=32)", "agent.py",
     "class DRCAgent:\n    def __init__(self, config):\n"
     "        self.layers = config.get('agent.layers', 3)\n"
     "        self.convlstm_channels = config.get('agent.convlstm_channels', {})\n", 32, 320),
])
def test_settings_are_read_as_the_code_holds_them(tmp_path: Path, text: str, file: str,
                                                  code: str, good: object, bad: object) -> None:
    claim = toy_claim("toy-D1-001", text)
    assert value_conflicts(tmp_path, claim, file, code, good, bad) == [False, True]


def value_conflicts(tmp_path: Path, claim: Claim, file: str, code: str, good: object,
                    bad: object) -> list[bool]:
    """Whether the value rule finds a conflict in `code` formatted with the paper's value,
    and with a drifted one (the verdict itself also weighs how much of a toy claim the toy
    repository covers)."""
    return ["value_conflict" in checked.findings
            for checked in good_and_bad(tmp_path, claim, code, good, bad, file)]


def test_a_name_in_the_claims_words_is_its_identifiers_quantity(tmp_path: Path) -> None:
    # the claim names the quantity in words and by a symbol; the code spells the words
    claim = toy_claim("toy-D1-001", "Transformer hidden size: d_model=768 (B) / 1024 (L)")
    code = ("import argparse\n\nparser = argparse.ArgumentParser()\n"
            "parser.add_argument('--transformer_hidden_size_B', type=int, default={})\n"
            "parser.add_argument('--transformer_hidden_size_L', type=int, default=1024)\n")
    assert value_conflicts(tmp_path, claim, "config.py", code, 768, 7680) == [False, True]
    # where the claim names each quantity by its own identifier, another's words are not
    # this one's (`attention_dim` is no `attn_heads`)
    several = toy_claim("toy-D1-002", "Attention block: attn_hidden_dim=32, attn_heads=4")
    other = ("class Config:\n    attention_dim = 32\n    attn_heads = {}\n")
    assert value_conflicts(tmp_path / "several", several, "config.py", other, 4,
                           40) == [False, True]


@pytest.mark.parametrize(("method", "claims"), [("__post_init__", True), ("__init__", True),
                                                ("build_sudoku", False)])
def test_a_setting_made_in_a_constructor_is_in_its_classs_section(
        tmp_path: Path, method: str, claims: bool) -> None:
    # a constructor says when the class sets its fields, not for what: the weight decay
    # `__post_init__` sets is the configuration's, one that `build_sudoku` sets is not
    (tmp_path / "config.py").write_text(
        "class Config:\n    weight_decay: float = 0.0\n\n"
        f"    def {method}(self):\n        self.weight_decay = 1\n")
    text = "Optimizer: AdamW with weight_decay=0.1 for the baseline, 0.0 for ours"
    setting = next(a for a in RepoIndex.build(tmp_path).assignments if a.line == 5)
    assert alignment_values.in_namespace(
        setting, alignment_values.claim_context(text).terms) is claims


TOKENS_CLAIM = ("Latent token counts: the low-resolution phase (128x128 input, 8x8 latent grid) "
                "uses 64 tokens.")


def tokens_repo(count: str) -> dict[str, str]:
    """A toy repository whose settings count the low-resolution phase's tokens as `count`;
    the model reads 64 elsewhere for another reason (a patch width)."""
    return {
        "config.py": ("class PhaseConfig:\n"
                      "    image_size: int = 128\n"
                      "    latent_grid: int = 8\n"
                      f"    num_tokens_small: int = {count}  # low-resolution latent tokens\n"),
        "model.py": ("from config import PhaseConfig\n\n\n"
                     "PATCH_WIDTH = 64\n\n\n"
                     "def latent_tokens(cfg: PhaseConfig) -> int:\n"
                     "    return cfg.num_tokens_small\n"),
    }


@pytest.mark.parametrize(("count", "fails"), [("64", False), ("640", True), ("32", True)])
def test_a_setting_counting_the_claims_noun_where_it_is_implemented_holds_its_count(
        tmp_path: Path, count: str, fails: bool) -> None:
    # The setting counts the tokens the claim counts, in the window where the check finds the
    # claim, which writes 64 nowhere: the 64 of the patch width elsewhere is not the count.
    claim = toy_claim("toy-D1-001", TOKENS_CLAIM)
    result = toy_check(tmp_path / "repo", tokens_repo(count), claim)["toy-D1-001"]
    assert result.passed is not fails, result.reasons


def test_a_count_the_paper_states_for_another_phase_is_no_conflict(tmp_path: Path) -> None:
    # 256 is the paper's token count of the other phase: a second configuration it describes.
    claim = toy_claim("toy-D1-001", TOKENS_CLAIM)
    other = toy_claim("toy-D1-002", "The high-resolution phase (16x16 latent grid) uses 256 "
                                    "tokens.")
    result = toy_check(tmp_path / "repo", tokens_repo("256"), claim, other)["toy-D1-001"]
    assert result.passed, result.reasons



def test_a_sweep_that_runs_one_setting_twice_has_lost_one_of_the_claims(tmp_path: Path) -> None:
    # the code sweeps four of the claim's five scale factors; with 0.01 overwritten by 0.1 it
    # runs 0.1 twice, which no sweep of distinct settings does
    sweep = toy_claim("toy-D1-001", "FacT: scale_factor range [0.01, 0.1, 1, 10, 100], "
                                    "bottleneck range [8, 16, 32]")
    code = ("class FactSweepConfig:\n    scale_factors = {}\n    bottlenecks = [8, 16, 32]\n"
            "    tolerance = 0.01\n")
    assert drifted_and_faithful(tmp_path / "sweep", sweep, code, "[0.01, 0.1, 1.0, 10.0]",
                                "[0.1, 0.1, 1.0, 10.0]") == (True, False)
    # a list the claim itself writes with a repeat holds it in code too
    layers = toy_claim("toy-D1-002", "GRU encoder: hidden sizes [256, 256, 128] and ReLU")
    code = ("import torch.nn as nn\n\n\nclass EncoderConfig:\n    hidden_sizes = {}\n"
            "    log_every = 256\n\n\ndef gru_encoder(sizes=EncoderConfig.hidden_sizes):\n"
            "    # GRU encoder over the hidden sizes, then ReLU\n"
            "    grus = [nn.GRU(a, b) for a, b in zip(sizes, sizes[1:])]\n"
            "    return nn.Sequential(*grus, nn.ReLU())\n")
    assert drifted_and_faithful(tmp_path / "layers", layers, code, "[256, 256, 128]",
                                "[256, 128, 128]") == (True, False)

EIGEN_CLAIM = ("Eigen learning rates of the block: alpha_attn_init=0.05, alpha_mlp_init=0.05, "
               "each a learnable vector of size d_model.")


@pytest.mark.parametrize(("attention", "fails"), [
    ("nn.Parameter(torch.full((d_model,), 0.05))", False),
    ("nn.Parameter(0.05 * torch.ones(d_model))", False),
    ("nn.Parameter(torch.full((d_model,), 0.5))", True),
    ("nn.Parameter(torch.ones(d_model) * 0.5)", True),
])
def test_a_learnable_tensor_is_initialised_to_the_number_it_is_filled_with(
        tmp_path: Path, attention: str, fails: bool) -> None:
    # `alpha_attn` filled with 0.5 is an alpha_attn_init of 0.5, whatever the 0.05 of the
    # MLP's vector beside it
    files = {"block.py": ("import torch\nimport torch.nn as nn\n\n\n"
                          "class Block(nn.Module):\n"
                          "    def __init__(self, d_model):\n"
                          "        super().__init__()\n"
                          "        # eigen learning rates of the attention and MLP updates\n"
                          f"        self.alpha_attn = {attention}\n"
                          "        self.alpha_mlp = nn.Parameter(torch.full((d_model,), 0.05))\n"
                          "\n"
                          "    def forward(self, h, attn, mlp):\n"
                          "        h = h + self.alpha_attn * (attn(h) - h)\n"
                          "        return h + self.alpha_mlp * (mlp(h) - h)\n")}
    claim = toy_claim("toy-D1-001", EIGEN_CLAIM)
    result = toy_check(tmp_path / "repo", files, claim)["toy-D1-001"]
    assert result.passed is not fails, result.reasons
    if fails:
        assert any("alpha_attn" in reason and "0.05" in reason for reason in result.reasons)



def test_a_list_a_constructor_takes_alone_is_the_names_setting(tmp_path: Path) -> None:
    # `list_field([0.95, 0.999])` and `np.array([...])` hold their lists as a literal would
    optimizer = toy_claim("toy-D1-001", "Optimizer: AdamW with beta1=0.95, beta2=0.999 and "
                                        "gradient clipping 1.0")
    code = ("from dataclasses import dataclass, field\n\n\n"
            "def list_field(values):\n    return field(default_factory=lambda: list(values))\n"
            "\n\n@dataclass\nclass OptimizerConfig:\n    betas: list = list_field({})\n"
            "    gradient_clipping: float = 1.0\n    ema_decay: float = 0.95\n")
    assert drifted_and_faithful(tmp_path / "betas", optimizer, code, "[0.95, 0.999]",
                                "[9.5, 0.999]") == (True, False)
    sweep = toy_claim("toy-D1-002", "Guidance sweep: guidance weights [0.5, 2.0, 4.0] at "
                                    "sampling")
    code = ("import numpy as np\n\n\nclass SamplingConfig:\n"
            "    guidance_weights = np.array({}, dtype=np.float32)\n    eta = 2.0\n\n\n"
            "def guided_sampling(cond, uncond, config=SamplingConfig()):\n"
            "    # the guidance sweep: one sampling per guidance weight\n"
            "    return [uncond + w * (cond - uncond) for w in config.guidance_weights]\n")
    assert drifted_and_faithful(tmp_path / "sweep", sweep, code, "[0.5, 2.0, 4.0]",
                                "[0.5, 2.0, 40.0]") == (True, False)

def test_only_a_tensor_of_one_number_has_that_number_as_its_initial_value() -> None:
    def filled(source: str) -> float | None:
        return alignment_values._filled_with(ast.parse(source, mode="eval").body)

    assert filled("torch.full((4, 4), -1e-4)") == -1e-4
    assert filled("nn.Parameter(torch.tensor([0.07]))") == 0.07
    assert filled("torch.ones(8) * 2") == 2.0
    # a range, a random draw or a product of two tensors holds no one initial number
    assert filled("torch.arange(0, 8, 2)") is None
    assert filled("torch.randn(8) * 0.02") is None
    assert filled("torch.ones(8) * scale") is None


def test_a_constructor_holds_a_list_only_when_it_takes_nothing_else() -> None:
    def taken(source: str) -> list[float] | None:
        return alignment_values._taken_alone(ast.parse(source, mode="eval").body)

    assert taken("np.array([0.5, 0.3, 0.2], dtype=np.float32)") == [0.5, 0.3, 0.2]
    assert taken("torch.tensor((1, -2))") == [1.0, -2.0]
    assert taken("np.array([0.5, w])") is None
    assert taken("np.clip([0.5, 0.3], 0, 1)") is None
    assert taken("torch.tensor(values)") is None


def test_a_claim_the_code_shows_too_little_of_says_so_before_its_hints(tmp_path: Path) -> None:
    # the ablation is nowhere in the code; what the rules note about its steps is a hint for
    # the repair, not the reason the claim fails
    claim = toy_claim("toy-D4-001", "Ablation phases: 1. remove the query-key normalisation; "
                                    "2. retrain for 100k iterations; 3. measure the 12% "
                                    "compute saving per step")
    files = {"train.py": "def train(model, data):\n    for batch in data:\n"
                         "        model.step(batch)\n"}
    result = toy_check(tmp_path / "repo", files, claim)[claim.id]
    assert not result.passed and not result.findings
    assert result.reasons[0] == (
        "too little of the claim is found in the code (expected official score "
        f"{result.expected_score:.4f}, below {THRESHOLDS['D4']:g})")
    assert len(result.reasons) > 1  # the hints follow


#: A paper's text as converted papers write it: mathematics spaced out character by character.
SPACED_PAPER = ("# Training\nStage 2 runs on 128 NVIDIA A100 GPUs in bfloat16. Ablations use "
                "$6 4$ GPUs and a learning rate of $1 0 ^ { - 4 }$ for twelve epochs.\n")


@pytest.mark.parametrize(("stage1", "passes"), [
    ("gpu_count: 128", True),
    # a number the paper never writes, in a setting named in the claim's own terms where the
    # claim is implemented: another stage's, but of no stage the paper describes
    ("gpu_count: 1280", False),
    # numbers the paper writes, in spaced-out mathematics or as a word
    ("gpu_count: 64", True),
    ("gpu_count: 12", True),
    # a word the claim lacks names another quantity, which the paper may leave to the code
    ("gpu_memory: 80", True),
])
def test_a_setting_named_in_the_claims_terms_holds_a_number_the_paper_writes(
        tmp_path: Path, stage1: str, passes: bool) -> None:
    claim = toy_claim("toy-D1-001", "Stage 2 hardware and precision: 128 NVIDIA A100 GPUs, "
                                    "bfloat16 precision")
    paper = PAPER.model_copy(update={"paper_id": "toy", "claims": (claim,),
                                     "markdown": SPACED_PAPER})
    code = f"stage1:\n  {stage1}\nstage2:\n  gpu_count: 128\n  gpu_type: A100\n"
    checked = results(write_repo(tmp_path / "repo", {"config.yaml": code}), paper)
    assert checked[claim.id].passed is passes, checked[claim.id].reasons


def test_the_numbers_a_paper_writes_are_read_through_its_spaced_mathematics() -> None:
    written = alignment_values.written_numbers(SPACED_PAPER)
    assert {"128", "64", "0.0001", "12"} <= written and "6" not in written


RSSM_PAPER = ("# Baselines\nThe RSSM baseline is a GRU of hidden size 256 in 2 layers, with a "
              "latent of 64 dimensions in 32 categorical classes; the small ablation uses "
              "16 classes.\n")


RSSM_CLAIM = toy_claim("toy-D1-001", "RSSM baseline architecture: GRU with hidden size 256, "
                                     "2 layers, latent dimension 64, 32 categorical latent "
                                     "classes")


def rssm_module(extra: str = "") -> str:
    """The RSSM baseline's settings (lines 5-8), with `extra` lines after them."""
    return ("from dataclasses import dataclass\n\n\n@dataclass\nclass RSSMBaseline:\n"
            "    gru_hidden_size: int = 256\n    gru_layers: int = 2\n    latent_dim: int = 64\n"
            + (f"    {extra}\n" if extra else ""))


@pytest.mark.parametrize(("default", "passes"), [
    ("num_categories: int = 32", True),
    # the copy where the claim is implemented holds a number the paper never writes, while
    # the configuration's copy of the same setting holds the claim's: they disagree
    ("num_categories: int = 320", False),
    # a number the paper writes (its ablation's): another configuration's value
    ("num_categories: int = 16", True),
    # a section numbered for a stage the claim does not name: that stage's own setting
    ("num_categories: int = 32\n\n\n@dataclass\nclass Stage2RSSMBaseline:\n"
     "    gru_hidden_size: int = 256\n    num_categories: int = 320", True),
])
def test_a_setting_whose_copy_holds_the_claims_value_holds_it_where_the_claim_is_implemented(
        tmp_path: Path, default: str, passes: bool) -> None:
    claim = RSSM_CLAIM
    paper = PAPER.model_copy(update={"paper_id": "toy", "claims": (claim,),
                                     "markdown": RSSM_PAPER})
    files = {"rssm.py": rssm_module(default),
             "config.yaml": "rssm:\n  num_categories: 32\n"}
    checked = results(write_repo(tmp_path / "repo", files), paper)
    assert checked[claim.id].passed is passes, checked[claim.id].reasons


@pytest.mark.parametrize(("train", "config", "fails"), [
    ("num_categories = 32\n", "rssm:\n  num_categories: 32\n", False),
    # beyond the claim's two best windows, a copy in another file that holds the claim's
    # value outvotes a setting holding a number the paper never writes
    ("num_categories = 320\n", "rssm:\n  num_categories: 32\n", True),
    # one file setting a name under two sections configures two cases
    ("seed = 0\n", "rssm:\n  num_categories: 32\nwide:\n  num_categories: 320\n", False),
])
def test_a_copy_in_another_file_outvotes_a_setting_anywhere_in_the_claims_evidence(
        tmp_path: Path, train: str, config: str, fails: bool) -> None:
    claim = RSSM_CLAIM
    files = {"rssm.py": rssm_module(),
             "config.yaml": config, "train.py": train}
    index = RepoIndex.build(write_repo(tmp_path / "repo", files))
    # the two best windows hold the model and the configuration's first section; later
    # windows the training script's setting and the configuration's second section
    check = ClaimCheck(claim_id=claim.id, dimension=claim.dimension, evidence=[
        Evidence(file="rssm.py", start_line=5, end_line=8),
        Evidence(file="config.yaml", start_line=1, end_line=2),
        Evidence(file="train.py", start_line=1, end_line=1),
        Evidence(file="config.yaml", start_line=3, end_line=4)])
    paper = alignment_values.paper_values([claim.text], RSSM_PAPER)
    found, _ = alignment_values.value_findings(index, claim, check, paper)
    assert [f.where for f in found] == (["train.py:1"] if fails else []), found
