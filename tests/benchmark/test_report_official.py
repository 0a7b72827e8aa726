"""Acceptance: the report reproduces every number of SA-Bench's published tables.

Every cell of published_tables.json is compared after rounding to 3 decimals (half up, as
published), except the known discrepancies between the publication and the released files,
which must equal their `computed_from_released_scores` value instead.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sabench.benchmark.report import build_report, load_scores, render_markdown, round_half_up

pytestmark = pytest.mark.dataset

SECTIONS = ("configs", "marginals", "mean_row", "dimension_statistics", "headline")


@pytest.fixture(scope="module")
def published(sabench_data: Path) -> dict[str, Any]:
    return json.loads((sabench_data / "published_tables.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def report(official_scores_dir: Path) -> dict[str, Any]:
    return build_report(load_scores(official_scores_dir))


KeyPath = tuple[str, ...]


def cells(node: Any, path: KeyPath = ()) -> Iterator[tuple[KeyPath, Any]]:
    """(key path, value) for every leaf under `node`."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from cells(value, (*path, key))
    else:
        yield path, node


def split_cell(node: Any, dotted: str) -> KeyPath:
    """Key path of a dotted cell name; keys may contain dots themselves (`share_ge_0.5`)."""
    if not dotted:
        return ()
    for key in sorted(node, key=len, reverse=True):
        if dotted == key or dotted.startswith(key + "."):
            return (key, *split_cell(node[key], dotted[len(key) + 1:]))
    raise KeyError(dotted)


def lookup(report: dict[str, Any], path: KeyPath) -> Any:
    node: Any = report
    for key in path:
        node = node[key]
    return node


def is_cell(item: dict[str, Any]) -> bool:
    return item["cell"].split(".")[0] in SECTIONS


def discrepancies(published: dict[str, Any]) -> dict[KeyPath, float]:
    """Known discrepancies that are cells of the file, by key path."""
    return {split_cell(published, item["cell"]): item["computed_from_released_scores"]
            for item in published["known_discrepancies"] if is_cell(item)}


def expected_cells(published: dict[str, Any]) -> list[tuple[KeyPath, Any]]:
    known = discrepancies(published)
    found = [(path, known.get(path, value))
             for section in SECTIONS for path, value in cells(published[section], (section,))]
    assert known.keys() <= {path for path, _ in found}
    return found


def test_every_published_number_is_reproduced(published: dict, report: dict) -> None:
    expected = expected_cells(published)
    assert len(expected) > 100  # the whole file, not a part of it
    wrong = []
    for path, want in expected:
        got = lookup(report, path)
        if isinstance(want, float):
            got = round_half_up(got, 3)
        if got != want:
            wrong.append(f"{'.'.join(path)}: published {want}, report {got}")
    assert not wrong, "\n".join(wrong)


def test_known_discrepancies_match_the_released_files(published: dict, report: dict) -> None:
    known = [d for d in published["known_discrepancies"] if is_cell(d)]
    assert len(known) == 3
    for item in known:
        got = lookup(report, split_cell(published, item["cell"]))
        assert round_half_up(got, 3) == item["computed_from_released_scores"]
        assert round_half_up(got, 3) != item["published"]
        if "exact" in item:
            assert got == pytest.approx(item["exact"], abs=5e-7)


def test_scaffold_summary_cell_outside_the_file(published: dict, report: dict) -> None:
    # The fourth discrepancy is in the README's scaffold table: OpenHands x Claude.
    (item,) = [d for d in published["known_discrepancies"] if not is_cell(d)]
    cell = [row["overall"] for row in report["configs"].values()
            if (row["scaffold"], row["model"]) == ("OpenHands", "Claude-Sonnet-4.6")]
    assert [round_half_up(v, 3) for v in cell] == [item["computed_from_released_scores"]]


def test_release_has_no_failed_judgements_and_full_coverage(report: dict) -> None:
    assert report["errors"]["claims"] == 0
    assert report["meta"]["n_runs"] == 360
    assert report["headline"]["scored_claims"] == 18192
    assert report["meta"]["judges"] == {"deepseek-v4-pro": 120, "gpt-5.5": 240}
    assert report["meta"]["recorded_score_mismatches"] == []


def test_intervals_and_paired_comparisons_on_the_release(report: dict) -> None:
    for name, row in report["confidence_intervals"]["configs"].items():
        for metric, cell in row.items():
            assert cell["low"] <= report["configs"][name][metric] <= cell["high"], (name, metric)
            assert cell["n"] == 30
    per_model = [e for e in report["paired_comparisons"] if e["model"] != "all models"]
    pooled = [e for e in report["paired_comparisons"] if e["model"] == "all models"]
    assert len(per_model) == 4 * 3 and len(pooled) == 3
    assert all(e["n_pairs"] == 30 for e in per_model)
    assert all(e["n_pairs"] == 120 for e in pooled)


def test_markdown_shows_the_published_numbers(published: dict, report: dict) -> None:
    md = render_markdown(report)
    best = published["headline"]["best_config"]
    row = published["configs"][best]
    assert (f"| {best} | {row['scaffold']} | {row['model']} | {row['overall']:.3f} | "
            f"{row['D1']:.3f} | {row['D2']:.3f} | {row['D3']:.3f} | {row['D4']:.3f} | 30 | 0 |"
            in md)
    assert f"| zero-scored claims | {published['headline']['zero_scored_claims']} |" in md


def test_cli_json_on_the_release(official_scores_dir: Path, report: dict) -> None:
    done = subprocess.run([sys.executable, "-m", "sabench.benchmark.cli", "report",
                           str(official_scores_dir), "--format", "json"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    for section in SECTIONS:
        assert data[section] == report[section], section


def test_taxonomy_of_the_release_zero_scored_claims(official_scores_dir: Path,
                                                    published: dict) -> None:
    taxonomy = build_report(load_scores(official_scores_dir), resamples=100,
                            extra=frozenset({"failure_taxonomy"}))["failure_taxonomy"]
    compared = taxonomy["comparison"]
    assert compared["zero"]["n"] == published["headline"]["zero_scored_claims"]
    shares = compared["zero"]["categories"]
    assert sum(shares.values()) == pytest.approx(1.0)
    assert {d["item"] for d in compared["differences"] if d["against"] == "published_zero"} == {
        "implementation_mismatch", "stub_or_placeholder", "external_dependency"}
    assert "published" in compared["explanation"]
    assert len(taxonomy["per_config"]) == 12
