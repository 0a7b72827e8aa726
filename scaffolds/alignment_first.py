"""The alignment-first scaffold: extract claims -> plan -> implement -> check each claim ->
repair, as one LangGraph graph.

    claims --Send per (dimension, section)--> extract -> ledger -> plan -> implement (per file)
        -> check -> repair (per file with failing claims) -> check ... -> finalize

* Claims: one extraction call per dimension and paper section, in parallel (Send), merged and
  de-duplicated into a ledger with ids. `--option oracle=true` uses the benchmark's gold claims
  instead: an ablation, labelled `oracle` in the trace and the alignment report.
* Plan: a file plan with a claim -> file map that covers every claim (claims the model leaves
  out go to main.py), config.yaml first and main.py as the entry point.
* Implement: file by file; each call carries only the claims the file owns and the interfaces
  (def/class lines) already written, so prompts stay bounded as the repository grows.
* Check: every claim with a registered checker (`checker`, default the offline alignment check),
  plus a smoke compile of every Python file in the sandbox; failing claims keep reasons and
  evidence. No model is called.
* Repair: per file that owns failing claims, targeted edits (exact replacement or insertion)
  carrying the reasons; then check again. Stops when every claim passes, after two rounds
  without progress, at `max_rounds`, or when the budget ends, always with the repository kept.
* Finalize: a claim -> code table appended to README.md and `alignment_report.json` (each
  claim's verdict per round).
"""

from __future__ import annotations

import json
import operator
import re
import tempfile
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
from sabench.scaffolds.papercoder_parse import (
    PlanParseError,
    balanced_object,
    first_fence,
    paper_document,
)
from sabench.verifiers.alignment import CHECKERS
from sabench.verifiers.spec import Claim, Dimension, PaperSpec

DEFAULTS: dict[str, Any] = {"oracle": False, "max_rounds": 3, "checker": "offline",
                            "repair": True, "smoke": True, "section_chars": 12_000,
                            "max_tokens": 8_192}
ENTRY, CONFIG, REPORT = "main.py", "config.yaml", "alignment_report.json"


def merge(left: dict | None, right: dict | None) -> dict:
    return {**(left or {}), **(right or {})}


class AlignmentState(RunState, total=False):
    """The ledger, the plan, the implementation position and the check history."""

    extracted: Annotated[list[dict[str, str]], operator.add]
    plan: Annotated[list[dict[str, Any]], last_value]
    written: Annotated[int, add_number]
    rounds: Annotated[int, add_number]
    history: Annotated[dict[str, list[bool]], merge]
    failing: Annotated[list[dict[str, Any]], last_value]
    pending: Annotated[dict[str, Any], last_value]
    passing: Annotated[list[int], operator.add]
    repaired: Annotated[int, add_number]


def options_of(context: RunContext) -> dict[str, Any]:
    return {**DEFAULTS, **context.options}


def ask(context: RunContext, state: dict[str, Any], request: str, label: str) -> tuple[str, dict]:
    reply = call_model(context, state, [SystemMessage(prompts.SYSTEM), HumanMessage(request)],
                       label=label, cache_prefix=1,
                       max_tokens=options_of(context)["max_tokens"])
    return str(reply.message.content), dict(reply.update)


def json_object(text: str) -> dict[str, Any]:
    block = balanced_object(text)
    if block is None:
        raise PlanParseError("no JSON object in the reply")
    try:
        value = json.loads(block)
    except ValueError as exc:
        raise PlanParseError(f"the reply's JSON does not parse ({exc})") from None
    if not isinstance(value, dict):
        raise PlanParseError("the reply is not a JSON object")
    return value


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
    """The oracle ablation takes the gold claims; otherwise nothing to do yet."""
    context = runtime.context
    if state.get("claims"):
        return {}
    if not options_of(context)["oracle"]:
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
                                        interfaces(context, done))
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
    return {"written": 1}


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
    """Every claim checked against the repository as it is now; a smoke compile besides."""
    context = runtime.context
    options = options_of(context)
    started = time.perf_counter()
    spec = ledger_spec(context.paper, state.get("claims") or [])
    with tempfile.TemporaryDirectory(prefix="sabench-check-") as tmp:
        repo = Path(tmp) / "repo"
        context.workspace.collect(repo)
        results = CHECKERS[options["checker"]](spec, repo)
    broken = smoke_failures(context) if options["smoke"] else {}
    owners = {cid: f["path"] for f in state["plan"] for cid in f["claims"]}
    failing = []
    for result in results:
        reasons = list(result.reasons)
        if owners.get(result.id) in broken:
            reasons.append(f"{owners[result.id]} does not compile: {broken[owners[result.id]]}")
        if not result.passed or owners.get(result.id) in broken:
            failing.append({"id": result.id, "file": owners.get(result.id, ENTRY),
                            "reasons": reasons, "evidence": result.evidence[:3]})
    seconds = time.perf_counter() - started
    history = {r.id: [*(state.get("history") or {}).get(r.id, []),
                      not any(f["id"] == r.id for f in failing)] for r in results}
    context.emit(phase=f"check: {len(results) - len(failing)}/{len(results)} pass")
    return {"failing": failing, "history": history, "passing": [len(results) - len(failing)],
            "elapsed_s": seconds, "trace": [{"node": "check", "kind": "check",
                                             "seconds": round(seconds, 4),
                                             "claims": len(results),
                                             "failing": len(failing)}]}


def ledger_spec(paper: PaperSpec, claims: list[dict[str, str]]) -> PaperSpec:
    """The paper with the scaffold's own claims (never the gold ones, unless oracle)."""
    own = tuple(Claim(id=c["id"], dimension=Dimension(c["dimension"]), text=c["text"],
                      source=c.get("source", "")) for c in claims)
    return paper.model_copy(update={"claims": own})


def smoke_failures(context: RunContext) -> dict[str, str]:
    """Python files of the submission that do not compile, with the first error line."""
    script = ("import pathlib, sys\n"
              "for p in sorted(pathlib.Path(sys.argv[1]).rglob('*.py')):\n"
              "    try: compile(p.read_bytes(), str(p), 'exec')\n"
              "    except (SyntaxError, ValueError) as e:\n"
              "        print(p.relative_to(sys.argv[1]), '|', f'{type(e).__name__}: {e}')\n")
    result = context.workspace.sandbox.exec(["python3", "-c", script, "/workspace/submission"],
                                            timeout=60)
    found = {}
    for line in result.stdout.splitlines():
        path, _, error = line.partition(" | ")
        found[path.strip()] = error.strip()
    return found


def after_check(state: AlignmentState, runtime: Runtime[RunContext]) -> str:
    options = options_of(runtime.context)
    passing = state.get("passing") or []
    if not state.get("failing") or not options["repair"]:
        return "finalize"
    if int(state.get("rounds") or 0) >= options["max_rounds"]:
        return "finalize"
    if len(passing) >= 3 and passing[-1] <= passing[-3]:
        return "finalize"  # two rounds without progress
    return "repair"


# ------------------------------------------------------------------------------- repair


def repair(state: AlignmentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Targeted edits to the next file that owns failing claims; a round ends after the last."""
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
    listing = "\n".join(
        f"- {f['id']}: {claims.get(f['id'], {}).get('text', '')}\n  findings: "
        f"{'; '.join(f['reasons']) or 'not found'}\n  looked at: {', '.join(f['evidence'])}"
        for f in failing)
    context.emit(phase=f"repair {path}")
    try:
        text, update = ask(context, state, prompts.repair_request(path, numbered, listing),
                           "repair")
    except BudgetExhausted as exc:
        return stopped(exc)
    return {**update, "pending": {"file": path, "text": text,
                                  "last": position + 1 == len(files)}}


def apply_repair(state: AlignmentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Apply the repair reply's edits (its own node; applying twice refuses the edits already
    made, since their old text is gone)."""
    pending = state["pending"]
    tools = WorkspaceTools(runtime.context.workspace, runtime.context.tool_limits)
    applied = apply_edits(tools, f"{SUBMISSION_DIR}/{pending['file']}", pending["text"])
    runtime.context.workspace.save()
    last = bool(pending.get("last"))
    position = int(state.get("repaired") or 0)
    return {"repaired": -position if last else 1, "rounds": 1 if last else 0,
            "trace": [{"node": "apply_repair", "kind": "edits", "file": pending["file"],
                       **applied}]}


def apply_edits(tools: WorkspaceTools, target: str, reply: str) -> dict[str, int]:
    """Apply the edits of a repair reply; counts of applied and refused edits."""
    try:
        edits = json_object(reply).get("edits") or []
    except PlanParseError:
        return {"applied": 0, "refused": 1}
    counts = {"applied": 0, "refused": 0}
    for edit in edits if isinstance(edits, list) else []:
        try:
            if isinstance(edit, dict) and "old" in edit:
                tools.replace(target, str(edit["old"]), str(edit.get("new", "")))
            elif isinstance(edit, dict) and "after_line" in edit:
                tools.insert(target, int(edit["after_line"]), str(edit.get("text", "")))
            else:
                raise ToolError("not an edit")
            counts["applied"] += 1
        except (ToolError, ValueError, TypeError):
            counts["refused"] += 1
    return counts


def after_repair(state: AlignmentState) -> str:
    return "finalize" if state.get("status") == STOPPED else "apply_repair"


def after_apply(state: AlignmentState) -> str:
    return "repair" if int(state.get("repaired") or 0) > 0 else "check"


# ------------------------------------------------------------------------------- finalize


def finalize(state: AlignmentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """README claim table and the alignment report; the reason the loop stopped."""
    context = runtime.context
    options = options_of(context)
    history = state.get("history") or {}
    failing = state.get("failing") or []
    report = {"oracle_claims": bool(options["oracle"]), "checker": options["checker"],
              "rounds": int(state.get("rounds") or 0), "passing_per_check": state.get(
                  "passing") or [],
              "claims": [{**c, "passed_per_round": history.get(c["id"], [])}
                         for c in state.get("claims") or []]}
    context.workspace.write(f"{SUBMISSION_DIR}/{REPORT}", json.dumps(report, indent=1) + "\n")
    append_claim_table(context, state)
    context.workspace.save()
    if state.get("status") == STOPPED:
        return {}
    reason = "all_claims_pass" if not failing else (
        "no_repair" if not options["repair"] else
        "round_cap" if int(state.get("rounds") or 0) >= options["max_rounds"] else
        "no_progress")
    return {"status": OK, "stop_reason": reason}


def append_claim_table(context: RunContext, state: AlignmentState) -> None:
    owners = {cid: f["path"] for f in state.get("plan") or [] for cid in f["claims"]}
    history = state.get("history") or {}
    rows = [f"| {c['id']} | {c['dimension']} | {owners.get(c['id'], '-')} | "
            f"{'pass' if (history.get(c['id']) or [False])[-1] else 'fail'} |"
            for c in state.get("claims") or []]
    table = ("\n\n## Claims and code\n\n| claim | dimension | file | last check |\n"
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
        graph = StateGraph(AlignmentState, context_schema=RunContext,
                           input_schema=ScaffoldInput)
        for name, node in (("start", start), ("extract", extract), ("ledger", ledger),
                           ("plan", plan), ("implement", implement), ("write", write),
                           ("check", check), ("repair", repair), ("apply_repair", apply_repair),
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
        graph.add_conditional_edges("check", after_check, ["repair", "finalize"])
        graph.add_conditional_edges("repair", after_repair, ["apply_repair", "finalize"])
        graph.add_conditional_edges("apply_repair", after_apply, ["repair", "check"])
        graph.add_edge("finalize", END)
        return graph.compile(name=self.name)

