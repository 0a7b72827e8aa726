"""Scoring repositories: pick a judge from its spec string, score one repository or a runs root.

Judge specs: `offline` (deterministic, $0; `keyword` is the simpler baseline scorer),
`llm:<model spec>` and `hybrid:<model spec>`, where
the model spec is one of `sabench.agent.models` (`anthropic:...`, `openai:...`,
`openai-compatible:...`). A runs root is what `unpack.sh DEST` produces: `runs/index.json` and
`runs/<config>/<paper_id>/repo/`; scores go to `SCORES_DIR/<config>/<paper_id>.json` with
`SCORES_DIR/configs.json`, the layout `sabench report` reads. Scoring a runs root is resumable:
a run whose score file exists and loads is skipped. Each file is written atomically, so a killed
run never leaves a half-written score behind.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sabench.agent.types import UsageTotals
from sabench.benchmark.dataset import DatasetError, load_paper, resolve_papers_dir
from sabench.verifiers.files import inside, plain_name, read_json
from sabench.verifiers.judge import Judge, RepositoryError
from sabench.verifiers.spec import PaperSpec
from sabench.verifiers.types import PaperScore, ResultFileError

if TYPE_CHECKING:  # langchain loads with it: only judges that call a model need it
    from sabench.agent.usage import UsageRecorder

CONFIGS_FILE = "configs.json"
INDEX_FILE = "index.json"


class JudgeSpecError(ValueError):
    """A `--judge` value that names no judge (one line)."""


class RunsRootError(ValueError):
    """A runs root without a usable layout (one line naming the path)."""


# ---------------------------------------------------------------- judges


def make_judge(spec: str, base_url: str | None = None, *,
               recorder: UsageRecorder | None = None, **options: Any) -> Judge:
    """Build the judge a spec string names.

    Args:
        spec: `<kind>` or `<kind>:<model spec>`, kind one of `JUDGE_KINDS` (`offline`,
            `llm:<model spec>`, `hybrid:<model spec>`).
        base_url: server URL for `openai-compatible` models.
        recorder: receives the usage of every model call (LLM and hybrid judges).
        **options: passed to the judge's constructor (e.g. `batch_size`, `threshold`).

    Raises:
        JudgeSpecError: unknown kind or a missing model spec.
        ModelConfigError: the model spec is invalid or its provider is not configured.
    """
    kind, _, model_spec = spec.strip().partition(":")
    if kind not in JUDGE_KINDS:
        raise JudgeSpecError(f"judge {spec!r}: expected offline, keyword, llm:<provider:model> "
                             f"or hybrid:<provider:model>")
    return JUDGE_KINDS[kind](JudgeRequest(spec, model_spec, base_url, recorder, dict(options)))


@dataclass(frozen=True)
class JudgeRequest:
    """Everything a judge factory gets: the spec, its model part, and the call's options."""

    spec: str
    model_spec: str
    base_url: str | None
    recorder: UsageRecorder | None
    options: dict[str, Any]

    def require_model(self) -> str:
        if not self.model_spec:
            kind = self.spec.partition(":")[0]
            raise JudgeSpecError(
                f"judge {self.spec!r}: name a model, e.g. {kind}:anthropic:claude-sonnet-4-6")
        return self.model_spec


def _without(options: dict[str, Any], *names: str) -> dict[str, Any]:
    """Options minus those meant for other judge kinds (the CLI passes them to every kind)."""
    return {k: v for k, v in options.items() if k not in names}


def _offline_kind(request: JudgeRequest) -> Judge:
    if request.model_spec:
        raise JudgeSpecError(f"judge {request.spec!r}: the offline judge takes no model")
    return _offline_judge(**_without(request.options, "threshold", "evidence"))


def _keyword_kind(request: JudgeRequest) -> Judge:
    if request.model_spec:
        raise JudgeSpecError(f"judge {request.spec!r}: the keyword judge takes no model")
    from sabench.verifiers.keyword import KeywordJudge

    return KeywordJudge(**_without(request.options, "emulate", "threshold", "evidence"))


def _llm_kind(request: JudgeRequest) -> Judge:
    options = _without(request.options, "emulate", "threshold")
    return _llm_judge(request.require_model(), request.base_url, request.recorder, **options)


def _hybrid_kind(request: JudgeRequest) -> Judge:
    from sabench.verifiers.llm_judge import HybridJudge

    options = dict(request.options)
    hybrid = {k: options.pop(k) for k in ("threshold", "fallback_to_offline") if k in options}
    offline = {k: options.pop(k) for k in ("emulate",) if k in options}
    llm = _llm_judge(request.require_model(), request.base_url, request.recorder, **options)
    return HybridJudge(_offline_judge(**offline), llm, **hybrid)


def _offline_judge(**options: Any) -> Judge:
    try:
        from sabench.verifiers.offline import CalibrationError, OfflineJudge
    except ImportError as exc:
        raise JudgeSpecError(f"the offline judge is not available in this build: {exc}") from exc
    try:
        return OfflineJudge(**options)
    except CalibrationError as exc:
        raise JudgeSpecError(str(exc)) from exc


def _llm_judge(model_spec: str, base_url: str | None, recorder: UsageRecorder | None,
               **options: Any) -> Judge:
    from sabench.agent.models import make_model, parse_model_spec
    from sabench.verifiers.llm_judge import EVIDENCE_KINDS, LLMJudge

    parsed = parse_model_spec(model_spec, base_url)
    evidence = options.pop("evidence", None)
    if evidence is not None:
        if evidence not in EVIDENCE_KINDS:
            raise JudgeSpecError(f"evidence {evidence!r}: expected one of "
                                 f"{', '.join(EVIDENCE_KINDS)}")
        options["evidence"] = EVIDENCE_KINDS[evidence]()
    callbacks = [recorder] if recorder is not None else []
    model = make_model(parsed, callbacks=callbacks)
    return LLMJudge(model, name=f"llm:{parsed}", **options)


def usage_recorder(spec: str) -> UsageRecorder | None:
    """A recorder of model calls for the judge a spec names; None for the kinds that call no
    model (`MODEL_FREE_KINDS`), which then start without loading langchain."""
    if spec.strip().partition(":")[0] in MODEL_FREE_KINDS:
        return None
    from sabench.agent.usage import UsageRecorder

    return UsageRecorder()


JudgeFactory = Callable[[JudgeRequest], Judge]

# Judge kinds by name: a new kind of judge is one factory and one line here.
JUDGE_KINDS: dict[str, JudgeFactory] = {
    "offline": _offline_kind,
    "keyword": _keyword_kind,
    "llm": _llm_kind,
    "hybrid": _hybrid_kind,
}
MODEL_FREE_KINDS = frozenset({"offline", "keyword"})


# ---------------------------------------------------------------- one repository


def score_repo(spec: PaperSpec, repo: Path, judge: Judge,
               recorder: UsageRecorder | None = None) -> PaperScore:
    """Score one repository, classify its low verdicts and attach the judge's usage.

    Raises:
        RepositoryError: the repository does not exist or is not a folder.
    """
    before = recorder.totals() if recorder is not None else None
    score = judge.score(spec, repo)
    score = categorize(score)
    if recorder is not None and before is not None:
        used = _difference(recorder.totals(), before)
        if used.calls:
            score = PaperScore.model_validate(
                {**score.model_dump(exclude_none=True), "usage": used.model_dump()})
    return score


def estimate(spec: PaperSpec, repo: Path, judge: Judge) -> dict[str, Any]:
    """Requests, estimated tokens and dollars of scoring `repo` with `judge`, without calling
    any model (the hybrid judge runs its offline pass to learn which claims it would send).

    Dollars are None when the model is not in the price table; offline judges cost nothing.
    """
    from sabench.agent.usage import price_for
    from sabench.verifiers.judge import check_repository
    from sabench.verifiers.llm_judge import HybridJudge, LLMJudge

    root = check_repository(repo)
    llm = judge.llm if isinstance(judge, HybridJudge) else judge
    if not isinstance(llm, LLMJudge):
        return {"judge": judge.name, "requests": 0, "input_tokens": 0, "output_tokens": 0,
                "dollars": 0.0}
    claims = list(spec.claims)
    if isinstance(judge, HybridJudge):
        unsure = {v.id for _, v in judge.offline.score(spec, repo).verdicts() if judge.unsure(v)}
        claims = [c for c in claims if c.id in unsure]
    plan = llm.plan(spec, claims, llm.evidence(root))
    price = price_for(llm.name.removeprefix("llm:"))
    dollars = (None if price is None else
               (plan.input_tokens * price.input + plan.output_tokens * price.output) / 1e6)
    return {"judge": judge.name, **vars(plan), "dollars": dollars}


def categorize(score: PaperScore) -> PaperScore:
    """Fill in the failure category of low verdicts that have none (taxonomy rules)."""
    try:
        from sabench.verifiers.taxonomy import categorize_score
    except ImportError:  # taxonomy not built yet: leave categories empty
        return score
    return categorize_score(score)


def _difference(after: UsageTotals, before: UsageTotals) -> UsageTotals:
    return UsageTotals(**{name: getattr(after, name) - getattr(before, name)
                          for name in UsageTotals.model_fields})


def paper_spec(papers_dir: Path, paper_id: str) -> PaperSpec:
    """The claims of one paper of a dataset folder (the paper text is not needed to score).

    Raises:
        DatasetError: the paper is not in the dataset or its claim file is malformed.
    """
    root = resolve_papers_dir(papers_dir)
    if not root.is_dir():
        raise DatasetError(f"{papers_dir}: dataset folder does not exist")
    if not (root / paper_id).is_dir():
        raise DatasetError(f"{root}: no paper {paper_id!r} in this dataset")
    return load_paper(root / paper_id, with_markdown=False)


def write_score(score: PaperScore, path: Path) -> None:
    """Write a result file atomically (a crash leaves the old file or none, never half)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    score.dump(tmp)
    os.replace(tmp, path)


# ---------------------------------------------------------------- runs roots


@dataclass(frozen=True)
class Run:
    """One generated repository of a runs root."""

    config: str
    paper_id: str
    repo: Path
    scaffold: str = ""
    model: str = ""
    missing_cited_files: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunsRoot:
    """The runs of a runs root and each configuration's scaffold and model."""

    root: Path
    configs: dict[str, dict[str, str]]
    runs: list[Run]


def read_runs_root(path: Path) -> RunsRoot:
    """Read `runs/index.json` under `path` (or `path/index.json`); without an index, discover
    `runs/<config>/<paper_id>/repo/` folders.

    Raises:
        RunsRootError: the folder does not exist, or holds neither an index nor run folders.
    """
    path = Path(path)
    if not path.is_dir():
        raise RunsRootError(f"{path}: runs root does not exist or is not a folder")
    runs_dir = path / "runs" if (path / "runs").is_dir() else path
    base = runs_dir.parent
    index = runs_dir / INDEX_FILE
    if index.is_file():
        return _from_index(index, base)
    runs = list(_discover(runs_dir))
    if not runs:
        raise RunsRootError(f"{path}: no {INDEX_FILE} and no <config>/<paper_id>/repo folders")
    configs = {run.config: {"scaffold": run.config, "model": run.config} for run in runs}
    return RunsRoot(root=base, configs=configs, runs=runs)


def _from_index(index: Path, base: Path) -> RunsRoot:
    data = read_json(index, RunsRootError, "cannot read runs index")
    if not isinstance(data, dict) or not isinstance(data.get("runs"), list):
        raise RunsRootError(f"{index}: expected an object with a 'runs' list")
    runs = [_run_entry(entry, i, index, base) for i, entry in enumerate(data["runs"])]
    listed = data.get("configs") or {}
    if not isinstance(listed, dict):
        raise RunsRootError(f"{index}: 'configs' must be an object {{config: {{scaffold, "
                            f"model}}}}")
    configs = {str(name): {"scaffold": str(info.get("scaffold", name)),
                           "model": str(info.get("model", name))}
               for name, info in listed.items() if isinstance(info, dict)}
    for run in runs:
        configs.setdefault(run.config, {"scaffold": run.scaffold or run.config,
                                        "model": run.model or run.config})
    return RunsRoot(root=base, configs=configs, runs=runs)


def _run_entry(entry: Any, i: int, index: Path, base: Path) -> Run:
    if not isinstance(entry, dict) or not entry.get("config") or not entry.get("paper_id"):
        raise RunsRootError(f"{index}: runs[{i}] needs 'config' and 'paper_id'")
    config, paper = str(entry["config"]), str(entry["paper_id"])
    for key, name in (("config", config), ("paper_id", paper)):
        if not plain_name(name):
            raise RunsRootError(f"{index}: runs[{i}].{key} {name!r} is not a plain name "
                                f"(it names a folder and a file)")
    repo = inside(base, str(entry.get("repo") or f"runs/{config}/{paper}/repo"))
    if repo is None:
        raise RunsRootError(f"{index}: runs[{i}].repo {entry['repo']!r} leaves the runs root "
                            f"{base}")
    missing = entry.get("missing_cited_files") or ()
    if not isinstance(missing, list | tuple):
        raise RunsRootError(f"{index}: runs[{i}].missing_cited_files must be a list")
    return Run(config=config, paper_id=paper, repo=repo,
               scaffold=str(entry.get("scaffold") or ""), model=str(entry.get("model") or ""),
               missing_cited_files=tuple(str(name) for name in missing))


def _discover(runs_dir: Path) -> Iterator[Run]:
    for config_dir in sorted(p for p in runs_dir.iterdir() if p.is_dir()):
        for paper_dir in sorted(p for p in config_dir.iterdir() if (p / "repo").is_dir()):
            yield Run(config=config_dir.name, paper_id=paper_dir.name, repo=paper_dir / "repo")


def write_configs(out: Path, configs: dict[str, dict[str, str]]) -> None:
    """Merge configurations into `out/configs.json` (existing entries are kept)."""
    path = out / CONFIGS_FILE
    current: dict[str, Any] = {}
    if path.is_file():
        current = read_json(path, ResultFileError, "cannot read configs")
        if not isinstance(current, dict):
            raise ResultFileError(f"{path}: cannot read configs: expected an object")
    merged = {**current, **{k: v for k, v in configs.items() if k not in current}}
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(merged, indent=1) + "\n", encoding="utf-8")


def already_scored(path: Path) -> PaperScore | None:
    """The score in a file that exists and loads (None: absent or damaged, to score again)."""
    if not path.is_file():
        return None
    try:
        return PaperScore.load(path)
    except ResultFileError:
        return None


@dataclass
class RunOutcome:
    """What happened to one run: `scored`, `skipped` or `failed` (with the one-line cause)."""

    config: str
    paper_id: str
    status: str
    error: str = ""
    overall: float | None = None
    errors: int = 0
    usage: dict[str, Any] = field(default_factory=dict)


@dataclass
class ScoreRunsSummary:
    """Totals over a runs root."""

    outcomes: list[RunOutcome] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(o.status == status for o in self.outcomes)

    @property
    def claim_errors(self) -> int:
        return sum(o.errors for o in self.outcomes)

    def usage(self) -> UsageTotals:
        total = UsageTotals()
        for outcome in self.outcomes:
            if outcome.usage:
                total = total + UsageTotals.model_validate(outcome.usage)
        return total

    def as_dict(self) -> dict[str, Any]:
        return {"scored": self.count("scored"), "skipped": self.count("skipped"),
                "failed": self.count("failed"), "claim_errors": self.claim_errors,
                "usage": self.usage().model_dump(),
                "failures": [{"config": o.config, "paper_id": o.paper_id, "error": o.error}
                             for o in self.outcomes if o.status == "failed"]}


# One judge per worker process: built once by the pool initializer, reused for every run.
_WORKER: dict[str, Any] = {}


def _init_worker(judge_spec: str, base_url: str | None, options: dict[str, Any]) -> None:
    recorder = usage_recorder(judge_spec)
    _WORKER["recorder"] = recorder
    _WORKER["judge"] = make_judge(judge_spec, base_url, recorder=recorder, **options)


def _score_task(run: Run, spec: PaperSpec, out_path: Path) -> RunOutcome:
    try:
        score = score_repo(spec, run.repo, _WORKER["judge"], _WORKER["recorder"])
    except RepositoryError as exc:
        return RunOutcome(run.config, run.paper_id, "failed", str(exc))
    except Exception as exc:  # one broken run must not stop the other 239; reported per run
        return RunOutcome(run.config, run.paper_id, "failed",
                          f"{run.repo}: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
    write_score(score, out_path)
    usage = getattr(score, "usage", None) or {}
    return RunOutcome(run.config, run.paper_id, "scored", overall=score.overall_score,
                      errors=score.errors, usage=usage)


Progress = Callable[[RunOutcome], None]


def score_runs(runs_root: Path, papers_dir: Path, judge_spec: str, out: Path, *,
               jobs: int = 1, base_url: str | None = None, on_done: Progress | None = None,
               on_total: Callable[[int], None] | None = None,
               judge_options: dict[str, Any] | None = None) -> ScoreRunsSummary:
    """Score every run of a runs root that has no score yet, `jobs` at a time.

    Runs with `missing_cited_files` are scored like the others (the release dropped some
    folders; that affects agreement studies, not scoring).

    Args:
        runs_root: the folder `unpack.sh` filled (or its `runs/` folder).
        papers_dir: the dataset (`papers/` or its parent).
        judge_spec: see `make_judge`.
        out: SCORES_DIR; gets `<config>/<paper_id>.json` and `configs.json`.
        jobs: worker processes.
        on_done: called after each run (progress display).
        on_total: called once with the number of runs to score.

    Raises:
        RunsRootError, DatasetError, JudgeSpecError, ModelConfigError: before any scoring.
    """
    options = judge_options or {}
    # fail fast on a bad spec or a missing key, before any work
    judge_name = make_judge(judge_spec, base_url, **options).name
    root = read_runs_root(runs_root)
    summary = ScoreRunsSummary()
    todo = _plan(root, papers_dir, out, summary, judge_name)
    write_configs(out, {c: root.configs[c] for c in {run.config for run, _, _ in todo}
                        | {o.config for o in summary.outcomes}})
    if on_total:
        on_total(len(todo))
    for outcome in _execute(todo, judge_spec, base_url, options, jobs):
        summary.outcomes.append(outcome)
        if on_done:
            on_done(outcome)
    return summary


def _plan(root: RunsRoot, papers_dir: Path, out: Path, summary: ScoreRunsSummary,
          judge_name: str) -> list[tuple[Run, PaperSpec, Path]]:
    specs: dict[str, PaperSpec | str] = {}
    todo = []
    for run in root.runs:
        target = out / run.config / f"{run.paper_id}.json"
        existing = already_scored(target)
        if existing is not None:
            # Never mix judges in one SCORES_DIR, and never overwrite another judge's scores.
            same = existing.judge_name == judge_name
            summary.outcomes.append(RunOutcome(
                run.config, run.paper_id, "skipped" if same else "failed",
                "" if same else f"{target}: scored by {existing.judge_name}, not {judge_name}; "
                                "use another --out"))
            continue
        if run.paper_id not in specs:
            try:
                specs[run.paper_id] = paper_spec(papers_dir, run.paper_id)
            except DatasetError as exc:
                specs[run.paper_id] = str(exc)
        spec = specs[run.paper_id]
        if isinstance(spec, str):
            summary.outcomes.append(RunOutcome(run.config, run.paper_id, "failed", spec))
        else:
            todo.append((run, spec, target))
    return todo


def _execute(todo: list[tuple[Run, PaperSpec, Path]], judge_spec: str, base_url: str | None,
             options: dict[str, Any], jobs: int) -> Iterator[RunOutcome]:
    if not todo:
        return
    if jobs <= 1:
        _init_worker(judge_spec, base_url, options)
        for task in todo:
            yield _score_task(*task)
        return
    with ProcessPoolExecutor(max_workers=jobs, initializer=_init_worker,
                             initargs=(judge_spec, base_url, options)) as pool:
        futures = [pool.submit(_score_task, *task) for task in todo]
        for future in as_completed(futures):
            yield future.result()
