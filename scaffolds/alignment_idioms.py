"""The alignment check's idiom rule: arithmetic that has one meaning in any paper.

A paper's formula says how its own quantities combine, and the structure rule holds the code to
it where the claim writes one. Much of a method's arithmetic, however, is written nowhere in the
claim because every paper means the same by it, and code that does the opposite computes no
formula any paper states:

- a guard against zero (`eps`, `1e-8`) is added to what divides or goes under a log or a root,
  and such a guarded sum is divided by, not multiplied by;
- a mask or a gate multiplies (a mask is 0 where it masks: dividing by it divides by zero);
- a log-probability weighs or is summed, and is no divisor;
- two versions of one quantity (prediction and target, new and old, chosen and rejected,
  conditional and unconditional) are compared by their difference, never added;
- dot-product attention divides its scores `q @ k^T` by a root of the dimension;
- `1 / sqrt(d)` and `1 / x ** k` scale down: one times a root or a power scales nothing;
- a quantity combined with a statistic of itself is centred (`x - x.mean()`) or normalised
  (`x / x.max()`), never `x + x.mean()` or `x * x.norm()`;
- `a + w * (b - a)` moves `a` towards `b` (interpolation, guidance); `a - w * (b - a)` moves
  it away;
- a residual connection adds the block's output to its input (and a sum of outputs adds
  each one), as an injection adds what it injects (`x + pooled_injection`);
- a total loss adds its weighted terms and the losses it is made of (an entropy bonus
  aside), and no loss is a divisor;
- a quantity named a difference (a margin, a gap) of two entries of one array is not their
  sum;
- a midpoint is half a sum, not half a difference;
- an output made of two branches' outputs adds them;
- lists join with `+` and cannot be subtracted or divided;
- a fraction of matches (`mean(pred == y)`, `correct / total`) becomes a percentage by
  multiplying by 100;
- a coefficient (a weight, a `lambda`) multiplies what it weighs;
- an accumulated total (of losses, of correct answers) is divided by a count to give an
  average, never multiplied by one;
- an angle is a multiple of pi (`cos(pi * t / 2)`, `sin(2 * pi * f * t)`): pi never divides
  inside a sine or a cosine, and an angle of pi over a variable shrinks as the variable grows;
- an activation that is zero somewhere (ReLU, GELU, SiLU, tanh) gates or is gated by a
  product (SwiGLU's `u * silu(v)`) and never divides;
- a denoising step takes the predicted noise away from the noisy sample (`x_t - c * eps_pred`);
  a step that adds predicted noise starts from the predicted clean sample (DDIM's
  `sqrt(a) * x0_pred + sqrt(1 - a) * eps_pred`), never from the noisy one;
- a time or position embedding is added to what it conditions, never subtracted;
- a unit vector (`v / v.norm()`) is brought to a norm by multiplying by it;
- a discounted future term has the reward's sign (`r + gamma * v_next`), and a not-done mask
  is `1 - done`, which multiplies;
- two weights of one mixture sum to one: `(1 - w) * a + w * b`, or `(1 + w) * a - w * b`;
- a Gaussian KL pairs `log_var` with `-exp(log_var)` and `mu ** 2` with `exp(log_var)`;
- a temperature divides the logits or similarities it sharpens or flattens;
- a standardisation subtracts the mean and divides by the standard deviation (or the root of
  the variance);
- a bias correction divides by `1 - beta ** t`;
- a clipping interval has one end below and one above its centre (`1 - eps`, `1 + eps`);
- a pairwise preference (Bradley-Terry, Elo) is a logistic of the difference of two items'
  scores, never of their sum;
- an error (squared, absolute, a norm) is of the difference between a quantity and its
  estimate (`eps - eps_hat`) or its target, never of their sum;
- a flow's velocity between two endpoints is their difference (`x1 - x0`);
- a sample of zero-mean noise (drawn, or a noise predictor's output) scales or is added, and
  never divides;
- a variance-preserving mix weighs by `sqrt(a)` and `sqrt(1 - a)`, whose squares sum to one;
- a Gaussian log-density gives its log scale the sign of its squared standardised residual;
- an Elo expected score is a power of ten of the rating difference divided by the scale;
- a union of two sets takes their intersection away once;
- a rate's or a share's denominator is a total (`tp + fp`, `exp(a) + exp(b)`), never a
  difference;
- a divergence weighs the log of two distributions' ratio, never of their product;
- a cosine similarity divides a dot product by both vectors' norms;
- a layer's size is a multiple of a size (`4 * d_model`), never a number divided by one;
- a frequency's exponent is a range of indices as a fraction of the size it spans
  (`base ** (arange(0, d, 2) / d)`), never that range times the size;
- two versions of one quantity in a ratio or under a log are divided, never multiplied;
- an advantage weighs what it scales and is no divisor;
- the other outcome's probability is `1 - p`: no log of `1 + p`;
- a schedule's cumulative coefficient (`alpha_bar`, `alphas_cumprod`) lies in (0, 1] and the
  noise's share is its complement: no `1 + alpha_bar`;
- a step from `a` toward `b` weighs their difference: `a + w * (b - a)`, never `(b + a)`;
- a ratio that takes an offset out of its denominator takes it out of its numerator too:
  `(step - warmup) / (total - warmup)`;
- a reciprocal root (`rsqrt`) and a decaying exponential (`exp(-x)`) multiply; dividing by
  them multiplies by the root or by `exp(x)`;
- a Gaussian kernel divides a squared distance by its width: `exp(-d / sigma ** 2)`, and
  is of a distance (a difference), never of a sum;
- an additive attention mask is added to the scores, never taken from them;
- a noisy sample is scaled and shifted by a diffusion step, never divided by;
- the forward process adds drawn noise to the signal (`sqrt(a) * x0 + sqrt(1 - a) * noise`),
  and a variance-preserving mix multiplies both its operands by their coefficients;
- an integration step is multiplied by its step size (`x + dt * v`, `t = k * dt`), a
  Brownian increment by its root, never divided by them;
- a step toward a target multiplies the distance to it (`h + a * (h_new - h)`), and each
  operand of a mixture is multiplied by its weight;
- an auxiliary loss (load balancing, regularisation, commitment) is a penalty the total adds;
- the fraction of a run done divides how far it has got by its length (`it / warmup_steps`).

Each idiom looks only at the code that carries a formula or algorithm claim (its best function,
the functions around its evidence, the functions those call and the evidence's own lines) and,
after it, at the rest of the files its code evidence is in (code beside the claim's that breaks
an idiom leaves that file short of any paper's method), so a stray expression in another file
of the repository fails nothing. A paper may depart from an idiom and say so (nGPT scales its
attention scores up by sqrt(d_k)): its claims then waive it. Names are read by their parts
(`r_chosen`, `macroActionNewLogProbs`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator

from sabench.scaffolds.alignment_formulas import (
    expression_text,
    flatten_product,
    flatten_sum,
    python_module,
)
from sabench.scaffolds.alignment_rules import carriers
from sabench.verifiers.checks import ClaimCheck
from sabench.verifiers.index import Definition, RepoIndex
from sabench.verifiers.spec import Claim, Dimension
from sabench.verifiers.stubs import call_name as last_name
from sabench.verifiers.terms import split_identifier
from sabench.verifiers.types import EvidenceKind

#: The largest literal read as a guard against zero rather than as a quantity.
EPSILON = 1e-4
EPSILON_NAMES = frozenset({"eps", "epsilon"})
#: Calls whose argument a guard keeps away from zero.
GUARDED_CALLS = frozenset({"log", "log2", "log10", "sqrt", "rsqrt"})
MASKS = frozenset({"mask", "masks", "gate", "gates", "gating"})
#: Names of a value kept to divide by.
DIVISORS = frozenset({"denom", "denominator", "divisor"})
#: Words that make a name a count or a sum rather than a mask (`num_masked`, `mask_sum`).
COUNTS = frozenset({"num", "n", "count", "counts", "total", "sum", "len", "size", "norm"})
#: Statistics that centre a quantity (subtracted) or normalise it (divided by).
CENTRES = frozenset({"mean", "max", "amax", "min", "amin", "median", "logsumexp"})
SCALES = frozenset({"sum", "norm", "max", "amax", "std"})
ROOTS = frozenset({"sqrt"})
#: Functions of an angle, and activations that take the value zero.
TRIGONOMETRIC = frozenset({"sin", "cos", "tan"})
PI = frozenset({"pi"})
ZERO_ACTIVATIONS = frozenset({"relu", "gelu", "silu", "swish", "tanh", "leaky_relu", "elu",
                              "selu", "mish"})
#: A noisy sample's name is made of these words only (`x_t`, `noisy_latents`), and names
#: the predicted noise with a word of each of the other two sets (`eps_pred`, `noise_hat`).
SAMPLE_WORDS = frozenset({"x", "xt", "z", "zt", "sample", "samples", "latent", "latents",
                          "img", "image", "images"})
SAMPLE_QUALIFIERS = frozenset({"t", "k", "i", "n", "cur", "curr", "current", "noisy", "in"})
NOISE_WORDS = frozenset({"eps", "epsilon", "noise"})
PREDICTED = frozenset({"pred", "predicted", "hat", "theta", "model"})
EMBEDDINGS = frozenset({"emb", "embed", "embedding", "embeddings", "enc", "encoding"})
POSITIONS = frozenset({"t", "time", "timestep", "timesteps", "pos", "position", "positional"})
DISCOUNTS = frozenset({"gamma", "discount"})
REWARDS = frozenset({"r", "rew", "reward", "rewards", "delta", "deltas"})
DONE = frozenset({"done", "dones", "terminal", "terminals", "terminated", "terminateds"})
LOG_VARIANCES = frozenset({"logvar", "log_var", "log_variance", "logvariance", "log_sigma2",
                           "log_sigma_sq"})
TEMPERATURES = frozenset({"temperature", "temp"})
SHARPENED = frozenset({"logits", "logit", "scores", "sim", "sims", "similarity",
                       "similarities", "dist", "distance", "distances", "energy"})
MEANS = frozenset({"mean", "mu", "avg", "average"})
DEVIATIONS = frozenset({"std", "sigma", "stddev", "stdev"})
TRANSPOSES = frozenset({"transpose", "T", "mT", "permute", "t"})
MATMULS = frozenset({"matmul", "bmm", "mm", "einsum"})
COEFFICIENTS = frozenset({"weight", "weights", "coef", "coeff", "coefficient", "lambda", "lam"})
#: Qualifiers that name two versions of one quantity, each against its counterpart.
VERSIONS = (
    (frozenset({"pred", "preds", "prediction", "predictions", "predicted", "hat", "recon",
                "reconstructed", "reconstruction", "estimate", "estimated"}),
     frozenset({"target", "targets", "true", "gt", "truth", "label", "labels", "actual"})),
    (frozenset({"new", "cur", "curr", "current", "online"}),
     frozenset({"old", "prev", "previous", "ref", "reference", "behavior", "behaviour"})),
    (frozenset({"chosen", "pos", "positive", "preferred", "winner", "winning"}),
     frozenset({"rejected", "neg", "negative", "dispreferred", "loser", "losing"})),
    (frozenset({"cond", "conditional", "conditioned"}),
     frozenset({"uncond", "unconditional", "unconditioned"})),
)
#: A version no qualifier names may still stand against one of these (`logprobs` and
#: `old_logprobs`).
UNMARKED_AGAINST = frozenset({"old", "prev", "previous", "ref", "reference"})
QUALIFIERS = frozenset().union(*(a | b for a, b in VERSIONS))
#: Accumulated totals, which a count divides.
TOTALS = frozenset({"cumulative", "accumulated", "sum"})
#: Words that are a total only beside a count's word: `correct` alone may be an accuracy.
COUNTED = frozenset({"correct", "hits", "matches"})
TOTALLED = frozenset({"loss", "losses", "nll", "reward", "rewards", "return", "returns",
                      "error", "errors", "score", "scores"})
#: What is added up or joined whatever its version: losses and counts sum (`pos_loss +
#: neg_loss`), collections concatenate (`pos_texts + neg_texts`).
ADDED = frozenset({"loss", "losses", "nll", "cost", "penalty", "count", "counts", "num", "n",
                   "total", "sum", "size", "texts", "text", "samples", "examples", "responses",
                   "prompts", "ids", "items", "pairs", "data", "list", "sentences", "inputs",
                   "tokens", "batch", "docs", "documents", "indices", "idx"})
LOGITS = frozenset({"logits", "logit", "scores", "score"})
LOG_PROBABILITIES = frozenset({"logp", "logprob", "logprobs", "logpi", "loglik",
                               "loglikelihood"})
PROBABILITIES = frozenset({"prob", "probs", "probability", "probabilities", "likelihood",
                           "likelihoods", "lik", "p", "pi"})
#: A total loss adds its weighted terms; what it subtracts is what training maximises: an
#: entropy bonus, or a policy gradient's advantage- or reward-weighted log-probabilities.
LOSSES = frozenset({"loss", "losses", "nll"})
BONUSES = frozenset({"entropy", "ent", "bonus", "adv", "advantage", "advantages", "reward",
                     "rewards", "objective"})
#: Losses a total adds beside its main one, as penalties (`balance_loss`, `aux_loss`).
AUXILIARIES = frozenset({"aux", "auxiliary", "balance", "balancing", "reg", "regularization",
                         "regularisation", "regularizer", "penalty", "commitment", "sparsity",
                         "smoothness"})
OUTPUTS = frozenset({"out", "output", "outputs", "residual"})
#: What is put into a state (an injection is added to it, by the word's own meaning).
INJECTIONS = frozenset({"inject", "injection", "injected", "injections"})

_MODULES = frozenset({"torch", "np", "numpy", "math", "F", "jnp", "tf", "scipy"})
#: Calls that leave a value what it is (`x.detach()`, `loss.item()`).
_SAME = frozenset({"detach", "item", "float", "double", "clone", "cpu", "to", "squeeze",
                   "unsqueeze", "contiguous"})


def idiom_findings(index: RepoIndex, claim: Claim, check: ClaimCheck,
                   waived: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    """(reason, where) for the first expression of the code carrying a formula or algorithm
    claim, then of the rest of the files its code evidence is in, that breaks an idiom;
    `waived`: the idioms the paper itself departs from."""
    if claim.dimension != Dimension.D2:
        return []
    chosen = [idiom for idiom in IDIOMS if idiom.__name__ not in waived]
    for file, node in [*carrying_nodes(index, check), *beside_nodes(index, check)]:
        for idiom in chosen:
            reason = idiom(node)
            if reason:
                where = f"{file}:{node.lineno}"
                return [(f"{expression_text(node)} at {where} {reason}", where)]
    return []


#: How a paper writes that it departs from an idiom: nGPT multiplies its attention scores by
#: sqrt(d_k) ("scores = (q_i @ k_i^T) * sqrt(d_k)", "change softmax scaling ... to sqrt(d_k)").
STATED_OTHERWISE = {
    "attention_scaled_up": re.compile(r"(?:[*×·⋅]|\bto)\s*(?:√|sqrt)\s*\(?\s*\{?d_\{?(?:k|h|head)",
                                      re.I),
}


def waived(texts: list[str]) -> frozenset[str]:
    """The idioms that the paper's claims (`texts`) say it departs from."""
    return frozenset(name for name, pattern in STATED_OTHERWISE.items()
                     if any(pattern.search(text) for text in texts))


def carrying_nodes(index: RepoIndex, check: ClaimCheck) -> list[tuple[str, ast.AST]]:
    """The expressions and assignments on the lines of the functions that carry the claim, of
    the functions they call and of its code evidence (cached: two rules read them)."""
    cache = index.cache.setdefault("alignment_carrying_nodes", {})
    if check.claim_id not in cache:
        cache[check.claim_id] = list(_carrying_nodes(index, check))
    return cache[check.claim_id]


def _carrying_nodes(index: RepoIndex, check: ClaimCheck) -> Iterator[tuple[str, ast.AST]]:
    spans: dict[str, list[tuple[int, int]]] = {}
    carrying = carriers(index, check)
    for d in [*carrying, *callees(index, carrying)]:
        spans.setdefault(d.file, []).append((d.start, d.end))
    for e in check.evidence:
        if e.kind == EvidenceKind.CODE:
            spans.setdefault(e.file, []).append((e.start_line, e.end_line))
    for file, ranges in spans.items():
        module = python_module(index, file, tests=False)
        if module is None:
            continue
        for node in _expressions(index, file, module):
            if any(a <= node.lineno <= b for a, b in ranges):
                yield file, node


def beside_nodes(index: RepoIndex, check: ClaimCheck) -> list[tuple[str, ast.AST]]:
    """The expressions and assignments of the files of the claim's code evidence that
    `carrying_nodes` leaves out: code beside the claim's, in the file that holds it."""
    carrying = {id(node) for _, node in carrying_nodes(index, check)}
    files = dict.fromkeys(e.file for e in check.evidence if e.kind == EvidenceKind.CODE)
    return [(file, node) for file in files
            if (module := python_module(index, file, tests=False)) is not None
            for node in _expressions(index, file, module) if id(node) not in carrying]


def callees(index: RepoIndex, callers: list[Definition]) -> list[Definition]:
    """The functions `callers` call, where the call's name says which: the one function of
    that name in the repository, or the one in the caller's own file (`self._loss_fn`)."""
    by_name = index.cache.get("alignment_functions_by_name")
    if by_name is None:
        by_name = index.cache["alignment_functions_by_name"] = {}
        for d in index.functions():
            by_name.setdefault(d.name, []).append(d)
    found: dict[tuple[str, str], Definition] = {}
    for caller in callers:
        for name, _ in caller.calls:
            named = by_name.get(name, [])
            local = [d for d in named if d.file == caller.file]
            for d in named if len(named) == 1 else local if len(local) == 1 else ():
                found.setdefault((d.file, d.qualname), d)
    return list(found.values())


def _expressions(index: RepoIndex, file: str, module: ast.Module) -> list[ast.AST]:
    cache = index.cache.setdefault("alignment_idiom_nodes", {})
    if file not in cache:
        cache[file] = expressions(module)
    return cache[file]


def expressions(tree: ast.AST) -> list[ast.AST]:
    """The operations, calls and assignments of `tree`, each knowing where it stands."""
    for parent in ast.walk(tree):  # an idiom may ask what an expression is part of
        for child in ast.iter_child_nodes(parent):
            child.idiom_parent = parent  # type: ignore[attr-defined]
    return [n for n in ast.walk(tree)
            if isinstance(n, (ast.BinOp, ast.Call, ast.Assign, ast.AugAssign))]


def _parent(node: ast.AST) -> ast.AST | None:
    return getattr(node, "idiom_parent", None)


def _assigned(node: ast.AST) -> frozenset[str]:
    """The words of the names `node` is assigned to as a whole (`texts = pos + neg`)."""
    return _words_assigned(_parent(node))


def _words_assigned(statement: ast.AST | None) -> frozenset[str]:
    """The words of the names an assignment statement assigns (none for anything else)."""
    targets = statement.targets if isinstance(statement, ast.Assign) else \
        [statement.target] if isinstance(statement, (ast.AnnAssign, ast.AugAssign)) else []
    return frozenset().union(*(parts(t) for t in targets))


def _compared_otherwise(node: ast.AST) -> bool:
    """A sum that stands in a denominator (Dice's `|A| + |B|`), is averaged (`(a + b) / 2`) or
    has a third term taken from it (`pred + target - overlap`)."""
    parent, child = _parent(node), node
    if isinstance(parent, ast.BinOp) and isinstance(parent.op, (ast.Sub, ast.Div)) and \
            parent.left is node:
        return True
    while parent is not None and not isinstance(parent, ast.stmt):
        if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Div) and \
                parent.right is child:
            return True
        parent, child = _parent(parent), parent
    return False


# ------------------------------------------------------------------------------- names


def parts(node: ast.AST) -> frozenset[str]:
    """The words of the name an operand is read by: `self.r_chosen` {r, chosen},
    `weights['w_c']` {weights, w, c}, `x.detach()` as `x`."""
    node = _strip(node)
    if isinstance(node, ast.Name):
        return _words(node.id)
    if isinstance(node, ast.Attribute):
        return _words(node.attr)
    if isinstance(node, ast.Subscript):
        key = node.slice
        keyed = _words(key.value) if isinstance(key, ast.Constant) and \
            isinstance(key.value, str) else frozenset()
        return parts(node.value) | keyed
    return frozenset()


def _words(name: str) -> frozenset[str]:
    return frozenset(split_identifier(name))


def _strip(node: ast.AST) -> ast.AST:
    """`x.detach().float()` is `x`."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr in _SAME:
        node = node.func.value
    return node


def _bare(node: ast.AST) -> bool:
    return isinstance(_strip(node), (ast.Name, ast.Attribute, ast.Subscript))


def call_name(node: ast.AST) -> str | None:
    """`torch.sqrt(x)`, `np.linalg.norm(x)` and `x.sqrt()`: `sqrt`, `norm`; None for anything
    but a call (`self.mean` is a value, not a mean)."""
    return last_name(node) if isinstance(node, ast.Call) else None


def _operand(node: ast.Call) -> ast.AST | None:
    """What a one-operand operation is of: `torch.mean(x)` and `x.mean()` both `x`."""
    func = node.func
    if isinstance(func, ast.Attribute) and not _module(func.value):
        return func.value
    return node.args[0] if node.args else None


def _module(node: ast.AST) -> bool:
    """`torch`, `np.linalg`: a library, not a value."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id in _MODULES


def _same(a: ast.AST, b: ast.AST) -> bool:
    """The same expression, whether read or assigned (`x` of `x = x - f(x)`)."""
    return ast.unparse(_strip(a)) == ast.unparse(_strip(b))


def _is_epsilon(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, float):
        return 0 < node.value <= EPSILON
    return _last_name(_strip(node)).lower().lstrip("_") in EPSILON_NAMES


def _last_name(node: ast.AST) -> str:
    """The name a variable or attribute is read by (`self.sigma`: `sigma`); "" for anything
    else."""
    return node.id if isinstance(node, ast.Name) else \
        node.attr if isinstance(node, ast.Attribute) else ""


def is_one(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and not isinstance(node.value, bool) and \
        node.value == 1


# ------------------------------------------------------------------------------- idioms


def guard_subtracted(node: ast.AST) -> str | None:
    """`x / (n - eps)`, `log(p - 1e-8)`, `denom = 1 - alpha - 1e-6`: a guard against zero
    taken away from what divides (or is named a divisor) or goes under a log or a root."""
    guarded = node.right if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) \
        else node.args[0] if call_name(node) in GUARDED_CALLS and node.args \
        else node if isinstance(node, ast.BinOp) and _assigned(node) & DIVISORS else None
    if guarded is None:
        return None
    terms = flatten_sum(guarded)
    if len(terms) < 2 or len(terms) == 2 and is_one(terms[0][0]):
        return None  # `1 - eps` is a bound, not a guarded quantity
    if any(sign < 0 and _is_epsilon(term) for term, sign in terms):
        return "subtracts its guard against zero, which is added to what divides or goes " \
               "under a log or a root"
    return None


def guard_multiplied(node: ast.AST) -> str | None:
    """`x * (n + eps)`: a sum guarded against zero only for dividing, multiplied. A product
    that is itself shifted undoes such a division (`z * (std + eps) + mean`), and is left."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)) or \
            isinstance(parent := _parent(node), ast.BinOp) and \
            isinstance(parent.op, (ast.Add, ast.Sub)):
        return None
    for factor in (node.left, node.right):
        terms = flatten_sum(factor)
        if len(terms) >= 2 and any(sign > 0 and _is_epsilon(t) for t, sign in terms) and \
                not all(is_one(t) or _is_epsilon(t) for t, _ in terms):
            return "multiplies by a sum guarded against zero, which only a divisor needs"
    return None


def divides_by_mask(node: ast.AST) -> str | None:
    """`x / mask`, `out / gate_scores`, `gate / up`: a mask or gate in a division."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and _bare(node.right)):
        return None
    divisor, divided = parts(node.right), parts(node.left) if _bare(node.left) else frozenset()
    if divisor & MASKS and not divisor & COUNTS or divided & MASKS and not divided & (
            COUNTS | LOGITS) and not _normaliser(node.right):
        return "divides where a mask or gate multiplies (a mask is zero where it masks)"
    return None


def divides_by_log_probability(node: ast.AST) -> str | None:
    """`-advantage / log_prob`, `-2 / log_likelihood`: a log-probability as a divisor."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)):
        return None
    divisor = _strip(node.right)
    if call_name(divisor) == "log" and (of := _operand(divisor)) is not None and _bare(of):
        words = parts(of) | {"log"}  # `p / torch.log(p)`: the log of a probability
    else:
        words = parts(divisor) if _bare(divisor) else frozenset()
    if words & LOG_PROBABILITIES or "log" in words and words & PROBABILITIES:
        return "divides by a log-probability, which weighs (multiplies) or is summed"
    return None


def versions_added(node: ast.AST) -> str | None:
    """`pred + target`, `logp_new + logp_old`, `r_chosen + r_rejected`: two versions of one
    quantity added where they are compared."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)):
        return None
    if not (_bare(node.left) and _bare(node.right)) or _compared_otherwise(node):
        return None
    left, right = parts(node.left), parts(node.right)
    if not (left | right | _assigned(node)) & ADDED and counterparts(left, right):
        return "adds two versions of one quantity, which are compared by their difference"
    return None


def counterparts(a: frozenset[str], b: frozenset[str]) -> bool:
    """Two names of one quantity in two versions: opposite qualifiers (or one unmarked against
    `old`, `ref`), and the rest of the names agreeing."""
    stem_a, stem_b = a - QUALIFIERS, b - QUALIFIERS
    if stem_a and stem_b and not stem_a & stem_b:
        return False
    for one, other in VERSIONS:
        if a & one and b & other or a & other and b & one:
            return True
    if not (stem_a and stem_b):
        return False
    return bool(b & UNMARKED_AGAINST and not a & QUALIFIERS or
                a & UNMARKED_AGAINST and not b & QUALIFIERS)


def attention_scaled_up(node: ast.AST) -> str | None:
    """`q @ k.transpose(-2, -1) * sqrt(d)`: attention scores multiplied by a root."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
        return None
    factors = [f for f, exponent in flatten_product(node) if exponent > 0]
    if any(_scores(f) or _transposed(f) for f in factors) and any(_root(f) for f in factors):
        return "multiplies attention scores q·kᵀ by a root of the dimension, which divides them"
    return None


def _scores(node: ast.AST) -> bool:
    """A product of queries with transposed keys."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        return _transposed(node.right)
    if isinstance(node, ast.Call) and call_name(node) in MATMULS:
        return call_name(node) == "einsum" or len(node.args) >= 2 and \
            _transposed(node.args[1])
    return False


def _transposed(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr in TRANSPOSES or \
        call_name(node) in TRANSPOSES


def _root(node: ast.AST) -> bool:
    return call_name(node) in ROOTS or isinstance(node, ast.BinOp) and \
        isinstance(node.op, ast.Pow) and isinstance(node.right, ast.Constant) and \
        node.right.value == 0.5


def one_times_power(node: ast.AST) -> str | None:
    """`1.0 * math.sqrt(d)`, `1.0 * (base ** e)`: a reciprocal written as a product by one."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and is_one(node.left) \
            and (call_name(node.right) in ROOTS or isinstance(node.right, ast.BinOp) and
                 isinstance(node.right.op, ast.Pow)):
        return "multiplies a root or a power by one, where a reciprocal 1 / x scales down"
    return None


def own_statistic(node: ast.AST) -> str | None:
    """`x + x.mean()`, `x * np.max(x)`: a quantity moved by its own centre, or scaled up by its
    own size."""
    if not isinstance(node, ast.BinOp):
        return None
    if isinstance(node.op, (ast.Add, ast.Sub)):
        terms = flatten_sum(node)
        for term, sign in terms:
            centre = _strip(term)  # `x.mean(dim=0).detach()` is the mean still
            if call_name(centre) in CENTRES and (of := _operand(centre)) is not None and any(
                    other_sign == sign and _same(other, of) for other, other_sign in terms
                    if other is not term):
                return "adds to a quantity its own centre, which is subtracted to centre it"
    if isinstance(node.op, (ast.Mult, ast.Div)):
        factors = flatten_product(node)
        for factor, exponent in factors:
            size = _strip(factor)
            if call_name(size) in SCALES and (of := _operand(size)) is not None and any(
                    other_exponent == exponent and _same(other, of)
                    for other, other_exponent in factors if other is not factor):
                return "multiplies a quantity by its own size, which divides it to normalise"
    return None


def away_from_target(node: ast.AST) -> str | None:
    """`a - w * (b - a)`: a step from `a` away from `b` where `a + w * (b - a)` moves towards it."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub)):
        return None
    for factor, exponent in flatten_product(node.right):
        if exponent > 0 and isinstance(factor, ast.BinOp) and isinstance(factor.op, ast.Sub) \
                and _same(factor.right, node.left) and not _same(factor.left, node.left) \
                and not isinstance(factor.left, ast.Constant):
            return "steps away from the target it interpolates towards (a + w * (b - a))"
    return None


def residual_subtracted(node: ast.AST) -> str | None:
    """`x = x - block(x)`, `x = x - attn_output`: a block's output taken from its input."""
    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Sub):
        target, taken = node.target, node.value
    elif isinstance(node, ast.Assign) and len(node.targets) == 1 and \
            isinstance(value := _normalised(node.value), ast.BinOp) and \
            isinstance(value.op, ast.Sub) and _same(node.targets[0], value.left):
        target, taken = node.targets[0], value.right
    else:
        return None
    block_of_target = isinstance(taken, ast.Call) and call_name(taken) not in CENTRES | \
        SCALES and any(_same(a, target) for a in taken.args)
    outputs = [f for f, exponent in flatten_product(taken) if exponent > 0 and _bare(f) and
               parts(f) & (OUTPUTS | INJECTIONS)]
    if block_of_target or outputs:
        return "subtracts a block's output (or an injection) from its input, which a " \
               "residual connection (an injection) adds"
    return None


def _normalised(node: ast.AST) -> ast.AST:
    """What a post-norm block normalises: `x - attn_out` of `self.norm1(x - attn_out)`."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and \
            "norm" in (call_name(node) or "").lower():
        return node.args[0]
    return node


def weighted_loss_subtracted(node: ast.AST) -> str | None:
    """`loss = cfm_loss - lambda_vae * recon_loss`: a weighted loss term taken from the total
    it is part of."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub))) or \
            isinstance(_parent(node), ast.BinOp) or not _assigned(node) & LOSSES:
        return None
    terms = flatten_sum(node)
    for term, sign in terms:
        factors = [f for f, _ in flatten_product(term)]
        words = _names_in(term)
        if sign < 0 and len(factors) >= 2 and words & LOSSES and not words & BONUSES:
            return "subtracts a weighted loss term from the total loss, which adds its terms"
        # `loss = mse_loss - balance_loss`: an auxiliary loss is a penalty the total adds
        if sign < 0 and words & LOSSES and words & AUXILIARIES and not words & BONUSES:
            return "subtracts an auxiliary loss from the total loss, which adds it as a penalty"
        # `loss = criterion(low, y_low) - criterion(high, y_high)`: one loss taken from another
        if sign < 0 and _loss_call(term) and any(s > 0 for _, s in terms):
            return "subtracts a loss term from the total loss, which adds its terms"
    return None


#: Calls that compute a loss though no part of their name is "loss" (`F.cross_entropy`).
LOSS_CALLS = frozenset({"criterion", "cross_entropy", "binary_cross_entropy",
                        "binary_cross_entropy_with_logits"})


def _loss_call(node: ast.AST) -> bool:
    """A call of a loss function (`criterion(out, y)`, `F.mse_loss(x_hat, x)`,
    `self.recon_loss(x)`), not of an entropy bonus (`entropy_loss(p)`)."""
    name = call_name(_strip(node))
    if name is None:
        return False
    words = _words(name.lower())
    return name in LOSS_CALLS or bool(words & LOSSES) and not words & BONUSES


def divides_by_loss(node: ast.AST) -> str | None:
    """`recon = 0.5 / F.mse_loss(x_hat, x)`: a loss as a divisor, so that training would
    raise the loss it minimises (a PSNR's `log10(1 / mse)` aside)."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)) or \
            not _loss_call(node.right):
        return None
    parent = _parent(node)
    while parent is not None and not isinstance(parent, ast.stmt):
        if call_name(parent) in GUARDED_CALLS:
            return None
        parent = _parent(parent)
    return "divides by a loss, which is minimised: the quotient grows as the loss falls"


def outputs_subtracted(node: ast.AST) -> str | None:
    """`output = shared_out - routed_out`, `return shared_output - routed_output`: an output
    made of two branches' outputs, one taken from the other where they add."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub)) or \
            isinstance(_parent(node), ast.BinOp):
        return None
    # a returned difference of two versions (`new_out - old_out`) is a change, not an output
    returned = isinstance(_parent(node), ast.Return) and \
        not (parts(node.left) | parts(node.right)) & QUALIFIERS
    if not (target_words(node) & OUTPUTS or returned):
        return None
    if _bare(node.left) and _bare(node.right) and parts(node.left) & OUTPUTS and \
            parts(node.right) & OUTPUTS and not _same(node.left, node.right):
        return "subtracts one branch's output from another's where the output adds them"
    return None


def lists_subtracted(node: ast.AST) -> str | None:
    """`list(a) - list(b)`: arithmetic on lists other than joining or repeating them, which
    Python refuses."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Sub, ast.Div)) and \
            _a_list(node.left) and _a_list(node.right):
        return "subtracts or divides lists, which cannot run (lists join with +)"
    return None


def _a_list(node: ast.AST) -> bool:
    return isinstance(node, (ast.List, ast.ListComp)) or \
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "list"


#: Names of a point halfway between two others.
MIDPOINTS = frozenset({"center", "centers", "centre", "centres", "mid", "midpoint", "midpoints",
                       "middle"})


def midpoint_differenced(node: ast.AST) -> str | None:
    """`centers = 0.5 * (edges[:-1] - edges[1:])`: a midpoint computed as half a difference,
    where it is half a sum."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div))) or \
            isinstance(_parent(node), ast.BinOp) or not target_words(node) & MIDPOINTS:
        return None
    factors = flatten_product(node)
    halves = [f for f, e in factors if isinstance(f, ast.Constant) and (
        e > 0 and f.value == 0.5 or e < 0 and f.value == 2)]
    differences = [f for f, e in factors if e > 0 and isinstance(f, ast.BinOp) and
                   isinstance(f.op, ast.Sub)]
    if len(factors) == 2 and halves and differences:
        return "halves a difference where its name says it is a midpoint, half a sum"
    return None


def percent_divided(node: ast.AST) -> str | None:
    """`accuracy = np.mean(pred == labels) / 100`, `(correct / total) / 100`: a fraction of
    matches divided by 100, where a percentage multiplies it by 100."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)) or \
            not (isinstance(node.right, ast.Constant) and node.right.value == 100):
        return None
    left = _strip(node.left)
    of = _operand(left) if call_name(left) == "mean" else None
    counted = isinstance(left, ast.BinOp) and isinstance(left.op, ast.Div) and \
        _bare(left.left) and bool(parts(left.left) & COUNTED)  # `correct / total`
    if of is not None and isinstance(of := _strip(of), ast.Compare) and \
            isinstance(of.ops[0], ast.Eq) or counted:
        return "divides a fraction of matches by 100, which a percentage multiplies it by"
    return None


#: Names of a difference between two values (`margin`, `prob_diffs`, `gap`).
DIFFERENCES = frozenset({"diff", "diffs", "difference", "differences", "margin", "margins",
                         "gap", "gaps"})


def difference_added(node: ast.AST) -> str | None:
    """`margin = probs[:, 0] + probs[:, 1]`, `prob_diff = abs(p[0] + p[1])`: a quantity named a
    difference, computed as the sum of two entries of one array (of values, not of differences,
    which add up)."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)) or \
            not target_words(node) & DIFFERENCES:
        return None
    left, right = _strip(node.left), _strip(node.right)
    if isinstance(left, ast.Subscript) and isinstance(right, ast.Subscript) and \
            _same(left.value, right.value) and not _same(left, right) and \
            not parts(left) & DIFFERENCES and \
            not any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Sub)
                    for n in ast.walk(statement_of(node))):
        return "adds two entries of one quantity where its name says it is their difference"
    return None


def statement_of(node: ast.AST) -> ast.AST:
    """The statement an expression of `expressions` stands in."""
    while not isinstance(node, ast.stmt) and _parent(node) is not None:
        node = _parent(node)
    return node


def target_words(node: ast.AST) -> frozenset[str]:
    """The words of the names the statement holding `node` assigns (`prob_diffs = [abs(a +
    b) for ...]`)."""
    return _words_assigned(statement_of(node))


def coefficient_divides(node: ast.AST) -> str | None:
    """`lambda_reg / penalty`, `weights['w_c'] / contacts`: a coefficient divided by what it
    weighs."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)):
        return None
    words = parts(node.left)
    if _bare(node.left) and words & COEFFICIENTS and not words & (COUNTS | {"decay"}) \
            and not isinstance(node.right, ast.Constant) and \
            not _normaliser(node.right, of=words):
        return "divides a coefficient by what it weighs, which it multiplies"
    return None


def _names_in(node: ast.AST) -> frozenset[str]:
    """The words of every name in an expression."""
    return frozenset().union(*(parts(n) for n in ast.walk(node)
                               if isinstance(n, (ast.Name, ast.Attribute, ast.Subscript))))


def _normaliser(node: ast.AST, of: frozenset[str] | None = None) -> bool:
    """A sum, a count, a norm or a temperature: what weights are divided by. Given the words
    `of` the weight that is divided, a named norm normalises only the weight itself (`w /
    w_norm`, `w / norm`), not the norm of another quantity (`weights['wg'] / g_xy_norm_sq`
    weighs the squared norm), nor that of the quantity the weight is named for
    (`weights['w_q_ddot'] / torch.norm(q_ddot) ** 2`, `lambda_kl / kl_norm`)."""
    if isinstance(node, ast.Call):
        # `w / w.sum()`, `w / len(w)`, `w / np.linalg.norm(w)`; but a module taken from a
        # list (`self.experts[i](x)`) computes what the weight weighs
        return not isinstance(node.func, ast.Subscript)
    words = _names_in(node)
    if of is not None and "norm" in words and not words & (COUNTS - {"norm"}):
        other = words - {"norm", "sq", "squared", "l2", "l1"}
        own = of & (COEFFICIENTS | {"w"})  # `w_q_ddot` is the weight of `q_ddot`
        return not other or any(a.startswith(b) or b.startswith(a) for a in other for b in own)
    return bool(words & (COUNTS | {"max", "min", "mean", "temperature", "temp", "tau", "z"}))


def total_times_count(node: ast.AST) -> str | None:
    """`total_loss * len(loader)`, `correct * total`, `val_loss * total_steps` after a loop of
    `val_loss += loss.item()`: an accumulated total multiplied by a count."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
        return None
    a, b = node.left, node.right
    if (_count(b) and _total(a) or _count(a) and _total(b)) and not _in_ratio(node):
        return "multiplies an accumulated total by a count, which divides it into an average"
    return None


def _in_ratio(node: ast.AST) -> bool:
    """The product `node` is divided by a count (`expert_params * top_k / num_experts`): the
    count it multiplies is the numerator of a share."""
    while isinstance(_parent(node), ast.BinOp) and \
            isinstance(_parent(node).op, (ast.Mult, ast.Div, ast.FloorDiv)):
        node = _parent(node)
    return any(exponent < 0 and _count(f) for f, exponent in flatten_product(node))


def _total(node: ast.AST) -> bool:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "sum":
        return True
    words = parts(node) if _bare(node) else frozenset()
    return bool(words & TOTALS or words & {"total", "running"} and words & TOTALLED or
                words & COUNTED and words & {"count", "total", "num", "n"}) or \
        _accumulated(node)


def _accumulated(node: ast.AST) -> bool:
    """A name the function holding `node` adds to in a loop (`val_loss += loss.item()` under a
    `for`): a total, whatever it is called."""
    if not isinstance(node, ast.Name):
        return False
    function = enclosing_function(node)
    return function is not None and any(
        isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Add) and
        isinstance(n.target, ast.Name) and n.target.id == node.id and _in_loop(n, function)
        for n in ast.walk(function))


def enclosing_function(node: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The function an expression of `expressions` stands in (None: module level)."""
    while node is not None and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        node = _parent(node)
    return node


def _in_loop(node: ast.AST, function: ast.AST) -> bool:
    """`node` stands in a loop of `function`."""
    node = _parent(node)
    while node is not None and node is not function:
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            return True
        node = _parent(node)
    return False


def _count(node: ast.AST) -> bool:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id == "len":
            return True
        if node.func.id == "max" and any(is_one(a) for a in node.args):
            return True  # `max(n, 1)`: a count kept from zero for dividing
    words = parts(node) if _bare(node) else frozenset()
    return bool(words & {"num", "count", "total", "n"}) and not words & TOTALLED


def angle_divided_by_pi(node: ast.AST) -> str | None:
    """`cos(t / math.pi / 2)`, `sin(math.pi / step)`: a sine or cosine of an angle that pi
    divides, or of pi divided by a variable with no variable multiplying it."""
    if call_name(node) not in TRIGONOMETRIC or not node.args:
        return None
    factors = flatten_product(node.args[0])
    if any(exponent < 0 and _is_pi(f) for f, exponent in factors):
        return "divides an angle by pi, which multiplies it (an angle is a multiple of pi)"
    over = [f for f, exponent in factors if exponent < 0 and not isinstance(f, ast.Constant)]
    times = [f for f, exponent in factors if exponent > 0 and not _is_pi(f) and
             not isinstance(f, ast.Constant)]
    if any(_is_pi(f) for f, exponent in factors if exponent > 0) and over and not times:
        return "takes pi over a variable as an angle, which pi times the variable is"
    return None


def _is_pi(node: ast.AST) -> bool:
    """`math.pi`, `np.pi`, `torch.pi`, `pi`."""
    return _last_name(node) in PI


def divides_by_activation(node: ast.AST) -> str | None:
    """`u / F.silu(v)`, `x / torch.relu(h)`: a division by an activation that is zero on part
    of its inputs."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and \
            (call_name(node.right) or "").lower() in ZERO_ACTIVATIONS:
        return "divides by an activation, which is zero on part of its inputs and gates by " \
               "multiplying"
    return None


def predicted_noise_added(node: ast.AST) -> str | None:
    """`x_k + beta / sqrt(1 - alpha_bar) * eps_pred`: predicted noise added to the noisy sample
    it is to be taken from."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub))):
        return None
    terms = flatten_sum(node)
    noisy = any(sign > 0 and any(_noisy_sample(f) for f, e in flatten_product(term) if e > 0)
                for term, sign in terms)
    added = any(sign > 0 and any(_predicted_noise(f) for f, e in flatten_product(term) if e > 0)
                for term, sign in terms)
    if noisy and added:
        return "adds the predicted noise to the noisy sample, from which a denoising step " \
               "takes it away"
    return None


def _noisy_sample(node: ast.AST) -> bool:
    words = parts(node) if _bare(node) else frozenset()
    return bool(words & SAMPLE_WORDS) and words <= SAMPLE_WORDS | SAMPLE_QUALIFIERS


def _predicted_noise(node: ast.AST) -> bool:
    words = parts(node) if _bare(node) else frozenset()
    return bool(words & NOISE_WORDS and words & PREDICTED)


def embedding_subtracted(node: ast.AST) -> str | None:
    """`h - t_emb`, `t_emb - cond`: a sum of a time or position embedding that subtracts."""
    terms = _top_sum(node)
    if terms is None:
        return None
    if any(sign < 0 for _, sign in terms) and any(_time_embedding(t) for t, _ in terms):
        return "subtracts in a sum with a time or position embedding, which is added to what " \
               "it conditions"
    return None


def _time_embedding(node: ast.AST) -> bool:
    words = parts(node) if _bare(node) else frozenset()
    return bool(words & EMBEDDINGS and words & POSITIONS or words & {"temb", "pe"})


def unit_vector_divided(node: ast.AST) -> str | None:
    """`v / v.norm() / target_norm`: a unit vector divided by the norm it is to be given."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)) or \
            isinstance(_parent(node), ast.BinOp):
        return None
    factors = flatten_product(node)
    own = [f for f, e in factors if e < 0 and call_name(_strip(f)) == "norm" and
           (of := _operand(_strip(f))) is not None and
           any(_same(g, of) for g, ge in factors if ge > 0)]
    named = [f for f, e in factors if e < 0 and _bare(f) and "norm" in parts(f)]
    if own and named:
        return "divides a unit vector by a norm, which multiplies it to give it that norm"
    return None


def _top_sum(node: ast.AST) -> list[tuple[ast.AST, int]] | None:
    """The terms of a sum that is not itself a term of a larger one."""
    parent = _parent(node)
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub))) or \
            isinstance(parent, ast.BinOp) and isinstance(parent.op, (ast.Add, ast.Sub)):
        return None
    return flatten_sum(node)


def _factor_words(term: ast.AST) -> list[frozenset[str]]:
    """The words of each bare factor a term multiplies by."""
    return [parts(f) for f, e in flatten_product(term) if e > 0 and _bare(f)]


def discount_against_reward(node: ast.AST) -> str | None:
    """`r - gamma * v_next`: a discounted future term of the other sign than the reward."""
    terms = _top_sum(node)
    if terms is None:
        return None
    discounted = {sign for term, sign in terms
                  if any(w & DISCOUNTS for w in _factor_words(term))}
    rewarded = {sign for term, sign in terms if _bare(term) and parts(term) & REWARDS and
                not parts(term) & DISCOUNTS}
    if len(discounted) == 1 and len(rewarded) == 1 and discounted != rewarded:
        return "gives the discounted future the other sign than the reward, which it adds to"
    return None


def done_added(node: ast.AST) -> str | None:
    """`1 + done`, `x / (1 - dones)`: a not-done mask written as a sum, or dividing."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and (
            is_one(node.left) and _done(node.right) or is_one(node.right) and
            _done(node.left)):
        return "adds a done flag to one, where the not-done mask is 1 - done"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and \
            isinstance(node.right, ast.BinOp) and isinstance(node.right.op, ast.Sub) and \
            is_one(node.right.left) and _done(node.right.right):
        return "divides by the not-done mask 1 - done, which multiplies (it is zero at the end)"
    return None


def _done(node: ast.AST) -> bool:
    return _bare(node) and bool(parts(node) & DONE)


def weights_not_summing_to_one(node: ast.AST) -> str | None:
    """`(1 + t) * x0 + t * x1`, `(1 - w) * a - w * b`: two weights of a mixture that do not
    sum to one; `(1 - w) / a + w * b`, `(1 - w) * a + w / b`: an operand divided where the
    mixture weighs it."""
    terms = _top_sum(node)
    if terms is None or len(terms) != 2:
        return None
    for (first, first_sign), (second, second_sign) in (terms, terms[::-1]):
        for factor, exponent in flatten_product(first):
            if exponent > 0 and isinstance(factor, ast.BinOp) and \
                    isinstance(factor.op, (ast.Add, ast.Sub)) and is_one(factor.left) and \
                    _bare(factor.right) and first_sign > 0 and any(
                        e > 0 and _same(f, factor.right) for f, e in flatten_product(second)):
                plus = isinstance(factor.op, ast.Add)
                if plus == (second_sign > 0):
                    return "weighs a mixture by weights that do not sum to one"
                if _operand_divides(first, second) or _operand_divides(second, first):
                    return "divides one operand of a mixture by its weight's term, where " \
                           "each operand is multiplied by its weight"
    return None


def _operand_divides(first: ast.AST, second: ast.AST) -> bool:
    """Of two weighted terms `c * a` and `w * b`, each one weight times one operand, one
    divides its operand (`(1 - w) / a + w * b`)."""
    one, other = flatten_product(first), flatten_product(second)
    divisors = [f for f, e in one if e < 0]
    # `eps / n_classes` weighs the uniform distribution: a count divides, as in any mean
    return len(one) == len(other) == 2 and len(divisors) == 1 and \
        all(e > 0 for _, e in other) and not _normaliser(divisors[0])


def kl_signs(node: ast.AST) -> str | None:
    """`1 + log_var + mu ** 2 - log_var.exp()`: a Gaussian KL whose terms have the wrong
    signs (`log_var` goes with `-exp(log_var)`, `mu ** 2` with `exp(log_var)`)."""
    terms = _top_sum(node)
    if terms is None:
        return None
    log_var = {sign for term, sign in terms if _log_variance(term)}
    variance = {sign for term, sign in terms if call_name(term) == "exp" and
                (of := _operand(term)) is not None and _log_variance(of)}
    mean_sq = {sign for term, sign in terms if isinstance(term, ast.BinOp) and
               isinstance(term.op, ast.Pow) and _bare(term.left) and parts(term.left) & MEANS}
    if len(variance) == 1 and (log_var == variance or mean_sq and mean_sq != variance):
        return "gives the Gaussian KL's terms the wrong signs (log variance against its " \
               "exponential, the squared mean with it)"
    return None


def _log_variance(node: ast.AST) -> bool:
    return _last_name(_strip(node)).lower() in LOG_VARIANCES


def temperature_multiplies(node: ast.AST) -> str | None:
    """`logits * temperature`, `sim * self.temp`: a temperature that multiplies."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)) or \
            isinstance(_parent(node), ast.BinOp):
        return None
    words = _factor_words(node)
    if any(w & TEMPERATURES for w in words) and any(w & SHARPENED for w in words):
        return "multiplies by a temperature, which divides the logits it scales"
    return None


def standardised_otherwise(node: ast.AST) -> str | None:
    """`(x + mean) / std`, `(x - mean) * std`: a standardisation that adds the mean or
    multiplies by the standard deviation."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div))) or \
            isinstance(_parent(node), ast.BinOp) and \
            isinstance(_parent(node).op, (ast.Mult, ast.Div)):
        return None
    factors = flatten_product(node)
    for factor, exponent in factors:
        if not (exponent > 0 and isinstance(factor, ast.BinOp) and
                isinstance(factor.op, (ast.Add, ast.Sub)) and _bare(factor.right) and
                parts(factor.right) & MEANS and not parts(factor.right) & DEVIATIONS):
            continue
        deviations = [e for f, e in factors if f is not factor and _deviation(f)]
        if deviations == [-1] and isinstance(factor.op, ast.Add) or \
                deviations == [1] and isinstance(factor.op, ast.Sub):
            return "standardises otherwise than by subtracting the mean and dividing by " \
                   "the standard deviation"
    return None


def _deviation(node: ast.AST) -> bool:
    """`std`, `self.sigma`, `torch.sqrt(var + eps)`: a standard deviation."""
    if _bare(node):
        return bool(parts(node) & DEVIATIONS)
    return call_name(node) in ROOTS and (of := _operand(node)) is not None and \
        bool(_names_in(of) & {"var", "variance"})


def bias_correction_multiplies(node: ast.AST) -> str | None:
    """`m * (1 - beta1 ** t)`: a bias correction that multiplies where it divides."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
        return None
    for factor, exponent in flatten_product(node):
        if exponent > 0 and isinstance(factor, ast.BinOp) and isinstance(factor.op, ast.Sub) \
                and is_one(factor.left) and isinstance(factor.right, ast.BinOp) and \
                isinstance(factor.right.op, ast.Pow) and _bare(factor.right.left) and \
                parts(factor.right.left) & {"beta", "beta1", "beta2", "b1", "b2"}:
            return "multiplies by a bias correction 1 - beta ** t, which divides"
    return None


def one_sided_interval(node: ast.AST) -> str | None:
    """`clamp(ratio, 1 + eps, 1 + eps)`: a clipping interval whose two ends lie on one side
    of the same centre."""
    if call_name(node) not in {"clamp", "clip"}:
        return None
    given = [*node.args[1:3], *(k.value for k in node.keywords if k.arg in
                               {"min", "max", "a_min", "a_max", "clip_value_min",
                                "clip_value_max"})]
    ends = [e for e in given if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add,
                                                                               ast.Sub))]
    if len(ends) == 2 and type(ends[0].op) is type(ends[1].op) and \
            _same(ends[0].left, ends[1].left) and _same(ends[0].right, ends[1].right):
        return "clips to an interval whose two ends are the same, on one side of its centre"
    return None


#: Calls that turn a difference of two items' scores into a preference probability.
LOGISTIC = frozenset({"sigmoid", "logsigmoid", "expit", "log_sigmoid"})
#: The letters two compared items are told apart by (`r_a`, `r_b`; `s_i`, `s_j`; `r_w`, `r_l`).
ITEM_PAIRS = ({"a", "b"}, {"i", "j"}, {"w", "l"})


def preference_of_sum(node: ast.AST) -> str | None:
    """`sigmoid(r_a + r_b)`, `logsigmoid(scores[i] + scores[j])`: a pairwise preference of
    the sum of two items' scores."""
    if call_name(node) not in LOGISTIC or not node.args:
        return None
    return _preference_of(node.args[0])


def elo_of_sum(node: ast.AST) -> str | None:
    """`1 / (1 + 10 ** ((r_b + r_a) / 400))`, `10 ** ((r_b - r_a) * 400)`: an Elo expected
    score of the sum of the two players' ratings, or of their difference scaled up."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and
            isinstance(node.left, ast.Constant) and node.left.value == 10):
        return None
    inner = node.right
    if isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Mult) and any(
            isinstance(c, ast.Constant) and isinstance(c.value, (int, float)) and
            abs(c.value) >= 10 for c in (inner.left, inner.right)):
        return "multiplies the rating difference by the Elo scale, which divides it"
    return _preference_of(inner)


def _preference_of(inner: ast.AST) -> str | None:
    """The reason a comparison of two items (scaled, or negated) is of their sum."""
    while isinstance(inner, ast.BinOp) and isinstance(inner.op, (ast.Mult, ast.Div)):
        inner = inner.left if not isinstance(inner.left, ast.Constant) else inner.right
    if isinstance(inner, ast.UnaryOp) and isinstance(inner.op, ast.USub):
        inner = inner.operand
    if isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Add) and \
            _siblings(inner.left, inner.right):
        return "takes a preference of the sum of two items' scores, which compares their " \
               "difference"
    return None


def _siblings(a: ast.AST, b: ast.AST) -> bool:
    """Two entries of one array (`s[i]`, `s[j]`), or two names that differ in one trailing
    index (`r_a` and `r_b`, `score1` and `score2`)."""
    a, b = _strip(a), _strip(b)
    if isinstance(a, ast.Subscript) and isinstance(b, ast.Subscript):
        return _same(a.value, b.value) and not _same(a.slice, b.slice)
    names = [_last_name(a), _last_name(b)]
    if "" in names or names[0] == names[1]:
        return False
    ends = [re.match(r"(.+?)_?([a-z]|\d+)$", n) for n in names]
    if None in ends or ends[0].group(1) != ends[1].group(1):
        return False
    pair = {ends[0].group(2), ends[1].group(2)}
    return all(e.isdigit() for e in pair) or pair in ITEM_PAIRS


#: What an estimate or a controlled quantity is compared with.
TARGETS = VERSIONS[0][1]
ESTIMATED = frozenset({"pred", "preds", "predicted", "hat", "estimate", "estimated",
                       "recon", "reconstructed", "theta"})
ERRORS = frozenset({"abs", "norm", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"})
VELOCITIES = frozenset({"v", "u", "vt", "ut", "velocity", "vel", "flow"})


def estimate_added_in_error(node: ast.AST) -> str | None:
    """`((eps + eps_hat) ** 2).mean()`, `norm(x + x_hat)`, `(x + x_target) ** 2`: the error
    of an estimate (or of a quantity against its target) taken on their sum."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and
            _bare(node.left) and _bare(node.right)):
        return None
    left, right = parts(node.left), parts(node.right)
    marks = QUALIFIERS | ESTIMATED
    estimate = bool(left & ESTIMATED and not right & marks and right <= left or
                    right & ESTIMATED and not left & marks and left <= right or
                    # what is compared with a target (`(state + target_state) ** 2`)
                    left & TARGETS and not right & marks or right & TARGETS and not left & marks)
    parent = _parent(node)
    squared = isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Pow) and \
        isinstance(parent.right, ast.Constant) and parent.right.value == 2
    if estimate and (squared or call_name(parent) in ERRORS):
        return "takes the error of an estimate on its sum with what it estimates, where " \
               "the error is of their difference"
    return None


def velocity_of_sum(node: ast.AST) -> str | None:
    """`v_target = x1 + x0`: a flow's velocity as the sum of its two endpoints."""
    if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.BinOp) and
            isinstance(node.value.op, ast.Add)) or not _words_assigned(node) & VELOCITIES:
        return None
    terms = flatten_sum(node.value)
    names = [parts(f) for term, _ in terms for f, e in flatten_product(term)
             if e > 0 and _bare(f)]
    if len(terms) == 2 and any(
            a - {"0"} == b - {"1"} and "0" in a and "1" in b for a in names for b in names):
        return "takes a velocity between two endpoints as their sum, where it is their " \
               "difference"
    return None


#: Words that make a noise name the size of the noise rather than a sample of it.
NOISE_SIZES = frozenset({"std", "scale", "level", "levels", "sigma", "sigmas", "var", "rate",
                         "ratio", "strength", "weight", "coef", "coeff", "factor", "mult",
                         "multiplier", "amount", "magnitude", "power", "snr", "schedule",
                         "min", "max", "type", "dim", "steps", "aug"})
NOISE_DRAWS = frozenset({"randn", "randn_like", "normal", "standard_normal"})
#: Names of a sample of noise itself, whatever else the name says (`noise`, `batch_noise`).
NOISE_SAMPLES = frozenset({"noise", "noises"})
#: What a network's output is called: `eps_out` of a noise predictor is predicted noise.
NETWORK_OUTPUTS = frozenset({"out", "output", "outputs"})


def divides_by_noise(node: ast.AST) -> str | None:
    """`std / noise`, `x / eps_pred`, `s / torch.randn_like(s)`: a division by a sample of
    zero-mean noise, which is near zero as often as not."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)):
        return None
    divisor = _strip(node.right)
    if call_name(divisor) in NOISE_DRAWS or _noise_sample(divisor):
        return "divides by a sample of zero-mean noise, which scales or is added"
    return None


def step_divided_by_distance(node: ast.AST) -> str | None:
    """`h + alpha / (h_new - h)`: a step from a point toward a target divided by the distance
    to it, which an interpolation multiplies (it vanishes as the point arrives)."""
    terms = _top_sum(node)
    if terms is None:
        return None
    starts = [term for term, sign in terms if sign > 0 and _bare(term)]
    for term, _ in terms:
        for factor, exponent in flatten_product(term):
            if exponent < 0 and isinstance(factor, ast.BinOp) and \
                    isinstance(factor.op, ast.Sub) and \
                    any(_same(factor.right, start) for start in starts):
                return "divides a step toward a target by the distance to it, which an " \
                       "interpolation multiplies"
    return None


#: Words of a name for how far a run has got (`step`, `it`, `frame_idx`), and of a name for
#: how far it goes, in the same unit (`total_steps`, `num_warmup_steps`, `max_iters`).
POSITIONS_IN_RUN = frozenset({"step", "it", "iter", "iteration", "frame", "epoch"})
RUN_LENGTHS = frozenset({"steps", "iters", "iterations", "frames", "transitions", "epochs",
                         "timesteps", "updates"})
RUN_TOTALS = frozenset({"total", "num", "max", "warmup", "n"})


def progress_times_length(node: ast.AST) -> str | None:
    """`step * total_steps`, `it * num_warmup_steps`: how far a run has got multiplied by how
    far it goes, where the fraction of the run done divides the two (`epoch *
    steps_per_epoch` and `epoch * num_steps + i` count steps, `num_frames * tokens_per_frame`
    tokens, and are left alone)."""
    parent = _parent(node)
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)) or \
            isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Add):
        return None  # `epoch * num_steps + i` counts steps
    sides = [parts(side) if _bare(side) else frozenset() for side in (node.left, node.right)]
    for position, length in (sides, sides[::-1]):
        if position & POSITIONS_IN_RUN and not position & (RUN_TOTALS | RUN_LENGTHS) and \
                length & RUN_LENGTHS and length & RUN_TOTALS and "per" not in position | length:
            return "multiplies how far the run has got by its length, where the fraction " \
                   "done divides them"
    return None


#: Names of a time a step index is turned into (`t = k * dt`).
TIMES = frozenset({"t", "time", "current_t", "cur_t", "t_cur", "t_current"})


def divides_by_step_size(node: ast.AST) -> str | None:
    """`x = x + v / dt`, `t = k / dt`, `eps / math.sqrt(dt)` in an update: an integration step
    divided by its step size (or a Brownian increment by its root), which it is multiplied
    by, so that the step grows as the step size shrinks. A difference quotient (`(x1 - x0) /
    dt`) and a number of steps (`n = T / dt`) stand in no update, and are left alone."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)):
        return None
    divisor = _strip(node.right)
    if not (_step_size(divisor) or _step_size(_root_of(divisor))) or \
            isinstance(node.left, ast.BinOp) and isinstance(node.left.op, ast.Sub):
        return None
    term = node  # the product the division is a factor of (`0.5 / dt * k1`)
    while isinstance(_parent(term), ast.BinOp) and isinstance(_parent(term).op, (ast.Mult,
                                                                                 ast.Div)):
        term = _parent(term)
    parent = _parent(term)
    in_update = isinstance(parent, ast.BinOp) and isinstance(parent.op, (ast.Add, ast.Sub)) \
        or isinstance(parent, ast.AugAssign)
    names = _names_of(parent) if isinstance(parent, ast.Assign) else set()
    if in_update or names and names <= TIMES:
        return "divides an integration step by its step size, which it is multiplied by"
    return None


def _step_size(node: ast.AST | None) -> bool:
    """`dt`, `self.dt`, `ode_dt`, `step_size`, `delta_t`; not a derivative's name (`du_dt`)."""
    if node is None or not _bare(node):
        return False
    words = parts(node)
    derivative = any(w.startswith("d") and w != "dt" and len(w) <= 3 for w in words)
    return "dt" in words and not derivative or words in ({"step", "size"}, {"delta", "t"})


def _names_of(statement: ast.Assign) -> set[str]:
    """The plain names an assignment sets (`t` of `t = k * dt`)."""
    return {t.id.lower() for t in statement.targets if isinstance(t, ast.Name)}


#: Words that say a sample has had noise put into it (`noisy_x`, `perturbed_data`).
NOISED = frozenset({"noisy", "noised", "perturbed", "corrupted"})


def noise_subtracted(node: ast.AST) -> str | None:
    """`x_t = sqrt(a) * x0 - sqrt(1 - a) * noise`: a noisy sample made by taking drawn noise
    away from the signal, where the forward process adds it. A residual (`noise_pred -
    noise`) or a denoising step (`x_t - sqrt(1 - a) * eps_pred`) assigns no noisy sample or
    takes away predicted noise, and is left alone."""
    terms = _top_sum(node)
    if terms is None or not _makes_noisy_sample(node):
        return None
    noisy = [any(e > 0 and _drawn_noise(f) for f, e in flatten_product(term))
             for term, _ in terms]
    if any(n and sign < 0 for n, (_, sign) in zip(noisy, terms, strict=True)) and \
            any(not n and sign > 0 for n, (_, sign) in zip(noisy, terms, strict=True)):
        return "makes a noisy sample by subtracting the noise, which the forward process adds"
    return None


def _makes_noisy_sample(node: ast.AST) -> bool:
    """The statement holding `node` assigns a noisy sample (`x_t`, `noisy_latents`)."""
    words = target_words(node)
    return bool(words & NOISED) or bool(words & SAMPLE_WORDS) and \
        words <= SAMPLE_WORDS | SAMPLE_QUALIFIERS


def _drawn_noise(node: ast.AST) -> bool:
    """Noise drawn at random (`noise`, `torch.randn_like(x)`), not predicted nor a level."""
    if call_name(_strip(node)) in NOISE_DRAWS:
        return True
    words = parts(node) if _bare(node) else frozenset()
    return bool(words & NOISE_SAMPLES) and \
        not words & (PREDICTED | NETWORK_OUTPUTS | NOISE_SIZES)


def _noise_sample(node: ast.AST) -> bool:
    """`noise`, `self.noise`, `eps_pred`, `epsilon_output`: noise drawn or predicted, not a
    noise level; a bare `eps` is a guard constant or a privacy budget, not noise."""
    words = parts(node) if _bare(node) else frozenset()
    return not words & NOISE_SIZES and (
        bool(words & NOISE_SAMPLES) or
        bool(words & NOISE_WORDS and words & (PREDICTED | NETWORK_OUTPUTS)))


def variance_not_preserved(node: ast.AST) -> str | None:
    """`sqrt(a) * x0 + sqrt(1 + a) * noise`: the two coefficients of a variance-preserving mix
    whose squares do not sum to one."""
    terms = _top_sum(node)
    if terms is None or len(terms) != 2:
        return None
    roots = [[_root_of(f) for f, e in flatten_product(term) if e > 0] for term, _ in terms]
    for mine, other in (roots, roots[::-1]):
        for inner in filter(None, mine):
            if isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Add) and \
                    is_one(inner.left) and _bare(inner.right) and \
                    any(o is not None and _same(o, inner.right) for o in other):
                return "mixes with coefficients sqrt(a) and sqrt(1 + a), whose squares do " \
                       "not sum to one"
    return None


def mix_operand_divided(node: ast.AST) -> str | None:
    """`sqrt(a) / x0 + sqrt(1 - a) * noise`: a variance-preserving mix (its coefficients the
    roots of `a` and `1 - a`) that divides one of its operands, which each coefficient
    multiplies."""
    terms = _top_sum(node)
    if terms is None or len(terms) != 2:
        return None
    factors = [flatten_product(term) for term, _ in terms]
    roots = [[_root_of(f) for f, e in mine if e > 0] for mine in factors]
    complementary = any(
        isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Sub) and is_one(inner.left)
        and any(o is not None and _same(o, inner.right) for o in other)
        for mine, other in (roots, roots[::-1]) for inner in mine if inner is not None)
    if complementary and any(e < 0 and _bare(f) for mine in factors for f, e in mine):
        return "divides an operand of a variance-preserving mix, which its coefficient " \
               "multiplies"
    return None


def _root_of(node: ast.AST) -> ast.AST | None:
    """What `sqrt(x)`, `x.sqrt()` and `x ** 0.5` are the root of (reshaped or not:
    `sqrt(a).unsqueeze(-1)`)."""
    node = _strip(node)
    if call_name(node) in ROOTS:
        return _operand(node)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and \
            isinstance(node.right, ast.Constant) and node.right.value == 0.5:
        return node.left
    return None


LOG_SCALES = frozenset({"log_std", "logstd", "log_sigma", "logsigma", "log_scale"})


def gaussian_log_density_signs(node: ast.AST) -> str | None:
    """`-0.5 * ((x - mu) / std) ** 2 + log(std)`: a Gaussian log-density (or its negative)
    whose log-scale term has the other sign than its squared standardised residual."""
    terms = _top_sum(node)
    if terms is None:
        return None
    scales = {sign * _coefficient_sign(term) for term, sign in terms if _log_scale(term)}
    residuals = {sign * _coefficient_sign(term) for term, sign in terms
                 if _squared_residual(term)}
    if len(scales) == 1 and len(residuals) == 1 and scales != residuals:
        return "gives a Gaussian log-density's log scale the other sign than its squared " \
               "residual"
    return None


def _coefficient_sign(term: ast.AST) -> int:
    """-1 for a term that a negative constant multiplies (`-0.5 * r ** 2`), else 1."""
    sign = 1
    for factor, _ in flatten_product(term):
        negated = isinstance(factor, ast.UnaryOp) and isinstance(factor.op, ast.USub)
        negative = isinstance(factor, ast.Constant) and \
            isinstance(factor.value, (int, float)) and factor.value < 0
        sign = -sign if negated or negative else sign
    return sign


def _log_scale(term: ast.AST) -> bool:
    """A term of `log(std)`, `torch.log(sigma)`, `log_std` or `logvar` alone or weighted."""
    for factor, exponent in flatten_product(term):
        factor = _strip(factor)
        if isinstance(factor, ast.UnaryOp):
            factor = factor.operand
        if exponent > 0 and (call_name(factor) == "log" and (of := _operand(factor)) is not None
                             and _bare(of) and parts(of) & DEVIATIONS or
                             _last_name(factor).lower() in LOG_SCALES | LOG_VARIANCES):
            return True
    return False


def _squared_residual(term: ast.AST) -> bool:
    """A term holding the square of a difference (`(x - mu) ** 2`), divided by a scale or
    standardised inside the square (`((x - mu) / std) ** 2`)."""
    factors = flatten_product(term)
    for factor, exponent in factors:
        if isinstance(factor, ast.UnaryOp):
            factor = factor.operand
        if exponent > 0 and isinstance(factor, ast.BinOp) and isinstance(factor.op, ast.Pow) \
                and isinstance(factor.right, ast.Constant) and factor.right.value == 2:
            inside = flatten_product(factor.left)
            difference = any(isinstance(f, ast.BinOp) and isinstance(f.op, ast.Sub) and e > 0
                             for f, e in inside)
            scaled = any(e < 0 for _, e in inside) or any(e < 0 for f, e in factors
                                                          if f is not factor)
            if difference and scaled:
                return True
    return False


INTERSECTIONS = frozenset({"inter", "intersection", "intersect", "overlap", "overlaps"})


def union_adds_intersection(node: ast.AST) -> str | None:
    """`area_a + area_b + inter`: a union of two sets that adds their intersection, which it
    counts twice unless taken away."""
    terms = _top_sum(node)
    if terms is None or len(terms) != 3:
        return None
    shared = [sign for term, sign in terms if _bare(term) and parts(term) & INTERSECTIONS]
    if shared == [1] and all(sign > 0 for _, sign in terms):
        return "adds the intersection to the two sets, whose union counts it once"
    return None


CONFUSION = frozenset({"tp", "fp", "fn", "tn", "precision", "recall", "prec", "rec"})


def divides_by_difference(node: ast.AST) -> str | None:
    """`tp / (tp - fp)`, `2 * p * r / (precision - recall)`, `exp(a) / (exp(a) - exp(b))`:
    a rate or a share whose denominator, a total of counts or of weights, subtracts."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)):
        return None
    terms = flatten_sum(_strip(node.right))
    if len(terms) < 2 or all(sign > 0 for _, sign in terms):
        return None
    counts = all(_bare(t) and parts(t) & CONFUSION for t, _ in terms)
    exponentials = all(call_name(t) == "exp" for t, _ in terms)
    if counts or exponentials:
        return "divides by a difference where the denominator is a total"
    return None


def kl_of_product(node: ast.AST) -> str | None:
    """`p * (log(p) + log(q))`, `p * log(p * q)`: a KL divergence (or cross-entropy) weighing
    the log of the two distributions' product, where it is the log of their ratio."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
        return None
    factors = flatten_product(node)
    weights = [f for f, e in factors if e > 0 and _bare(f)]
    for factor, exponent in factors:
        if exponent <= 0:
            continue
        if call_name(factor) == "log" and (of := _operand(factor)) is not None:
            logged = [f for f, e in flatten_product(of) if e > 0 and _bare(f)]
        else:
            terms = flatten_sum(factor) if isinstance(factor, ast.BinOp) else []
            logged = [_operand(t) for t, sign in terms if sign > 0 and call_name(t) == "log"]
            if len(terms) != 2 or len(logged) != 2:
                continue
        if len(logged) == 2 and all(o is not None and _bare(o) for o in logged) and any(
                _same(w, o) for w in weights for o in logged):
            return "weighs the log of the two distributions' product, where a divergence " \
                   "takes the log of their ratio"
    return None


DOTS = frozenset({"dot", "matmul", "mm", "bmm", "inner", "vdot"})


def similarity_times_norm(node: ast.AST) -> str | None:
    """`(a * b).sum() * (a.norm() * b.norm())`, `dot(a, b) / (na / nb)`: a dot product scaled
    up by the norm of one of its vectors, where a cosine similarity divides by both."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div))) or \
            isinstance(_parent(node), ast.BinOp) and \
            isinstance(_parent(node).op, (ast.Mult, ast.Div)):
        return None
    factors = flatten_product(node)
    vectors = [v for f, e in factors if e > 0 for v in _dot_operands(f)]
    for factor, exponent in factors:
        of = _operand(factor) if call_name(factor) == "norm" else None
        if exponent > 0 and of is not None and any(_same(of, v) for v in vectors):
            return "multiplies a dot product by the norm of one of its vectors, where a " \
                   "cosine similarity divides by both"
    return None


def _dot_operands(node: ast.AST) -> list[ast.AST]:
    """The two vectors of `dot(a, b)`, `a @ b` or `(a * b).sum()`; none for anything else."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        return [node.left, node.right]
    if call_name(node) in DOTS and isinstance(node, ast.Call) and len(node.args) == 2:
        return list(node.args)
    if call_name(node) == "sum" and (of := _operand(node)) is not None and \
            isinstance(of, ast.BinOp) and isinstance(of.op, ast.Mult):
        return [of.left, of.right]
    return []


#: Words of a layer size's name (`d_mlp`, `hidden_dim`), and of what a size is (`d_model`).
WIDTHS = frozenset({"dim", "dims", "size", "width", "hidden", "channels", "ff", "ffn", "mlp"})
SIZES = WIDTHS | {"model", "embed", "emb"}
#: Words of a name that holds a factor, however sized: `embed_scale = 1 / embed_dim`.
FACTORS = frozenset({"scale", "scaling", "inv", "ratio", "factor", "coef", "coeff", "lr",
                     "std", "init", "temperature", "weight", "norm", "frac", "fraction",
                     "eps"})


def size_below_one(node: ast.AST) -> str | None:
    """`self.d_mlp = 4 / self.d_model`: a layer size set to a constant divided by a size, a
    fraction where a width is a multiple."""
    if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.BinOp) and
            isinstance(node.value.op, ast.Div)):
        return None
    number, size = node.value.left, node.value.right
    if isinstance(number, ast.Constant) and isinstance(number.value, int) and \
            not isinstance(number.value, bool) and number.value > 0 and _bare(size) and \
            parts(size) & SIZES and _words_assigned(node) & WIDTHS and \
            not _words_assigned(node) & FACTORS:
        return "sets a size to a number divided by a size, which is below one"
    return None


def exponent_times_size(node: ast.AST) -> str | None:
    """`base ** (torch.arange(0, dim, 2) / dim)` written `* dim`: a frequency's exponent runs
    over a range of indices as a fraction of the size it spans; times the size it runs off
    any number's range."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow)):
        return None
    factors = flatten_product(_strip(node.right))
    ranged = any(e > 0 and call_name(_strip(f)) == "arange" for f, e in factors)
    if ranged and any(e > 0 and _bare(f) and (parts(f) & SIZES or parts(f) == {"d"})
                      for f, e in factors):
        return "raises to a range of indices times a size, where the exponent is the " \
               "indices as a fraction of the size"
    return None


RATIOS = frozenset({"ratio", "ratios", "rho", "importance"})


def versions_multiplied(node: ast.AST) -> str | None:
    """`log(pi_new * pi_old)`, `ratio = p_new * p_old`: two versions of one quantity
    multiplied where a log-ratio or a ratio compares them."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and
            _bare(node.left) and _bare(node.right)):
        return None
    parent = _parent(node)
    logged = call_name(parent) in {"log", "log2", "log10"}
    named_ratio = isinstance(parent, ast.Assign) and bool(_words_assigned(parent) & RATIOS)
    if (logged or named_ratio) and counterparts(parts(node.left), parts(node.right)):
        return "multiplies two versions of one quantity, which a ratio compares by dividing"
    return None


ADVANTAGES = frozenset({"adv", "advs", "advantage", "advantages"})


def divides_by_advantage(node: ast.AST) -> str | None:
    """`ratio / advantages`, `-log_prob / adv`: an advantage, zero or negative as often as
    not, as a divisor; it weighs what it scales."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and \
            _bare(node.right) and parts(node.right) & ADVANTAGES and \
            not parts(node.right) & {"std", "norm", "scale", "max", "mean", "sum"}:
        return "divides by an advantage, which weighs (multiplies) what it scales"
    return None


def complement_added(node: ast.AST) -> str | None:
    """`log(1 + p)` beside `y * log(p)`: the log of one plus a probability, where the
    probability of the other outcome is `1 - p`."""
    if call_name(node) not in {"log", "log2", "log10"} or (of := _operand(node)) is None:
        return None
    if isinstance(of, ast.BinOp) and isinstance(of.op, ast.Add) and is_one(of.left) and \
            _bare(of.right) and parts(of.right) & PROBABILITIES and \
            not parts(of.right) & LOG_PROBABILITIES:
        return "takes the log of one plus a probability, where the other outcome's " \
               "probability is one minus it"
    return None


#: Words of a schedule's cumulative coefficient: `alpha_bar_t`, `alphas_cumprod`, `hat_alpha`.
ALPHAS = frozenset({"alpha", "alphas"})
CUMULATIVE = frozenset({"bar", "hat", "cumprod", "cum", "cumulative", "prod", "abar",
                        "alphabar"})
#: Other words such a name may have: an index or a getter (`self._get_hat_alpha(t)`).
_AT = frozenset({"get", "prev", "next", "cur", "curr", "current", "val", "value"})


def _cumulative_coefficient(node: ast.AST) -> bool:
    """`alpha_bar_t`, `alphas_cumprod[t]`, `self._get_hat_alpha(idx)`: the coefficient
    itself, not a function of it (`sqrt_one_minus_alpha_bar`)."""
    node = _strip(node)
    words = _words(call_name(node) or "") if isinstance(node, ast.Call) else \
        parts(node) if _bare(node) else frozenset()
    named = words & {"abar", "alphabar"} or words & ALPHAS and words & CUMULATIVE
    return bool(named) and all(len(w) <= 2 or w in ALPHAS | CUMULATIVE | _AT for w in words)


def cumulative_complement_added(node: ast.AST) -> str | None:
    """`tau = 1.0 + alpha_bar`, `1 + self._get_hat_alpha(t)`: one plus a schedule's
    cumulative coefficient, whose complement (the noise's share) is `1 - alpha_bar`; and
    `alphas = 1.0 + betas`, where a schedule's alpha is one minus its beta."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)):
        return None
    pairs = ((node.left, node.right), (node.right, node.left))
    if any(is_one(a) and _cumulative_coefficient(b) for a, b in pairs):
        return "adds a schedule's cumulative coefficient to one, where its complement " \
               "is one minus it"
    # a diffusion schedule's alpha is one minus its beta (`alphas = 1.0 - betas`)
    if _assigned(node) & ALPHAS and any(
            is_one(a) and _bare(b) and parts(b) & {"beta", "betas"} for a, b in pairs):
        return "sets a schedule's alpha to one plus its beta, where it is one minus it"
    return None


def step_toward_sum(node: ast.AST) -> str | None:
    """`h + alpha * (h_mlp + h)`, `lr0 + (lr_max + lr0) * progress`: a step from `a` toward
    `b` weighted by the sum `b + a`, where an interpolation weighs their difference."""
    terms = _top_sum(node)
    if terms is None or len(terms) != 2:
        return None
    for (start, sign), (step, _) in (terms, terms[::-1]):
        if not _bare(start) or sign < 0:
            continue
        for factor, exponent in flatten_product(step):
            inner = _strip(factor)
            if exponent > 0 and isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Add):
                ends = flatten_sum(inner)
                if len(ends) == 2 and all(s > 0 for _, s in ends) and \
                        sum(_same(e, start) for e, _ in ends) == 1:
                    return "steps from a value toward another by their sum, where an " \
                           "interpolation weighs their difference"
    return None


def offset_added_in_ratio(node: ast.AST) -> str | None:
    """`(it + warmup) / (max_iters - warmup)`: a ratio whose denominator takes an offset out
    (progress past a warmup, a min-max scaling) but whose numerator adds it."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)):
        return None
    numerator, denominator = _strip(node.left), _strip(node.right)
    if not all(isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Sub))
               for n in (numerator, denominator)):
        return None
    offsets = [t for t, s in flatten_sum(denominator) if s < 0 and _bare(t)]
    if any(s > 0 and _same(t, o) for t, s in flatten_sum(numerator) for o in offsets):
        return "adds in a ratio's numerator the offset its denominator takes out"
    return None


def divides_by_decay(node: ast.AST) -> str | None:
    """`x / torch.rsqrt(ms + eps)`, `w / torch.exp(-err / s)`: a division by a reciprocal
    root or by a decaying exponential, each of which is there to multiply."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)):
        return None
    divisor = _strip(node.right)
    if call_name(divisor) == "rsqrt":
        return "divides by a reciprocal square root, which multiplies by the root"
    if call_name(divisor) == "exp" and (of := _operand(divisor)) is not None and _negated(of):
        return "divides by a decaying exponential exp(-x), which multiplies by exp(x)"
    return None


def _negated(node: ast.AST) -> bool:
    """`-x`, `-x / s`, `-(x ** 2) * k`: an expression whose first factor is negated."""
    first = flatten_product(node)[0][0]
    return isinstance(first, ast.UnaryOp) and isinstance(first.op, ast.USub)


def kernel_width_multiplies(node: ast.AST) -> str | None:
    """`exp(-dist ** 2 * sigma ** 2)`: a Gaussian kernel's squared width multiplying the
    squared distance in the exponent, where it divides (`exp(-dist ** 2 / sigma ** 2)`)."""
    if call_name(node) != "exp" or (of := _operand(node)) is None or not _negated(of):
        return None
    for factor, exponent in flatten_product(of):
        if exponent > 0 and isinstance(factor, ast.BinOp) and isinstance(factor.op, ast.Pow) \
                and isinstance(factor.right, ast.Constant) and factor.right.value == 2 and \
                _bare(factor.left) and parts(factor.left) & DEVIATIONS:
            return "multiplies by a kernel's squared width in exp(-x), where the width divides"
    return None


#: What an additive attention mask (0 where attended, -inf where not) is added to.
MASKED = SHARPENED | frozenset({"attn", "attention"})


def mask_subtracted(node: ast.AST) -> str | None:
    """`scores = scores - attention_mask`: an additive mask taken from the scores it masks,
    which turns its -inf into +inf (a boolean mask is multiplied by a large number first)."""
    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Sub):
        left, right = node.target, node.value
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
        left, right = node.left, node.right
    else:
        return None
    if _bare(left) and _bare(right) and parts(left) & MASKED and parts(right) & MASKS and \
            not parts(left) & MASKS:
        return "subtracts an additive attention mask from the scores, to which it is added"
    return None


def kernel_of_sum(node: ast.AST) -> str | None:
    """`exp(-norm(command + velocity) ** 2)`: a Gaussian kernel (a tracking reward, a
    similarity) of the sum of two quantities, where it measures their distance."""
    if call_name(node) != "exp" or (of := _operand(node)) is None or not _negated(of):
        return None
    for inner in ast.walk(of):
        summed = _operand(inner) if call_name(inner) == "norm" else \
            inner.left if isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Pow) \
            else None
        summed = _strip(summed) if summed is not None else None
        if isinstance(summed, ast.BinOp) and isinstance(summed.op, ast.Add) and \
                _bare(summed.left) and _bare(summed.right) and \
                not _same(summed.left, summed.right):
            return "takes a kernel of the sum of two quantities, where a kernel measures " \
                   "their distance"
    return None


#: A noisy sample named as a state (`x_t`, `z_k`, `noisy_latents`), not as samples counted.
_STATES = frozenset({"x", "z", "xt", "zt", "latent", "latents"})


def divides_by_sample(node: ast.AST) -> str | None:
    """`c / (x_k - beta * eps_pred)`, `w / x_t`: a division by a noisy sample (or by a
    denoising step's result), which a diffusion step scales and shifts but never divides by."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)):
        return None
    divisor = _strip(node.right)
    leading = [t for t, sign in flatten_sum(divisor) if sign > 0][:1]  # `x_k` of `x_k - ...`
    if any(_noisy_sample(t) and parts(t) & _STATES and parts(t) - {"x", "z"} and
           not parts(t) & COUNTS for t in leading):  # `n_samples` counts samples
        return "divides by a noisy sample, which a diffusion step scales and shifts"
    return None


#: Names of a stack's depth (`n_layers`, `num_blocks`, `depth`).
DEPTHS = frozenset({"layers", "layer", "depth", "blocks", "nlayers", "nlayer"})


def std_grows_with_depth(node: ast.AST) -> str | None:
    """`out_std = std * math.sqrt(2 * n_layers)`, `normal_(w, std=0.02 * n_layer ** 0.5)`: an
    initialisation's standard deviation times a root of the depth. Scaled initialisations
    shrink a residual branch's weights as the stack deepens, so depth divides them."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
        return None
    factors = [f for f, exponent in flatten_product(node) if exponent > 0]
    parent = _parent(node)
    named_std = isinstance(parent, ast.keyword) and parent.arg in DEVIATIONS or \
        bool(target_words(node) & DEVIATIONS) or \
        any(_bare(f) and parts(f) & DEVIATIONS for f in factors)
    if named_std and any(_root(f) and _deepens(f) for f in factors):
        return "multiplies an initialisation's std by a root of the depth, which divides it"
    return None


def _deepens(root: ast.AST) -> bool:
    """A root (`sqrt(2 * n_layers)`, `n_layers ** 0.5`) of an expression the depth multiplies."""
    inside = root.args[0] if isinstance(root, ast.Call) and root.args else \
        root.left if isinstance(root, ast.BinOp) else None
    return inside is not None and any(
        exponent > 0 and _bare(f) and parts(f) & DEPTHS for f, exponent in flatten_product(inside))


IDIOMS: tuple[Callable[[ast.AST], str | None], ...] = (
    guard_subtracted, guard_multiplied, divides_by_mask, divides_by_log_probability,
    versions_added, attention_scaled_up, one_times_power, own_statistic, away_from_target,
    residual_subtracted, weighted_loss_subtracted, coefficient_divides, total_times_count,
    difference_added, divides_by_loss, midpoint_differenced, percent_divided,
    outputs_subtracted, lists_subtracted, angle_divided_by_pi, divides_by_activation,
    predicted_noise_added, embedding_subtracted, unit_vector_divided, discount_against_reward,
    done_added, weights_not_summing_to_one, kl_signs, temperature_multiplies,
    standardised_otherwise, bias_correction_multiplies, one_sided_interval, preference_of_sum,
    estimate_added_in_error, velocity_of_sum, divides_by_noise, variance_not_preserved,
    gaussian_log_density_signs, elo_of_sum, union_adds_intersection, divides_by_difference,
    kl_of_product, similarity_times_norm, size_below_one, versions_multiplied,
    divides_by_advantage, complement_added, cumulative_complement_added, step_toward_sum,
    offset_added_in_ratio, divides_by_decay, kernel_width_multiplies, mask_subtracted,
    kernel_of_sum, divides_by_sample, exponent_times_size, noise_subtracted,
    divides_by_step_size, step_divided_by_distance, progress_times_length,
    mix_operand_divided, std_grows_with_depth)
