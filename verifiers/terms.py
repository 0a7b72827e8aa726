"""Words of claims and code reduced to comparable terms.

Identifiers are split at snake_case and camelCase boundaries, Greek letters and LaTeX commands are
mapped to the names code uses for them (`λ`, `\\lambda` → `lambda`, also `lam`/`lmbda`), common ML
abbreviations are expanded, and a light stemmer folds plurals, so `learningRate`, `learning_rates`
and "learning rate" share the terms `learn`, `rate`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from itertools import chain

GREEK = {
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ϵ": "epsilon",
    "ζ": "zeta", "η": "eta", "θ": "theta", "ι": "iota", "κ": "kappa", "λ": "lambda", "μ": "mu",
    "ν": "nu", "ξ": "xi", "π": "pi", "ρ": "rho", "σ": "sigma", "τ": "tau", "υ": "upsilon",
    "φ": "phi", "ϕ": "phi", "χ": "chi", "ψ": "psi", "ω": "omega", "Γ": "gamma", "Δ": "delta",
    "Θ": "theta", "Λ": "lambda", "Ξ": "xi", "Π": "pi", "Σ": "sigma", "Φ": "phi", "Ψ": "psi",
    "Ω": "omega", "∇": "grad", "∑": "sum", "∏": "prod", "√": "sqrt", "∫": "integral",
}
_GREEK_TABLE = str.maketrans({ch: f" {name} " for ch, name in GREEK.items()})
# Spellings code uses for a Greek name (Python reserves `lambda`).
_CODE_SPELLINGS = {
    "lambda": ("lam", "lmbda", "lambd"), "epsilon": ("eps",), "alpha": ("alph",),
    "sigma": ("sig", "std"), "theta": ("params",), "mu": ("mean",), "tau": ("temperature",),
    "gamma": ("discount",), "eta": ("lr",),
}
# Abbreviation → words, both directions are added as terms.
_ABBREVIATIONS = {
    "lr": ("learning", "rate"), "bs": ("batch", "size"), "wd": ("weight", "decay"),
    "kl": ("kullback",), "mse": ("mean", "squar", "error"), "ema": ("exponential", "moving"),
    "dim": ("dimension",), "num": ("number",), "n": ("number",), "init": ("initial",),
    "eval": ("evaluat",), "val": ("validation",), "ckpt": ("checkpoint",), "cfg": ("config",),
    "opt": ("optimizer",), "optim": ("optimizer",), "attn": ("attention",), "emb": ("embed",),
    "seq": ("sequence",), "len": ("length",), "max": ("maximum",), "min": ("minimum",),
    "hidden": ("hidden",), "iter": ("iteration",), "iters": ("iteration",), "ep": ("epoch",),
    "grad": ("gradient",), "clip": ("clip",), "warmup": ("warm", "up"), "ff": ("feedforward",),
    "ffn": ("feedforward",), "mlp": ("perceptron",), "std": ("standard", "deviation"),
}
_LATEX = re.compile(r"\\([A-Za-z]+)")
_LATEX_DROP = {
    "mathcal", "mathbb", "mathbf", "mathrm", "text", "textbf", "frac", "left", "right", "cdot",
    "times", "operatorname", "hat", "tilde", "bar", "dot", "ddot", "boldsymbol", "mathit",
    "quad", "in", "le", "ge", "leq", "geq", "sim", "to", "top", "prime", "limits", "big", "Big",
}
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")

STOPWORDS = frozenset([
    "a", "an", "the", "of", "and", "or", "for", "to", "in", "on", "at", "by", "with", "from",
    "as", "is", "are", "was", "were", "be", "been", "being", "this", "that", "these", "those",
    "it", "its", "into", "using", "use", "used", "via", "per", "each", "all", "any", "both",
    "than", "then", "there", "their", "which", "who", "whose", "when", "where", "while", "what",
    "how", "not", "no", "only", "also", "such", "can", "may", "must", "should", "will", "would",
    "could", "same", "other", "we", "our", "they", "them", "he", "she", "his", "her", "you",
    "your", "i", "if", "else", "so", "do", "does", "did", "done", "has", "have", "had", "after",
    "before", "between", "during", "over", "under", "up", "down", "out", "about", "above",
    "below", "more", "most", "less", "least", "very", "just", "but", "e", "g", "eg", "ie", "i.e",
    "etc", "vs", "within", "without", "across", "through", "based", "given", "following",
    "follows", "include", "includes", "including", "section", "table", "figure", "appendix",
    "eq", "equation", "paper", "method", "approach", "set", "sets", "value", "values", "one",
    "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "first", "second",
    "third", "new", "note", "see", "show", "shows",
])


def stem(word: str) -> str:
    """A deliberately light stemmer: fold plurals and common suffixes, keep short words."""
    if len(word) <= 3:
        return word
    for suffix, keep in (("ization", 3), ("isation", 3), ("ational", 3), ("ations", 3),
                         ("ation", 3), ("ings", 3), ("ing", 3), ("ies", 3), ("ness", 3),
                         ("ments", 3), ("ment", 3), ("ers", 3), ("er", 4), ("ed", 3),
                         ("es", 4), ("s", 3)):
        if word.endswith(suffix) and len(word) - len(suffix) >= keep:
            return word[: -len(suffix)]
    return word


def replace_symbols(text: str) -> str:
    """Greek letters and LaTeX commands spelled as words; LaTeX markup commands dropped."""
    if "\\" in text:
        text = _LATEX.sub(lambda m: " " if m.group(1) in _LATEX_DROP else f" {m.group(1)} ", text)
    return text.translate(_GREEK_TABLE) if not text.isascii() else text


@lru_cache(maxsize=200_000)
def split_identifier(name: str) -> tuple[str, ...]:
    """`learningRate`, `learning_rate`, `LEARNING-RATE` → ('learning', 'rate'); digits apart."""
    parts: list[str] = []
    for chunk in re.split(r"[_\W]+", name):
        parts.extend(piece.lower() for piece in _CAMEL.findall(chunk))
    return tuple(parts)


@lru_cache(maxsize=200_000)
def word_terms(word: str) -> tuple[str, ...]:
    """The terms of one identifier or word: its stemmed parts, spellings and expansions."""
    out: list[str] = []
    parts = split_identifier(word)
    for part in parts:
        if part.isdigit() or part in STOPWORDS or len(part) < 2 and part not in ("n",):
            continue
        out.append(stem(part))
        out.extend(stem(w) for w in _ABBREVIATIONS.get(part, ()))
        out.extend(_CODE_SPELLINGS.get(part, ()))
    if len(parts) > 1:
        out.append("".join(parts))  # `batchsize` also matches `batch_size`
    return tuple(dict.fromkeys(out))


def terms(text: str) -> list[str]:
    """The comparable terms of free text or code, in order, with repeats.

    Args:
        text: a claim, a line of code, a comment or a config key.

    Returns:
        Lower-case stemmed terms; stopwords, single letters and pure numbers are left out.
    """
    return list(_each_term(text))


@lru_cache(maxsize=100_000)
def term_set(text: str) -> frozenset[str]:
    """The distinct terms of `text` (cached: code repeats many lines)."""
    return frozenset(_each_term(text))


def _each_term(text: str) -> Iterator[str]:
    return chain.from_iterable(map(word_terms, _WORD.findall(replace_symbols(text))))


_PROPER = re.compile(r"\b(?:[A-Z][a-z]*[A-Z0-9][\w-]*|[A-Z]{2,}[\w-]*|[A-Za-z]+-\d[\w-]*)")


def named_entities(text: str) -> list[str]:
    """Names that look like datasets, baselines or metrics: `ImageNet`, `CIFAR-10`, `FID`, `DPO`.

    Returns:
        Distinct names in order, as written (callers compare them through `terms`).
    """
    return list(_named_entities(text))


@lru_cache(maxsize=4096)  # a claim is checked against every repository of its paper
def _named_entities(text: str) -> tuple[str, ...]:
    found = [m.group(0).strip("-") for m in _PROPER.finditer(replace_symbols(text))]
    return tuple(dict.fromkeys(name for name in found if len(name) > 1))
