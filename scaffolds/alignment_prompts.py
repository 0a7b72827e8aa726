"""The alignment-first scaffold's prompts (written for this project).

Scripted replies (the demo matrix, tests) recognise requests by their openings ("Below is one
part", "Plan a repository", "Write the file `<path>`", "The file `<path>`") and by the dimension
descriptions in `DIMENSIONS`; keep those stable.
"""

from __future__ import annotations

SYSTEM = """\
You are a careful research engineer. You turn a machine-learning paper into a code repository \
that does exactly what the paper says: the same values, formulas, experiment protocol and \
order of steps. Where the paper is silent, choose the simplest standard option and say so in a \
comment. Answer in the format asked for and nothing else."""

DIMENSIONS = {
    "D1": "numerical values: every hyperparameter, size, rate, count, threshold or constant "
          "the paper states, with its value",
    "D2": "formulas and algorithms: every loss, update rule, architecture component, score or "
          "procedure the paper defines, with its exact terms and operations",
    "D3": "experiment protocol: datasets, splits, preprocessing, baselines, metrics, seeds, "
          "sweeps and how results are aggregated",
    "D4": "ordering: the phases of the pipeline and the order in which steps happen",
}


def extract_request(dimension: str, section: str, text: str) -> str:
    return f"""\
Below is one part of a paper ({section}). List the implementation claims it makes about \
{DIMENSIONS[dimension]}. A claim is one atomic, checkable statement that code must realise \
(e.g. "The learning rate is 3e-4 with AdamW." or "Features are standardised after the split, \
with statistics of the training part only."). Quote numbers exactly. When a statement lists \
variants, stages, baselines, metrics or sweep values, keep each one visible in the claim. Leave \
out results, motivation and related work. If this part states none, answer with an empty list.

Answer with one JSON object: {{"claims": ["<claim>", ...]}}

## {section}
{text}"""


def plan_request(title: str, claims: str) -> str:
    return f"""\
Plan a repository that reproduces the paper "{title}". These are its implementation claims, \
each with its id:

{claims}

Requirements:
- one `config.yaml` holding every numerical value, each with a comment naming its claim id;
- one entry point `main.py` that runs the pipeline's phases in the paper's order and accepts \
`--smoke` (tiny settings that finish in seconds);
- a runnable function or script for every dataset, baseline, metric and split the protocol \
names;
- every claim owned by exactly one file.

Answer with one JSON object:
{{"files": [{{"path": "<relative path>", "purpose": "<one sentence>", \
"claims": ["<claim id>", ...]}}, ...]}}
List the files in dependency order (a file after those it imports); config.yaml first."""


def implement_request(path: str, purpose: str, owned: str, interfaces: str,
                      entry: bool = False) -> str:
    smoke = ("\nThis is the entry point: run the phases in the paper's order, and accept "
             "`--smoke` to run every phase on tiny settings in a few seconds.\n" if entry else "")
    return f"""\
Write the file `{path}` of the repository. Its purpose: {purpose}

The claims this file must implement, exactly as stated:
{owned or "(none: supporting code)"}

Interfaces already written in other files (import them rather than redefining them):
{interfaces or "(none yet)"}
{smoke}
Write complete, working code: no stubs, no placeholders, no TODOs. Put values in config.yaml \
and read them from there. Mark the executable line that realises a claim with a trailing \
comment holding its id (`x = f(y)  # <claim id>`); keep docstrings to two lines and do not \
paste the paper's text into comments. Answer with the whole file in one fenced code block."""


def failing_claims(path: str, text: str, failing: str) -> str:
    """What both repair strategies show: the failing claims with findings, and the file."""
    return f"""\
The file `{path}` does not yet implement these claims as the paper states them. For each \
claim, the checks' findings and where they looked:

{failing}

Current content of `{path}` (numbered lines):
{text}
"""


def repair_request(path: str, text: str, failing: str) -> str:
    return failing_claims(path, text, failing) + """
Fix the file with targeted edits. Answer with one JSON object:
{"edits": [{"old": "<exact text now in the file>", "new": "<replacement>"}, \
{"after_line": <line number, 0 for the top>, "text": "<lines to insert>"}, ...]}
Each "old" must occur exactly once in the file. Change only what the claims need; write code, \
not comments that restate a claim."""


def rewrite_request(path: str, text: str, failing: str) -> str:
    return failing_claims(path, text, failing) + """
Write the corrected file whole, keeping everything that already works. Answer with the whole \
file in one fenced code block."""
