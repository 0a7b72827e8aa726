"""How faithfully `official_search` re-runs the official judge's evidence search, and how fast.

Compares, on every complete development run, the emulated search with what the official score
files record: the gate (a claim scored 0 without the LLM, recognised by its fixed reasoning
text) and the kept windows (`evidence_refs`). Prints one JSON object: gate agreement and a
confusion table, and for claims the official search kept windows for, how often the first shown
window, both shown windows and the whole kept list are the same; plus seconds per repository.
Uses $SABENCH_RUNS_ROOT when set (made by ../shared/sabench/unpack.sh), else unpacks the runs
into a temporary folder first (not timed).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

from measure import DATA_DIR, runs_root

from sabench.benchmark.calibrate import read_runs
from sabench.benchmark.dataset import load_papers
from sabench.verifiers.index import RepoIndex
from sabench.verifiers.official_search import OfficialSearch, path_kind

# The official gates' reasoning texts, by their start (the no-evidence text in full: an LLM
# verdict may start with the same words).
GATE_TEXTS = {
    "Only weak or indirect implementation evidence found": "weak",
    "Experiment-parameter claim has no direct numeric or script evidence": "no_numbers",
    "Theorem/proof-style claim only has one strong implementation signal": "theory",
    "No direct implementation evidence found": "no_evidence",
}
NO_EVIDENCE = "No evidence found in repository code/config after search."


def official_gate(reasoning: str) -> str | None:
    if reasoning.strip() == NO_EVIDENCE:
        return "no_evidence"
    return next((gate for text, gate in GATE_TEXTS.items() if reasoning.startswith(text)), None)


def shown_refs(refs: list[str]) -> list[str]:
    return [r for r in refs if path_kind(r.rpartition(":")[0]) in ("code", "config")][:2]


def measure(root: Path) -> dict:
    papers = load_papers(DATA_DIR / "papers", with_markdown=False)
    gates: Counter[tuple[str | None, str | None]] = Counter()
    same: Counter[str] = Counter()
    compared = 0
    seconds = []
    for run in (r for r in read_runs(root) if r.complete):
        official = json.loads(run.official.read_text(encoding="utf-8"))
        records = {c["id"]: c for d in official["dimensions"].values() for c in d["claims"]}
        start = time.process_time()
        search = OfficialSearch(RepoIndex.build(run.repo))
        results = {c.id: search.collect(c) for c in papers[run.paper_id].claims}
        seconds.append(time.process_time() - start)
        for claim_id, result in results.items():
            record = records[claim_id]
            gates[(official_gate(record["judge_reasoning"]), result.gate)] += 1
            refs = record["evidence_refs"]
            if not refs:
                continue
            compared += 1
            mine = [item.ref for item in result.items]
            shown = [item.ref for item in result.shown]
            same["first_shown"] += bool(shown) and shown[:1] == shown_refs(refs)[:1]
            same["both_shown"] += shown == shown_refs(refs)
            same["kept_list"] += mine == refs
    claims = sum(gates.values())
    return {
        "runs": len(seconds),
        "claims": claims,
        "gate_agreement": round(sum(n for (a, b), n in gates.items() if a == b) / claims, 4),
        "gates_official_vs_ours": {f"{a}->{b}": n for (a, b), n in sorted(
            gates.items(), key=lambda kv: (str(kv[0][0]), str(kv[0][1])))},
        "claims_with_official_windows": compared,
        "same_first_shown_window": round(same["first_shown"] / compared, 4),
        "same_two_shown_windows": round(same["both_shown"] / compared, 4),
        "same_kept_windows": round(same["kept_list"] / compared, 4),
        "median_cpu_seconds_per_repo": round(statistics.median(seconds), 4),
    }


def main() -> None:
    with runs_root() as root:
        result = measure(root)
    sys.stdout.write(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
