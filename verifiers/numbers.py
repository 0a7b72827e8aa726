"""Numbers as papers and code write them, normalised so that equal values compare equal.

`3e-4`, `0.0003`, `3 × 10^-4` and `3\\times10^{-4}` all normalise to the same key; `512×512` gives
512 twice, `1k`/`50K`/`7B` are expanded, percentages also yield their fraction, fractions such as
`1/40` also yield their quotient, and ranges and lists yield every end point or element.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import NamedTuple

_SUFFIX = {"k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}

# One token: optional sign, digits with `,` or `_` groups, decimals, exponent, then either a
# scientific `× 10^e` tail, a magnitude suffix (k/M/B) or a percent sign.
_NUMBER = re.compile(
    r"""(?<![\w.])
    (?P<sign>[-−–]?)
    (?P<mant>(?:\d{1,3}(?:[,_]\d{3})+|\d+)(?:\.\d+)?|\.\d+)
    (?:[eE](?P<exp>[-+−]?\d+))?
    (?:\s*(?:[x×*·]|\\times|\\cdot)\s*10\s*\^\s*\{?\s*(?P<sci>[-+−]?\d+)\s*\}?)?
    (?P<suffix>[kKMBG](?![a-zA-Z]))?
    (?P<pct>\s*(?:%|\\%))?
    """,
    re.VERBOSE,
)
#: A number written with thousands separators (`1,281,167`): one number, not three.
GROUPED_THOUSANDS = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?![\w,]|\.\d)")
# A bare power of ten, `10^-4` or `10^{-4}`: the mantissa 10 would otherwise be read alone.
_POWER = re.compile(r"(?<![\w.])10\s*\^\s*\{?\s*([-+−]?\d+)\s*\}?")
_FRACTION = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*/\s*(\d+(?:\.\d+)?)(?![\w.])")

# Values too common to identify a claim on their own (indices, flags, round defaults).
_TRIVIAL = {0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 0.5, 0.1, 100.0, 1000.0}


class Number(NamedTuple):
    """One numeric value read from text.

    Attributes:
        value: the value as a float (percentages as written, e.g. 15 for `15%`).
        raw: the text it was read from.
        start: offset of `raw` in the text.
        percent: whether it was written as a percentage.

    A named tuple: lines of code yield hundreds of thousands of them.
    """

    value: float
    raw: str
    start: int
    percent: bool = False

    @property
    def key(self) -> str:
        return normalise(self.value)


def normalise(value: float) -> str:
    """A canonical string for a value: 6 significant digits, so `3e-4` and `0.0003` agree."""
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else str(value)
    return f"{abs(value):.6g}".replace("e-0", "e-").replace("e+0", "e+")


def is_trivial(value: float) -> bool:
    """Whether a value is too common (0–10, 0.1, 0.5, 100, 1000) to identify a claim."""
    return abs(value) in _TRIVIAL


def _parse(match: re.Match[str]) -> float | None:
    mant = match.group("mant").replace(",", "").replace("_", "")
    try:
        value = float(mant)
    except ValueError:
        return None
    for group in ("exp", "sci"):
        if match.group(group):
            value *= 10.0 ** int(match.group(group).replace("−", "-"))
    if match.group("suffix"):
        value *= _SUFFIX[match.group("suffix").lower()]
    if match.group("sign"):
        value = -value
    return value


def extract_numbers(text: str) -> list[Number]:
    """Every numeric value in `text`, with derived values (fractions, percentages) added.

    Args:
        text: claim text, a code line or a config value.

    Returns:
        Numbers in order of appearance; a percentage yields both `15` and `0.15`, a fraction
        `1/40` yields 1, 40 and 0.025, a power `10^-4` yields 0.0001.
    """
    found: list[Number] = []
    taken: set[int] = set()
    powers = "^" in text  # only a power `10^e` needs to know which characters numbers took
    for match in _NUMBER.finditer(text):
        value = _parse(match)
        if value is None:
            continue
        if powers:
            taken.update(range(match.start(), match.end()))
        pct = bool(match.group("pct"))
        found.append(Number(value, match.group(0).strip(), match.start(), pct))
        if pct:
            found.append(Number(value / 100.0, match.group(0).strip(), match.start(), False))
        if "," in match.group("mant"):
            # `128,256,512` in code is a list, not a thousands-grouped number: keep both.
            found.extend(Number(float(part), part, match.start())
                         for part in match.group("mant").split(","))
    for match in _POWER.finditer(text) if powers else ():
        if match.start() in taken and not _starts_with_ten(match, text, taken):
            continue
        found.append(Number(10.0 ** int(match.group(1).replace("−", "-")), match.group(0),
                            match.start()))
    for match in _FRACTION.finditer(text) if "/" in text else ():
        den = float(match.group(2))
        if den:
            found.append(Number(float(match.group(1)) / den, match.group(0), match.start()))
    return found


def _starts_with_ten(match: re.Match[str], text: str, taken: set[int]) -> bool:
    """A bare `10^-4` was read by _NUMBER as the mantissa 10 only when nothing precedes it."""
    return match.start() == 0 or (match.start() - 1) not in taken


def number_keys(text: str) -> set[str]:
    """The normalised keys of every number in `text` (for indexing lines)."""
    return {num.key for num in extract_numbers(text)}


def distinctive_numbers(text: str) -> list[Number]:
    """The claim's identifying numbers: non-trivial, and not section/equation/table labels."""
    return list(_distinctive_numbers(text))


@lru_cache(maxsize=4096)  # a claim is checked against every repository of its paper
def _distinctive_numbers(text: str) -> tuple[Number, ...]:
    out: list[Number] = []
    seen: set[str] = set()
    for num in extract_numbers(text):
        if is_trivial(num.value) or _is_label(text, num) or num.key in seen:
            continue
        seen.add(num.key)
        out.append(num)
    return tuple(out)


_LABEL_BEFORE = re.compile(
    r"(?:eq\.?|equation|eqs\.?|section|sec\.?|table|tab\.?|figure|fig\.?|appendix|algorithm|"
    r"alg\.?|theorem|lemma|step|phase|stage|proposition|corollary|definition|line)\s*\(?$",
    re.IGNORECASE,
)


def _is_label(text: str, num: Number) -> bool:
    """Section, equation, figure numbers and years are references, not values."""
    before = text[max(0, num.start - 14):num.start]
    if _LABEL_BEFORE.search(before):
        return True
    return num.raw.isdigit() and 1990 <= num.value <= 2030 and len(num.raw) == 4
