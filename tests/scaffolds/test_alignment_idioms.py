"""The idiom rule: arithmetic every paper means the same by, written the other way round."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from sabench.scaffolds.alignment_idioms import IDIOMS, expressions, idiom_findings, waived
from sabench.verifiers.checks import ClaimCheck
from sabench.verifiers.index import RepoIndex
from sabench.verifiers.types import Evidence

from .test_alignment_check import toy_check, toy_claim, write_repo


def broken(code: str) -> set[str]:
    """The idioms a line of code breaks."""
    return {idiom.__name__ for node in expressions(ast.parse(code)) for idiom in IDIOMS
            if idiom(node)}


@pytest.mark.parametrize(("faithful", "drifted", "idiom"), [
    ("w = a / (1.0 - alpha_t + eps)", "w = a / (1.0 - alpha_t - eps)", "guard_subtracted"),
    ("d = -(p * torch.log(q + 1e-8)).sum()", "d = -(p * torch.log(q - 1e-8)).sum()",
     "guard_subtracted"),
    ("cv = s / (m + 1e-6)", "cv = s * (m + 1e-6)", "guard_multiplied"),
    ("out = attn_output * gate_scores", "out = attn_output / gate_scores", "divides_by_mask"),
    ("h = self.w_down(gate * up)", "h = self.w_down(gate / up)", "divides_by_mask"),
    ("pg = -adv * log_prob", "pg = -adv / log_prob", "divides_by_log_probability"),
    ("stat = -2 * log_likelihood", "stat = -2 / log_likelihood", "divides_by_log_probability"),
    ("out = out + w_k * expert_out", "out = out - w_k * expert_out", "residual_subtracted"),
    ("denom = 1.0 - alpha_t + 1e-6", "denom = 1.0 - alpha_t - 1e-6", "guard_subtracted"),
    ("loss = cfm_loss + lam * (recon_loss + kl_loss)",
     "loss = cfm_loss - lam * (recon_loss + kl_loss)", "weighted_loss_subtracted"),
    ("loss = ((pred - target) ** 2).mean()", "loss = ((pred + target) ** 2).mean()",
     "versions_added"),
    ("ratio = torch.exp(new_log_probs - old_log_probs)",
     "ratio = torch.exp(new_log_probs + old_log_probs)", "versions_added"),
    ("ratio = torch.exp(logprobs - old_logprobs)", "ratio = torch.exp(logprobs + old_logprobs)",
     "versions_added"),
    ("loss = -F.logsigmoid(r_chosen - r_rejected).mean()",
     "loss = -F.logsigmoid(r_chosen + r_rejected).mean()", "versions_added"),
    ("s = torch.matmul(q, k.transpose(-2, -1)) / (self.head_dim ** 0.5)",
     "s = torch.matmul(q, k.transpose(-2, -1)) * (self.head_dim ** 0.5)",
     "attention_scaled_up"),
    ("s = q @ k.T / math.sqrt(d)", "s = q @ k.T * math.sqrt(d)", "attention_scaled_up"),
    ("std = 1.0 / math.sqrt(d_model)", "std = 1.0 * math.sqrt(d_model)", "one_times_power"),
    ("inv = 1.0 / (base ** (torch.arange(0, d, 2) / d))",
     "inv = 1.0 * (base ** (torch.arange(0, d, 2) / d))", "one_times_power"),
    ("y = x - x.mean(dim=0)", "y = x + x.mean(dim=0)", "own_statistic"),
    ("y = x / np.max(x)", "y = x * np.max(x)", "own_statistic"),
    # a centre taken off the graph is the centre still
    ("adv = r - r.mean(dim=0).detach()", "adv = r + r.mean(dim=0).detach()", "own_statistic"),
    ("e = u + w * (c - u)", "e = u - w * (c - u)", "away_from_target"),
    ("x = x + block(x)", "x = x - block(x)", "residual_subtracted"),
    ("x = x + attn_output", "x = x - attn_output", "residual_subtracted"),
    ("x_curr = x_curr + pooled_injection", "x_curr = x_curr - pooled_injection",
     "residual_subtracted"),
    ("r = weights['w_c'] * contacts", "r = weights['w_c'] / contacts", "coefficient_divides"),
    ("avg = total_loss / max(total_tokens, 1)", "avg = total_loss * max(total_tokens, 1)",
     "total_times_count"),
    # each operand of a mixture is multiplied by its weight
    ("x_t = t * x_e + (1.0 - t) * x_s", "x_t = t * x_e + (1.0 - t) / x_s",
     "weights_not_summing_to_one"),
    # a rotary embedding's exponents are the indices as a fraction of the dimension
    ("inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))",
     "inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() * dim))",
     "exponent_times_size"),
    # a diffusion schedule's alpha is one minus its beta
    ("alphas = 1.0 - betas", "alphas = 1.0 + betas", "cumulative_complement_added"),
    # a negative log-likelihood is a loss, whose total a count divides
    ("ppl_nll = total_nll / total_tokens", "ppl_nll = total_nll * total_tokens",
     "total_times_count"),
    # a count of correct answers over a total is a fraction of matches
    ("acc = (total_correct / total_samples) * 100", "acc = (total_correct / total_samples) / 100",
     "percent_divided"),
    ("acc = correct_count / total_problems", "acc = correct_count * total_problems",
     "total_times_count"),
    # a name added to in a loop is a total, whatever it is called
    ("def evaluate(batches, total_steps):\n    val_loss = 0.0\n    for b in batches:\n"
     "        val_loss += loss_of(b)\n    return val_loss / total_steps\n",
     "def evaluate(batches, total_steps):\n    val_loss = 0.0\n    for b in batches:\n"
     "        val_loss += loss_of(b)\n    return val_loss * total_steps\n",
     "total_times_count"),
    # a scaled initialisation shrinks a residual branch's weights with depth
    ("out_std = std / math.sqrt(2.0 * config.n_layers)",
     "out_std = std * math.sqrt(2.0 * config.n_layers)", "std_grows_with_depth"),
    ("nn.init.normal_(w, std=0.02 / math.sqrt(2 * n_layer))",
     "nn.init.normal_(w, std=0.02 * math.sqrt(2 * n_layer))", "std_grows_with_depth"),
    ("loss = criterion(low_out, low_y) + criterion(high_out, high_y)",
     "loss = criterion(low_out, low_y) - criterion(high_out, high_y)",
     "weighted_loss_subtracted"),
    ("total_loss = F.mse_loss(x_hat, x) + F.cross_entropy(logits, y)",
     "total_loss = F.mse_loss(x_hat, x) - F.cross_entropy(logits, y)",
     "weighted_loss_subtracted"),
    ("margin = sorted_probs[:, 0] - sorted_probs[:, 1]",
     "margin = sorted_probs[:, 0] + sorted_probs[:, 1]", "difference_added"),
    ("prob_diffs = [np.abs(p[0] - p[1]) for p in top2]",
     "prob_diffs = [np.abs(p[0] + p[1]) for p in top2]", "difference_added"),
    ("recon = 0.5 * F.mse_loss(x_hat, x)", "recon = 0.5 / F.mse_loss(x_hat, x)",
     "divides_by_loss"),
    ("y = routing_weights[..., i] * self.experts[i](x)",
     "y = routing_weights[..., i] / self.experts[i](x)", "coefficient_divides"),
    ("centers = 0.5 * (edges[:-1] + edges[1:])", "centers = 0.5 * (edges[:-1] - edges[1:])",
     "midpoint_differenced"),
    ("mid = (lo + hi) / 2", "mid = (lo - hi) / 2", "midpoint_differenced"),
    ("accuracy = np.mean(preds == labels) * 100.0",
     "accuracy = np.mean(preds == labels) / 100.0", "percent_divided"),
    ("acc = (pred == y).float().mean() * 100", "acc = (pred == y).float().mean() / 100",
     "percent_divided"),
    ("output = shared_out + routed_out", "output = shared_out - routed_out",
     "outputs_subtracted"),
    ("pool = list(targets) + list(others)", "pool = list(targets) - list(others)",
     "lists_subtracted"),
    ("alpha_t = torch.cos(t * math.pi / 2.0)", "alpha_t = torch.cos(t / math.pi / 2.0)",
     "angle_divided_by_pi"),
    ("lr = 0.5 * (1 + math.cos(math.pi * step / total))",
     "lr = 0.5 * (1 + math.cos(math.pi / step / total))", "angle_divided_by_pi"),
    ("h = u * F.silu(v)", "h = u / F.silu(v)", "divides_by_activation"),
    ("h = self.w2(torch.relu(x) * gate)", "h = self.w2(gate / torch.relu(x))",
     "divides_by_activation"),
    # a norm normalises what it is the norm of, not another quantity's weight
    ("r = self.weights['wg'] * g_xy_norm_sq", "r = self.weights['wg'] / g_xy_norm_sq",
     "coefficient_divides"),
    # a norm of the quantity the weight is named for is what it weighs, not its normaliser
    ("r = self.weights['w_q_ddot'] * torch.norm(q_ddot, dim=-1) ** 2",
     "r = self.weights['w_q_ddot'] / torch.norm(q_ddot, dim=-1) ** 2", "coefficient_divides"),
    ("r = self.weights['wωxy'] * omega_xy_norm_sq", "r = self.weights['wωxy'] / omega_xy_norm_sq",
     "coefficient_divides"),
    ("mu = (1 / np.sqrt(alpha_k)) * (x_k - beta_k / np.sqrt(1 - abar_k) * epsilon_pred)",
     "mu = (1 / np.sqrt(alpha_k)) * (x_k + beta_k / np.sqrt(1 - abar_k) * epsilon_pred)",
     "predicted_noise_added"),
    ("x0 = (x_t - torch.sqrt(1 - a) * noise_pred) / torch.sqrt(a)",
     "x0 = (x_t + torch.sqrt(1 - a) * noise_pred) / torch.sqrt(a)", "predicted_noise_added"),
    ("context = t_emb + cond_tokens", "context = t_emb - cond_tokens", "embedding_subtracted"),
    ("x = x + pos_embedding", "x = x - pos_embedding", "embedding_subtracted"),
    ("v = v / v.norm() * avg_norm", "v = v / v.norm() / avg_norm", "unit_vector_divided"),
    ("delta = rewards + gamma * next_values * (1 - dones) - values",
     "delta = rewards - gamma * next_values * (1 - dones) - values", "discount_against_reward"),
    ("adv = delta + gamma * lam * last_adv", "adv = delta - gamma * lam * last_adv",
     "discount_against_reward"),
    ("delta = rewards + gamma * next_values * (1 - dones) - values",
     "delta = rewards + gamma * next_values * (1 + dones) - values", "done_added"),
    ("target = r + gamma * q_next * (1 - done)", "target = r + gamma * q_next / (1 - done)",
     "done_added"),
    ("x_t = (1 - t) * x0 + t * x1", "x_t = (1 + t) * x0 + t * x1", "weights_not_summing_to_one"),
    ("x_t = (1 - t) * x0 + t * x1", "x_t = (1 - t) * x0 - t * x1", "weights_not_summing_to_one"),
    ("kl = -0.5 * torch.sum(1 + logvar - mu ** 2 - logvar.exp())",
     "kl = -0.5 * torch.sum(1 - logvar - mu ** 2 - logvar.exp())", "kl_signs"),
    ("kl = -0.5 * torch.sum(1 + logvar - mu ** 2 - logvar.exp())",
     "kl = -0.5 * torch.sum(1 + logvar + mu ** 2 - logvar.exp())", "kl_signs"),
    ("logits = sim / self.temperature", "logits = sim * self.temperature",
     "temperature_multiplies"),
    ("z = (x - self.mean) / self.std", "z = (x + self.mean) / self.std",
     "standardised_otherwise"),
    ("z = (x - self.mean) / self.std", "z = (x - self.mean) * self.std",
     "standardised_otherwise"),
    ("x = (x - mean) / torch.sqrt(var + eps)", "x = (x - mean) * torch.sqrt(var + eps)",
     "standardised_otherwise"),
    ("m_hat = m / (1 - beta1 ** t)", "m_hat = m * (1 - beta1 ** t)",
     "bias_correction_multiplies"),
    ("s = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * adv",
     "s = torch.clamp(ratio, 1 + clip_eps, 1 + clip_eps) * adv", "one_sided_interval"),
    ("p = torch.sigmoid(r_a - r_b)", "p = torch.sigmoid(r_a + r_b)", "preference_of_sum"),
    ("p = torch.sigmoid((scores[i] - scores[j]) / s)",
     "p = torch.sigmoid((scores[i] + scores[j]) / s)", "preference_of_sum"),
    ("loss = ((eps - eps_hat) ** 2).mean()", "loss = ((eps + eps_hat) ** 2).mean()",
     "estimate_added_in_error"),
    ("err = torch.norm(x - x_hat)", "err = torch.norm(x + x_hat)", "estimate_added_in_error"),
    # what is controlled towards a target is compared with it by their difference
    ("dev = torch.mean((controls - target_state) ** 2)",
     "dev = torch.mean((controls + target_state) ** 2)", "estimate_added_in_error"),
    ("v = x1 - x0", "v = x1 + x0", "velocity_of_sum"),
    ("u_t = x_1 - (1 - sigma_min) * x_0", "u_t = x_1 + (1 - sigma_min) * x_0",
     "velocity_of_sum"),
    ("z = mu + std * noise", "z = mu + std / noise", "divides_by_noise"),
    ("x0 = (x_t - torch.sqrt(1 - a) * eps_pred) / torch.sqrt(a)",
     "x0 = (x_t - torch.sqrt(1 - a) / eps_pred) / torch.sqrt(a)", "divides_by_noise"),
    ("z = std * torch.randn_like(std)", "z = std / torch.randn_like(std)", "divides_by_noise"),
    ("x_t = torch.sqrt(a) * x_0 + torch.sqrt(1 - a) * noise",
     "x_t = torch.sqrt(a) * x_0 + torch.sqrt(1 + a) * noise", "variance_not_preserved"),
    ("x_t = ab ** 0.5 * x_0 + (1 - ab) ** 0.5 * noise",
     "x_t = ab ** 0.5 * x_0 + (1 + ab) ** 0.5 * noise", "variance_not_preserved"),
    ("lp = -0.5 * ((x - mu) / std) ** 2 - torch.log(std) - 0.5 * math.log(2 * math.pi)",
     "lp = -0.5 * ((x - mu) / std) ** 2 + torch.log(std) - 0.5 * math.log(2 * math.pi)",
     "gaussian_log_density_signs"),
    ("nll = 0.5 * (x - mu) ** 2 / var + 0.5 * logvar",
     "nll = 0.5 * (x - mu) ** 2 / var - 0.5 * logvar", "gaussian_log_density_signs"),
    ("lp = -((a - mean) ** 2) / (2 * std ** 2) - log_std",
     "lp = -((a - mean) ** 2) / (2 * std ** 2) + log_std", "gaussian_log_density_signs"),
    ("h = -(p * torch.log(p)).sum()", "h = -(p / torch.log(p)).sum()",
     "divides_by_log_probability"),
    ("e_a = 1 / (1 + 10 ** ((r_b - r_a) / 400))", "e_a = 1 / (1 + 10 ** ((r_b + r_a) / 400))",
     "elo_of_sum"),
    ("e_a = 1 / (1 + 10 ** ((r_b - r_a) / 400))", "e_a = 1 / (1 + 10 ** ((r_b - r_a) * 400))",
     "elo_of_sum"),
    ("iou = inter / (area_a + area_b - inter)", "iou = inter / (area_a + area_b + inter)",
     "union_adds_intersection"),
    ("prec = tp / (tp + fp)", "prec = tp / (tp - fp)", "divides_by_difference"),
    ("f1 = 2 * precision * recall / (precision + recall)",
     "f1 = 2 * precision * recall / (precision - recall)", "divides_by_difference"),
    ("p = torch.exp(s_a) / (torch.exp(s_a) + torch.exp(s_b))",
     "p = torch.exp(s_a) / (torch.exp(s_a) - torch.exp(s_b))", "divides_by_difference"),
    ("kl = (p * (torch.log(p) - torch.log(q))).sum()",
     "kl = (p * (torch.log(p) + torch.log(q))).sum()", "kl_of_product"),
    ("kl = (p * torch.log(p / q)).sum()", "kl = (p * torch.log(p * q)).sum()", "kl_of_product"),
    ("cos = (a * b).sum(-1) / (a.norm(dim=-1) * b.norm(dim=-1))",
     "cos = (a * b).sum(-1) / (a.norm(dim=-1) / b.norm(dim=-1))", "similarity_times_norm"),
    ("cos = torch.dot(u, v) / (torch.norm(u) * torch.norm(v))",
     "cos = torch.dot(u, v) * (torch.norm(u) * torch.norm(v))", "similarity_times_norm"),
    ("out = kappa * eps_out / sigma_t", "out = kappa / eps_out / sigma_t", "divides_by_noise"),
    ("self.d_mlp = 4 * self.d_model", "self.d_mlp = 4 / self.d_model", "size_below_one"),
    ("log_ratio = torch.log(pi_new / pi_old)", "log_ratio = torch.log(pi_new * pi_old)",
     "versions_multiplied"),
    ("ratio = p_new / p_old", "ratio = p_new * p_old", "versions_multiplied"),
    ("loss = -(ratio * advantages).mean()", "loss = -(ratio / advantages).mean()",
     "divides_by_advantage"),
    ("bce = -(y * torch.log(p) + (1 - y) * torch.log(1 - p))",
     "bce = -(y * torch.log(p) + (1 - y) * torch.log(1 + p))", "complement_added"),
    ("tau = 1.0 - alpha_bar", "tau = 1.0 + alpha_bar", "cumulative_complement_added"),
    ("var = 1 - self._get_hat_alpha(idx)", "var = 1 + self._get_hat_alpha(idx)",
     "cumulative_complement_added"),
    ("d = alphas_cumprod[t] * (1.0 - alphas_cumprod[t])",
     "d = alphas_cumprod[t] * (1.0 + alphas_cumprod[t])", "cumulative_complement_added"),
    ("h = F.normalize(h + self.alpha_m * (h_mlp - h), dim=-1)",
     "h = F.normalize(h + self.alpha_m * (h_mlp + h), dim=-1)", "step_toward_sum"),
    ("lr = lr_start + (lr_max - lr_start) * progress",
     "lr = lr_start + (lr_max + lr_start) * progress", "step_toward_sum"),
    ("r = (it - cfg.warmup_steps) / (cfg.max_iters - cfg.warmup_steps)",
     "r = (it + cfg.warmup_steps) / (cfg.max_iters - cfg.warmup_steps)",
     "offset_added_in_ratio"),
    ("y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)",
     "y = x / torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)", "divides_by_decay"),
    ("r = w * torch.exp(-err / sigma ** 2)", "r = w / torch.exp(-err / sigma ** 2)",
     "divides_by_decay"),
    ("r = w * torch.exp(-torch.norm(c - v, dim=-1) ** 2 / sigma_v ** 2)",
     "r = w * torch.exp(-torch.norm(c - v, dim=-1) ** 2 * sigma_v ** 2)",
     "kernel_width_multiplies"),
    ("x = self.norm1(x + attn_out)", "x = self.norm1(x - attn_out)", "residual_subtracted"),
    ("def combine(shared_output, routed_output):\n    return shared_output + routed_output",
     "def combine(shared_output, routed_output):\n    return shared_output - routed_output",
     "outputs_subtracted"),
    ("scores = scores + attention_mask", "scores = scores - attention_mask", "mask_subtracted"),
    ("r = torch.exp(-torch.norm(command - velocity, p=2) ** 2)",
     "r = torch.exp(-torch.norm(command + velocity, p=2) ** 2)", "kernel_of_sum"),
    ("mu = (1 / np.sqrt(alpha_k)) * (x_k - beta_k / s_k * eps_pred)",
     "mu = (1 / np.sqrt(alpha_k)) / (x_k - beta_k / s_k * eps_pred)", "divides_by_sample"),
    # a reshaped root is the root still
    ("x_t = torch.sqrt(a).unsqueeze(-1) * x0 + torch.sqrt(1 - a).unsqueeze(-1) * noise",
     "x_t = torch.sqrt(a).unsqueeze(-1) * x0 + torch.sqrt(1 + a).unsqueeze(-1) * noise",
     "variance_not_preserved"),
    # the forward process adds drawn noise to the signal, however the two are weighted
    ("xt = alpha_t * x_batch + torch.sqrt(t) * noise",
     "xt = alpha_t * x_batch - torch.sqrt(t) * noise", "noise_subtracted"),
    ("noisy_data = torch.sqrt(ab) * clean_data + torch.sqrt(1 - ab) * noise",
     "noisy_data = torch.sqrt(ab) * clean_data - torch.sqrt(1 - ab) * noise",
     "noise_subtracted"),
    ("x_t = (1 - t) * x_0 + t * torch.randn_like(x_0)",
     "x_t = (1 - t) * x_0 - t * torch.randn_like(x_0)", "noise_subtracted"),
    # an integration step is multiplied by its step size, a Brownian increment by its root
    ("x = x + dt * v", "x = x + v / dt", "divides_by_step_size"),
    ("k2 = rhs(u + 0.5 * dt * k1)", "k2 = rhs(u + 0.5 / dt * k1)", "divides_by_step_size"),
    ("x = x + self.dt * drift + sigma * eps * math.sqrt(self.dt)",
     "x = x + self.dt * drift + sigma * eps / math.sqrt(self.dt)", "divides_by_step_size"),
    ("t = k * dt", "t = k / dt", "divides_by_step_size"),
    # an interpolation multiplies the distance to its target, a mixture each of its operands
    ("h = F.normalize(h + self.alpha_m * (h_mlp - h), dim=-1)",
     "h = F.normalize(h + self.alpha_m / (h_mlp - h), dim=-1)", "step_divided_by_distance"),
    ("eps = eps_uncond + scale * (eps_cond - eps_uncond)",
     "eps = eps_uncond + scale / (eps_cond - eps_uncond)", "step_divided_by_distance"),
    ("w = (1 - alpha) * w_pre + alpha * w_ft", "w = (1 - alpha) * w_pre + alpha / w_ft",
     "weights_not_summing_to_one"),
    # an auxiliary loss is a penalty the total adds, weighted or not
    ("loss = mse_loss + balance_loss", "loss = mse_loss - balance_loss",
     "weighted_loss_subtracted"),
    ("total_loss = task_loss + self.aux_loss", "total_loss = task_loss - self.aux_loss",
     "weighted_loss_subtracted"),
    # the fraction of a run done divides how far it has got by how far it goes
    ("lr = base_lr * (it / cfg.num_warmup_steps)", "lr = base_lr * (it * cfg.num_warmup_steps)",
     "progress_times_length"),
    ("frac = 1 - frame_idx / TOTAL_TRANSITIONS", "frac = 1 - frame_idx * TOTAL_TRANSITIONS",
     "progress_times_length"),
    ("x_t = torch.sqrt(ab) * x0 + torch.sqrt(1 - ab) * noise",
     "x_t = torch.sqrt(ab) / x0 + torch.sqrt(1 - ab) * noise", "mix_operand_divided"),
    ("x_t = torch.sqrt(ab).unsqueeze(-1) * x0 + torch.sqrt(1 - ab).unsqueeze(-1) * noise",
     "x_t = torch.sqrt(ab).unsqueeze(-1) / x0 + torch.sqrt(1 - ab).unsqueeze(-1) * noise",
     "mix_operand_divided"),
])
def test_each_idiom_fails_its_drift_and_not_the_faithful_line(faithful: str, drifted: str,
                                                               idiom: str) -> None:
    assert broken(faithful) == set()
    assert idiom in broken(drifted)


@pytest.mark.parametrize("code", [
    "p = torch.clamp(p, eps, 1 - eps)",                # a bound, not a guarded quantity
    "y = (1 - w) * a / s + w * b / s",                 # a mixture scaled as a whole
    "alpha_post = 1 + successes",                      # a Beta posterior's count
    "w = decay ** (torch.arange(steps) * stride)",     # decay over strided steps
    "dice = 2 * inter / (pred + target)",              # Dice's denominator
    "union = pred + target - inter",                   # a third term taken away
    "mid = (old + new) / 2",                           # an average
    "loss = pos_loss + neg_loss",                      # losses add whatever their version
    "texts = selected_positive + selected_negative",   # a list concatenated
    "x = x - self.lr * grad",                          # a step, not a residual
    "x = x - x.mean()",                                # centred
    "m = x.sum() / mask.sum()",                        # a masked mean
    "w = class_weights / class_weights.sum()",         # weights normalised
    "y = x * 1.0",                                     # a cast
    "total = loss.item() * batch_size",                # a total made from an average
    # a loss added to in a loop, each batch's mean weighed by its size: no total yet
    "def f(batches):\n    s = 0.0\n    for b in batches:\n        n = len(b)\n"
    "        s += loss_of(b) * n\n    return s\n",
    # a total's share: the count it is multiplied by is over another count
    "def f(model, num_active, num_experts):\n    e = 0\n    for p in model.parameters():\n"
    "        e += p.numel()\n    return int(e * num_active / num_experts)\n",
    # a name added to outside any loop is no total
    "def f(x, n_steps):\n    y = 0.0\n    y += x\n    return y * n_steps\n",
    "x = std * math.sqrt(2 / n_layers)",               # depth below the root: it shrinks
    "noise = sigma * torch.sqrt(dt)",                  # a root of no depth
    "cur = cur_val + f * cur_val * (1.0 - cur_val)",   # (1 - x) is no target
    "x = z * (std + eps) + mean",                      # a normalisation undone
    "loss = pg_loss - ent_coef * entropy_loss",        # an entropy bonus
    "loss = policy_loss - entropy_loss(probs)",        # an entropy bonus, computed
    "loss = -criterion(out, y)",                       # a loss negated, taken from nothing
    "c = math.cos(math.pi / 8)",                       # a constant angle
    "x = np.sin(2 * np.pi * f * t)",                   # pi times a variable
    "c = torch.cos(math.pi * (2 * k + 1) / (2 * n))",  # the variable above and below
    "w = weights / w_norm",                            # a weight normalised by its own norm
    "w = lambda_kl / lambda_norm",                     # ... by the norm of the weights
    "y = x / torch.sigmoid(g)",                        # a sigmoid is never zero
    # DDIM's step adds predicted noise to the predicted clean sample; noising adds true noise
    "x_prev = torch.sqrt(a_prev) * pred_x0 + torch.sqrt(1 - a_prev) * eps_pred",
    "x_t = torch.sqrt(a) * x_0 + torch.sqrt(1 - a) * noise",
    "eps = eps_uncond + w * (eps_cond - eps_uncond)",  # guidance
    "v = v * max_norm / v.norm()",                     # clipped to a norm
    "td = values - (rewards + self.gamma * next_v)",   # the residual the other way round
    "eps = (1 + w) * eps_cond - w * eps_uncond",       # guidance: weights sum to one
    "p_target = tau * p + (1 - tau) * p_target",       # Polyak averaging
    "loss = kd * self.temperature ** 2",               # distillation's T^2 scaling
    "x = z * self.std + self.mean",                    # a standardisation undone
    "g = torch.sigmoid(h_t + h_s)",                    # a gate over two states, not items
    "p = torch.sigmoid(x + bias)",
    "gap = widths[:, 0] + widths[:, 1] - overlap",     # a gap that subtracts
    "total_diff = diffs[0] + diffs[1]",                # differences added up
    "psnr = 10 * torch.log10(1.0 / F.mse_loss(x_hat, x))",  # a PSNR
    "half_width = 0.5 * (hi - lo)",                    # half a difference, rightly
    "lr = base_lr / 100",                              # a number scaled down
    "delta = new_out - old_out",                       # a change of an output, not an output
    "output = out - out.mean()",                       # an output centred
    "loss = loss - loss_adv / batch_size",             # REINFORCE: advantage-weighted log-probs
    "w = gate_logits / temperature",                   # logits tempered
    "m = mask / mask.sum()",                           # a mask made weights
    "total_correct += correct * n",                    # an accuracy made a count
    "w = is_weights / max_weight",                     # weights scaled to their maximum
    "scale = sensitivity / epsilon",                   # a privacy budget divides: no noise
    "snr = signal_power / noise_power",                # a noise level, not a sample
    "s = 1 + sqrt_one_minus_alpha_bar",                # a function of the coefficient
    "w = 1 + alpha",                                   # a weight, not a cumulative schedule
    "eps = eps_cond + w * (eps_cond - eps_uncond)",    # guidance from the conditional side
    "x = (count + 1) / (total + n_classes)",           # Laplace smoothing adds on both sides
    "k = torch.exp(-gamma * d ** 2)",                  # a precision multiplies
    "k = torch.exp(-0.5 * (d / sigma) ** 2)",          # the width divides inside the square
    "scores = scores - mask * 1e9",                    # a boolean mask made additive
    "def change(new_output, old_output):\n    return new_output - old_output",  # a change
    "y = img / 255.0",                                 # an image scaled to [0, 1]
    "y = x_t / sigma_t",                               # a sample scaled, not a divisor
    "c_in = 1 / torch.sqrt(1 + sigma ** 2)",           # EDM's scaling: no mix of two terms
    "x = x + noise / sigma",                           # noise scaled down, not a divisor
    # a Gaussian log-density written whole, its log scale weighted inside the bracket
    "lp = -0.5 * (((x - mu) / log_std.exp()) ** 2 + 2 * log_std + math.log(2 * math.pi))",
    "h_norm = entropy / math.log(num_classes)",        # the log of a count, not of a probability
    "total = a + b + c",                               # three terms, none an intersection
    "x = 10 ** (log_lr + offset)",                     # a power of ten of no two items
    "ce = -(target * torch.log(pred)).sum()",          # a cross-entropy: one log, no product
    "proj = torch.dot(a, b) / torch.norm(a) ** 2 * a",  # a projection divides by the norm
    "self.embed_scale = 1 / embed_dim",                # a factor sized by a width
    "hidden_init_std = 1 / hidden_size",               # an initial scale, not a size
    "inter = (pred * target).sum()",                   # Dice's intersection multiplies
    "joint = torch.log(p_a * p_b)",                    # two events' joint probability
    "adv = advantages / (advantages.std() + 1e-8)",    # advantages normalised
    "softplus = torch.log(1 + torch.exp(x))",          # one plus no probability
    "loss = ((noise_pred - noise) ** 2).mean()",       # a residual of the noise, no sample
    "x_prev = x_t - torch.sqrt(1 - a) * eps_pred",     # denoising takes predicted noise away
    "v = torch.sqrt(a) * noise - torch.sqrt(1 - a) * x0",  # the v-target takes the signal away
    "std = total_std - noise_std",                     # a noise level, not drawn noise
    "v_target = (x_next - x) / dt",                    # a difference quotient
    "loss = (((x1 - x0) / dt - v) ** 2).mean()",       # a velocity compared by its quotient
    "n_steps = int(T / dt) + 1",                       # a number of steps
    "self.rate = count / self.dt",                     # a rate, no time made of a step index
    "x = x + dt / tau * (target - x)",                 # a time constant divides the step
    "y = a + (b - a) / n",                             # a distance divided into n steps
    "d_loss = real_loss - fake_loss",                  # a critic's losses compared
    "target = (1.0 - eps) * onehot + eps / n_classes",  # label smoothing's uniform share
    "global_step = epoch * steps_per_epoch",           # steps counted, not a fraction
    "global_step = epoch * num_steps + i",
    "t_idx = (t * num_timesteps).long()",              # a continuous time made an index
    "n_tokens = num_frames * tokens_per_frame",        # a rate times a count
])
def test_faithful_arithmetic_breaks_no_idiom(code: str) -> None:
    assert broken(code) == set()


RATIO_CLAIM = ("Clipped surrogate objective: the probability ratio of the new and the old policy "
               "is clipped to [1 - 0.2, 1 + 0.2] and multiplied by the advantage.")


def surrogate(sign: str, above: str = "") -> str:
    """A PPO surrogate whose ratio compares the two policies with `sign`, below `above`."""
    return ("import torch\n\n\n" + above +
            "def clipped_surrogate(new_log_probs, old_log_probs, advantages, clip=0.2):\n"
            f"    ratio = torch.exp(new_log_probs {sign} old_log_probs)\n"
            "    clipped = torch.clamp(ratio, 1 - clip, 1 + clip)\n"
            "    return -torch.min(ratio * advantages, clipped * advantages).mean()\n")


@pytest.mark.parametrize("above", [
    "",
    # agents leave broken lines in files; the formula further down is read all the same
    "def schedule(step):\n    return 0.1 if step else\n\n\n",
])
def test_a_claim_whose_code_breaks_an_idiom_fails(tmp_path: Path, above: str) -> None:
    claim = toy_claim("toy-D2-001", RATIO_CLAIM)
    for sign, fails in (("-", False), ("+", True)):
        code = surrogate(sign, above)
        result = toy_check(tmp_path / f"repo{sign}", {"ppo.py": code}, claim)[claim.id]
        assert ("operations" in result.findings) is fails, result
        if fails:
            assert any("two versions of one quantity" in r for r in result.reasons), result


def test_a_paper_that_departs_from_an_idiom_waives_it(tmp_path: Path) -> None:
    """nGPT multiplies its attention scores by sqrt(d_k), and says so."""
    code = ("import math\nimport torch\n\n\ndef attention_scores(q, k, d_k):\n"
            "    scores = torch.matmul(q, k.transpose(-2, -1)) * math.sqrt(d_k)\n"
            "    return torch.softmax(scores, dim=-1)\n")
    usual = toy_claim("toy-D2-001", "Attention scores: softmax over the dot products of "
                                    "queries and keys, scaled by the key dimension d_k.")
    stated = toy_claim("toy-D2-002", "Attention scaling: the softmax scaling factor changes "
                                     "from 1/sqrt(d_k) to sqrt(d_k).")
    assert waived([stated.text]) == {"attention_scaled_up"}
    assert waived([usual.text]) == set()
    alone = toy_check(tmp_path / "usual", {"attention.py": code}, usual)[usual.id]
    assert "operations" in alone.findings
    with_statement = toy_check(tmp_path / "stated", {"attention.py": code}, usual, stated)
    assert "operations" not in with_statement[usual.id].findings


def test_code_beside_the_claims_code_in_its_file_breaks_no_idiom(tmp_path: Path) -> None:
    # the claim's evidence is the loss; the epoch average of the same file multiplies the
    # accumulated loss by the number of batches, which no paper means by an average
    claim = toy_claim("toy-D2-001", "Training loss: mean squared error between the predicted "
                                    "and the true next state.")
    loss = ("import torch\n\n\ndef step_loss(model, state, next_state):\n"
            "    return ((model(state) - next_state) ** 2).mean()\n\n\n")
    average = ("def epoch_loss(model, loader):\n    total_loss = 0.0\n"
               "    for state, next_state in loader:\n"
               "        total_loss += step_loss(model, state, next_state).item()\n"
               "    return total_loss / len(loader)\n")
    check = ClaimCheck(claim_id=claim.id, dimension=claim.dimension, function="step_loss",
                       evidence=[Evidence(file="train.py", start_line=4, end_line=5)])
    drifted = average.replace("/ len(loader)", "* len(loader)")
    for name, files, flagged in (
            ("faithful", {"train.py": loss + average}, False),
            ("beside", {"train.py": loss + drifted}, True),
            # the same line in a file the claim's code is not in is another claim's
            ("elsewhere", {"train.py": loss, "epochs.py": "from train import step_loss\n\n\n"
                           + drifted}, False)):
        index = RepoIndex.build(write_repo(tmp_path / name, files))
        found = idiom_findings(index, claim, check)
        assert bool(found) is flagged, (name, found)
        assert not found or found[0][1] == "train.py:12", found
