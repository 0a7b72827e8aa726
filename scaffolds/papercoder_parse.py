"""PaperCoder's text handling: the paper as a cleaned structured document, and the parsing of
its planning replies (config YAML, task list) and coding replies (the first fenced block).

Written for sabench from the published description of the PaperCoder baseline as SA-Bench ran
it: markdown converted to an S2ORC-like document without GROBID (only numbered headings open
sections, so the appendix and references end up in the last numbered section), the document
embedded in prompts as a Python dict repr, and a tolerant JSON parser for the task list.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: A heading that opens a section: `# 3 Title`, `# 3.1 Title` or `# 3. Title` (but not
#: `# 3.1. Title`, which the original left inside its section, nor `# A.1 Title`).
NUMBERED = re.compile(r"^#\s+(?:(\d+)\.|(\d+(?:\.\d+)?))\s+(.*\S)\s*$")
HEADING = re.compile(r"^(#+)\s+(.*\S)\s*$")
SKIPPED_LINE = re.compile(r"^(!\[|>|\$\$\s*$|```)")
THINK_END = "</think>"


# ------------------------------------------------------------------------------- the paper


def inline_clean(text: str) -> str:
    """Display maths to brackets, inline maths unwrapped, emphasis and links reduced to text."""
    text = re.sub(r"\$\$(.+?)\$\$", r"[\1]", text)
    text = re.sub(r"\$(.+?)\$", r"\1", text)
    text = re.sub(r"\*\*(.+?)\*\*", r"\1", text)
    text = re.sub(r"(?<!\w)[*_](.+?)[*_](?!\w)", r"\1", text)
    return re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", text).strip()


def paper_document(paper_id: str, markdown: str) -> dict[str, Any]:
    """The cleaned document PaperCoder reads: title, abstract and numbered sections (one
    paragraph each; subheadings become `<section>::<subheading>` entries)."""
    lines = markdown.splitlines()
    title = next((line[2:].strip() for line in lines if line.startswith("# ")), paper_id)
    sections: list[dict[str, Any]] = []
    abstract: list[str] = []
    current: dict[str, Any] | None = None
    label, gathered = "", []
    for line in lines:
        numbered = NUMBERED.match(line)
        if numbered:
            _flush(sections, current, label, gathered)
            current = {"sec_num": numbered.group(1) or numbered.group(2),
                       "section": numbered.group(3)}
            label, gathered = current["section"], []
            continue
        heading = HEADING.match(line)
        if current is not None and heading and len(heading.group(1)) >= 2:
            _flush(sections, current, label, gathered)
            label, gathered = f"{current['section']}::{heading.group(2)}", []
            continue
        if not line.strip() or SKIPPED_LINE.match(line.strip()) or line.startswith("# "):
            continue
        (gathered if current is not None else abstract).append(inline_clean(line))
    _flush(sections, current, label, gathered)
    return {"paper_id": paper_id, "title": title,
            "abstract": " ".join(abstract[:40]),
            "pdf_parse": {"paper_id": paper_id,
                          "abstract": [{"text": " ".join(abstract[:40]), "section": "Abstract",
                                        "sec_num": None}],
                          "body_text": sections, "back_matter": [], "ref_entries": {}}}


def _flush(sections: list[dict[str, Any]], current: dict[str, Any] | None, label: str,
           gathered: list[str]) -> None:
    if current is not None and gathered:
        sections.append({"text": " ".join(gathered), "section": label,
                         "sec_num": current["sec_num"]})


def document_text(document: dict[str, Any]) -> str:
    """The document as the original embedded it: a Python dict repr."""
    return str(document)


# ------------------------------------------------------------------------------- replies


def after_think(text: str) -> str:
    """A reply without a reasoning prefix ending in `</think>`."""
    return text.split(THINK_END, 1)[1] if THINK_END in text else text


def extract_yaml(text: str) -> str | None:
    """The first ```yaml block of the config reply, or None."""
    body = after_think(text)
    found = re.search(r"```yaml\n(.*?)\n```", body, re.DOTALL)
    if found is None and "\\n" in body:
        found = re.search(r"```yaml\n(.*?)\n```", body.replace("\\n", "\n"), re.DOTALL)
    return found.group(1) if found else None


def first_fence(text: str) -> str:
    """The first fenced block whose fences start their lines; the whole reply if none."""
    found = re.search(r"^```[^\n]*\n(.*?)^```", text, re.DOTALL | re.MULTILINE)
    return found.group(1) if found else text


class PlanParseError(ValueError):
    """A planning reply whose JSON object cannot be recovered."""


def content_to_json(text: str) -> dict[str, Any]:
    """The JSON object of a `[CONTENT] ... [/CONTENT]` reply, repaired step by step.

    Tries the text as it is, then without trailing commas and `#` comments, then with raw
    newlines escaped inside strings and LaTeX backslashes doubled.

    Raises:
        PlanParseError: no attempt gives a JSON object.
    """
    body = after_think(text).replace("[CONTENT]", "").replace("[/CONTENT]", "")
    block = balanced_object(body)
    if block is None:
        if "{" not in body:
            raise PlanParseError("no JSON object in the reply")
        block = close_truncated(body[body.index("{"):])  # a reply cut off mid-object
    for repair in REPAIRS:
        try:
            value = json.loads(repair(block))
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return salvage_lists(block)


def salvage_lists(block: str) -> dict[str, Any]:
    """Last resort for an object broken elsewhere (an unescaped quote in a long text): the
    lists that drive the next stages, each parsed on its own."""
    found: dict[str, Any] = {}
    for key in ("Task list", "Logic Analysis"):
        start = re.search(rf'"{key}"\s*:\s*\[', block)
        if start is None:
            continue
        array = balanced_array(block[start.end() - 1:])
        for repair in REPAIRS:
            try:
                found[key] = json.loads(repair(array or ""))
                break
            except ValueError:
                continue
    if "Task list" not in found:
        raise PlanParseError("the reply's JSON object could not be repaired")
    return found



def balanced_object(text: str) -> str | None:
    """The first `{...}` with balanced braces (braces inside strings ignored)."""
    return balanced(text, "{", "}")


def balanced_array(text: str) -> str | None:
    """The first `[...]` with balanced brackets (brackets inside strings ignored)."""
    return balanced(text, "[", "]")


def balanced(text: str, opening: str, closing: str) -> str | None:
    start = text.find(opening)
    if start < 0:
        return None
    depth, in_string, escaped = 0, False, False
    for i in range(start, len(text)):
        char = text[i]
        if in_string:
            escaped = char == "\\" and not escaped
            if char == '"' and not escaped:
                in_string = False
            continue
        if char == '"':
            in_string = True
        elif char == opening:
            depth += 1
        elif char == closing:
            depth -= 1
            if depth == 0:
                return text[start:i + 1]
    return None


def close_truncated(text: str) -> str:
    """A cut-off JSON text completed: the open string, then the open arrays and objects, are
    closed (an unfinished last value is kept when it is a string, dropped otherwise)."""
    stack, in_string, escaped = [], False, False
    for char in text:
        if in_string:
            escaped = char == "\\" and not escaped
            if char == '"' and not escaped:
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            stack.append("]" if char == "[" else "}")
        elif char in "]}" and stack:
            stack.pop()
    text = text + '"' if in_string else re.sub(r"[,:\s]*$", "", text)
    if text.endswith(":") or re.search(r'[{,]\s*"[^"]*"$', text) and stack and stack[-1] == "}":
        text = re.sub(r',?\s*"[^"]*"\s*:?$', "", text)  # a key without its value
    return text + "".join(reversed(stack))


def add_missing_commas(text: str) -> str:
    """A comma between a value that ends a line and a key or value that starts the next."""
    return re.sub(r'(["\]}])(\s*\n\s*")', r"\1,\2", text)


def drop_commas_and_comments(text: str) -> str:
    text = re.sub(r'("|\d|true|false|null|\]|\})(\s*,)?[ \t]*#[^\n]*', r"\1\2", text)
    return re.sub(r",(\s*[\]}])", r"\1", text)


def escape_strings(text: str) -> str:
    """Inside string literals: raw newlines and tabs escaped, control characters dropped,
    backslashes that do not start a valid JSON escape doubled (LaTeX such as `\\alpha`)."""
    out, in_string, i = [], False, 0
    while i < len(text):
        char = text[i]
        if not in_string:
            in_string = char == '"'
            out.append(char)
        elif char == "\\":
            follower = text[i + 1:i + 2]
            valid = follower and follower in '"\\/bfnrtu' and not _latex_word(text, i + 1)
            out.append(char + follower if valid else "\\\\")
            i += 2 if valid else 1
            continue
        elif char == '"':
            in_string = False
            out.append(char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif ord(char) >= 32:
            out.append(char)
        i += 1
    return "".join(out)


def _latex_word(text: str, at: int) -> bool:
    """`\\b`, `\\f`, `\\n`, `\\r`, `\\t` that start a word are LaTeX (\\beta, \\frac)."""
    return text[at] in "bfnrt" and text[at + 1:at + 2].isalpha()


REPAIRS = (
    lambda s: s,
    lambda s: drop_commas_and_comments(s),
    lambda s: escape_strings(drop_commas_and_comments(s)),
    lambda s: escape_strings(drop_commas_and_comments(add_missing_commas(s))),
)


def task_list(plan: dict[str, Any]) -> list[str]:
    """The files to write, in order (`Task list`), as strings."""
    tasks = plan.get("Task list")
    if not isinstance(tasks, list) or not tasks:
        raise PlanParseError("the task reply has no 'Task list'")
    return [str(task[0] if isinstance(task, list) and task else task).strip() for task in tasks]


def logic_analysis(plan: dict[str, Any]) -> dict[str, str]:
    """`Logic Analysis` as {file: description}."""
    found = {}
    for entry in plan.get("Logic Analysis") or []:
        if isinstance(entry, list) and entry:
            found[str(entry[0])] = str(entry[1]) if len(entry) > 1 else ""
    return found
