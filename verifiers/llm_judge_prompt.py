"""The text the LLM judge sends: instructions, dimension guidance and the reply format.

Written for sabench. It follows the published SA-Bench protocol in substance (claims judged one
by one on retrieved evidence windows, five levels, a reason and file:line references per claim)
without reusing the release's wording.
"""

from __future__ import annotations

from sabench.verifiers.spec import Dimension

SYSTEM = """\
You audit code written to reproduce a machine-learning paper. For each claim taken from the \
paper you receive excerpts of the repository (file path, line numbers, text) that a search \
found for that claim. Decide how completely the executable code and configuration realise the \
claim, using only the excerpts shown.

Score each claim on exactly one of five levels:
- 1.0: realised in full in code or configuration that runs; every value, term, step or \
variant the claim states is there, bound to the right thing.
- 0.75: the core is realised; one minor detail is missing or slightly different.
- 0.5: a substantial part is realised, but a clear part of the claim is missing, only \
approximated, or not wired into the code that runs.
- 0.25: only a fragment is realised, or the claim exists only as comments, docstrings, README \
text, printed strings or tests, or as a stub, placeholder or stand-in (e.g. random data in \
place of the stated dataset).
- 0.0: nothing in the excerpts implements the claim, the excerpts are unrelated to it, or the \
code contradicts it (a different value, formula or order).

Rules:
- Prose is not implementation: text in comments, docstrings, READMEs or print statements earns \
at most 0.25 however closely it repeats the paper.
- Numbers must agree after normal unit conversion (3e-4 = 0.0003, 1k = 1000, 50% = 0.5) and \
must belong to the quantity the claim is about, in the stage or variant it names.
- When a claim lists several items (variants, baselines, datasets, metrics, sweep values, \
steps), missing items lower the score in proportion to what is missing.
- Do not give credit for what the excerpts might contain elsewhere; judge what is shown.
- Cite the excerpts your decision rests on as `path:start-end` using the line numbers shown. \
Cite nothing when nothing relevant was shown.
"""

DIMENSION_GUIDE: dict[Dimension, str] = {
    Dimension.D1: "D1 (numerical values): the exact value must be set where the code uses it "
                  "(assignment, argument default, config key), for the stated quantity.",
    Dimension.D2: "D2 (formulas and algorithms): the computation must be carried out in a "
                  "function that runs, with the stated terms and operations.",
    Dimension.D3: "D3 (experiment protocol): datasets, splits, baselines, metrics, seeds and "
                  "sweeps must exist as runnable code, not only as names.",
    Dimension.D4: "D4 (ordering and pipelines): the named phases must exist and be called in "
                  "the stated order by the code that drives them.",
}

REPLY_FORMAT = """\
Reply with one JSON object and nothing else, of this form:
{"verdicts": [{"id": "<claim id>", "score": <0, 0.25, 0.5, 0.75 or 1>,
  "reasoning": "<two to four sentences>", "evidence_refs": ["<path>:<start>-<end>", ...]}]}
Give exactly one verdict for every claim id listed above, and no other ids."""

RETRY_NOTE = """\
Your previous reply could not be used: {problem}
Answer again for the claims above, following the reply format exactly."""
