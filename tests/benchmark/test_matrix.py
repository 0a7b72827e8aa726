"""Matrix specs: validation (one line per mistake, with file and line), paths, configurations."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sabench.benchmark.matrix import MatrixError, load_matrix

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
REPLIES = REPO / "benchmark" / "demo" / "replies.yaml"
DEMO_PAPERS = REPO / "benchmark" / "demo" / "papers"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return path


def test_the_demo_spec_resolves_its_paths_against_its_folder() -> None:
    matrix = load_matrix(EXAMPLES / "demo-matrix.yaml")
    assert matrix.dataset == DEMO_PAPERS and matrix.paper_ids == ("smoothlr",)
    model = matrix.spec.models[0]
    assert model.spec == f"scripted:{REPLIES}"
    configs = matrix.configs()
    assert all(name.startswith("scripted_") and name.endswith(("_r1", "_r2")) for name in configs)
    assert {c["seed"] for c in configs.values()} == {1, 2}
    cells = matrix.cells()
    assert len(cells) == len(configs) == 2 * len(matrix.spec.scaffolds)
    assert len({c.key for c in cells}) == len(cells)


def test_every_mistake_is_one_line_with_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, f"""\
name: bad name
models:
  - spec: scripted:missing.yaml
  - {{spec: "nope:x"}}
  - {{spec: "openai:gpt-4o", price: {{input: -1, output: 2}}}}
scaffolds: [basic, unheard-of]
papers: {{dataset: {DEMO_PAPERS}, ids: [smoothlr, absent]}}
repeats: 0
budget: {{dollar: 3}}
judge: llm
""")
    with pytest.raises(MatrixError) as info:
        load_matrix(path)
    problems = info.value.problems
    text = "\n".join(problems)
    # Schema mistakes first (pydantic), each naming the file, the line and the entry.
    assert f"{path}:1: name: String should match pattern" in text
    assert f"{path}:5: models[2].price.input: Input should be greater than or equal to 0" in text
    assert f"{path}:8: repeats: Input should be greater than or equal to 1" in text
    assert f"{path}:9: budget.dollar: Extra inputs are not permitted" in text
    assert all("\n" not in p for p in problems)


def test_names_files_scaffolds_judges_and_papers_are_checked(tmp_path: Path) -> None:
    path = write(tmp_path, f"""\
models:
  - spec: scripted:missing.yaml
  - {{spec: "nope:x"}}
  - openai-compatible:local-model
scaffolds: [basic, unheard-of]
papers: {{dataset: {DEMO_PAPERS}, ids: [smoothlr, absent, smoothlr]}}
judge: llm
""")
    env_base = os.environ.pop("OPENAI_BASE_URL", None)
    try:
        with pytest.raises(MatrixError) as info:
            load_matrix(path)
    finally:
        if env_base is not None:
            os.environ["OPENAI_BASE_URL"] = env_base
    text = str(info.value)
    assert f"{path}:2: models[0].spec: {tmp_path / 'missing.yaml'}: no such file" in text
    assert f"{path}:3: models[1].spec: model spec 'nope:x': unknown provider 'nope'" in text
    assert f"{path}:4: models[2].spec: an openai-compatible model needs base_url" in text
    assert f"{path}:5: scaffolds[1].name: unknown scaffold 'unheard-of'" in text
    assert f"{path}:6: papers.ids[1]: no paper 'absent'" in text
    assert f"{path}:6: papers.ids[2]: paper 'smoothlr' is listed twice" in text
    assert f"{path}:7: judge: judge 'llm': name a model" in text
    assert len(info.value.problems) == 7


def test_a_broken_scripted_file_is_reported_at_its_model(tmp_path: Path) -> None:
    (tmp_path / "replies.yaml").write_text("replies: [{text: a, oops: 1}]")
    path = write(tmp_path, f"models: [scripted:replies.yaml]\nscaffolds: [basic]\n"
                           f"papers: {{dataset: {DEMO_PAPERS}}}\n")
    with pytest.raises(MatrixError, match=r"spec.yaml:1: models\[0\].spec: .*replies.0.oops"):
        load_matrix(path)


def test_two_entries_making_one_configuration_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path, f"""\
models: ["openai:gpt-4o", {{spec: "openai:gpt-4o-mini", name: gpt-4o}}]
scaffolds: [basic]
papers: {{dataset: {DEMO_PAPERS}}}
""")
    with pytest.raises(MatrixError, match=r"models\[1\]: two entries make the configuration "
                                          r"'gpt-4o_basic'"):
        load_matrix(path)


def test_yaml_errors_and_wrong_shapes(tmp_path: Path) -> None:
    with pytest.raises(MatrixError, match=r"spec.yaml:2: not valid YAML"):
        load_matrix(write(tmp_path, "models: [a\nscaffolds: ]\n"))
    with pytest.raises(MatrixError, match="expected a mapping"):
        load_matrix(write(tmp_path, "- a\n- b\n"))
    with pytest.raises(MatrixError, match="cannot read the matrix spec"):
        load_matrix(tmp_path / "absent.yaml")
    with pytest.raises(MatrixError, match=r"spec.yaml: papers: Field required"):
        load_matrix(write(tmp_path, "models: [openai:gpt-4o]\nscaffolds: [basic]\n"))


def test_dataset_paths_expand_variables_and_can_be_replaced(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SABENCH_TEST_DATA", str(DEMO_PAPERS.parent))
    path = write(tmp_path, "models: [openai:gpt-4o]\nscaffolds: [basic]\n"
                           "papers: {dataset: \"${SABENCH_TEST_DATA}/papers\"}\n")
    assert load_matrix(path).paper_ids == ("smoothlr",)
    monkeypatch.delenv("SABENCH_TEST_DATA")
    with pytest.raises(MatrixError, match="dataset folder does not exist"):
        load_matrix(path)
    assert load_matrix(path, dataset=DEMO_PAPERS.parent).dataset == DEMO_PAPERS


@pytest.mark.dataset
def test_the_paper_matrix_is_4_models_3_scaffolds_30_papers(sabench_data: Path) -> None:
    matrix = load_matrix(EXAMPLES / "sa-bench.yaml", dataset=sabench_data / "papers")
    assert (len(matrix.spec.models), len(matrix.spec.scaffolds), len(matrix.paper_ids)) == \
        (4, 3, 30)
    assert len(matrix.cells()) == 360


def test_the_cli_prints_every_mistake_and_exits_2(tmp_path: Path) -> None:
    path = write(tmp_path, f"models: [openai:gpt-4o]\nscaffolds: [nope, basic2]\n"
                           f"papers: {{dataset: {DEMO_PAPERS}}}\n")
    done = subprocess.run([sys.executable, "-m", "sabench.benchmark.cli", "run", str(path),
                           "--out", str(tmp_path / "out")], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 2 and "scaffolds[0].name: unknown scaffold 'nope'" in lines[0]
    assert "scaffolds[1].name: unknown scaffold 'basic2'" in lines[1]
    assert not (tmp_path / "out").exists()
