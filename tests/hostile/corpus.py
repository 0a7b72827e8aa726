"""A hostile-input corpus, built on demand, and every command that reads user input run on it.

Nothing hostile is committed: `build(root)` writes the cases under `root` from the bundled demo
paper and repository. Each case breaks one thing (a claim file, a paper folder, a repository, a
score folder, a runs index, a matrix spec, a recorded run); `invocations(corpus)` pairs every
case with the commands that read that kind of input, and `run(invocation)` runs one as the real
`sabench` entry point in a child process, under a timeout, with an audit hook that records every
file and folder it opens or lists. An invocation passes when it ends in a result (exit 0) or in
a non-zero exit whose error is one line naming the case's file; never a traceback or a hang;
never opening anything through a link or an index entry that leaves the given folders; never a
byte of the secret outside them in its output; and every earlier output left as it was.

    python -m tests.hostile.corpus [--quick] [--only KIND] [--command C] [--jobs N]
        # the figures, as one JSON object (--quick: the selection tests/hostile runs)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DEMO = REPO_ROOT / "benchmark" / "demo"
REPLIES = DEMO / "replies.yaml"
PAPER = "smoothlr"
CONFIG = "hostile_basic"
#: Written only outside the given folders: it must never appear in what a command prints.
SECRET = "sabench-hostile-secret-4f1c9e"
EARLIER = '{"earlier": "output that must survive"}\n'
TIMEOUT_S = 240.0


@dataclass(frozen=True)
class Case:
    """One hostile input: `path` is what a command is pointed at, `culprit` the broken entry."""

    kind: str
    name: str
    path: Path
    culprit: str


@dataclass
class Invocation:
    command: str
    case: Case
    argv: list[str]
    given: list[Path]
    outputs: list[Path] = field(default_factory=list)
    workspace: Path | None = None  # sandbox exec: a folder whose listing must survive
    cwd: Path = Path(".")  # set by `invocations`: the invocation's own output folder
    forbidden: Path = Path("/nonexistent")  # set by `invocations`: the corpus's outside/


@dataclass
class Outcome:
    command: str
    case: str
    kind: str
    ended: str  # result | error | traceback | hang | multi-line error | unnamed error
    exit_code: int | None
    seconds: float
    message: str
    problems: list[str]

    @property
    def ok(self) -> bool:
        return self.ended in ("result", "error") and not self.problems


# ---------------------------------------------------------------- building the corpus


@dataclass
class Corpus:
    root: Path
    papers: Path  # a good dataset (papers/ folder)
    repo: Path  # a good repository
    runs: Path  # a good runs root
    outside: Path  # the host's other files: never to be read
    cases: list[Case]


def build(root: Path, cases: list[tuple[str, str]] | None = None) -> Corpus:
    """Write the good inputs and the cases (every one, or these (kind, name) pairs) under
    `root` (about half a minute for all of them; 2 GB of it is a hole)."""
    corpus = build_base(root)
    for kind, name in all_cases() if cases is None else cases:
        add_case(corpus, kind, name)
    return corpus


def all_cases() -> list[tuple[str, str]]:
    return [(kind, name) for kind, makers in CASE_MAKERS.items() for name in makers]


def add_case(corpus: Corpus, kind: str, name: str) -> Case:
    """Write one case under the corpus (once: a case already there is returned as it is)."""
    for case in corpus.cases:
        if (case.kind, case.name) == (kind, name):
            return case
    folder = corpus.root / kind / name
    folder.mkdir(parents=True)
    corpus.cases.append(CASE_MAKERS[kind][name](corpus, folder, name))
    return corpus.cases[-1]


def build_base(root: Path) -> Corpus:
    """The good dataset, repository and runs root the cases are made from, and outside/."""
    root = Path(root)
    outside = root / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "secret.txt").write_text(f"lr = 0.1  # {SECRET}\n")
    (outside / "dir" / "secret.py").write_text(f"epsilon = 0.1  # {SECRET}\n")
    good = root / "good"
    papers = _good_papers(good / "papers")
    repo = good / "repo"
    shutil.copytree(DEMO / "repos" / "faithful", repo)
    official = _official_score(papers, repo)
    runs = _runs_root(good / "runs", official, lambda r: shutil.copytree(repo, r))
    return Corpus(root, papers, repo, runs, outside, [])


def _good_papers(papers: Path) -> Path:
    shutil.copytree(DEMO / "papers" / PAPER, papers / PAPER)
    return papers


def _official_score(papers: Path, repo: Path) -> dict:
    """The offline judge's score of the good repository, as an official result file."""
    from sabench.benchmark.scoring import make_judge, paper_spec, score_repo

    score = score_repo(paper_spec(papers, PAPER), repo, make_judge("offline"))
    data = json.loads(score.model_dump_json())
    data["judge_model"] = "gpt-5.5"
    return data


def _runs_root(root: Path, official: dict, make_repo: Callable[[Path], object],
               **entry: object) -> Path:
    repo = root / "runs" / CONFIG / PAPER / "repo"
    repo.parent.mkdir(parents=True)
    make_repo(repo)
    score = root / "official_scores" / CONFIG / f"{PAPER}.json"
    score.parent.mkdir(parents=True)
    score.write_text(json.dumps(official))
    run = {"config": CONFIG, "paper_id": PAPER, "scaffold": "basic", "model": "hostile",
           "judge_model": "gpt-5.5", "missing_cited_files": [],
           "repo": f"runs/{CONFIG}/{PAPER}/repo",
           "official_score": f"official_scores/{CONFIG}/{PAPER}.json", **entry}
    index = {"configs": {CONFIG: {"scaffold": "basic", "model": "hostile"}}, "runs": [run]}
    (root / "runs" / "index.json").write_text(json.dumps(index))
    return root


DEEP_JSON = "[" * 100_000 + "]" * 100_000
INVALID_UTF8 = b'{"paper_id": "caf\xe9 \xff\xfe"}'


# Claim files and paper folders: a dataset whose one paper is broken in one way.

def _paper_case(culprit: str, change: Callable[[Path], None]
                ) -> Callable[[Corpus, Path, str], Case]:
    def make(corpus: Corpus, folder: Path, case_name: str) -> Case:
        papers = _good_papers(folder / "papers")
        change(papers / PAPER)
        return Case("papers", case_name, papers, culprit)
    return make


def _claims(text: str | bytes) -> Callable[[Path], None]:
    def change(paper: Path) -> None:
        data = text.encode() if isinstance(text, str) else text
        (paper / "sau.json").write_bytes(data)
    return change


def _sau_with(edit: Callable[[dict], None]) -> Callable[[Path], None]:
    def change(paper: Path) -> None:
        data = json.loads((paper / "sau.json").read_text())
        edit(data)
        (paper / "sau.json").write_text(json.dumps(data))
    return change


def _drop_keys(data: dict) -> None:
    del data["D1"][0]["claim"]
    del data["D2"][0]["id"]


def _wrong_types(data: dict) -> None:
    data["D1"] = "not a list"
    data["D2"][0] = 42
    data["D3"][0]["claim"] = {"text": 1}


def _duplicate_ids(data: dict) -> None:
    data["D2"][1]["id"] = data["D2"][0]["id"]


def _fifty_megabytes(data: dict) -> None:
    claim = data["D1"][0]
    data["D1"] = [{**claim, "id": f"{PAPER}-D1-{i:06d}"} for i in range(50 << 20 >> 8)]


def _remove(name: str) -> Callable[[Path], None]:
    return lambda paper: (paper / name).unlink()


def _write(name: str, data: bytes) -> Callable[[Path], None]:
    return lambda paper: (paper / name).write_bytes(data)


PAPER_CASES = {
    "claims-missing-keys": _paper_case("sau.json", _sau_with(_drop_keys)),
    "claims-wrong-types": _paper_case("sau.json", _sau_with(_wrong_types)),
    "claims-duplicate-ids": _paper_case("sau.json", _sau_with(_duplicate_ids)),
    "claims-50mb": _paper_case("sau.json", _sau_with(_fifty_megabytes)),
    "claims-invalid-utf8": _paper_case("sau.json", _claims(INVALID_UTF8)),
    "claims-nested-100000": _paper_case("sau.json", _claims(DEEP_JSON)),
    "claims-empty": _paper_case("sau.json", _claims(b"")),
    "claims-truncated": _paper_case("sau.json", _claims('{"paper_id": "smoothlr", "D1": [')),
    "paper-without-paper.md": _paper_case("paper.md", _remove("paper.md")),
    "paper-without-sau.json": _paper_case("sau.json", _remove("sau.json")),
    "paper-without-config.yaml": _paper_case("config.yaml", _remove("config.yaml")),
    "paper-config-invalid-yaml": _paper_case("config.yaml", _write("config.yaml",
                                                                          b"title: [unclosed\n")),
    "paper-md-invalid-utf8": _paper_case("paper.md", _write("paper.md",
                                                                 b"# Caf\xe9\n\xff\xfe lr\n")),
}


# Repositories: the good runs root whose one repository is hostile.

def _repo_case(culprit: str, plant: Callable[[Path, Corpus], None]
               ) -> Callable[[Corpus, Path, str], Case]:
    def make(corpus: Corpus, folder: Path, case_name: str) -> Case:
        official = json.loads((corpus.runs / "official_scores" / CONFIG / f"{PAPER}.json")
                              .read_text())

        def make_repo(repo: Path) -> None:
            shutil.copytree(corpus.repo, repo)
            plant(repo, corpus)

        root = _runs_root(folder, official, make_repo)
        return Case("repos", case_name, root / "runs" / CONFIG / PAPER / "repo", culprit)
    return make


def _link_loops(repo: Path, corpus: Corpus) -> None:
    (repo / "loop_a.py").symlink_to("loop_b.py")
    (repo / "loop_b.py").symlink_to("loop_a.py")
    (repo / "pkg").mkdir()
    (repo / "pkg" / "self").symlink_to(".")
    (repo / "pkg" / "parent").symlink_to("..")


def _links_out(repo: Path, corpus: Corpus) -> None:
    (repo / "passwd.py").symlink_to("/etc/passwd")
    (repo / "secret.py").symlink_to(corpus.outside / "secret.txt")
    (repo / "vendor").symlink_to(corpus.outside / "dir")
    (repo / "up.py").symlink_to(os.path.relpath(corpus.outside / "secret.txt", repo))
    (repo / "root").symlink_to("/")


def _fifo(repo: Path, corpus: Corpus) -> None:
    os.mkfifo(repo / "train_fifo.py")
    os.mkfifo(repo / "config.yaml")


def _sparse(repo: Path, corpus: Corpus) -> None:
    with open(repo / "weights.py", "wb") as handle:
        handle.truncate(2 << 30)


def _binary_py(repo: Path, corpus: Corpus) -> None:
    (repo / "compiled.py").write_bytes(b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 64)
    (repo / "noise.py").write_bytes(os.urandom(200_000))
    (repo / "nul.py").write_bytes(b"lr = 0.1\x00\x00" * 1000)


def _bad_names(repo: Path, corpus: Corpus) -> None:
    base = os.fsencode(repo)
    os.mkdir(base + b"/pkg_\xff\xfe")
    with open(base + b"/pkg_\xff\xfe/caf\xe9.py", "wb") as handle:
        handle.write(b"epsilon = 0.1  # caf\xe9 in latin-1\n")
    with open(base + b"/line\nbreak.py", "wb") as handle:
        handle.write(b"batch_size = 64\n")


def _many_files(repo: Path, corpus: Corpus) -> None:
    for folder in range(100):
        sub = repo / "many" / f"d{folder:03d}"
        sub.mkdir(parents=True)
        for i in range(1000):
            (sub / f"f{i:04d}.py").write_text(f"x{i} = {i}\n")


def _long_line(repo: Path, corpus: Corpus) -> None:
    numbers = ", ".join(str(i * 0.001) for i in range(10 << 20 >> 4))
    (repo / "long.py").write_text(f"table = [{numbers}]")


REPO_CASES = {
    "repo-link-loops": _repo_case("loop_a.py", _link_loops),
    "repo-links-out": _repo_case("secret.py", _links_out),
    "repo-fifos": _repo_case("train_fifo.py", _fifo),
    "repo-sparse-2gb": _repo_case("weights.py", _sparse),
    "repo-binary-py": _repo_case("compiled.py", _binary_py),
    "repo-names-invalid-utf8": _repo_case("pkg_", _bad_names),
    "repo-100000-files": _repo_case("many", _many_files),
    "repo-10mb-line": _repo_case("long.py", _long_line),
}


# Score folders: <config>/<paper>.json with configs.json.

def _scores_case(culprit: str, change: Callable[[Path], None]
                 ) -> Callable[[Corpus, Path, str], Case]:
    def make(corpus: Corpus, folder: Path, case_name: str) -> Case:
        official = corpus.runs / "official_scores" / CONFIG / f"{PAPER}.json"
        (folder / CONFIG).mkdir()
        shutil.copy(official, folder / CONFIG / f"{PAPER}.json")
        (folder / "configs.json").write_text(json.dumps(
            {CONFIG: {"scaffold": "basic", "model": "hostile"}}))
        change(folder)
        return Case("scores", case_name, folder, culprit)
    return make


def _score_file(data: str | bytes) -> Callable[[Path], None]:
    def change(folder: Path) -> None:
        raw = data.encode() if isinstance(data, str) else data
        (folder / CONFIG / f"{PAPER}.json").write_bytes(raw)
    return change


def _score_edit(edit: Callable[[dict], None]) -> Callable[[Path], None]:
    def change(folder: Path) -> None:
        path = folder / CONFIG / f"{PAPER}.json"
        data = json.loads(path.read_text())
        edit(data)
        path.write_text(json.dumps(data))
    return change


def _out_of_range(data: dict) -> None:
    dims = data["dimensions"]
    first = next(iter(dims.values()))
    first["claims"][0]["score"] = 7
    first["claims"][1]["score"] = -1
    first["score"] = 3.5
    data["overall_score"] = "high"


def _dimensions_list(data: dict) -> None:
    data["dimensions"] = [1, 2, 3]


def _truncate(folder: Path) -> None:
    path = folder / CONFIG / f"{PAPER}.json"
    text = path.read_text()
    path.write_text(text[: len(text) // 2])


SCORES_CASES = {
    "scores-truncated-json": _scores_case(f"{PAPER}.json", _truncate),
    "scores-out-of-range": _scores_case(f"{PAPER}.json", _score_edit(_out_of_range)),
    "scores-wrong-types": _scores_case(f"{PAPER}.json", _score_edit(_dimensions_list)),
    "scores-invalid-utf8": _scores_case(f"{PAPER}.json", _score_file(INVALID_UTF8)),
    "scores-nested-100000": _scores_case(f"{PAPER}.json", _score_file(DEEP_JSON)),
    "scores-empty-file": _scores_case(f"{PAPER}.json", _score_file("")),
    "scores-configs-truncated": _scores_case(
        "configs.json", lambda f: (f / "configs.json").write_text('{"hostile_basic": {')),
    "scores-no-result-files": _scores_case(
        "scores-no-result-files", lambda f: shutil.rmtree(f / CONFIG)),
}


# Runs roots: a broken index or official score.

def _runs_case(culprit: str, change: Callable[[Path, Corpus], None]
               ) -> Callable[[Corpus, Path, str], Case]:
    def make(corpus: Corpus, folder: Path, case_name: str) -> Case:
        official = json.loads((corpus.runs / "official_scores" / CONFIG / f"{PAPER}.json")
                              .read_text())
        root = _runs_root(folder, official, lambda r: shutil.copytree(corpus.repo, r))
        change(root, corpus)
        return Case("runs", case_name, root, culprit)
    return make


def _index(data: str | bytes) -> Callable[[Path, Corpus], None]:
    def change(root: Path, corpus: Corpus) -> None:
        raw = data.encode() if isinstance(data, str) else data
        (root / "runs" / "index.json").write_bytes(raw)
    return change


def _index_edit(edit: Callable[[dict, Path, Corpus], None]) -> Callable[[Path, Corpus], None]:
    def change(root: Path, corpus: Corpus) -> None:
        path = root / "runs" / "index.json"
        data = json.loads(path.read_text())
        edit(data, root, corpus)
        path.write_text(json.dumps(data))
    return change


def _repo_outside(data: dict, root: Path, corpus: Corpus) -> None:
    data["runs"][0]["repo"] = os.path.relpath(corpus.outside / "dir", root)


def _official_outside(data: dict, root: Path, corpus: Corpus) -> None:
    secret = corpus.outside / "official.json"
    official = json.loads((root / data["runs"][0]["official_score"]).read_text())
    official["dimensions"]["D1"]["claims"][0]["judge_reasoning"] = SECRET
    secret.write_text(json.dumps(official))
    data["runs"][0]["official_score"] = str(secret)


def _runs_not_a_list(data: dict, root: Path, corpus: Corpus) -> None:
    data["runs"] = {"a": 1}


def _official(data: str | bytes | Callable[[dict], None]) -> Callable[[Path, Corpus], None]:
    def change(root: Path, corpus: Corpus) -> None:
        path = root / "official_scores" / CONFIG / f"{PAPER}.json"
        if callable(data):
            content = json.loads(path.read_text())
            data(content)
            path.write_text(json.dumps(content))
        else:
            path.write_bytes(data.encode() if isinstance(data, str) else data)
    return change


RUNS_CASES = {
    "runs-index-truncated": _runs_case("index.json", _index('{"runs": [{"config": ')),
    "runs-index-nested-100000": _runs_case("index.json", _index(DEEP_JSON)),
    "runs-index-invalid-utf8": _runs_case("index.json", _index(INVALID_UTF8)),
    "runs-index-wrong-types": _runs_case("index.json", _index_edit(_runs_not_a_list)),
    "runs-index-repo-outside": _runs_case("index.json", _index_edit(_repo_outside)),
    "runs-index-official-outside": _runs_case("index.json", _index_edit(_official_outside)),
    "runs-official-truncated": _runs_case(f"{PAPER}.json", _official('{"paper_id": "smo')),
    "runs-official-out-of-range": _runs_case(f"{PAPER}.json", _official(_out_of_range)),
}


# Matrix specs for `sabench run`.

def _spec_case(text: str | bytes) -> Callable[[Corpus, Path, str], Case]:
    def make(corpus: Corpus, folder: Path, case_name: str) -> Case:
        path = folder / "matrix.yaml"
        path.write_bytes(text.encode() if isinstance(text, str) else text)
        return Case("specs", case_name, path, "matrix.yaml")
    return make


SPEC_CASES = {
    "spec-empty": _spec_case(""),
    "spec-invalid-yaml": _spec_case("models: [unclosed\nscaffolds: {\n"),
    "spec-nested-100000": _spec_case("[" * 100_000),
    "spec-invalid-utf8": _spec_case(b"name: caf\xe9\nmodels: [\xff]\n"),
    "spec-wrong-types": _spec_case("models: 3\nscaffolds: {a: 1}\npapers: [1, 2]\n"
                                   "repeats: many\n"),
}


# Recorded runs for `sabench replay`.

def _recording_case(files: dict[str, str | bytes]) -> Callable[[Corpus, Path, str], Case]:
    def make(corpus: Corpus, folder: Path, case_name: str) -> Case:
        run_dir = folder / PAPER
        run_dir.mkdir()
        for name, data in files.items():
            (run_dir / name).write_bytes(data.encode() if isinstance(data, str) else data)
        return Case("recordings", case_name, run_dir, "messages.jsonl")
    return make


META = json.dumps({"case_id": PAPER, "model_name": "hostile"})
RECORDING_CASES = {
    "recording-empty-folder": _recording_case({}),
    "recording-messages-truncated": _recording_case(
        {"meta.json": META, "messages.jsonl": '{"role": "user", "content": "x"}\n{"role": "as'}),
    "recording-messages-invalid-utf8": _recording_case(
        {"meta.json": META, "messages.jsonl": b'{"role": "user", "content": "\xff\xfe"}\n'}),
    "recording-messages-nested-100000": _recording_case(
        {"meta.json": META, "messages.jsonl": DEEP_JSON + "\n"}),
    "recording-meta-wrong-types": _recording_case(
        {"meta.json": "[1, 2]", "messages.jsonl": '{"role": "user", "content": "x"}\n'}),
}

CASE_MAKERS: dict[str, dict[str, Callable[[Corpus, Path, str], Case]]] = {
    "papers": PAPER_CASES, "repos": REPO_CASES, "scores": SCORES_CASES, "runs": RUNS_CASES,
    "specs": SPEC_CASES, "recordings": RECORDING_CASES,
}


# ---------------------------------------------------------------- the commands


def invocations(corpus: Corpus, out_root: Path, backends: tuple[str, ...] = ("local",),
                only: Collection[tuple[str, str, str]] | None = None) -> Iterator[Invocation]:
    """Every case with every command that reads its kind of input (or only the given
    (kind, case, command) triples)."""
    for case in corpus.cases:
        for command, make in COMMANDS[case.kind].items():
            if command.startswith("sandbox exec") and command.split()[-1] not in backends:
                continue
            if only is not None and (case.kind, case.name, command) not in only:
                continue
            out = out_root / case.kind / case.name / command.replace(" ", "-")
            out.mkdir(parents=True)
            invocation = make(corpus, case, out)
            invocation.cwd, invocation.forbidden = out, corpus.outside
            yield invocation


def _papers_commands() -> dict[str, Callable[[Corpus, Case, Path], Invocation]]:
    def cmd(name: str, build: Callable[[Corpus, Case, Path], tuple[list[str], list[Path]]]
            ) -> tuple[str, Callable[[Corpus, Case, Path], Invocation]]:
        def make(corpus: Corpus, case: Case, out: Path) -> Invocation:
            argv, outputs = build(corpus, case, out)
            return Invocation(name, case, argv, [case.path, corpus.repo, corpus.runs, out,
                                                 REPLIES.parent], outputs)
        return name, make

    return dict([
        cmd("data check", lambda c, k, o: (["data", "check", str(k.path)], [])),
        cmd("score", lambda c, k, o: (["score", "--paper", PAPER, "--repo", str(c.repo),
                                       "--papers", str(k.path), "-o", str(o / "score.json")],
                                      [o / "score.json"])),
        cmd("check", lambda c, k, o: (["check", str(c.repo), "--paper", PAPER, "--papers",
                                       str(k.path), "--json"], [])),
        cmd("score-runs", lambda c, k, o: (["score-runs", str(c.runs), "--papers", str(k.path),
                                            "--out", str(o / "scores")],
                                           [o / "scores" / "earlier.json"])),
        cmd("agreement", lambda c, k, o: (["agreement", str(c.runs), "--papers", str(k.path),
                                           "--json", "--jobs", "1"], [])),
        cmd("calibrate", lambda c, k, o: (["calibrate", str(c.runs), "--papers", str(k.path),
                                           "--out", str(o / "calibration.json"), "--jobs", "1"],
                                          [o / "calibration.json"])),
        cmd("drift-test", lambda c, k, o: (["drift-test", str(c.runs), "--papers",
                                            str(k.path), "--json"], [])),
        cmd("reproduce", lambda c, k, o: (["reproduce", str(k.path / PAPER), "--scaffold",
                                           "basic", "--model", f"scripted:{REPLIES}",
                                           "--backend", "local", "--out", str(o / "run")],
                                          [o / "run" / "earlier.json"])),
        cmd("run", lambda c, k, o: (["run", str(_matrix(o, k.path)), "--out", str(o / "runs"),
                                     "--json"], [o / "runs" / "earlier.json"])),
    ])


def _matrix(out: Path, papers: Path) -> Path:
    spec = out / "matrix.yaml"
    spec.write_text(json.dumps({
        "name": "hostile", "models": [{"spec": f"scripted:{REPLIES}", "name": "scripted"}],
        "scaffolds": ["basic"], "papers": {"dataset": str(papers), "ids": [PAPER]},
        "repeats": 1, "budget": {"calls": 40}, "sandbox": {"backend": "local"},
        "judge": "offline", "jobs": 1, "executor": "local"}))
    return spec


def _repos_commands() -> dict[str, Callable[[Corpus, Case, Path], Invocation]]:
    def root(case: Case) -> Path:
        return case.path.parents[3]

    def cmd(name: str, build: Callable[[Corpus, Case, Path], tuple[list[str], list[Path]]]
            ) -> tuple[str, Callable[[Corpus, Case, Path], Invocation]]:
        def make(corpus: Corpus, case: Case, out: Path) -> Invocation:
            argv, outputs = build(corpus, case, out)
            workspace = case.path if name.startswith("sandbox") else None
            return Invocation(name, case, argv, [root(case), corpus.papers, out], outputs,
                              workspace)
        return name, make

    probe = ("ls -la; for f in *; do [ -L \"$f\" ] && head -c 200 \"$f\" < /dev/null; done; "
             "echo done")
    commands = [
        cmd("score", lambda c, k, o: (["score", "--paper", PAPER, "--repo", str(k.path),
                                       "--papers", str(c.papers), "-o", str(o / "score.json")],
                                      [o / "score.json"])),
        cmd("check", lambda c, k, o: (["check", str(k.path), "--paper", PAPER, "--papers",
                                       str(c.papers), "--json"], [])),
        cmd("score-runs", lambda c, k, o: (["score-runs", str(root(k)), "--papers",
                                            str(c.papers), "--out", str(o / "scores")],
                                           [o / "scores" / "earlier.json"])),
        cmd("agreement", lambda c, k, o: (["agreement", str(root(k)), "--papers", str(c.papers),
                                           "--json", "--jobs", "1"], [])),
        cmd("calibrate", lambda c, k, o: (["calibrate", str(root(k)), "--papers", str(c.papers),
                                           "--out", str(o / "calibration.json"), "--jobs", "1"],
                                          [o / "calibration.json"])),
        cmd("drift-test", lambda c, k, o: (["drift-test", str(root(k)), "--papers",
                                            str(c.papers), "--json"], [])),
    ]
    for backend in ("local", "docker"):
        commands.append(cmd(f"sandbox exec {backend}", lambda c, k, o, b=backend: (
            ["sandbox", "exec", "--backend", b, "--timeout", "30", "--workspace", str(k.path),
             "--", "sh", "-c", probe], [])))
    return dict(commands)


def _scores_commands() -> dict[str, Callable[[Corpus, Case, Path], Invocation]]:
    def cmd(name: str, extra: Callable[[Path], list[str]], output: str | None
            ) -> tuple[str, Callable[[Corpus, Case, Path], Invocation]]:
        def make(corpus: Corpus, case: Case, out: Path) -> Invocation:
            argv = [name.split()[0], str(case.path), *extra(out)]
            return Invocation(name, case, argv, [case.path, out],
                              [out / output] if output else [])
        return name, make

    return dict([
        cmd("report md", lambda o: ["--resamples", "200"], None),
        cmd("report json", lambda o: ["-f", "json", "--resamples", "200"], None),
        cmd("report html", lambda o: ["-f", "html", "-o", str(o / "report.html"),
                                      "--resamples", "200"], "report.html"),
        cmd("taxonomy", lambda o: ["--json"], None),
    ])


def _runs_commands() -> dict[str, Callable[[Corpus, Case, Path], Invocation]]:
    def cmd(name: str, extra: Callable[[Path], list[str]], output: str | None
            ) -> tuple[str, Callable[[Corpus, Case, Path], Invocation]]:
        def make(corpus: Corpus, case: Case, out: Path) -> Invocation:
            argv = [name, str(case.path), "--papers", str(corpus.papers), *extra(out)]
            return Invocation(name, case, argv, [case.path, corpus.papers, out],
                              [out / output] if output else [])
        return name, make

    return dict([
        cmd("score-runs", lambda o: ["--out", str(o / "scores")], "scores/earlier.json"),
        cmd("agreement", lambda o: ["--json", "--jobs", "1"], None),
        cmd("calibrate", lambda o: ["--out", str(o / "calibration.json"), "--jobs", "1"],
            "calibration.json"),
        cmd("drift-test", lambda o: ["--json"], None),
    ])


def _specs_commands() -> dict[str, Callable[[Corpus, Case, Path], Invocation]]:
    def make(corpus: Corpus, case: Case, out: Path) -> Invocation:
        return Invocation("run", case, ["run", str(case.path), "--out", str(out / "runs"),
                                        "--json"],
                          [case.path.parent, out], [out / "runs" / "earlier.json"])
    return {"run": make}


def _recordings_commands() -> dict[str, Callable[[Corpus, Case, Path], Invocation]]:
    def make(corpus: Corpus, case: Case, out: Path) -> Invocation:
        return Invocation("replay", case, ["replay", str(case.path), "--papers",
                                           str(corpus.papers), "--out", str(out / "replay"),
                                           "--backend", "local", "--json"],
                          [case.path, corpus.papers, out], [out / "replay" / "earlier.json"])
    return {"replay": make}


COMMANDS = {"papers": _papers_commands(), "repos": _repos_commands(),
            "scores": _scores_commands(), "runs": _runs_commands(),
            "specs": _specs_commands(), "recordings": _recordings_commands()}


#: The sandbox each command needs (`run` specs and `reproduce`/`replay` use the local one).
BACKEND = {"sandbox exec local": "local", "sandbox exec docker": "docker", "reproduce": "local",
           "run": "local", "replay": "local"}
#: Cases too slow to pair with every command in a quick run (100,000 files take a minute to
#: copy into a sandbox and out): the quick selection gives them their kind's first command.
HEAVY = {"repo-100000-files"}
#: Pairs the quick selection adds for what they test: taxonomy's own reading of result files,
#: an official score the index places outside the runs root.
QUICK_EXTRA = [("scores", "scores-invalid-utf8", "taxonomy"),
               ("runs", "runs-index-official-outside", "agreement")]


def selection(quick: bool = False) -> list[tuple[str, str, str]]:
    """(kind, case, command) triples: every case with every command of its kind, or `quick`:

    - every case with the first command of its kind (the one that reads it first);
    - every other command with one more case, a different one for each command in turn;
    - both sandboxes with every case but the heavy ones (each is an escape probe);
    - the pairs of QUICK_EXTRA.

    So every kind of case and every command runs at least once, in about a fifth of the time.
    """
    chosen: list[tuple[str, str, str]] = []
    for kind, makers in CASE_MAKERS.items():
        cases, commands = list(makers), list(COMMANDS[kind])
        if not quick:
            chosen += [(kind, case, command) for case in cases for command in commands]
            continue
        light = [case for case in cases if case not in HEAVY]
        chosen += [(kind, case, commands[0]) for case in cases]
        stride = max(1, len(light) // max(1, len(commands) - 1))
        for i, command in enumerate(commands[1:], 1):
            picked = light if command.startswith("sandbox exec") else [
                light[(i * stride) % len(light)]]
            chosen += [(kind, case, command) for case in picked]
    return list(dict.fromkeys(chosen + (QUICK_EXTRA if quick else [])))


# ---------------------------------------------------------------- running one


#: Run in the child before `sabench`: every open, listdir and scandir is logged as a JSON line
#: [path as given, made absolute; the real path it reaches] (a link is not followed for the
#: last part when the open says O_NOFOLLOW).
AUDIT = r"""
import json, os, sys
_fd = os.open(os.environ["SABENCH_HOSTILE_AUDIT"], os.O_WRONLY | os.O_CREAT | os.O_APPEND,
              0o600)
def _audit(event, args):
    if event not in ("open", "os.listdir", "os.scandir") or not args:
        return
    path = args[0]
    if not isinstance(path, (str, bytes)):
        return
    try:
        path = os.path.abspath(os.fsdecode(path))
        flags = args[2] if event == "open" and isinstance(args[2], int) else 0
        if flags > 0 and flags & os.O_NOFOLLOW:
            real = os.path.join(os.path.realpath(os.path.dirname(path)),
                                os.path.basename(path))
        else:
            real = os.path.realpath(path)
        os.write(_fd, (json.dumps([path, real]) + "\n").encode())
    except Exception:
        pass
sys.addaudithook(_audit)
from sabench.benchmark.cli import main
sys.argv[0] = "sabench"
main()
"""


def run(invocation: Invocation, timeout: float = TIMEOUT_S) -> Outcome:
    """Run one invocation and judge how it ended."""
    for path in invocation.outputs:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(EARLIER)
    before = _listing(invocation.workspace) if invocation.workspace else None
    with tempfile.NamedTemporaryFile(prefix="sabench-audit-", suffix=".jsonl",
                                     delete=False) as log:
        audit = Path(log.name)
    env = {**os.environ, "SABENCH_HOSTILE_AUDIT": str(audit), "COLUMNS": "200",
           "NO_COLOR": "1"}
    started = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-c", AUDIT, *invocation.argv], env=env,
                              capture_output=True, timeout=timeout, check=False,
                              cwd=invocation.cwd, stdin=subprocess.DEVNULL)
        code, stdout, stderr = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:
        code, stdout, stderr = None, exc.stdout or b"", exc.stderr or b""
    seconds = round(time.monotonic() - started, 2)
    opened = audit.read_text().splitlines()
    audit.unlink()
    out, err = (stdout.decode("utf-8", "replace"), stderr.decode("utf-8", "replace"))
    ended, message = _ended(invocation, code, out, err)
    problems = _problems(invocation, code, out + err, opened, before)
    return Outcome(invocation.command, invocation.case.name, invocation.case.kind, ended, code,
                   seconds, message, problems)


def _ended(invocation: Invocation, code: int | None, out: str, err: str) -> tuple[str, str]:
    if code is None:
        return "hang", f"no end within {TIMEOUT_S:g}s"
    if "Traceback (most recent call last)" in err:
        return "traceback", err.strip().splitlines()[-1][:300]
    if code == 0:
        return "result", ""
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    message = errors[-1] if errors else _last_line(err) or _last_line(out)
    if len(errors) > 1 or (not errors and not _one_line_problem(out, err)):
        return "multi-line error", message[:300]
    names = (invocation.case.name, invocation.case.culprit)
    if not any(name and name in message for name in names):
        # `data check` lists its problems one per line on stdout, each naming its file.
        problems = [line for line in out.splitlines() if invocation.case.name in line]
        if not problems:
            return "unnamed error", message[:300]
    return "error", message[:300]


def _one_line_problem(out: str, err: str) -> bool:
    """No `error:` line: a command that reports problems as lines naming the file (data check)
    or one warning line; a usage panel of several lines is not one line."""
    return "╭" not in err and "Usage:" not in err


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _problems(invocation: Invocation, code: int | None, shown: str, opened: list[str],
              before: dict[str, str] | None) -> list[str]:
    problems = []
    if SECRET in shown:
        problems.append("printed the secret kept outside the given folders")
    given = [os.path.realpath(p) for p in invocation.given]
    forbidden = os.path.realpath(invocation.forbidden)
    outside = [line for line in opened if _escapes(json.loads(line), given, forbidden)]
    if outside:
        path, real = json.loads(outside[0])
        problems.append(f"opened {path} -> {real} ({len(outside)} such)")
    for path in invocation.outputs:
        # An earlier output is kept, except the file a successful command was asked to write.
        kept = path.is_file() and path.read_bytes() == EARLIER.encode()
        if not kept and (code != 0 or path.name == "earlier.json"):
            problems.append(f"earlier output {path.name} lost or overwritten")
    if before is not None and _listing(invocation.workspace) != before:
        problems.append("the workspace folder changed")
    return problems


def _escapes(record: list[str], given: list[str], forbidden: str) -> bool:
    """A path reached through a given folder that ends outside all of them, or anything in the
    corpus's outside/ folder."""
    path, real = record
    if _under(real, forbidden):
        return True
    inside = any(_under(path, root) for root in given)
    return inside and not any(_under(real, root) for root in given)


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _listing(folder: Path | None) -> dict[str, str]:
    """Names and kinds of a folder's entries (file sizes too), links not followed."""
    found: dict[str, str] = {}
    if folder is None:
        return found
    for dirpath, dirs, files in os.walk(os.fsencode(folder)):
        for name in dirs + files:
            path = os.path.join(dirpath, name)
            info = os.lstat(path)
            kind = (f"-> {os.readlink(path)!r}" if os.path.islink(path)
                    else f"file {info.st_size}" if os.path.isfile(path) else "other")
            found[os.fsdecode(os.path.relpath(path, os.fsencode(folder)))] = kind
    return found


# ---------------------------------------------------------------- the figures


def figures(outcomes: list[Outcome], seconds: float) -> dict:
    by_command: dict[str, Counter] = {}
    for outcome in outcomes:
        by_command.setdefault(outcome.command, Counter())[outcome.ended] += 1
    return {
        "cases": len({(o.kind, o.case) for o in outcomes}),
        "commands": len(by_command),
        "invocations": len(outcomes),
        "ended": dict(Counter(o.ended for o in outcomes)),
        "passed": sum(o.ok for o in outcomes),
        "by_command": {c: dict(n) for c, n in sorted(by_command.items())},
        "failures": [{"command": o.command, "case": o.case, "ended": o.ended,
                      "message": o.message, "problems": o.problems}
                     for o in outcomes if not o.ok],
        "slowest_s": sorted(((o.seconds, f"{o.command} / {o.case}") for o in outcomes),
                            reverse=True)[:5],
        "wall_s": round(seconds, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", help="one kind of case (papers, repos, scores, ...)")
    parser.add_argument("--command", help="one command (e.g. 'score')")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--backends", default="local,docker")
    parser.add_argument("--outcomes", action="store_true", help="every outcome too")
    parser.add_argument("--quick", action="store_true",
                        help="the quick selection the tests run (see `selection`)")
    args = parser.parse_args()
    chosen = [(kind, case, command) for kind, case, command in selection(args.quick)
              if (not args.only or kind == args.only)
              and (not args.command or command == args.command)]
    with tempfile.TemporaryDirectory(prefix="sabench-hostile-") as tmp:
        corpus = build(Path(tmp) / "corpus", list(dict.fromkeys(t[:2] for t in chosen)))
        todo = list(invocations(corpus, Path(tmp) / "out", tuple(args.backends.split(",")),
                                set(chosen)))
        started = time.monotonic()
        with ThreadPoolExecutor(args.jobs) as pool:
            outcomes = list(pool.map(run, todo))
        result = figures(outcomes, time.monotonic() - started)
        if args.outcomes:
            result["outcomes"] = [o.__dict__ for o in outcomes]
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
