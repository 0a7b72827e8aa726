"""Drift detection at many positions of a claim's evidence, not only at the suite's one.

    python tests/perf/bench_drift_positions.py [--kinds value,operator] [--per-claim 2]
                                               [--runs 70] [--seed 7] [--out FILE]
                                               [--papers-only ID,...] [--except-papers ID,...]

`sabench drift-test` drifts one position per claim, always the same (the first on a line that
names the claim), so its draws come from a small population that the check's rules have been
read against. This script drifts up to `--per-claim` positions per claim drawn at random among
all of them: every stated value in the evidence's code (D1, times ten) and every arithmetic
operator of its computing lines (D2, swapped), on the claims the official judge scored >= 0.5
and the alignment check passes (fold calibrations, as in `bench_alignment_check.py`), in
`--runs` runs drawn with `--seed`. It prints detection per kind: a figure the rules were not
fitted to. Many positions lie in code that is not the claim's (official evidence is broad),
so no check reaches 100%; compare versions of the check, not against the suite's figure.
It also prints detection by where the drifted line stands among the check's own evidence
windows for the claim (ranked best first, read before the drift): in its two best windows, the
ones the value rules read, in a later one, or in none. `--papers-only` and `--except-papers`
split the papers (a held-out split). A claim's positions are drawn with a seed of its own, so
two versions of the check are measured on the same positions even where they pass different
claims; `--out` writes every drift with the line before and after it and the rules that fail it.

Uses $SABENCH_RUNS_ROOT (a folder made by ../shared/sabench/unpack.sh) and $SABENCH_FOLD_CACHE
as `bench_alignment_check.py` does.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import sys
import tempfile
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from bench_alignment_check import fold_calibrations
from measure import DATA_DIR, runs_root

from sabench.benchmark import drift
from sabench.scaffolds.alignment_check import check_alignment

#: The kinds of drift measured: dimension, and every position of the kind in a site.
DRIFTS = {"value": ("D1", drift.value_positions),
         "operator": ("D2", lambda repo, site: drift.operator_positions(repo, site, every=True))}


def drift_run(args: tuple) -> list[dict]:
    """Every chosen position of one run, drifted and checked one at a time."""
    name, spec, repo, official, calibration, kinds, per_claim = args
    scores = {c["id"]: c["score"] for d in official["dimensions"].values() for c in d["claims"]}
    sites = drift.evidence_sites(spec, official, repo)
    wanted = {kind: [c for c, s in sites.items() if s.claim.dimension.value == DRIFTS[kind][0]
                     and (scores.get(c) or 0) >= drift.OFFICIAL_PASS] for kind in kinds}
    ids = sorted({c for cs in wanted.values() for c in cs})
    if not ids:
        return []
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "repo"
        shutil.copytree(repo, copy, symlinks=True)
        before = {r.id: r for r in check_alignment(spec, copy, ids, calibration=calibration)}
        for kind, claims in wanted.items():
            for cid in claims:
                if not before[cid].passed:
                    continue
                positions = DRIFTS[kind][1](copy, sites[cid])
                # seeded per claim: a claim's positions do not depend on which others passed
                seed = hashlib.md5(f"{name} {cid} {kind}".encode()).hexdigest()[:8]
                random.Random(int(seed, 16)).shuffle(positions)
                for position in positions[:per_claim]:
                    saved = (copy / position.rel).read_bytes()
                    was = drift.lines_of(copy, position.rel)[position.line].strip()
                    drift.apply(copy, position)
                    now = drift.lines_of(copy, position.rel)[position.line].strip()
                    after = check_alignment(spec, copy, [cid], calibration=calibration)[0]
                    (copy / position.rel).write_bytes(saved)
                    dropped = after.expected_score <= before[cid].expected_score - drift.DROP
                    out.append({"run": name, "claim": cid, "kind": kind,
                                "file": position.rel, "line": position.line + 1,
                                "named": position.named, "was": was, "now": now,
                                "window": window_rank(before[cid].evidence, position),
                                "detected": not after.passed or dropped,
                                "rules": after.findings})
    return out


def window_rank(evidence: list[str], position: drift.Position) -> str:
    """Where the drifted line stands among the check's evidence windows (`path:start-end`,
    best first): `best two`, `later` or `none`."""
    for rank, ref in enumerate(evidence):
        found = drift.REF.match(ref)
        if found and found.group(1) == position.rel and \
                int(found.group(2)) <= position.line + 1 <= int(found.group(3)):
            return "best two" if rank < 2 else "later"
    return "none"


def by_window(records: list[dict]) -> dict[str, dict[str, int]]:
    """Drifts and detections per window rank."""
    out: dict[str, dict[str, int]] = defaultdict(lambda: {"n": 0, "detected": 0})
    for record in records:
        out[record["window"]]["n"] += 1
        out[record["window"]]["detected"] += record["detected"]
    return dict(sorted(out.items()))


def main(argv: list[str]) -> None:
    def option(flag: str, default: str) -> str:
        return argv[argv.index(flag) + 1] if flag in argv else default

    kinds = option("--kinds", "value,operator").split(",")
    only = set(option("--papers-only", "").split(",")) - {""}
    left_out = set(option("--except-papers", "").split(",")) - {""}
    papers = DATA_DIR / "papers"
    with runs_root() as root:
        calibrations = fold_calibrations(root, papers)
        work = [(name, spec, repo, official, calibrations[spec.paper_id], kinds,
                 int(option("--per-claim", "2")))
                for name, spec, repo, official in drift.candidates(root, papers)
                if (not only or spec.paper_id in only) and spec.paper_id not in left_out]
        random.Random(int(option("--seed", "7"))).shuffle(work)
        work = work[:int(option("--runs", "70"))]
        records = []
        with ProcessPoolExecutor(max_workers=2) as pool:
            for found in pool.map(drift_run, work):
                records += found
    by_kind: dict[str, list[dict]] = defaultdict(list)
    for record in records:
        by_kind[record["kind"]].append(record)
    summary = {"runs": len(work), "n_injected": len(records),
               "detection": round(sum(r["detected"] for r in records) / len(records), 4)
               if records else None,
               "by_kind": {k: {"n": len(v), "detected": sum(r["detected"] for r in v),
                               "named": sum(r["named"] for r in v),
                               "detected_named": sum(r["detected"] for r in v if r["named"]),
                               "by_window": by_window(v)}
                           for k, v in sorted(by_kind.items())}}
    if "--out" in argv:
        Path(option("--out", "")).write_text(json.dumps(records, indent=0))
    json.dump(summary, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
