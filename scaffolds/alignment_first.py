"""The alignment-first scaffold: extract claims -> plan -> implement -> check each claim ->
repair, as one LangGraph graph.

    start --Send per (dimension, section)--> extract -> ledger -> plan -> implement <-> write
      -> check --Send per dimension--> check_batch -> triage -> repair <-> apply_repair -> check
      triage -> finalize (every claim passes, no repair, round cap, no progress, budget)

* Claims: one extraction call per dimension and paper section, in parallel (Send), merged and
  de-duplicated into a ledger with ids. `oracle=true` takes the benchmark's gold claims instead:
  an ablation, labelled `oracle_claims` in the alignment report and the trace.
* Plan: a file plan with a claim -> file map that covers every claim (claims the model leaves
  out go to main.py), config.yaml first and main.py as the entry point (with a `--smoke` mode).
* Implement: file by file; each call carries only the claims the file owns and the interfaces
  (def/class lines) already written, so prompts stay bounded as the repository grows. Writing
  the reply is a node of its own, so the paid reply is checkpointed before anything acts on it.
* Check: a smoke run in the sandbox (`alignment_smoke`: compile, import, the entry point's smoke
  mode), then every claim of the ledger checked by the registered `checker` (`alignment_check`),
  one Send per dimension; `triage` turns the results into failing items with reasons and
  evidence, and each claim's pass/fail history. No model is called.
* Repair: per file holding failing items, the registered `repair` strategy (targeted edits by
  default) carrying the findings; the edits are applied in a node of their own; then check again.
  Stops when every claim passes, after two rounds without progress, at `max_rounds`, or when the
  budget ends, always with the repository kept.
* Finalize: a claim -> code table (claim, dimension, file:line, last check) in README.md and
  `alignment_report.json` (each claim's verdict per round, the last findings, the smoke run).

Options (`--option KEY=VALUE`): `oracle`, `max_rounds` (3), `checker` (`alignment`, `offline`,
or `judge`: the run's own judge, `--judge`, inside the loop, passing a claim it scores at least
`judge_threshold`, 0.5), `repair` (false: no repair rounds), `repair_strategy` (`edits`),
`smoke` (false: no smoke run), `smoke_timeout` (120 s), `section_chars`, `max_tokens`.
"""

from __future__ import annotations

import json
import operator
import re
import time
from pathlib import Path
from typing import Annotated, Any

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from sabench.agent.budget import BudgetExhausted
from sabench.agent.context import RunContext
from sabench.agent.modelcall import call_model
from sabench.agent.state import OK, STOPPED, RunState, ScaffoldInput, add_number, last_value
from sabench.agent.tools import ToolError, WorkspaceTools
from sabench.agent.workspace import SUBMISSION_DIR
from sabench.scaffolds import alignment_prompts as prompts
from sabench.scaffolds.alignment_check import JUDGE_CHECKER, claim_locations, get_checker
from sabench.scaffolds.alignment_repair import get_repair, json_object
from sabench.scaffolds.alignment_smoke import smoke_run
from sabench.scaffolds.papercoder_parse import PlanParseError, first_fence, paper_document
from sabench.verifiers.spec import Claim, Dimension, PaperSpec

DEFAULTS: dict[str, Any] = {"oracle": False, "max_rounds": 3, "checker": "alignment",
                            "repair": True, "repair_strategy": "edits", "smoke": True,
                            "smoke_timeout": 120.0, "judge_threshold": 0.5,
                            "section_chars": 12_000,
                            "max_tokens": 8_192}
ENTRY, CONFIG, REPORT = "main.py", "config.yaml", "alignment_report.json"
SMOKE_ITEM = "smoke run"


def merge(left: dict | None, right: dict | None) -> dict:
    return {**(left or {}), **(right or {})}


class AlignmentState(RunState, total=False):
    """The ledger, the plan, the implementation position and the check history."""

    extracted: Annotated[list[dict[str, str]], operator.add]
    plan: Annotated[list[dict[str, Any]], last_value]
    written: Annotated[int, add_number]
    rounds: Annotated[int, add_number]
    checked: Annotated[dict[str, dict[str, Any]], merge]
    smoke: Annotated[dict[str, Any], last_value]
    history: Annotated[dict[str, list[bool]], merge]
    failures: Annotated[dict[str, list[list[str]]], merge]  # why each check failed a claim
    failing: Annotated[list[dict[str, Any]], last_value]
    open_items: Annotated[list[int], operator.add]
    passing: Annotated[list[int], operator.add]
    pending: Annotated[dict[str, Any], last_value]
    repaired: Annotated[int, add_number]


def options_of(context: RunContext) -> dict[str, Any]:
    return {**DEFAULTS, **context.options}


def ask(context: RunContext, state: dict[str, Any], request: str, label: str) -> tuple[str, dict]:
    reply = call_model(context, state, [SystemMessage(prompts.SYSTEM), HumanMessage(request)],
                       label=label, cache_prefix=1,
                       max_tokens=options_of(context)["max_tokens"])
    return str(reply.message.content), dict(reply.update)


def stopped(exc: BudgetExhausted) -> dict[str, Any]:
    return {"status": STOPPED, "stop_reason": exc.reason}


# ------------------------------------------------------------------------------- claims


def sections(paper: PaperSpec, limit: int) -> list[tuple[str, str]]:
    """The paper's numbered sections (appendix in the last), cut to `limit` characters."""
    document = paper_document(paper.paper_id, paper.markdown or "")
    parts = [("Abstract", document["abstract"])] + [
        (s["section"], s["text"]) for s in document["pdf_parse"]["body_text"]]
    return [(name, text[:limit]) for name, text in parts if text.strip()]


def start(state: AlignmentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Check the options; the oracle ablation takes the gold claims."""
    context = runtime.context
    options = options_of(context)
    checker_of(context)
    get_repair(options["repair_strategy"])
    if state.get("claims"):
        return {}
    if not options["oracle"]:
        return {"status": "running"}
    claims = [claim_dict(c) for c in context.paper.claims]
    return {"status": "running", "claims": claims,
            "trace": [{"node": "claims", "kind": "oracle", "claims": len(claims)}]}


def claim_dict(claim: Claim) -> dict[str, str]:
    return {"id": claim.id, "dimension": claim.dimension.value, "text": claim.text,
            "source": claim.source}


def fan_out_extraction(state: AlignmentState, runtime: Runtime[RunContext]) -> Any:
    if state.get("claims"):
        return "plan"
    limit = options_of(runtime.context)["section_chars"]
    return [Send("extract", {"dimension": d.value, "section": name, "text": text,
                             "usage": state.get("usage") or {}})
            for d in Dimension for name, text in sections(runtime.context.paper, limit)]


def extract(packet: dict[str, Any], runtime: Runtime[RunContext]) -> dict[str, Any]:
    """The claims one section makes in one dimension."""
    request = prompts.extract_request(packet["dimension"], packet["section"], packet["text"])
    try:
        text, update = ask(runtime.context, packet, request, "extract")
    except BudgetExhausted as exc:
        return stopped(exc)
    try:
        found = [str(c).strip() for c in json_object(text).get("claims") or [] if str(c).strip()]
    except PlanParseError:
        found = []  # an unusable reply contributes no claims; the others still count
    return {**update, "extracted": [{"dimension": packet["dimension"], "text": c,
                                     "source": packet["section"]} for c in found]}


def ledger(state: AlignmentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Merge the extracted claims, drop near-duplicates, number them per dimension."""
    if state.get("claims") or state.get("status") == STOPPED:
        return {}
    kept: list[dict[str, str]] = []
    for item in state.get("extracted") or []:
        words = set(re.findall(r"\w+", item["text"].lower()))
        if any(other["dimension"] == item["dimension"] and similar(words, other["text"])
               for other in kept):
            continue
        kept.append(item)
    paper_id = runtime.context.paper.paper_id
    claims, counts = [], {d.value: 0 for d in Dimension}
    for item in kept:
        counts[item["dimension"]] += 1
        number = counts[item["dimension"]]
        claims.append({**item, "id": f"{paper_id}-{item['dimension']}-{number:03d}"})
    return {"claims": claims,
            "trace": [{"node": "ledger", "kind": "claims", "extracted": len(
                state.get("extracted") or []), "claims": len(claims)}]}


def similar(words: set[str], text: str, threshold: float = 0.8) -> bool:
    other = set(re.findall(r"\w+", text.lower()))
    return bool(words | other) and len(words & other) / len(words | other) >= threshold


# ------------------------------------------------------------------------------- plan


def plan(state: AlignmentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    if state.get("plan") or state.get("status") == STOPPED:
        return {}
    claims = state.get("claims") or []
    listing = "\n".join(f"{c['id']} [{c['dimension']}] {c['text']}" for c in claims)
    try:
        text, update = ask(runtime.context, state,
                           prompts.plan_request(runtime.context.paper.title, listing), "plan")
    except BudgetExhausted as exc:
        return stopped(exc)
    try:
        files = json_object(text).get("files") or []
    except PlanParseError:
        files = []
    return {**update, "plan": complete_plan(files, [c["id"] for c in claims])}


def complete_plan(files: list[Any], claim_ids: list[str]) -> list[dict[str, Any]]:
    """The model's plan made whole: valid entries, config.yaml first, main.py present, every
    claim owned by exactly one file (unowned claims go to main.py)."""
    plan, owned = [], set()
    for entry in files:
        if not isinstance(entry, dict) or not str(entry.get("path") or "").strip():
            continue
        path = str(entry["path"]).strip().lstrip("/")
        if path in {p["path"] for p in plan} or ".." in path.split("/"):
            continue
        mine = [c for c in entry.get("claims") or [] if c in claim_ids and c not in owned]
        owned.update(mine)
        plan.append({"path": path, "purpose": str(entry.get("purpose") or ""), "claims": mine})
    for path, purpose in ((CONFIG, "every numerical value, each with its claim id"),
                          (ENTRY, "runs the pipeline's phases in the paper's order")):
        if path not in {p["path"] for p in plan}:
            plan.append({"path": path, "purpose": purpose, "claims": []})
    plan.sort(key=lambda p: p["path"] != CONFIG)
    entry = next(p for p in plan if p["path"] == ENTRY)
    entry["claims"] += [c for c in claim_ids if c not in owned]
    return plan


def owners(state: AlignmentState) -> dict[str, str]:
    return {cid: f["path"] for f in state.get("plan") or [] for cid in f["claims"]}


# ------------------------------------------------------------------------------- implement


def implement(state: AlignmentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """The next file of the plan, with its claims and the interfaces written so far."""
    context = runtime.context
    files = state["plan"]
    entry = files[int(state.get("written") or 0)]
    claims = {c["id"]: c for c in state.get("claims") or []}
    owned = "\n".join(f"- {cid}: {claims[cid]['text']}" for cid in entry["claims"])
    done = [f["path"] for f in files[:int(state.get("written") or 0)]]
    context.emit(phase=f"implement {len(done) + 1}/{len(files)}")
    request = prompts.implement_request(entry["path"], entry["purpose"], owned,
                                        interfaces(context, done), entry["path"] == ENTRY)
    try:
        text, update = ask(context, state, request, "implement")
    except BudgetExhausted as exc:
        return stopped(exc)
    return {**update, "pending": {"file": entry["path"], "text": text}}


def write(state: AlignmentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Write the implemented file (a node of its own, so the paid reply is checkpointed
    before anything acts on it)."""
    pending = state["pending"]
    runtime.context.workspace.write(f"{SUBMISSION_DIR}/{pending['file']}",
                                    first_fence(pending["text"]))
    runtime.context.workspace.save()
    return {"written": 1, "files_written": [pending["file"]]}


def interfaces(context: RunContext, done: list[str], limit: int = 6_000) -> str:
    """The def and class lines of the files written so far (bounded)."""
    lines = []
    for path in done:
        try:
            text = context.workspace.read(f"{SUBMISSION_DIR}/{path}").decode("utf-8", "replace")
        except (FileNotFoundError, PermissionError, IsADirectoryError):
            continue
        heads = [line.rstrip() for line in text.splitlines()
                 if re.match(r"\s*(def|class|async def)\s", line)]
        if heads:
            lines.append(f"# {path}\n" + "\n".join(heads))
    return "\n".join(lines)[:limit]


def after_implement(state: AlignmentState) -> str:
    return "finalize" if state.get("status") == STOPPED else "write"


def after_write(state: AlignmentState) -> str:
    return "implement" if int(state.get("written") or 0) < len(state["plan"]) else "check"


# ------------------------------------------------------------------------------- check


def check(state: AlignmentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """The smoke run of this round; the claims are checked next, one batch per dimension."""
    context = runtime.context
    options = options_of(context)
    context.workspace.save()  # the host mirror the batches read is the submission as it is
    context.emit(phase=f"check round {int(state.get('rounds') or 0)}")
    if not options["smoke"]:
        return {"smoke": {"problems": [], "environment": [], "ran": False, "seconds": 0.0,
                          "skipped": True}}
    planned = [f["path"] for f in state.get("plan") or []]
    report = smoke_run(context.workspace, ENTRY, planned,
                       timeout=float(options["smoke_timeout"]))
    return {"smoke": report, "elapsed_s": report["seconds"],
            "trace": [{"node": "check", "kind": "smoke", "seconds": round(report["seconds"], 4),
                       "ran": report["ran"], "problems": len(report["problems"])}]}


def fan_out_check(state: AlignmentState) -> Any:
    claims = state.get("claims") or []
    batches = [[c["id"] for c in claims if c["dimension"] == d.value] for d in Dimension]
    sends = [Send("check_batch", {"ids": ids, "claims": claims}) for ids in batches if ids]
    return sends or "triage"


def check_batch(packet: dict[str, Any], runtime: Runtime[RunContext]) -> dict[str, Any]:
    """One batch of claims checked against the submission as it is now (no model call)."""
    context = runtime.context
    started = time.perf_counter()
    spec = ledger_spec(context.paper, packet["claims"])
    repo = Path(context.workspace.mirror)
    repo.mkdir(parents=True, exist_ok=True)
    results = checker_of(context)(spec, repo, packet["ids"])
    seconds = time.perf_counter() - started
    return {"checked": {r.id: r.model_dump(mode="json") for r in results},
            "elapsed_s": seconds,
            "trace": [{"node": "check_batch", "kind": "check", "seconds": round(seconds, 4),
                       "claims": len(results), "failing": sum(not r.passed for r in results)}]}


def checker_of(context: RunContext) -> Any:
    """The run's checker: a registered one, or `judge`, the run's own judge in the loop."""
    options = options_of(context)
    return get_checker(options["checker"], context.judge, float(options["judge_threshold"]))


def ledger_spec(paper: PaperSpec, claims: list[dict[str, str]]) -> PaperSpec:
    """The paper with the scaffold's own claims (never the gold ones, unless oracle)."""
    own = tuple(Claim(id=c["id"], dimension=Dimension(c["dimension"]), text=c["text"],
                      source=c.get("source", "")) for c in claims)
    return paper.model_copy(update={"claims": own})


def triage(state: AlignmentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """The round's failing items (claims, and smoke problems no claim of the file carries),
    each with the file to repair, reasons and evidence; every claim's history."""
    checked = state.get("checked") or {}
    owner = owners(state)
    problems = (state.get("smoke") or {}).get("problems") or []
    broken = {p["file"]: p for p in problems}
    failing = []
    for claim in state.get("claims") or []:
        result = checked.get(claim["id"]) or {"passed": False, "reasons": ["not checked"]}
        file = owner.get(claim["id"], ENTRY)
        reasons = list(result.get("reasons") or [])
        if file in broken:
            reasons.append(f"the smoke run fails in {file}: {broken[file]['error']}")
        if not result.get("passed") or file in broken:
            failing.append({"id": claim["id"], "file": repair_target(result, file, owner),
                            "reasons": reasons, "evidence": (result.get("evidence") or [])[:3]})
    carried = {f["file"] for f in failing}
    for problem in problems:
        if problem["file"] not in carried:
            carried.add(problem["file"])
            failing.append({"id": SMOKE_ITEM, "file": problem["file"], "evidence": [
                f"{problem['file']}:{problem['line']}"], "reasons": [
                f"{problem['step']} fails: {problem['error']}"]})
    return round_update(state, failing)


def repair_target(result: dict[str, Any], owner_file: str, owner: dict[str, str]) -> str:
    """Where a failing claim is repaired: the file the check located its problem in, when the
    check says so (e.g. a value bound elsewhere), else the file that owns the claim."""
    for location in result.get("fix_in") or []:
        return str(location).rsplit(":", 1)[0]
    return owner_file


def round_update(state: AlignmentState, failing: list[dict[str, Any]]) -> dict[str, Any]:
    claims = state.get("claims") or []
    ids = {f["id"] for f in failing}
    history = {c["id"]: [*(state.get("history") or {}).get(c["id"], []), c["id"] not in ids]
               for c in claims}
    why = {f["id"]: f["reasons"] for f in failing}
    failures = {c["id"]: [*(state.get("failures") or {}).get(c["id"], []), why.get(c["id"], [])]
                for c in claims}
    passing = sum(c["id"] not in ids for c in claims)
    return {"failing": failing, "history": history, "failures": failures,
            "passing": [passing],
            "open_items": [len(failing)],
            "trace": [{"node": "triage", "kind": "round", "round": int(state.get("rounds") or 0),
                       "claims": len(claims), "passing": passing, "failing": len(failing)}]}


def after_triage(state: AlignmentState, runtime: Runtime[RunContext]) -> str:
    options = options_of(runtime.context)
    open_items = state.get("open_items") or []
    if not state.get("failing") or not options["repair"]:
        return "finalize"
    if int(state.get("rounds") or 0) >= options["max_rounds"]:
        return "finalize"
    if no_progress(open_items):
        return "finalize"
    return "repair"


def no_progress(open_items: list[int]) -> bool:
    """Two repair rounds in a row left as many failing items as before them."""
    return len(open_items) >= 3 and open_items[-1] >= open_items[-3]


# ------------------------------------------------------------------------------- repair


def repair(state: AlignmentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """The repair request for the next file holding failing items; a round ends after the
    last file."""
    context = runtime.context
    files = sorted({f["file"] for f in state.get("failing") or []})
    position = int(state.get("repaired") or 0)
    path = files[position]
    failing = [f for f in state["failing"] if f["file"] == path]
    claims = {c["id"]: c for c in state.get("claims") or []}
    tools = WorkspaceTools(context.workspace, context.tool_limits)
    try:
        numbered = tools.read_lines(f"{SUBMISSION_DIR}/{path}", 1, 2_000)
    except ToolError:
        numbered = "(the file does not exist yet)"
    context.emit(phase=f"repair {path}")
    strategy = get_repair(options_of(context)["repair_strategy"])
    request = strategy.request(path, numbered, findings(failing, claims))
    try:
        text, update = ask(context, state, request, "repair")
    except BudgetExhausted as exc:
        return stopped(exc)
    return {**update, "pending": {"file": path, "text": text,
                                  "last": position + 1 == len(files)}}


def findings(failing: list[dict[str, Any]], claims: dict[str, dict[str, Any]]) -> str:
    """The failing items of one file as the repair request lists them."""
    return "\n".join(
        f"- {f['id']}: {claims.get(f['id'], {}).get('text', '')}\n  findings: "
        f"{'; '.join(f['reasons']) or 'not found'}\n  looked at: "
        f"{', '.join(f['evidence']) or 'nothing relevant found'}"
        for f in failing)


def apply_repair(state: AlignmentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Apply the repair reply (its own node; applying edits twice refuses those already made,
    since their old text is gone)."""
    context = runtime.context
    pending = state["pending"]
    tools = WorkspaceTools(context.workspace, context.tool_limits)
    strategy = get_repair(options_of(context)["repair_strategy"])
    applied = strategy.apply(tools, f"{SUBMISSION_DIR}/{pending['file']}", pending["text"])
    context.workspace.save()
    last = bool(pending.get("last"))
    position = int(state.get("repaired") or 0)
    return {"repaired": -position if last else 1, "rounds": 1 if last else 0,
            "files_written": [pending["file"]] if applied["applied"] else [],
            "trace": [{"node": "apply_repair", "kind": "edits", "file": pending["file"],
                       **applied}]}


def after_repair(state: AlignmentState) -> str:
    return "finalize" if state.get("status") == STOPPED else "apply_repair"


def after_apply(state: AlignmentState) -> str:
    return "repair" if int(state.get("repaired") or 0) > 0 else "check"


# ------------------------------------------------------------------------------- finalize


def finalize(state: AlignmentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """README claim table and the alignment report; the reason the loop stopped."""
    context = runtime.context
    options = options_of(context)
    failing = state.get("failing") or []
    reason = state.get("stop_reason") if state.get("status") == STOPPED else (
        "all_claims_pass" if not failing else
        "no_repair" if not options["repair"] else
        "round_cap" if int(state.get("rounds") or 0) >= options["max_rounds"] else
        "no_progress")
    where = locations(context, state)
    write_report(context, state, options, reason, where)
    append_claim_table(context, state, where)
    context.workspace.save()
    if state.get("status") == STOPPED:
        return {}
    return {"status": OK, "stop_reason": reason}


def locations(context: RunContext, state: AlignmentState) -> dict[str, str]:
    """Each claim's code location: the line tagged with its id, else its first evidence."""
    claims = [c["id"] for c in state.get("claims") or []]
    tagged = claim_locations(Path(context.workspace.mirror), claims)
    checked = state.get("checked") or {}
    where = {}
    for cid in claims:
        evidence = (checked.get(cid) or {}).get("evidence") or []
        first = re.sub(r"-\d+$", "", evidence[0]) if evidence else ""
        where[cid] = tagged.get(cid) or first
    return where


def write_report(context: RunContext, state: AlignmentState, options: dict[str, Any],
                 reason: str | None, where: dict[str, str]) -> None:
    history = state.get("history") or {}
    failures = state.get("failures") or {}
    checked = state.get("checked") or {}
    report = {
        "oracle_claims": bool(options["oracle"]), "checker": options["checker"],
        "repair_strategy": options["repair_strategy"] if options["repair"] else None,
        "stop_reason": reason, "rounds": int(state.get("rounds") or 0),
        "passing_per_check": state.get("passing") or [],
        "failing_items_per_check": state.get("open_items") or [],
        "smoke": state.get("smoke") or {},
        "claims": [{**c, "location": where.get(c["id"], ""),
                    "passed_per_round": history.get(c["id"], []),
                    "failed_because_per_round": failures.get(c["id"], []),
                    "reasons": (checked.get(c["id"]) or {}).get("reasons") or [],
                    "evidence": (checked.get(c["id"]) or {}).get("evidence") or []}
                   for c in state.get("claims") or []]}
    context.workspace.write(f"{SUBMISSION_DIR}/{REPORT}", json.dumps(report, indent=1) + "\n")


def append_claim_table(context: RunContext, state: AlignmentState,
                       where: dict[str, str]) -> None:
    owner = owners(state)
    history = state.get("history") or {}
    rows = [f"| {c['id']} | {c['dimension']} | {where.get(c['id']) or owner.get(c['id'], '-')} "
            f"| {'pass' if (history.get(c['id']) or [False])[-1] else 'fail'} |"
            for c in state.get("claims") or []]
    table = ("\n\n## Claims and code\n\n| claim | dimension | code | last check |\n"
             "|---|---|---|---|\n" + "\n".join(rows) + "\n")
    path = f"{SUBMISSION_DIR}/README.md"
    try:
        current = context.workspace.read(path).decode("utf-8", "replace")
    except (FileNotFoundError, PermissionError, IsADirectoryError):
        current = f"# {context.paper.title}\n"
    context.workspace.write(path, current.split("\n\n## Claims and code\n")[0] + table)


# ------------------------------------------------------------------------------- the graph


class AlignmentFirst:
    """The registered scaffold `alignment-first`."""

    name = "alignment-first"
    description = ("alignment-first: extract claims, plan, implement file by file, check "
                   "every claim, repair failing ones until they pass")

    def build(self, options: dict[str, Any] | None = None) -> CompiledStateGraph:
        merged = {**DEFAULTS, **(options or {})}
        if merged["checker"] != JUDGE_CHECKER:  # the judge comes with the run's context
            get_checker(merged["checker"])  # an unknown name fails before the run starts
        get_repair(merged["repair_strategy"])
        graph = StateGraph(AlignmentState, context_schema=RunContext,
                           input_schema=ScaffoldInput)
        for name, node in (("start", start), ("extract", extract), ("ledger", ledger),
                           ("plan", plan), ("implement", implement), ("write", write),
                           ("check", check), ("check_batch", check_batch), ("triage", triage),
                           ("repair", repair), ("apply_repair", apply_repair),
                           ("finalize", finalize)):
            graph.add_node(name, node)
        graph.add_edge(START, "start")
        graph.add_conditional_edges("start", fan_out_extraction, ["extract", "plan"])
        graph.add_edge("extract", "ledger")
        graph.add_edge("ledger", "plan")
        graph.add_conditional_edges("plan", lambda s: "finalize" if s.get(
            "status") == STOPPED else "implement", ["implement", "finalize"])
        graph.add_conditional_edges("implement", after_implement, ["write", "finalize"])
        graph.add_conditional_edges("write", after_write, ["implement", "check"])
        graph.add_conditional_edges("check", fan_out_check, ["check_batch", "triage"])
        graph.add_edge("check_batch", "triage")
        graph.add_conditional_edges("triage", after_triage, ["repair", "finalize"])
        graph.add_conditional_edges("repair", after_repair, ["apply_repair", "finalize"])
        graph.add_conditional_edges("apply_repair", after_apply, ["repair", "check"])
        graph.add_edge("finalize", END)
        return graph.compile(name=self.name)
