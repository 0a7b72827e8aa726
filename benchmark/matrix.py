"""Matrix specs: which models × scaffolds × papers × repeats `sabench run` runs, and how.

A spec is a YAML file (see `examples/sa-bench.yaml` and `examples/demo-matrix.yaml`):

    name: demo                      # names the checkpoint threads; letters, digits, . _ -
    models:                         # spec strings, or entries with a name, base URL, price
      - scripted:../benchmark/demo/replies.yaml
      - {spec: "openai-compatible:deepseek-v4-pro", name: deepseek, base_url:
         "https://api.deepseek.com", api_key_env: DEEPSEEK_API_KEY, price: {input: 1.74,
         cached_input: 0.145, output: 3.48}}
    scaffolds:                      # registered names, or entries with a label and options
      - basic
      - {name: basic, label: basic-200, options: {max_steps: 200}}
    papers: {dataset: ../benchmark/demo/papers, ids: all}
    repeats: 2                      # independent runs of every cell
    budget: {dollars: 20, seconds: 3600}      # per run (agent.types.Budget)
    sandbox: {backend: docker, image: null, limits: {memory_mb: 2048}}
    judge: offline                  # offline | keyword | llm:<spec> | hybrid:<spec>
    jobs: 2                         # runs at once
    executor: local                 # local (process pool) | ray

`api_key_env` names the variable holding a model's key (the key itself never enters a spec,
task or record); without it a model reads its provider's usual variable (`OPENAI_API_KEY`...).
Paths in a spec (the dataset, `scripted:` and `replay:` files) resolve against the spec's folder;
`~` and `$VARS` are expanded. Every mistake is reported, one line each, naming the file, the
line and the entry (`MatrixError`).

A run's configuration name is `<model name>_<scaffold label>` (with `_r<seed>` when repeats > 1),
the `<config>` of the SCORES_DIR layout that `sabench report` reads.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from sabench.agent.types import Budget, Price
from sabench.sandbox.types import Limits

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
#: Model providers whose model part is a path on disk.
PATH_PROVIDERS = ("scripted", "replay")


class MatrixError(ValueError):
    """A matrix spec that cannot be run: one line per mistake, each naming file, line, entry."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PriceSpec(Price):
    """A price override in dollars per million tokens (unknown keys are mistakes)."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class BudgetSpec(Budget):
    """Per-run limits (agent.types.Budget; unknown keys are mistakes)."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class LimitsSpec(Limits):
    """Sandbox limits (sandbox.types.Limits; unknown keys are mistakes)."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class ModelEntry(_Strict):
    """A generator model: its spec string, the name configurations use, server, price."""

    spec: str = Field(min_length=3)
    name: str | None = Field(default=None, pattern=NAME.pattern)
    base_url: str | None = None
    api_key_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    price: PriceSpec | None = None

    @property
    def label(self) -> str:
        """The model's name in configuration names and tables."""
        if self.name:
            return self.name
        provider, _, model = self.spec.partition(":")
        if provider in PATH_PROVIDERS:
            model = Path(model).stem
        return re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-") or provider

    @property
    def model_name(self) -> str:
        """The model part of the spec (price-table key)."""
        return self.spec.partition(":")[2]


class ScaffoldEntry(_Strict):
    """A registered scaffold, the label configurations use, and its options."""

    name: str = Field(min_length=1)
    label: str | None = Field(default=None, pattern=NAME.pattern)
    options: dict[str, Any] = Field(default_factory=dict)

    @property
    def display(self) -> str:
        return self.label or self.name


class PapersEntry(_Strict):
    """Which papers: a dataset folder and the ids to run (`all`: every paper in it)."""

    dataset: str = Field(min_length=1)
    ids: Literal["all"] | list[str] = "all"


class SandboxEntry(_Strict):
    backend: Literal["docker", "local"] = "docker"
    image: str | None = None
    limits: LimitsSpec = Field(default_factory=LimitsSpec)


class MatrixSpec(_Strict):
    """The validated content of a matrix spec file."""

    name: str = Field(default="matrix", pattern=NAME.pattern)
    models: list[ModelEntry] = Field(min_length=1)
    scaffolds: list[ScaffoldEntry] = Field(min_length=1)
    papers: PapersEntry
    repeats: int = Field(default=1, ge=1, le=1000)
    budget: BudgetSpec = Field(default_factory=BudgetSpec)
    sandbox: SandboxEntry = Field(default_factory=SandboxEntry)
    judge: str = "offline"
    jobs: int = Field(default=1, ge=1, le=1024)
    executor: Literal["local", "ray"] = "local"
    ray_address: str | None = None
    checkpoint: str | None = None

    @field_validator("models", mode="before")
    @classmethod
    def _model_strings(cls, value: Any) -> Any:
        return [{"spec": v} if isinstance(v, str) else v for v in value] \
            if isinstance(value, list) else value

    @field_validator("scaffolds", mode="before")
    @classmethod
    def _scaffold_strings(cls, value: Any) -> Any:
        return [{"name": v} if isinstance(v, str) else v for v in value] \
            if isinstance(value, list) else value


@dataclass(frozen=True)
class Cell:
    """One run of the matrix: a configuration (model × scaffold × seed) on one paper."""

    config: str
    model: ModelEntry
    scaffold: ScaffoldEntry
    paper_id: str
    seed: int

    @property
    def key(self) -> str:
        return f"{self.config}/{self.paper_id}"


@dataclass(frozen=True)
class Matrix:
    """A validated spec with its paths resolved and its papers listed."""

    spec: MatrixSpec
    source: Path
    dataset: Path
    paper_ids: tuple[str, ...]

    def configs(self) -> dict[str, dict[str, Any]]:
        """config name -> its `configs.json` entry (scaffold, model, seed, specs)."""
        entries = {}
        for model in self.spec.models:
            for scaffold in self.spec.scaffolds:
                for seed in self.seeds():
                    entries[config_name(model, scaffold, seed, self.spec.repeats)] = {
                        "scaffold": scaffold.display, "model": model.label,
                        "model_spec": model.spec, "scaffold_name": scaffold.name,
                        "seed": seed}
        return entries

    def seeds(self) -> range:
        return range(1, self.spec.repeats + 1)

    def cells(self) -> list[Cell]:
        """Every run, paper-major within a configuration, configurations in spec order."""
        return [Cell(config_name(m, s, seed, self.spec.repeats), m, s, paper, seed)
                for m in self.spec.models for s in self.spec.scaffolds for seed in self.seeds()
                for paper in self.paper_ids]


def config_name(model: ModelEntry, scaffold: ScaffoldEntry, seed: int, repeats: int) -> str:
    base = f"{model.label}_{scaffold.display}"
    return f"{base}_r{seed}" if repeats > 1 else base


# ------------------------------------------------------------------------------ loading


def load_matrix(path: Path, *, dataset: Path | None = None) -> Matrix:
    """Read, validate and resolve a matrix spec.

    Args:
        path: the YAML file.
        dataset: a papers folder that replaces the spec's `papers.dataset`.

    Raises:
        MatrixError: every problem found, one line each.
    """
    path = Path(path)
    text, root = read_yaml(path)
    try:
        spec = MatrixSpec.model_validate(yaml.safe_load(text))
    except ValidationError as exc:
        raise MatrixError([f"{where(path, root, e['loc'])}: {e['msg']}"
                           for e in exc.errors()]) from None
    spec = resolve_paths(spec, path.parent)
    papers = Path(resolve(str(dataset), Path.cwd())) if dataset else Path(spec.papers.dataset)
    problems, paper_ids = check_spec(spec, papers, path, root)
    if problems:
        raise MatrixError(problems)
    from sabench.benchmark.dataset import resolve_papers_dir

    return Matrix(spec=spec, source=path, dataset=resolve_papers_dir(papers),
                  paper_ids=tuple(paper_ids))


def read_yaml(path: Path) -> tuple[str, yaml.Node | None]:
    """The file's text and its YAML node tree (for line numbers)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise MatrixError([f"{path}: cannot read the matrix spec ({exc.strerror})"]) from None
    except UnicodeDecodeError as exc:
        raise MatrixError([f"{path}: not valid UTF-8 (byte {exc.start})"]) from None
    try:
        root = yaml.compose(text)
    except RecursionError:
        raise MatrixError([f"{path}: not valid YAML: nested too deeply"]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise MatrixError([f"{path}{line}: not valid YAML: {problem}"]) from None
    if not isinstance(root, yaml.MappingNode):
        raise MatrixError([f"{path}: expected a mapping with models, scaffolds and papers"])
    return text, root


def where(path: Path, root: yaml.Node | None, loc: tuple[Any, ...]) -> str:
    """`file:line: models[1].price.input` for a location in the spec."""
    node, line = root, None
    for part in loc:
        node = child(node, part)
        if node is None:
            break
        line = node.start_mark.line + 1
    label = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
    return f"{path}:{line}: {label or 'spec'}" if line else f"{path}: {label or 'spec'}"


def child(node: yaml.Node | None, part: Any) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode):
        return next((value for key, value in node.value if key.value == part), None)
    if isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
        return node.value[part]
    return None


def resolve(value: str, base: Path) -> str:
    """A spec path: `~` and `$VARS` expanded, relative to `base`."""
    expanded = Path(os.path.expanduser(os.path.expandvars(value)))
    return str(expanded if expanded.is_absolute() else (base / expanded).resolve())


def resolve_paths(spec: MatrixSpec, base: Path) -> MatrixSpec:
    """The spec with its dataset and model file paths made absolute."""
    models = []
    for model in spec.models:
        provider, sep, rest = model.spec.partition(":")
        if provider in PATH_PROVIDERS and sep and rest:
            label = model.label  # named after the file as written, not the resolved path
            model = model.model_copy(update={"spec": f"{provider}:{resolve(rest, base)}",
                                             "name": label})
        models.append(model)
    papers = spec.papers.model_copy(update={"dataset": resolve(spec.papers.dataset, base)})
    return spec.model_copy(update={"models": models, "papers": papers})


# ------------------------------------------------------------------------------ checks


def check_spec(spec: MatrixSpec, dataset: Path, path: Path,
               root: yaml.Node | None) -> tuple[list[str], list[str]]:
    """Problems that pydantic cannot see (names, files, papers), and the paper ids to run."""
    problems: list[str] = []

    def add(loc: tuple[Any, ...], message: str) -> None:
        problems.append(f"{where(path, root, loc)}: {message}")

    for i, model in enumerate(spec.models):
        if (message := model_problem(model)) is not None:
            add(("models", i, "spec"), message)
    for i, scaffold in enumerate(spec.scaffolds):
        if (message := scaffold_problem(scaffold.name)) is not None:
            add(("scaffolds", i, "name"), message)
    if (message := judge_problem(spec.judge)) is not None:
        add(("judge",), message)
    for name, locs in duplicate_configs(spec).items():
        add(locs, f"two entries make the configuration {name!r}; give one a name or label")
    paper_ids, paper_problems = papers_of(spec.papers, dataset)
    for loc, message in paper_problems:
        add(("papers", *loc), message)
    return problems, paper_ids


def model_problem(model: ModelEntry) -> str | None:
    from sabench.agent.models import ModelConfigError, parse_model_spec

    try:
        parsed = parse_model_spec(model.spec, model.base_url)
    except ModelConfigError as exc:
        return str(exc)
    if parsed.provider in PATH_PROVIDERS and not Path(parsed.model).exists():
        return f"{parsed.model}: no such file (paths resolve against the spec's folder)"
    if parsed.provider == "scripted":
        from sabench.agent.scripted import ScriptError, load_script

        try:
            load_script(Path(parsed.model))
        except ScriptError as exc:
            return str(exc)
    if parsed.provider == "openai-compatible" and not parsed.base_url:
        return "an openai-compatible model needs base_url (or OPENAI_BASE_URL)"
    return None


def scaffold_problem(name: str) -> str | None:
    from sabench.scaffolds import SCAFFOLDS

    if name not in SCAFFOLDS:
        return f"unknown scaffold {name!r} (registered: {', '.join(SCAFFOLDS)})"
    return None


def judge_problem(judge: str) -> str | None:
    from sabench.agent.models import ModelConfigError, parse_model_spec
    from sabench.benchmark.scoring import JUDGE_KINDS, MODEL_FREE_KINDS

    kind, _, model = judge.strip().partition(":")
    if kind not in JUDGE_KINDS:
        return f"unknown judge {judge!r} (kinds: {', '.join(JUDGE_KINDS)})"
    if kind in MODEL_FREE_KINDS and model:
        return f"judge {judge!r}: the {kind} judge takes no model"
    if kind not in MODEL_FREE_KINDS:
        if not model:
            return f"judge {judge!r}: name a model, e.g. {kind}:anthropic:claude-sonnet-4-6"
        try:
            parse_model_spec(model)
        except ModelConfigError as exc:
            return str(exc)
    return None


def duplicate_configs(spec: MatrixSpec) -> dict[str, tuple[Any, ...]]:
    """Configuration names made twice, with the location of the later entry."""
    seen: dict[str, tuple[int, int]] = {}
    duplicates: dict[str, tuple[Any, ...]] = {}
    for i, model in enumerate(spec.models):
        for j, scaffold in enumerate(spec.scaffolds):
            name = f"{model.label}_{scaffold.display}"
            if name in seen:
                duplicates[name] = ("models", i) if seen[name][0] != i else ("scaffolds", j)
            seen.setdefault(name, (i, j))
    return duplicates


def papers_of(papers: PapersEntry, dataset: Path) -> tuple[list[str], list[tuple[tuple, str]]]:
    """The paper ids to run and the problems with the papers entry."""
    from sabench.benchmark.dataset import resolve_papers_dir

    folder = resolve_papers_dir(dataset)
    if not folder.is_dir():
        return [], [(("dataset",), f"{dataset}: dataset folder does not exist (set the path, "
                                   "or pass --papers)")]
    present = sorted(p.name for p in folder.iterdir()
                     if p.is_dir() and not p.name.startswith(".") and (p / "sau.json").is_file())
    if papers.ids == "all":
        if not present:
            return [], [(("dataset",), f"{folder}: no paper folders (<id>/sau.json) found")]
        return present, []
    problems = [(("ids", i), f"no paper {paper!r} in {folder}")
                for i, paper in enumerate(papers.ids) if paper not in present]
    problems += [(("ids", i), f"paper {paper!r} is listed twice")
                 for i, paper in enumerate(papers.ids) if paper in papers.ids[:i]]
    if not papers.ids:
        problems.append((("ids",), "no papers listed"))
    return list(papers.ids), problems
