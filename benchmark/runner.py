"""The benchmark runner: every cell of a matrix spec run in the evaluation graph, resumably.

`run_matrix` plans the runs of a `Matrix` (models × scaffolds × repeats × papers), hands the
unfinished ones to an executor and publishes each result where the other commands read it:

    DIR/runs/<config>/<paper>/        the run's folder (`benchmark/reproduce.py`): repo/,
                                      score.json, record.json, checkpoints, journal
    DIR/scores/<config>/<paper>.json  the score (SCORES_DIR layout: `sabench report DIR/scores`)
    DIR/scores/configs.json           config -> scaffold, model (and the model spec, seed)
    DIR/records/<config>/<paper>.json the run record plus the runner's fields (`runner`)
    DIR/runs/index.json               the finished runs (a runs root: `sabench score-runs DIR`)
    DIR/runner.jsonl                  one line per event (start, run finished, end)

A run is the evaluation graph with its own checkpoint thread, through `reproduce` — the same
function under every executor (`run_task`). A failed run becomes an error record and no score
(never a silent zero); the others go on. Running the same command again skips finished runs
and resumes the others from their checkpoints; because a run's model calls are checkpointed
before anything acts on them, a runner killed at any moment (even `kill -9`) repeats none.

Executors: `local` is a process pool (`jobs` worker processes, each killed with its parent);
`ray` gives the same tasks to Ray actors (a local instance, or a cluster by address). Each
worker prewarms one sandbox before its first run and the next one before each later run, so
container start-up (serialised in the Docker daemon) is out of the runs' way.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field, replace
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Protocol

from sabench.benchmark.matrix import Cell, Matrix

RUNS, SCORES, RECORDS = "runs", "scores", "records"
LOG_FILE = "runner.jsonl"
LOCK_FILE = ".runner.lock"
#: Record statuses of a finished run (kept on a rerun); anything else is resumed.
FINISHED = ("ok", "stopped")


class RunnerError(RuntimeError):
    """The runner cannot start (the output folder is in use or holds another matrix)."""


# ------------------------------------------------------------------------------ tasks


@dataclass(frozen=True)
class Task:
    """One run as plain data: what a worker process (or a Ray actor) needs to run it."""

    config: str
    paper_id: str
    seed: int
    paper_dir: str
    out: str
    thread: str
    scaffold: str
    model: str
    model_label: str
    scaffold_label: str
    options: dict[str, Any]
    base_url: str | None
    api_key_env: str | None
    prices: dict[str, dict[str, float | None]]
    budget: dict[str, Any]
    judge: str
    backend: str
    image: str | None
    limits: dict[str, Any]
    checkpoint: str | None
    prewarm_next: bool = False

    @property
    def key(self) -> str:
        return f"{self.config}/{self.paper_id}"

    def run_dir(self) -> Path:
        return Path(self.out) / RUNS / self.config / self.paper_id

    def score_path(self) -> Path:
        return Path(self.out) / SCORES / self.config / f"{self.paper_id}.json"

    def record_path(self) -> Path:
        return Path(self.out) / RECORDS / self.config / f"{self.paper_id}.json"


def task_for(matrix: Matrix, cell: Cell, out: Path) -> Task:
    """The task of one cell of the matrix, its results under `out`."""
    spec = matrix.spec
    return Task(
        config=cell.config, paper_id=cell.paper_id, seed=cell.seed,
        paper_dir=str(matrix.dataset / cell.paper_id), out=str(out),
        thread=f"{spec.name}/{cell.config}/{cell.paper_id}", scaffold=cell.scaffold.name,
        model=cell.model.spec, model_label=cell.model.label,
        scaffold_label=cell.scaffold.display, options=dict(cell.scaffold.options),
        base_url=cell.model.base_url, api_key_env=cell.model.api_key_env,
        prices=price_overrides(cell.model),
        budget=spec.budget.model_dump(exclude_none=True), judge=spec.judge,
        backend=spec.sandbox.backend, image=spec.sandbox.image,
        limits=spec.sandbox.limits.model_dump(), checkpoint=spec.checkpoint)


def price_overrides(model: Any) -> dict[str, dict[str, float | None]]:
    """Price-table entries a model entry adds, keyed by the name its replies report (the
    spec's model part; a scripted file's `model_name`)."""
    if model.price is None:
        return {}
    name = model.model_name
    if model.spec.startswith("scripted:"):
        from sabench.agent.scripted import load_script

        name = load_script(Path(name)).model_name
    return {name: model.price.model_dump()}


@contextlib.contextmanager
def prices_added(prices: dict[str, dict[str, float | None]]) -> Iterator[None]:
    """Add price-table entries for the duration of a run.

    Usage is priced deep inside the model call (`agent.usage.PRICES`), budgets included, so an
    override has to be in that table. A worker runs one task at a time, so this is safe there.
    """
    from sabench.agent.types import Price
    from sabench.agent.usage import PRICES

    saved = {name: PRICES.get(name) for name in prices}
    PRICES.update({name: Price(**price) for name, price in prices.items()})
    try:
        yield
    finally:
        for name, old in saved.items():
            if old is None:
                PRICES.pop(name, None)
            else:
                PRICES[name] = old


#: The variable each provider reads its key from (what `api_key_env` stands in for).
KEY_VARIABLES = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY",
                 "openai-compatible": "OPENAI_API_KEY"}


@contextlib.contextmanager
def provider_key(model: str, api_key_env: str | None) -> Iterator[None]:
    """Give the provider its key from the model's own variable for the duration of a run
    (two openai-compatible servers both read OPENAI_API_KEY; one worker runs one task)."""
    variable = KEY_VARIABLES.get(model.partition(":")[0])
    if not api_key_env or variable is None:
        yield
        return
    saved = os.environ.get(variable)
    os.environ[variable] = os.environ.get(api_key_env, "")
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(variable, None)
        else:
            os.environ[variable] = saved


def run_request(task: Task) -> Any:
    from sabench.agent.types import Budget
    from sabench.benchmark.reproduce import RunRequest
    from sabench.sandbox.types import Limits

    return RunRequest(paper_dir=Path(task.paper_dir), scaffold=task.scaffold, model=task.model,
                      out=task.run_dir(), thread=task.thread, budget=Budget(**task.budget),
                      judge=task.judge, backend=task.backend, image=task.image,
                      base_url=task.base_url, options=dict(task.options),
                      checkpoint=task.checkpoint, limits=Limits(**task.limits))


def run_task(task: Task) -> dict[str, Any]:
    """Run (or resume) one task and publish its score and record: the run function of every
    executor. Never raises for a failed run: the record says what failed."""
    started = time.perf_counter()
    with prices_added(task.prices), provider_key(task.model, task.api_key_env):
        record = run_and_record(task)
    if task.prewarm_next:
        prewarm(task)
    record["runner"] = runner_fields(task, record, time.perf_counter() - started)
    publish(task, record)
    return summary_of(task, record)


def run_and_record(task: Task) -> dict[str, Any]:
    """The run's record: reproduce's, or an error record when the run could not even start."""
    from sabench.benchmark.evaluation import RECORD_FILE
    from sabench.benchmark.reproduce import RunFailed, reproduce

    try:
        return reproduce(run_request(task))
    except RunFailed as exc:
        record_file = task.run_dir() / RECORD_FILE
        record = json.loads(record_file.read_text()) if record_file.is_file() else {}
        return {**record, "status": "error", "error": record.get("error") or str(exc)}
    except Exception as exc:  # a broken run must not stop the others; its record says why
        return {"paper_id": task.paper_id, "scaffold": task.scaffold, "model": task.model,
                "status": "error", "stop_reason": "error",
                "error": f"{type(exc).__name__}: {' '.join(str(exc).split())[:500]}",
                "usage": {}, "timings": {}, "trace": []}


def runner_fields(task: Task, record: dict[str, Any], seconds: float) -> dict[str, Any]:
    """What the runner adds to a record: identity, and where the run's time went.

    `overhead_s` is the task's time outside model calls and tools (sandbox start, checkpoints,
    graph, scoring, publishing excluded: those are measured apart in `timings`).
    """
    trace = record.get("trace") or []
    model_s = sum(e.get("seconds") or 0.0 for e in trace if e.get("kind") == "model")
    tool_s = sum(e.get("seconds") or 0.0 for e in trace if e.get("kind") == "tool")
    return {"config": task.config, "paper_id": task.paper_id, "seed": task.seed,
            "model_label": task.model_label, "scaffold_label": task.scaffold_label,
            "model_spec": task.model, "paper_dir": task.paper_dir, "thread": task.thread,
            "pid": os.getpid(),
            "task_s": round(seconds, 4), "model_s": round(model_s, 4),
            "tool_s": round(tool_s, 4), "overhead_s": round(seconds - model_s - tool_s, 4)}


def publish(task: Task, record: dict[str, Any]) -> None:
    """Copy the score into the SCORES_DIR and write the record (each file atomically).

    The score goes first: a record saying "finished" always has its score beside it.
    """
    from sabench.benchmark.evaluation import SCORE_FILE

    score = task.run_dir() / SCORE_FILE
    if record.get("status") in FINISHED and score.is_file():
        atomic_copy(score, task.score_path())
    elif task.score_path().exists():  # a rerun that failed must not leave an old score
        task.score_path().unlink()
    atomic_write(task.record_path(), json.dumps(record, indent=1, default=str) + "\n")


def summary_of(task: Task, record: dict[str, Any]) -> dict[str, Any]:
    """The line the parent process gets back (and logs) for a finished task."""
    usage = record.get("usage") or {}
    return {"event": "run", "key": task.key, "config": task.config, "paper_id": task.paper_id,
            "status": record.get("status"), "stop_reason": record.get("stop_reason"),
            "error": record.get("error"), "overall_score": record.get("overall_score"),
            "requests": record.get("requests"), "input_tokens": usage.get("input_tokens", 0),
            "output_tokens": usage.get("output_tokens", 0),
            "dollars": usage.get("dollars", 0.0), **record["runner"]}


def atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.write_text(text, encoding="utf-8")
    os.replace(temp, path)


def atomic_copy(source: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    temp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    shutil.copyfile(source, temp)
    os.replace(temp, dest)


# ------------------------------------------------------------------------------ workers


def sandbox_spec(task: Task) -> Any:
    """The exact sandbox spec a run of `task` opens (so a prewarmed one is taken)."""
    from sabench.agent.workspace import AgentWorkspace
    from sabench.sandbox.types import Limits, SandboxSpec

    spec = SandboxSpec(backend=task.backend, image=task.image, limits=Limits(**task.limits))
    return AgentWorkspace(spec, Path(task.paper_dir), task.run_dir() / "work").spec


def prewarm(task: Task) -> None:
    """Start the sandbox of this worker's next run now (docker: a container start is slow and
    serialised by the daemon; bubblewrap starts per command and needs nothing)."""
    if task.backend != "docker":
        return
    from sabench.sandbox.docker_backend import DockerBackend

    with contextlib.suppress(Exception):  # no engine: the run itself will say so in its record
        DockerBackend().prewarm(sandbox_spec(task), 1)


def init_worker(first: Task | None) -> None:
    """Set up a worker process: die with the parent, load the run's modules, prewarm the
    first sandbox (so a run's own time holds none of these one-off costs)."""
    die_with_parent()
    import sabench.benchmark.reproduce  # noqa: F401 - langchain, langgraph, the scorer
    import sabench.verifiers.offline  # noqa: F401 - the default judge

    if first is not None:
        prewarm(first)


def die_with_parent() -> None:
    """Have the kernel kill this process when its parent dies (Linux), so a killed runner
    leaves no worker running a run that the next runner resumes."""
    import ctypes
    import signal

    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL)
    if os.getppid() == 1:  # the parent died before prctl: go now
        os._exit(1)


OnDone = Callable[[dict[str, Any]], None]


class Executor(Protocol):
    """Runs tasks with `run_task` and reports each summary as it finishes."""

    name: str

    def run(self, tasks: list[Task], on_done: OnDone) -> None: ...


class LocalExecutor:
    """A pool of `jobs` worker processes (spawned: no state shared with the parent)."""

    name = "local"

    def __init__(self, jobs: int = 1) -> None:
        self.jobs = max(1, jobs)

    def run(self, tasks: list[Task], on_done: OnDone) -> None:
        if not tasks:
            return
        workers = min(self.jobs, len(tasks))
        with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn"),
                                 initializer=init_worker, initargs=(tasks[0],)) as pool:
            pending: dict[Future[dict[str, Any]], float] = {}
            queue = list(tasks)
            while queue or pending:
                while queue and len(pending) < workers:  # never more queued than workers
                    pending[pool.submit(run_task, queue.pop(0))] = time.perf_counter()
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    submitted = pending.pop(future)
                    on_done(with_dispatch(future.result(), submitted))


#: Seconds the Ray actors get to start (they wait for CPU slots a cluster may not have).
ACTOR_START_S = 300.0


class RayExecutor:
    """The same tasks on Ray actors: one actor per job, each running one task at a time.

    Args:
        jobs: actors (runs at once).
        address: a Ray cluster (`auto`, `ray://host:10001`); None starts a local instance
            for this run and stops it at the end.
    """

    name = "ray"

    def __init__(self, jobs: int = 1, address: str | None = None) -> None:
        self.jobs = max(1, jobs)
        self.address = address
        self.startup_s: float | None = None

    def run(self, tasks: list[Task], on_done: OnDone) -> None:
        if not tasks:
            return
        ray = import_ray()
        started = time.perf_counter()
        owned = not ray.is_initialized()
        if owned:
            ray.init(**ray_init_options(self.address, self.jobs))
        try:
            actor = ray.remote(num_cpus=1, max_restarts=0)(RunActor)
            actors = [actor.remote(tasks[0]) for _ in range(min(self.jobs, len(tasks)))]
            waiting = [a.ready.remote() for a in actors]
            ready, _ = ray.wait(waiting, num_returns=len(waiting), timeout=ACTOR_START_S)
            if len(ready) < len(waiting):
                raise RunnerError(f"only {len(ready)} of {len(waiting)} Ray workers started in "
                                  f"{ACTOR_START_S:.0f}s (each needs a CPU slot): lower --jobs "
                                  "or add nodes")
            self.startup_s = time.perf_counter() - started
            self._dispatch(ray, actors, tasks, on_done)
        finally:
            if owned:
                ray.shutdown()

    @staticmethod
    def _dispatch(ray: Any, actors: list[Any], tasks: list[Task], on_done: OnDone) -> None:
        idle, queue = list(actors), list(tasks)
        pending: dict[Any, tuple[Any, float]] = {}
        while queue or pending:
            while queue and idle:
                worker = idle.pop()
                pending[worker.run.remote(queue.pop(0))] = (worker, time.perf_counter())
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                worker, submitted = pending.pop(ref)
                idle.append(worker)
                on_done(with_dispatch(ray.get(ref), submitted))


class RunActor:
    """A Ray actor around `run_task` (the class is wrapped with `ray.remote` at run time, so
    importing this module never needs Ray)."""

    def __init__(self, first: Task | None = None) -> None:
        init_worker(first)

    def ready(self) -> bool:
        return True

    def run(self, task: Task) -> dict[str, Any]:
        return run_task(task)


def import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise RunnerError("the ray executor needs Ray: pip install 'sabench[cluster]'") from exc
    return ray


def ray_init_options(address: str | None, jobs: int) -> dict[str, Any]:
    options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                               "configure_logging": False}
    if address:
        return {**options, "address": address}
    # Ray's CPUs are slots: a run mostly waits for its model, so every job gets one.
    return {**options, "num_cpus": max(jobs, os.cpu_count() or 1)}


def with_dispatch(summary: dict[str, Any], submitted: float) -> dict[str, Any]:
    """Add the executor's own cost: time from submission to result outside the task."""
    total = time.perf_counter() - submitted
    return {**summary, "dispatch_s": round(max(total - summary.get("task_s", 0.0), 0.0), 4)}


EXECUTORS: dict[str, Callable[..., Executor]] = {
    "local": lambda jobs, address=None: LocalExecutor(jobs),
    "ray": lambda jobs, address=None: RayExecutor(jobs, address),
}


# ------------------------------------------------------------------------------ planning


@dataclass(frozen=True)
class PlannedRun:
    """A cell of the matrix and what a run now would do with it: `done` (skipped), `resume`
    (its folder holds an unfinished run) or `new`."""

    cell: Cell
    state: str
    task: Task


def plan_runs(matrix: Matrix, out: Path) -> list[PlannedRun]:
    """Every cell with its state on disk."""
    planned = []
    for cell in matrix.cells():
        task = task_for(matrix, cell, out)
        planned.append(PlannedRun(cell, run_state(task), task))
    return planned


def run_state(task: Task) -> str:
    """`done` when the record says finished and the score is published; else `resume` when
    the run's folder exists, else `new`."""
    record = read_json(task.record_path())
    if record and record.get("status") in FINISHED and task.score_path().is_file():
        return "done"
    return "resume" if (task.run_dir() / "run.json").is_file() else "new"


def read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


# ------------------------------------------------------------------------------ running


@dataclass
class RunSummary:
    """What a `run_matrix` call did."""

    planned: int = 0
    skipped: int = 0
    results: list[dict[str, Any]] = field(default_factory=list)
    wall_s: float = 0.0
    executor: str = "local"
    jobs: int = 1
    startup_s: float | None = None

    def count(self, status: str) -> int:
        return sum(r.get("status") == status for r in self.results)

    @property
    def failed(self) -> int:
        return sum(r.get("status") not in FINISHED for r in self.results)

    def as_dict(self) -> dict[str, Any]:
        return {"planned": self.planned, "skipped": self.skipped, "ran": len(self.results),
                "ok": self.count("ok"), "stopped": self.count("stopped"),
                "failed": self.failed, "wall_s": round(self.wall_s, 3),
                "executor": self.executor, "jobs": self.jobs, "startup_s": self.startup_s,
                "input_tokens": sum(r.get("input_tokens") or 0 for r in self.results),
                "output_tokens": sum(r.get("output_tokens") or 0 for r in self.results),
                "dollars": sum(r.get("dollars") or 0.0 for r in self.results),
                "runs": self.results}


def run_matrix(matrix: Matrix, out: Path, *, executor: Executor | None = None,
               on_plan: Callable[[list[PlannedRun]], None] | None = None,
               on_done: OnDone | None = None) -> RunSummary:
    """Run every unfinished cell of `matrix` into `out` (see the module docstring).

    Raises:
        RunnerError: another runner holds `out`, or `out` holds configurations that differ.
        ModelConfigError, JudgeSpecError, SandboxError: a model, the judge or the sandbox
            backend cannot be used here; nothing was run.
    """
    out = Path(out).resolve()
    executor = executor or EXECUTORS[matrix.spec.executor](matrix.spec.jobs,
                                                            matrix.spec.ray_address)
    started = time.perf_counter()
    with runner_lock(out):
        configs = matrix.configs()
        check_configs(out, configs)
        preflight(matrix)
        planned = plan_runs(matrix, out)
        if on_plan is not None:
            on_plan(planned)
        todo = [p.task for p in planned if p.state != "done"]
        todo = with_prewarm_flags(todo, getattr(executor, "jobs", 1))
        summary = RunSummary(planned=len(planned), skipped=len(planned) - len(todo),
                             executor=executor.name, jobs=getattr(executor, "jobs", 1))
        publish_configs(out, configs)
        publish_index(out, configs, planned)
        log_event(out, {"event": "start", "matrix": matrix.spec.name, "runs": len(planned),
                        "todo": len(todo), "executor": executor.name, "jobs": summary.jobs})

        def finished(result: dict[str, Any]) -> None:
            summary.results.append(result)
            publish_configs(out, configs)
            publish_index(out, configs, planned)
            log_event(out, result)
            if on_done is not None:
                on_done(result)

        executor.run(todo, finished)
        summary.startup_s = getattr(executor, "startup_s", None)
        summary.wall_s = time.perf_counter() - started
        log_event(out, {"event": "end", **{k: v for k, v in summary.as_dict().items()
                                           if k != "runs"}})
    return summary


def with_prewarm_flags(tasks: list[Task], jobs: int) -> list[Task]:
    """Mark the tasks after which a worker will still get another task (so it prewarms)."""
    return [replace(t, prewarm_next=i + jobs < len(tasks)) for i, t in enumerate(tasks)]


def preflight(matrix: Matrix) -> None:
    """Build every model and the judge once (no network) and check the sandbox backend, so a
    missing key or engine is one error before any run, not one error record per run."""
    from sabench.agent.models import ModelConfigError, make_model
    from sabench.benchmark.scoring import make_judge
    from sabench.sandbox.protocol import get_backend
    from sabench.sandbox.types import BackendUnavailable, SandboxSpec

    for model in matrix.spec.models:
        if model.api_key_env and not os.environ.get(model.api_key_env):
            raise ModelConfigError(f"{model.spec}: set {model.api_key_env} (the spec's "
                                   "api_key_env for this model)")
        with provider_key(model.spec, model.api_key_env):
            make_model(model.spec, base_url=model.base_url)
    make_judge(matrix.spec.judge)
    sandbox = matrix.spec.sandbox
    spec = SandboxSpec(backend=sandbox.backend, image=sandbox.image)
    ok, why = get_backend(sandbox.backend).available(spec)
    if not ok:
        raise BackendUnavailable(f"sandbox backend {sandbox.backend}: {why}")
    reap_orphans(sandbox.backend)


def reap_orphans(backend: str) -> None:
    """Remove sandboxes whose owner died (workers of a killed runner); others are untouched."""
    from sabench.sandbox import reaper

    with contextlib.suppress(Exception):
        reaper.reap_workspaces()
        reaper.reap_cgroups()
        if backend == "docker":
            reaper.reap_containers()


def check_configs(out: Path, configs: dict[str, dict[str, Any]]) -> None:
    """A configuration name already in `out` must mean the same model, scaffold and seed."""
    from sabench.benchmark.scoring import CONFIGS_FILE

    held = read_json(out / SCORES / CONFIGS_FILE) or {}
    for name, entry in configs.items():
        old = held.get(name)
        if old is None:
            continue
        for key in ("model_spec", "scaffold_name", "seed"):
            if key in old and old[key] != entry[key]:
                raise RunnerError(f"{out / SCORES / CONFIGS_FILE}: configuration {name!r} has "
                                  f"{key} {old[key]!r} there, not {entry[key]!r}; use another "
                                  "--out or rename the model or scaffold in the spec")


def publish_configs(out: Path, configs: dict[str, dict[str, Any]]) -> None:
    """List in `configs.json` the configurations that have score files (the report needs a
    folder of scores for every listed configuration)."""
    from sabench.benchmark.scoring import write_configs

    scores = out / SCORES
    present = {name: entry for name, entry in configs.items()
               if any((scores / name).glob("*.json"))}
    if present:
        write_configs(scores, present)


def publish_index(out: Path, configs: dict[str, dict[str, Any]],
                  planned: list[PlannedRun]) -> None:
    """`runs/index.json`: the finished runs with their scaffold and model, so that the runs
    folder is a runs root that `sabench score-runs` reads (to score again with another judge)."""
    runs = [{"config": p.task.config, "paper_id": p.task.paper_id,
             "scaffold": configs[p.task.config]["scaffold"],
             "model": configs[p.task.config]["model"],
             "repo": f"{RUNS}/{p.task.config}/{p.task.paper_id}/repo"}
            for p in planned if run_state(p.task) == "done"]
    used = {run["config"] for run in runs}
    atomic_write(out / RUNS / "index.json", json.dumps(
        {"configs": {name: entry for name, entry in configs.items() if name in used},
         "runs": runs}, indent=1) + "\n")


def log_event(out: Path, event: dict[str, Any]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    line = json.dumps({"time": round(time.time(), 3), **event}, default=str)
    with open(out / LOG_FILE, "a", encoding="utf-8") as handle:
        handle.write(line + "\n")


@contextlib.contextmanager
def runner_lock(out: Path) -> Iterator[None]:
    """One runner per output folder (the lock goes with the process, even on kill -9)."""
    out.mkdir(parents=True, exist_ok=True)
    handle = open(out / LOCK_FILE, "a+")  # noqa: SIM115 - held for the whole run
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunnerError(f"{out}: another sabench run is using this folder") from None
        yield
    finally:
        handle.close()
