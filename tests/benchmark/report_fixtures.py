"""Small SCORES_DIRs written with the real result types, for the report tests."""

from __future__ import annotations

import json
from pathlib import Path

from sabench.verifiers.spec import Dimension
from sabench.verifiers.types import ClaimVerdict, FailureCategory, PaperScore

# A claim cell: a score, None for a failed judgement, or (score, failure category).
Cell = float | None | tuple[float, FailureCategory]


def verdict(claim_id: str, cell: Cell) -> ClaimVerdict:
    if cell is None:
        return ClaimVerdict.failed(claim_id, "judge returned invalid JSON twice", judge="test")
    if isinstance(cell, tuple):
        score, category = cell
        return ClaimVerdict(id=claim_id, score=score, failure_category=category, judge="test")
    return ClaimVerdict(id=claim_id, score=cell, judge="test")


def paper_score(paper_id: str, claims: dict[str, list[Cell]]) -> PaperScore:
    verdicts = {
        Dimension(dim): [verdict(f"{paper_id}-{dim}-{i:03d}", cell)
                         for i, cell in enumerate(cells, 1)]
        for dim, cells in claims.items()
    }
    return PaperScore.of(paper_id, verdicts, judge_model="test-judge")


def write_scores_dir(root: Path, configs: dict[str, tuple[str, str]],
                     runs: dict[str, dict[str, dict[str, list[Cell]]]]) -> Path:
    """Write `configs.json` and `<config>/<paper>.json` for `runs[config][paper][dim]`."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "configs.json").write_text(json.dumps(
        {name: {"scaffold": scaffold, "model": model}
         for name, (scaffold, model) in configs.items()}), encoding="utf-8")
    for config, papers in runs.items():
        for paper_id, claims in papers.items():
            paper_score(paper_id, claims).dump(root / config / f"{paper_id}.json")
    return root


# Two scaffolds x one model, three papers; one failed judgement in b_m/p2 D1, categories on a_m.
TWO_CONFIGS = {"a_m": ("ScaffoldA", "ModelM"), "b_m": ("ScaffoldB", "ModelM")}
TWO_RUNS: dict[str, dict[str, dict[str, list[Cell]]]] = {
    "a_m": {
        "p1": {"D1": [1.0, 0.5], "D2": [0.25], "D3": [0.0], "D4": [0.75]},
        "p2": {"D1": [(0.0, FailureCategory.MISSING), (1.0, FailureCategory.CORRECT)],
               "D2": [(0.5, FailureCategory.PARTIAL)], "D3": [1.0], "D4": [0.25]},
        "p3": {"D1": [0.25, 0.25], "D2": [0.0], "D3": [0.5], "D4": [0.0]},
    },
    "b_m": {
        "p1": {"D1": [0.5, 0.5], "D2": [0.0], "D3": [0.0], "D4": [0.25]},
        "p2": {"D1": [1.0, None], "D2": [0.25], "D3": [0.5], "D4": [0.0]},
        "p3": {"D1": [0.0, 0.0], "D2": [0.25], "D3": [0.25], "D4": [0.5]},
    },
}
