"""The structural formula rule: code one operator away from the paper's formula, whatever the
code calls the paper's quantities."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from sabench.scaffolds.alignment_rules import carriers
from sabench.scaffolds.alignment_structure import (
    claim_formulas,
    glossary,
    match,
    same_name,
    senseless_findings,
    structure_findings,
    tree,
)
from sabench.verifiers.checks import ClaimCheck
from sabench.verifiers.index import RepoIndex
from sabench.verifiers.spec import Claim
from sabench.verifiers.types import Evidence

from .test_alignment_check import toy_check, toy_claim, write_repo

BRADLEY_TERRY = ("Win probability: Pr(i beats j) = 1 / (1 + exp(-(Q_i - Q_j) / s)) where s "
                 "sets how sensitive it is to the rating difference.")


def matched(paper: str, code: str, constants: bool = False) -> dict[int, int]:
    return match(tree(ast.parse(paper, mode="eval").body), tree(ast.parse(code, mode="eval").body),
                 constants=constants)


def test_a_flipped_operator_is_one_operator_away_and_the_order_of_terms_is_free() -> None:
    paper = "1 / (1 + exp(-(Q_i - Q_j) / s))"
    assert 0 in matched(paper, "1.0 / (np.exp(-(q_i - q_j) / self.scale) + 1.0)")
    drifted = matched(paper, "1.0 / (1.0 - np.exp(-(q_i - q_j) / self.scale))")
    assert set(drifted) == {1}
    # two operators apart is not one drift of this formula
    assert matched(paper, "1.0 * (1.0 - np.exp(-(q_i - q_j) / self.scale))") == {}
    # a difference negated as a whole is the same difference (it is squared, or subtracted)
    assert 0 in matched("norm(c_z - omega_z)", "torch.norm(omega_z - cmd_z, dim=-1)")


@pytest.mark.parametrize(("paper", "code", "same"), [
    ("c_z", "cmd_z", True),              # each part abbreviated in its place
    ("h_a_norm", "h_a_normalized", True),
    ("sigma_t", "sigma_t_batch", True),  # the paper's parts begin the code's
    ("pred", "x_pred", True),            # the paper's name is the code's last part
    ("alpha_bar_t", "bar_alpha", True),  # the code holds every t at once
    ("q", "q_pos", False),               # one letter begins too many names
    ("h_a_norm", "h_att", False),
    ("alpha", "beta", False),
])
def test_the_code_spells_the_papers_name(paper: str, code: str, same: bool) -> None:
    assert same_name(paper, code) is same


def test_formulas_are_read_through_brackets_norms_sums_and_labels() -> None:
    def read(text: str) -> set[str]:
        return {ast.unparse(ast.parse(piece, mode="eval")) for piece, _ in claim_formulas(text)}

    # a comma inside brackets does not end the formula
    assert "e_k * Down(x_1, 2 ** k) + (1 - e_k) * n" in read(
        "Endpoint: x_e = e_k * Down(x_1, 2^k) + (1-e_k) * n. Starting point differs.")
    # a norm with its order and power; a sum over an index is its summand; `v^base` is a name
    assert "norm(2 / sigma(t) * (v_finetune(X_t) - v_base(X_t)) + sigma(t) * a_t) ** 2" in read(
        "Loss: L = Σ_{t∈{0,...,1−h}} ||(2/σ(t))·(v^finetune(X_t) − v^base(X_t)) + σ(t)·a_t||², "
        "where X_t is stopped")
    # a subscript with arithmetic in it is part of a name
    assert "sqrt(alpha_t) * X_t_1 + sqrt(1 - alpha_t) * W_t" in read(
        "Forward step: X_t = sqrt(alpha_t) * X_{t-1} + sqrt(1 - alpha_t) * W_t, where W_t is "
        "noise")
    # arithmetic between constants is no formula to compare
    assert read("Exponent: p = 3/2 for every layer") == set()
    # symbols side by side are multiplied; the words after them are prose
    assert read("Flat orientation reward: r_g = w_g g_{xy}^2, where g_{xy} is gravity") == {
        "w_g * g_xy ** 2"}
    assert "h + a * b" in read("Update: h = h + a * b after every block")
    # a primed symbol is a name
    assert "h(s_prime) - g(s)" in read("Error: e = h(s') - g(s), per transition")
    # a divergence is one quantity: its bars are neither norms nor the formula's end
    assert "recon + beta * KL" in read("VAE loss: L = recon + beta * KL( q_omega(y|x) || p(y) )")
    assert "r_phi - beta * KL" in read("Reward: R = r_phi - beta * D_{KL}(pi_theta(.|x) || "
                                       "pi_sft(.|x)), per token")


def test_a_formula_the_code_computes_with_one_other_operator_fails(tmp_path: Path) -> None:
    claim = toy_claim("toy-D2-001", BRADLEY_TERRY)
    for sign, fails in (("+", False), ("-", True)):
        code = ("import numpy as np\n\n\nclass BradleyTerry:\n"
                "    def __init__(self, scale):\n        self.scale = scale\n\n"
                "    def win_probability(self, q_i, q_j):\n"
                f"        return 1.0 / (1.0 {sign} np.exp(-(q_i - q_j) / self.scale))\n")
        result = toy_check(tmp_path / f"repo{sign}", {"ratings.py": code}, claim)[claim.id]
        assert ("operations" in result.findings) is fails, result
    assert any("constant apart" in r and "ratings.py:9" in r for r in result.reasons)


def test_a_formula_the_code_writes_in_two_statements_is_read_whole(tmp_path: Path) -> None:
    # the scaled rating difference is computed first, under a name of its own: the statement
    # with the drifted `-` anchors alone only its constants and `exp`
    claim = toy_claim("toy-D2-001", BRADLEY_TERRY)
    code = ("import numpy as np\n\n\nclass BradleyTerry:\n"
            "    def __init__(self, scale):\n        self.scale = scale\n\n"
            "    def win_probability(self, q_i, q_j):\n"
            "        gap = (q_i - q_j) / self.scale\n"
            "        return 1.0 / (1.0 + np.exp(-gap))\n")
    drifted = code.replace("(1.0 + np", "(1.0 - np")
    assert flagged(tmp_path / "repo", claim, "ratings.py", code) is False
    assert flagged(tmp_path / "drifted", claim, "ratings.py", drifted) is True
    # a name assigned twice holds no one expression, so nothing is read into it
    twice = drifted.replace("        gap = (", "        gap = q_i\n        gap = (")
    assert flagged(tmp_path / "twice", claim, "ratings.py", twice) is False


def test_an_attribute_the_constructor_sets_once_is_read_as_what_it_holds(tmp_path: Path
                                                                       ) -> None:
    # multiplying by the inverse scale divides by the scale, as the paper does; the drift
    # is in the constructor, away from the formula's line
    claim = toy_claim("toy-D2-001", BRADLEY_TERRY)
    code = ("import numpy as np\n\n\nclass BradleyTerry:\n"
            "    def __init__(self, scale):\n        self.inv_scale = 1.0 / scale\n\n"
            "    def win_probability(self, q_i, q_j):\n"
            "        return 1.0 / (1.0 + np.exp(-(q_i - q_j) * self.inv_scale))\n")
    assert flagged(tmp_path / "repo", claim, "ratings.py", code) is False
    assert flagged(tmp_path / "drifted", claim, "ratings.py",
                   code.replace("1.0 / scale", "1.0 * scale")) is True


def test_a_formula_that_opens_a_long_stretch_of_notation_is_read() -> None:
    # fifty words of bracketed notation the parser cannot read follow the formula
    tail = " + ".join(f"[s_{{T - kN/2 + {i}}}(Y_k) / (2 * (1 - tau_k)^{{3/2}})]" for i in range(8))
    text = f"Sampler step: Y_n / sqrt(1 - tau_n) = Y_0 / sqrt(1 - tau_0) + {tail}."
    assert "Y_0 / sqrt(1 - tau_0)" in [piece for piece, _ in claim_formulas(text)]


def test_a_formula_computed_only_drifted_fails_wherever_it_is(tmp_path: Path) -> None:
    # the check's evidence is the config; the one computation of the formula is elsewhere
    claim = toy_claim("toy-D2-001", BRADLEY_TERRY)
    config = "RATING_SCALE = 400.0\nN_PLAYERS = 32\n"
    code = ("import numpy as np\n\n\ndef win_probability(q_i, q_j, s):\n"
            "    return 1.0 / (1.0 + np.exp(-(q_i - q_j) / s))\n")
    drifted = code.replace("(1.0 + np", "(1.0 - np")
    check = ClaimCheck(claim_id=claim.id, dimension=claim.dimension,
                       evidence=[Evidence(file="config.py", start_line=1, end_line=2)])
    for name, ratings, fails in (("faithful", code, False), ("drifted", drifted, True),
                                 # computed as written once: the other is another quantity
                                 ("both", drifted + code.replace("win_probability", "expected"),
                                  False)):
        index = RepoIndex.build(write_repo(tmp_path / name, {"config.py": config,
                                                             "ratings.py": ratings}))
        found = structure_findings(index, claim, check)
        assert bool(found) is fails, (name, found)
    assert found == [] and "ratings.py:5" in structure_findings(
        RepoIndex.build(tmp_path / "drifted"), claim, check)[0][1]


def test_a_slash_before_a_product_may_divide_by_the_whole_product(tmp_path: Path) -> None:
    # `1/sqrt(d) * sqrt(2n)` written inline is 1 / (sqrt(d) sqrt(2n)) as often as not: the
    # GPT-2 scaling the code computes in two statements is that reading, not a drift
    claim = toy_claim("toy-D2-001", "Initialisation: output matrices W ~ N(0, (1/sqrt(d_model) "
                                    "* sqrt(2 * n_layers))^2)")
    code = ("import math\n\n\ndef output_std(d_model, n_layers):\n"
            "    std = 1.0 / math.sqrt(d_model)\n"
            "    return std / math.sqrt(2 * n_layers)\n")
    assert flagged(tmp_path / "repo", claim, "init.py", code) is False
    # the reading as written is the formula too; one operator from it still drifts
    assert flagged(tmp_path / "other", claim, "init.py",
                   code.replace("std / math", "std * math")) is False
    assert flagged(tmp_path / "drifted", claim, "init.py",
                   code.replace("std / math", "std * math").replace("1.0 / math",
                                                                    "1.0 * math")) is True


def test_a_code_name_in_the_words_that_define_a_symbol_anchors_it(tmp_path: Path) -> None:
    # the code names nothing as the paper does (`rating_a` for `Q_i`, `scale_factor` for
    # `s`), but in the words the claim defines those symbols with
    claim = toy_claim("toy-D2-001", "Win probability: Pr(i beats j) = 1 / (1 + exp(-(Q_i - "
                                    "Q_j) / s)) where Q_i, Q_j : Bradley-Terry ratings of the "
                                    "two models; s : scaling factor of the logistic.")
    code = ("import math\n\n\nclass Arena:\n"
            "    def __init__(self, scale_factor):\n        self.scale_factor = scale_factor\n\n"
            "    def win_probability(self, rating_a, rating_b):\n"
            "        return 1 / (1 + math.exp(-(rating_a - rating_b) / self.scale_factor))\n")
    drifted = code.replace("(1 + math", "(1 - math")
    assert flagged(tmp_path / "repo", claim, "arena.py", code) is False
    assert flagged(tmp_path / "drifted", claim, "arena.py", drifted) is True
    # without the definitions the same code anchors too little of the formula to be its drift
    bare = toy_claim("toy-D2-001", "Win probability: Pr(i beats j) = 1 / (1 + exp(-(Q_i - "
                                   "Q_j) / s)) for two models.")
    assert flagged(tmp_path / "bare", bare, "arena.py", drifted) is False


def test_a_symbol_is_defined_by_its_words_not_by_what_it_is_like() -> None:
    defined = glossary("where h is a learned feature encoder, g is the forward dynamics model, "
                       "X_1 is independent of X_0 and x_t = sqrt(alpha) * x_0; P_k = precision")
    assert defined["h"] >= {"feature", "encod"} and "learn" not in defined["h"]
    assert defined["g"] >= {"forward", "dynamic"}
    assert defined["p_k"] == {"precision"}
    assert "x_1" not in defined and "x_t" not in defined  # a property, an operation


def test_a_small_shape_needs_the_papers_names_to_say_it_is_the_formula(tmp_path: Path) -> None:
    # `a + b` has the shape of `x_pred - x_gt`, but nothing of the paper is spelled in it:
    # it is some other sum, not the paper's difference drifted
    claim = toy_claim("toy-D2-001", "Relative error: err = (x_pred - x_gt) / x_gt, the "
                                    "relative error of the prediction.")
    code = ("import numpy as np\n\n\ndef relative_error(prediction, truth, a, b):\n"
            "    offset = a + b\n"
            "    return np.divide(np.subtract(prediction, truth), truth), offset\n")
    drifted = code.replace("np.divide(np.subtract(prediction, truth), truth)",
                           "(x_pred + x_gt) / x_gt")
    assert flagged(tmp_path / "repo", claim, "metrics.py", code) is False
    assert flagged(tmp_path / "drifted", claim, "metrics.py", drifted) is True


def test_a_reduction_the_paper_leaves_implicit_is_looked_through() -> None:
    # the paper's squared xy-gravity is the code's sum of squares over the two components
    assert matched("w_g * g_xy ** 2", "weight * (g_xy ** 2).sum(dim=-1)") == {0: 3}
    assert matched("w_g * g_xy ** 2", "weight / torch.mean(g_xy ** 2, dim=-1)") == {1: 3}


def test_a_name_laid_out_or_fetched_by_a_getter_is_the_name() -> None:
    # `alpha1.unsqueeze(1)` broadcasts the paper's alpha1, `beta1.to(x.dtype)` casts beta1:
    # both anchor the match; a getter of a name (`self._get_hat_alpha(i)`) is that name
    paper = "alpha1 * LN(z) + beta1"
    assert matched(paper, "alpha1.unsqueeze(1) * normed + beta1.to(normed.dtype)") == {0: 4}
    assert matched(paper, "alpha1.unsqueeze(1) * normed - beta1.unsqueeze(1)") == {1: 4}
    assert matched("1 - hat_alpha_t", "1.0 + self._get_hat_alpha(idx)") == {1: 3}
    # a call that computes something is still a leaf that anchors nothing
    assert matched(paper, "alpha1.mul(2) * normed + beta1.unsqueeze(1)") == {0: 2}


def test_a_papers_letter_anchors_the_code_name_it_begins(tmp_path: Path) -> None:
    # `q_0` alone is too little of `q - q_0`; the code's `q_pos` begins with the paper's `q`
    assert matched("q - q_0", "q_pos + q_0") == {1: 3}
    assert matched("q - q_0", "angle + q_0") == {1: 2}
    claim = toy_claim("toy-D2-001", "Joint deviation penalty: r_{q_d} = w_{q_d} ||q - q_0||_1, "
                                    "where q_0 is the default joint position.")
    code = ("import torch\n\n\ndef joint_deviation(q_pos, q_0, weight):\n"
            "    return weight * torch.norm(q_pos - q_0, p=1, dim=-1)\n")
    assert flagged(tmp_path / "repo", claim, "rewards.py", code) is False
    assert flagged(tmp_path / "drifted", claim, "rewards.py",
                   code.replace("q_pos - q_0", "q_pos + q_0")) is True


@pytest.mark.parametrize(("text", "code", "drift"), [
    # `w_{ang} ||omega||^2_2`: a weight with a braced index beside a squared norm multiplies it
    ("Angular penalty: r_{ang} = w_{ang} ||omega||^2_2, where omega is the base angular "
     "velocity.", "def angular_penalty(weights, omega):\n"
     "    return weights['w_ang'] * torch.norm(omega, dim=-1) ** 2\n", ("] * torch", "] / torch")),
    # `0.5 + 0.5 * sigmoid(x)`: a sigmoid of x, not a symbol named `sigmoid_x`
    ("Shifted sigmoid (Eq. 9): s(x) = 0.5 + 0.5 * sigmoid(x), ranging over [0.5, 1].",
     "def shifted_sigmoid(x):\n    return 0.5 + 0.5 * torch.sigmoid(x)\n",
     ("0.5 + 0.5", "0.5 - 0.5")),
    # an index the paper computes in a subscript, its letters side by side a product, which
    # the code computes with an integer division
    ("Time indices: tau_{k,n} := 1 - hat_alpha_{T - kN/2 - n} for each round k and step n",
     "def time_index(T, N, k, n):\n    return T - k * N // 2 - n\n", ("T - k", "T + k")),
])
def test_formulas_are_read_as_the_paper_writes_them(tmp_path: Path, text: str, code: str,
                                                    drift: tuple[str, str]) -> None:
    claim = toy_claim("toy-D2-001", text)
    code = "import torch\n\n\n" + code
    assert flagged(tmp_path / "repo", claim, "model.py", code) is False
    assert flagged(tmp_path / "drifted", claim, "model.py", code.replace(*drift)) is True


def test_the_formula_computed_as_the_paper_says_in_the_same_function_excuses(
        tmp_path: Path) -> None:
    claim = toy_claim("toy-D2-001", "Residual update: h = h_prev + alpha_r * (h_new - h_prev) "
                                    "after every block.")
    code = ("def residual_update(h_prev, h_new, alpha_r):\n"
            "    reverse = h_prev - alpha_r * (h_new - h_prev)  # undoes an update\n"
            "    return h_prev + alpha_r * (h_new - h_prev), reverse\n")
    only_drifted = code.replace("return h_prev + alpha_r", "return h_prev - alpha_r")
    assert flagged(tmp_path / "repo", claim, "update.py", code) is False
    assert flagged(tmp_path / "drifted", claim, "update.py", only_drifted) is True


def test_another_function_computing_the_formula_does_not_excuse_a_drifted_one(
        tmp_path: Path) -> None:
    claim = toy_claim("toy-D2-001", "Forward masking: each token is masked independently with "
                                    "probability (1 - alpha_t) at time t.")
    code = ("import torch\n\n\ndef forward_mask(tokens, alpha_t):\n"
            "    mask_prob = 1.0 - alpha_t\n"
            "    return torch.rand(tokens.shape) < mask_prob\n\n\n"
            "def masked_loss(loss, alpha_t):\n"
            "    return loss / (1.0 - alpha_t)\n")
    drifted = code.replace("mask_prob = 1.0 - alpha_t", "mask_prob = 1.0 + alpha_t")
    assert flagged(tmp_path / "repo", claim, "masking.py", code) is False
    assert flagged(tmp_path / "drifted", claim, "masking.py", drifted) is True


def test_a_constant_and_a_squared_norm_are_compared_by_what_they_compute() -> None:
    # the paper's `/ 2` is the code's `* 0.5`, and `* 2` is one operator from it
    assert 0 in matched("(1 - a_t) / 2", "0.5 * (1 - a_t)")
    assert set(matched("(1 - a_t) / 2", "(1 - a_t) * 2")) == {1}
    # another constant is one change from the paper's formula, when constants are compared
    assert matched("(1 - a_t) / 2", "(1 - a_t) * 3") == {}
    assert set(matched("(1 - a_t) / 2", "(1 - a_t) * 3", constants=True)) == {1}
    assert set(matched("sqrt(3) * (1 - s_k) / 2", "math.sqrt(30) * (1.0 - s_k) / 2.0",
                       constants=True)) == {1}
    assert matched("sqrt(3) * (1 - s_k) / 2", "math.sqrt(30) * (1.0 + s_k) / 2.0",
                   constants=True) == {}
    # the paper's squared norm is the code's sum of squares
    assert 0 in matched("norm(x_pred - x_true) ** 2", "torch.sum((x_pred - x_true) ** 2)")
    assert set(matched("norm(x_pred - x_true) ** 2", "((x_pred + x_true) ** 2).sum()")) == {1}


def test_a_function_symbol_the_claim_defines_is_anchored_by_what_it_gives(
        tmp_path: Path) -> None:
    # `1/2||v||^2` halves a squared norm; h(s') and g(h(s), a) are what the code names
    # after the words that define h and g
    claim = toy_claim("toy-D2-001", "Novelty score: F(s, a, s') = 1/2||g(h(s), a) - h(s')||^2, "
                                    "where h is a state feature encoder and g is a dynamics "
                                    "model predicting the next features.")
    code = ("import numpy as np\n\n\ndef novelty(predicted_features, next_state_features):\n"
            "    return 0.5 * np.sum((predicted_features - next_state_features) ** 2)\n")
    assert flagged(tmp_path / "repo", claim, "novelty.py", code) is False
    assert flagged(tmp_path / "drifted", claim, "novelty.py",
                   code.replace("features - next", "features + next")) is True


def test_a_value_inside_the_claims_formula_drifts_as_an_operator_does(tmp_path: Path) -> None:
    claim = toy_claim("toy-D1-001", "Corrective noise weight at jump points: alpha = "
                                    "√3(1−s_k)/2 for every stage k")
    code = ("import math\n\n\ndef corrective_noise_weight(s_k):\n"
            "    return math.sqrt(3.0) * (1.0 - s_k) / 2.0\n")
    assert flagged(tmp_path / "repo", claim, "noise.py", code) is False
    assert flagged(tmp_path / "drifted", claim, "noise.py",
                   code.replace("sqrt(3.0)", "sqrt(30)")) is True
    # a constant the claim states for another setting is that setting, not a drift
    two = toy_claim("toy-D1-002", "Loss clipping threshold: LCT = 1.6 * λ^2 (Adjoint "
                                  "Matching); 1600 * λ^2 for the continuous adjoint")
    other = ("def clipping_threshold(lambda_):\n"
             "    return 1600.0 * lambda_ ** 2  # continuous adjoint\n")
    assert flagged(tmp_path / "other", two, "clip.py", other) is False
    assert flagged(tmp_path / "other-drifted", two, "clip.py",
                   other.replace("1600.0", "16000.0")) is True



def test_an_operation_written_with_braces_or_a_power_before_its_operand_is_read() -> None:
    def formulas(text: str) -> set[str]:
        return {ast.unparse(ast.parse(piece, mode="eval")) for piece, _ in claim_formulas(text)}

    # `min{a, b}` is a call; `log^{5/3} T` a power of log T; `log T` log of T; the comma of
    # `min(a, b)` parts its operands, not a product with the next one
    assert "(min(d ** (2 / 3) * L ** (-2 / 3), d ** (1 / 3)) + 1) * log(T) ** (5 / 3) / " \
        "epsilon ** (2 / 3)" in formulas(
            "N = (min{d^{2/3} * L^{-2/3}, d^{1/3}} + 1) * log^{5/3} T / epsilon^{2/3} "
            "(parallel processors)")
    assert "min(d * log(T), L) * log(T) ** 2" in formulas(
        "MK = min{d * log T, L} * log^2 T (parallel rounds)")
    # a word after `log` is prose, not its operand
    assert not any("probabilities" in f for f in formulas("Loss: (log p - log probabilities)"))


def test_a_code_name_that_spells_the_papers_operation_anchors_it(tmp_path: Path) -> None:
    # `log_T` is the paper's log(T), computed before: it anchors the formula as the call would
    assert matched("epsilon ** 2 / log(T)", "epsilon ** 2 / log_T") == {0: 5}
    assert matched("epsilon ** 2 / log(T)", "epsilon ** 2 / log_d") == {0: 3}
    claim = toy_claim("toy-D1-001", "Processors: N = (min{d^{2/3} * L^{-2/3}, d^{1/3}} + 1) * "
                                    "log^{5/3} T / epsilon^{2/3} for accuracy epsilon")
    code = ("import numpy as np\n\n\ndef processors(d, L, T, epsilon):\n"
            "    log_T = max(np.log(T), 1.0)\n"
            "    n_factor = min(d ** (2 / 3) * L ** (-2 / 3), d ** (1 / 3))\n"
            "    return int(np.ceil((n_factor + 1) * log_T ** (5 / 3) / epsilon ** (2 / 3)))\n")
    assert flagged(tmp_path / "repo", claim, "sampler.py", code) is False
    assert flagged(tmp_path / "drifted", claim, "sampler.py",
                   code.replace("epsilon ** (2 / 3)", "epsilon ** (20 / 3)")) is True


def test_a_constant_times_a_quantitys_name_is_that_quantitys_coefficient(tmp_path: Path) -> None:
    # "scaled by sqrt(2*n_layers)": `n_layers` says what 2 multiplies, so 20 * n_layers is
    # the paper's formula with another constant, which no other shape of it excuses
    claim = toy_claim("toy-D1-001", "Initialisation: N(0, 0.02^2); the output projections' "
                                    "standard deviation is scaled down by sqrt(2*n_layers).")
    code = ("import math\n\nimport torch.nn as nn\n\n\n"
            "def init_output_projection(layer, cfg, std=0.02):\n"
            "    qkv_width = 3 * cfg.d_model\n"
            "    out_std = std / math.sqrt(2 * cfg.n_layers)\n"
            "    nn.init.normal_(layer.weight, mean=0.0, std=out_std)\n"
            "    return qkv_width\n")
    assert flagged(tmp_path / "repo", claim, "init.py", code) is False
    assert flagged(tmp_path / "drifted", claim, "init.py",
                   code.replace("2 * cfg", "20 * cfg")) is True
    # a constant times a one-letter name is too small a shape to say which product it is
    letter = toy_claim("toy-D1-002", "Regulariser weight: lambda = 2*k for k experts")
    code = "def regulariser_weight(k, n):\n    return 2 * k, 3 * n\n"
    assert flagged(tmp_path / "letter", letter, "reg.py",
                   code.replace("2 * k", "20 * k")) is False

@pytest.mark.parametrize(("faithful", "drifted", "said"), [
    # a layer size by true division is a float, which the layer refuses
    ("self.w_q = nn.Linear(d_model, n_heads * d_head)",
     "self.w_q = nn.Linear(d_model, n_heads / d_head)", "true division"),
    # ... or bound to a name that the layer then takes
    ("self.d_mlp = 4 * d_model\n        self.mlp = nn.Linear(d_model, self.d_mlp)",
     "self.d_mlp = 4 / d_model\n        self.mlp = nn.Linear(d_model, self.d_mlp)",
     "true division"),
    # an expression minus itself is always zero
    ("input_dim = channels + channels", "input_dim = channels - channels", "always 0"),
    # a computed number times one: the reciprocal lost its operator
    ("self.scale = 1.0 / math.sqrt(d_head)", "self.scale = 1.0 * math.sqrt(d_head)",
     "times (or over) one"),
    # a list divided raises: the list was repeated
    ("self.bias_init = [0.0] * n_heads", "self.bias_init = [0.0] / n_heads",
     "cannot be divided or subtracted"),
])
def test_arithmetic_no_paper_can_mean_fails(tmp_path: Path, faithful: str, drifted: str,
                                            said: str) -> None:
    claim = toy_claim("toy-D2-001", "Query projection of the attention block: queries = x W_q "
                                    "with W_q of n_heads * d_head columns and input_dim of "
                                    "twice the channels.")
    code = ("import math\n\nimport torch.nn as nn\n\n\nclass QueryProjection(nn.Module):\n"
            "    def __init__(self, d_model, n_heads, d_head, channels):\n"
            "        super().__init__()\n        {}\n\n"
            "    def forward(self, x):\n        return self.w_q(x)\n")
    for text, fails in ((faithful, False), (drifted, True)):
        result = toy_check(tmp_path / str(fails), {"attention.py": code.format(text)},
                           claim)[claim.id]
        assert any(said in r for r in result.reasons) is fails, result.reasons
    # a size made whole again is a size
    whole = code.format("self.w_q = nn.Linear(d_model, int(n_heads / d_head))")
    result = toy_check(tmp_path / "whole", {"attention.py": whole}, claim)[claim.id]
    assert not any("true division" in r for r in result.reasons)


@pytest.mark.parametrize("code", [
    "ratio = 1.0 * math.sqrt(hits) / total",  # one times a number, cast before a division
    "weights = 1.0 * (scores > 0)",  # a mask made float
    "doubled = list(a) + list(b)",  # lists joined
    "message = '%s of %s' % (hits, total)",  # a tuple formatted into text
])
def test_ones_and_lists_in_arithmetic_that_means_something_pass(tmp_path: Path,
                                                                code: str) -> None:
    claim = toy_claim("toy-D2-001", "Hit ratio: ratio = sqrt(hits) / total over the scored "
                                    "items.")
    source = ("import math\n\n\ndef hit_ratio(hits, total, scores, a, b):\n"
              f"    {code}\n    return locals()\n")
    result = toy_check(tmp_path / "repo", {"ratio.py": source}, claim)[claim.id]
    assert not any("one, which" in r or "cannot be divided" in r for r in result.reasons), \
        result.reasons


@pytest.mark.parametrize(("faithful", "drifted"), [
    # a tensor's shape by true division: `view` refuses the float
    ("return self.w_q(x).view(b, t, self.n_heads * self.d_head)",
     "return self.w_q(x).view(b, t, self.n_heads / self.d_head)"),
    ("return self.w_q(x).reshape(b, t, self.n_heads * self.d_head)",
     "return self.w_q(x).reshape(b, t, self.n_heads / self.d_head)"),
])
def test_a_shape_by_true_division_fails(tmp_path: Path, faithful: str, drifted: str) -> None:
    claim = toy_claim("toy-D2-001", "Query projection of the attention block: queries = x W_q, "
                                    "split into n_heads heads of d_head each.")
    code = ("import torch.nn as nn\n\n\nclass QueryProjection(nn.Module):\n"
            "    def __init__(self, d_model, n_heads, d_head):\n"
            "        super().__init__()\n        self.n_heads, self.d_head = n_heads, d_head\n"
            "        self.w_q = nn.Linear(d_model, n_heads * d_head)\n\n"
            "    def forward(self, x):\n        b, t, _ = x.shape\n        {}\n")
    for text, fails in ((faithful, False), (drifted, True)):
        result = toy_check(tmp_path / str(fails), {"attention.py": code.format(text)},
                           claim)[claim.id]
        assert any("true division" in r for r in result.reasons) is fails, result.reasons
    # a module's reshape takes data first: an array over a constant is no size
    data = code.format("return np.reshape(x / 255.0, (b, t, -1))")
    result = toy_check(tmp_path / "data", {"attention.py": data}, claim)[claim.id]
    assert not any("true division" in r for r in result.reasons), result.reasons


def test_a_class_of_the_same_name_in_another_file_hides_no_carrying_code(
        tmp_path: Path) -> None:
    # a fallback class (`except ImportError: class QueryProjection`) shares the qualname
    # of the class the evidence is in; the code at the evidence still carries the claim
    fallback = ("try:\n    from attention import QueryProjection\nexcept ImportError:\n"
                "    class QueryProjection:\n        def forward(self, x):\n"
                "            return x\n")
    code = ("class QueryProjection:\n    def __init__(self, n_heads, d_head):\n"
            "        self.n_heads, self.d_head = n_heads, d_head\n\n"
            "    def forward(self, x):\n        b, t, _ = x.shape\n"
            "        h = self.w_q(x)\n"
            "        return h.view(b, t, self.n_heads / self.d_head)\n")
    repo = write_repo(tmp_path / "repo", {"block.py": fallback, "attention.py": code})
    index = RepoIndex.build(repo)
    claim = toy_claim("toy-D2-001", "Queries split into n_heads heads of d_head each.")
    check = ClaimCheck(claim_id=claim.id, dimension=claim.dimension,
                       function="QueryProjection.forward",
                       evidence=[Evidence(file="attention.py", start_line=5, end_line=7)])
    assert sorted(d.file for d in carriers(index, check)) == ["attention.py", "block.py"]
    found = senseless_findings(index, claim, check)
    assert [where for _, where in found] == ["attention.py:8"], found


@pytest.mark.parametrize(("line", "fails"), [
    # an index or a slice bound by true division is a float, which indexing refuses
    ("return alpha_bar[t - k * n // 2 - i]", False),
    ("return alpha_bar[t - k / n // 2 - i]", True),
    ("return x[:, : n_keep * 2]", False),
    ("return x[:, : n_keep / 2]", True),
    ("idx = t - k / n // 2 - i\n    return alpha_bar[idx]", True),
    # cast to an integer first, or a name that may also hold an integer
    ("return alpha_bar[int(t - k / n // 2 - i)]", False),
    ("idx = t - k / n // 2 - i\n    if k == 0:\n        idx = 0\n    return alpha_bar[idx]",
     False),
])
def test_an_index_by_true_division_fails(tmp_path: Path, line: str, fails: bool) -> None:
    claim = toy_claim("toy-D2-001", "Round k reads the schedule at index T - kN/2 - i of "
                                    "alpha_bar.")
    code = f"def schedule_entry(alpha_bar, x, t, k, n, i, n_keep):\n    {line}\n"
    result = toy_check(tmp_path / "repo", {"schedule.py": code}, claim)[claim.id]
    assert any("by a true division" in r for r in result.reasons) is fails, result.reasons


def test_a_size_attribute_bound_to_a_true_division_fails(tmp_path: Path) -> None:
    # the config declares the MLP width an int and another file's layer takes it as a size
    claim = toy_claim("toy-D1-001", "MLP hidden width: d_mlp = 4 * d_model for every model "
                                    "size, d_model = 1024.")
    config = ("from dataclasses import dataclass, field\n\n\n@dataclass\nclass ModelConfig:\n"
              "    d_model: int = 1024\n    d_mlp: int = field(init=False)\n\n"
              "    def __post_init__(self):\n        self.d_mlp = 4 * self.d_model\n")
    layers = ("import torch.nn as nn\n\n\nclass Block(nn.Module):\n"
              "    def __init__(self, config):\n        super().__init__()\n"
              "        self.up = nn.Linear(config.d_model, config.d_mlp)\n")
    for text, fails in ((config, False), (config.replace("4 * self", "4 / self"), True)):
        result = toy_check(tmp_path / str(fails), {"config.py": text, "layers.py": layers},
                           claim)[claim.id]
        assert any("true division" in r for r in result.reasons) is fails, result.reasons
    # an attribute no call takes as a size may hold a ratio
    ratio = config.replace("self.d_mlp = 4 * self.d_model",
                           "self.d_mlp = 4 * self.d_model\n        self.scale = 1 / self.d_model")
    result = toy_check(tmp_path / "ratio", {"config.py": ratio, "layers.py": layers},
                       claim)[claim.id]
    assert not any("true division" in r for r in result.reasons), result.reasons


def test_a_layer_of_the_claims_code_fails_on_a_size_its_config_divides(
        tmp_path: Path) -> None:
    # the claim's code is the MLP block (its only evidence); the config fills in the block's
    # width in another file, and a width by true division is a float the layer refuses
    claim = toy_claim("toy-D2-001", "MLP block up-projections: u = h W_u, nu = h W_nu.")
    config = ("from dataclasses import dataclass\nfrom typing import Optional\n\n\n"
              "@dataclass\nclass ModelConfig:\n    d_model: int = 1024\n"
              "    d_mlp: Optional[int] = None\n\n    def __post_init__(self):\n"
              "        if self.d_mlp is None:\n            self.d_mlp = 4 * self.d_model\n")
    layers = ("import torch.nn as nn\n\n\nclass MLPBlock(nn.Module):\n"
              "    def __init__(self, config):\n        super().__init__()\n"
              "        self.w_u = nn.Linear(config.d_model, config.d_mlp, bias=False)\n"
              "        self.w_nu = nn.Linear(config.d_model, config.d_mlp, bias=False)\n\n"
              "    def forward(self, h):\n        return self.w_u(h), self.w_nu(h)\n")
    check = ClaimCheck(claim_id=claim.id, dimension=claim.dimension,
                       evidence=[Evidence(file="mlp.py", start_line=5, end_line=12)])
    drifted = config.replace("4 * self", "4 / self")
    given = drifted + "\n\ndef widen(config):\n    config.d_mlp = 2 * config.d_model\n"
    # set otherwise too (a caller gives a whole width): the float is not the only width
    for name, text, flagged in (("faithful", config, False), ("drifted", drifted, True),
                                ("given", given, False)):
        index = RepoIndex.build(write_repo(tmp_path / name, {"config.py": text,
                                                              "mlp.py": layers}))
        found = senseless_findings(index, claim, check)
        assert bool(found) is flagged, (name, found)
        assert not found or found[0][1] == "config.py:12"


def test_the_constructor_of_a_carrying_class_holds_no_senseless_arithmetic(
        tmp_path: Path) -> None:
    # the claim's evidence is the forward pass; its layer's sizes are made in the constructor
    claim = toy_claim("toy-D2-001", "Cell update of the recurrent core: c_t = f_t * c_prev + "
                                    "i_t * g_t; h_t = o_t * tanh(c_t).")
    code = ("import torch\nimport torch.nn as nn\n\n\nclass Planner(nn.Module):\n"
            "    def __init__(self, channels):\n        super().__init__()\n"
            "        input_dim = channels + channels\n"
            "        self.conv = nn.Conv2d(input_dim, 4 * channels, 3, padding=1)\n\n"
            "    def reset_parameters(self):\n"
            "        for parameter in self.parameters():\n"
            "            if parameter.dim() > 1:\n"
            "                nn.init.xavier_uniform_(parameter)\n"
            "            else:\n"
            "                nn.init.zeros_(parameter)\n\n"
            "    def forward(self, x_t, h_prev, c_prev):\n"
            "        gates = self.conv(torch.cat([x_t, h_prev], dim=1))\n"
            "        i_t, f_t, o_t, g_t = gates.chunk(4, dim=1)\n"
            "        c_t = f_t * c_prev + i_t * g_t\n"
            "        h_t = o_t * torch.tanh(c_t)\n        return h_t, c_t\n")
    for text, fails in ((code, False), (code.replace("channels + channels",
                                                     "channels - channels"), True)):
        result = toy_check(tmp_path / str(fails), {"cell.py": text}, claim)[claim.id]
        assert any("always 0" in r for r in result.reasons) is fails, result.reasons


def test_senseless_arithmetic_in_a_function_the_claims_code_calls_fails(
        tmp_path: Path) -> None:
    # the claim's evidence is the gated attention; the rotary embedding it calls lost the
    # reciprocal of its frequencies (`1.0 *` for `1.0 /`), which no paper means
    claim = toy_claim("toy-D2-001", "Output gating: O_gated = O * sigmoid(H W_gate), applied "
                                    "after the output projection.")
    rope = ("def rotary_frequencies(dim, base=10000.0):\n"
            "    return 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))\n")
    gate = ("import torch\n\n\ndef gated_output(o, h, w_gate):\n"
            "    o = o * rotary_frequencies(o.shape[-1])\n"
            "    return o * torch.sigmoid(h @ w_gate)\n\n\n")
    check = ClaimCheck(claim_id=claim.id, dimension=claim.dimension, function="gated_output",
                       evidence=[Evidence(file="attention.py", start_line=4, end_line=6)])
    drifted = rope.replace("1.0 / (base", "1.0 * (base")
    uncalled = gate.replace("    o = o * rotary_frequencies(o.shape[-1])\n", "")
    for name, files, where in (
            ("faithful", {"attention.py": gate + rope}, None),
            ("called", {"attention.py": gate + drifted}, "attention.py:10"),
            ("called elsewhere", {"attention.py": gate, "rope.py": "import torch\n\n\n"
                                  + drifted}, "rope.py:5"),
            # the same function beside the claim's code, which it does not call, is another
            # claim's
            ("beside", {"attention.py": uncalled + drifted}, None)):
        index = RepoIndex.build(write_repo(tmp_path / name, files))
        found = senseless_findings(index, claim, check)
        assert [at for _, at in found] == ([where] if where else []), (name, found)


@pytest.mark.parametrize(("stack", "fails"), [
    ("nn.Linear(hidden_dim, 128), nn.ReLU(), nn.Linear(128, 2 * obs_dim)", False),
    ("nn.Linear(hidden_dim, 1280), nn.ReLU(), nn.Linear(128, 2 * obs_dim)", True),
    ("nn.Linear(hidden_dim, 128), nn.LayerNorm(1280), nn.Linear(128, 2 * obs_dim)", True),
    ("*[nn.Conv2d(3, 64, 3), nn.BatchNorm2d(64), nn.ReLU(), nn.Conv2d(46, 128, 3)]", True),
    ("nn.Embedding(1000, 1280), nn.Linear(128, 2 * obs_dim)", True),
    # sizes the code names are not compared; a layer of unknown sizes starts the chain again
    ("nn.Linear(hidden_dim, width), nn.ReLU(), nn.Linear(128, 2 * obs_dim)", False),
    ("nn.Linear(hidden_dim, 1280), Expand(10), nn.Linear(128, 2 * obs_dim)", False),
])
def test_layers_stacked_with_sizes_that_do_not_chain_fail(tmp_path: Path, stack: str,
                                                           fails: bool) -> None:
    claim = toy_claim("toy-D1-001", "World model: a GRU base with hidden size 256; the "
                                    "observation head is an MLP with one hidden layer of 128 "
                                    "units.")
    code = ("import torch.nn as nn\n\n\nclass WorldModel(nn.Module):\n"
            "    def __init__(self, obs_dim, hidden_dim=256, width=128):\n"
            "        super().__init__()\n        self.gru = nn.GRU(obs_dim, hidden_dim)\n"
            f"        self.observation_head = nn.Sequential({stack})\n\n"
            "    def forward(self, x):\n        h, _ = self.gru(x)\n"
            "        return self.observation_head(h)\n")
    result = toy_check(tmp_path / "repo", {"world_model.py": code}, claim)[claim.id]
    assert any("do not chain" in r for r in result.reasons) is fails, result.reasons
    if fails:
        assert not result.passed


@pytest.mark.parametrize(("forward", "fails"), [
    ("        h = self.hidden(x)\n        h = self.act(h)\n        return self.out(h)\n", True),
    ("        return self.out(F.relu(self.hidden(x)))\n", True),
    # a reshape between the layers, or a branch that rebinds `h`: sizes no longer known
    ("        h = self.hidden(x)\n        h = h.flatten(1)\n        return self.out(h)\n",
     False),
    ("        h = self.hidden(x)\n        if self.training:\n            h = self.proj(x)\n"
     "        return self.out(h)\n", False),
])
def test_layers_applied_one_after_another_must_chain(tmp_path: Path, forward: str,
                                                      fails: bool) -> None:
    claim = toy_claim("toy-D1-001", "Value head: an MLP with one hidden layer of 128 units.")
    code = ("import torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
            "class ValueHead(nn.Module):\n    def __init__(self, d):\n"
            "        super().__init__()\n        self.hidden = nn.Linear(d, 1280)\n"
            "        self.proj = nn.Linear(d, 128)\n        self.act = nn.ReLU()\n"
            "        self.out = nn.Linear(128, 1)\n\n    def forward(self, x):\n" + forward)
    result = toy_check(tmp_path / "repo", {"value_head.py": code}, claim)[claim.id]
    assert any("do not chain" in r for r in result.reasons) is fails, result.reasons
    faithful = code.replace("nn.Linear(d, 1280)", "nn.Linear(d, 128)")
    result = toy_check(tmp_path / "faithful", {"value_head.py": faithful}, claim)[claim.id]
    assert not any("do not chain" in r for r in result.reasons), result.reasons


def test_a_divergence_summed_from_log_probabilities_fails(tmp_path: Path) -> None:
    claim = toy_claim("toy-D2-001", "Shaped reward: R(x, y) = r(x, y) - beta * KL(pi(.|x) || "
                                    "pi_ref(.|x)), the KL estimated per token.")
    code = ("def shaped_reward(reward, policy_logprobs, ref_logprobs, beta):\n"
            "    kl_penalty = policy_logprobs - ref_logprobs\n"
            "    return reward - beta * kl_penalty\n")
    for text, fails in ((code, False), (code.replace("logprobs - ref", "logprobs + ref"), True)):
        result = toy_check(tmp_path / str(fails), {"reward.py": text}, claim)[claim.id]
        assert any("adds log-probabilities" in r for r in result.reasons) is fails, \
            result.reasons
    # a sum of log-probabilities is a joint log-probability
    joint = code.replace("kl_penalty = policy_logprobs - ref_logprobs",
                         "kl_penalty = policy_logprobs - ref_logprobs\n"
                         "    joint = policy_logprobs + ref_logprobs")
    result = toy_check(tmp_path / "joint", {"reward.py": joint}, claim)[claim.id]
    assert not any("adds log-probabilities" in r for r in result.reasons), result.reasons


def flagged(repo: Path, claim: Claim, file: str, code: str) -> bool:
    """Whether the structural rule finds the claim's formula one change apart in `code`."""
    result = toy_check(repo, {file: code}, claim)[claim.id]
    return any("one operator" in reason and "apart" in reason for reason in result.reasons)


DIFFUSION = toy_claim("toy-D2-001", "Diffusion training: noise the clean sample to step t "
                                    "as the forward process does and regress the noise.")
FORWARD = ("import torch\n\n\ndef noised_sample(x_0, epsilon, sqrt_alpha_bar_t,\n"
           "                  sqrt_one_minus_alpha_bar_t):\n"
           "    # forward: x_t = sqrt_alpha_bar * x_0 + sqrt_one_minus_alpha_bar * epsilon\n"
           "    x_t = sqrt_alpha_bar_t * x_0 + sqrt_one_minus_alpha_bar_t * epsilon\n"
           "    return x_t\n")
DRIFTED_FORWARD = FORWARD.replace("x_0 + sqrt_one_minus_alpha_bar_t",
                                  "x_0 - sqrt_one_minus_alpha_bar_t")


def test_code_one_operator_from_its_own_comments_formula_fails(tmp_path: Path) -> None:
    # the claim writes no formula: the comment, in the code's names, says what is computed
    assert flagged(tmp_path / "repo", DIFFUSION, "diffusion.py", FORWARD) is False
    result = toy_check(tmp_path / "drifted", {"diffusion.py": DRIFTED_FORWARD},
                       DIFFUSION)[DIFFUSION.id]
    assert "operations" in result.findings and not result.passed
    assert any("its comment gives" in r and "diffusion.py:7" in r for r in result.reasons)


def test_a_comments_name_pairs_only_with_its_own(tmp_path: Path) -> None:
    # `x_start_pred` is not the comment's `pred_noise`: two of three names matching is
    # another expression of the same shape, not the comment's drifted
    code = ("def guided(pred_noise, x_start_pred, guidance_weight, grad_i):\n"
            "    # guided = pred_noise + guidance_weight * grad_i\n"
            "    return x_start_pred - guidance_weight * grad_i\n")
    claim = toy_claim("toy-D2-001", "Guidance: steer the denoising with the objective's "
                                    "gradient weighted by the guidance weight.")
    assert flagged(tmp_path / "repo", claim, "guide.py", code) is False
    drifted = code.replace("x_start_pred - guidance", "pred_noise - guidance")
    assert flagged(tmp_path / "drifted", claim, "guide.py", drifted) is True


def test_another_part_of_the_comments_formula_is_not_its_drift(tmp_path: Path) -> None:
    # `(1 - s_k) / 2` is the comment's second part exactly, not its first part drifted
    code = ("def endpoint_weights(s_k):\n"
            "    # w_low = (1 + s_k) / 2; w_high = (1 - s_k) / 2\n"
            "    low = 0.5 * (1 + s_k)\n"
            "    high = (1 - s_k) / 2\n"
            "    return low, high\n")
    claim = toy_claim("toy-D2-001", "Endpoint weights of a pyramid stage from its scale s_k.")
    assert flagged(tmp_path / "repo", claim, "weights.py", code) is False


def test_a_comments_name_may_be_called_or_indexed_but_not_computed(tmp_path: Path) -> None:
    claim = toy_claim("toy-D2-001", "MLP block update of the normalized transformer, with "
                                    "learnable eigen learning rates.")
    # `alpha_m.view(1, 1, -1)` is the comment's alpha_m, reshaped
    code = ("def mlp_update(h, h_m, alpha_m):\n"
            "    # h = h + alpha_m * (h_m - h)\n"
            "    return h + alpha_m.view(1, 1, -1) * (h_m - h)\n")
    assert flagged(tmp_path / "repo", claim, "block.py", code) is False
    assert flagged(tmp_path / "drifted", claim, "block.py",
                   code.replace("return h + alpha_m", "return h - alpha_m")) is True
    # solving the comment's formula for d_ff computes another thing than the formula
    sizing = ("def ffn_width(params_per_layer, d_model):\n"
              "    # params_per_layer = d_ff * (2 * d_model + 1) + d_model\n"
              "    return (params_per_layer - d_model) / (2 * d_model + 1)\n")
    budget = toy_claim("toy-D2-001", "FFN width: chosen from the parameter budget per layer "
                                     "and the model width d_model.")
    assert flagged(tmp_path / "sizing", budget, "sizing.py", sizing) is False


def test_a_file_in_markdown_fences_or_cut_short_is_still_read(tmp_path: Path) -> None:
    # agents leave ```python fences in files, or a broken last line: the functions above it
    # are still the claim's code
    for label, text in (("fenced", f"```python\n{DRIFTED_FORWARD}```\n"),
                        ("cut", f"{DRIFTED_FORWARD}\nprint('unterminated)\n")):
        result = toy_check(tmp_path / label, {"diffusion.py": text}, DIFFUSION)[DIFFUSION.id]
        assert "operations" in result.findings, (label, result)
