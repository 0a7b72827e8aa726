"""Repository index: everything the checks and evidence retrieval need, built once per repository.

`RepoIndex.build(root)` walks the repository (never following a symlink that leaves it, skipping
binaries and files over a size cap, decoding any bytes with replacement) and records:

- for Python (AST): definitions with line ranges, the calls inside each function in order,
  assignments with constant values (plain, annotated/dataclass fields, keyword defaults,
  argparse `add_argument` defaults, call keywords, dict literals), imports, and each line's role
  (code, comment, docstring) so comments and docstrings stay apart from executable code;
  a file that does not parse is kept as text with its error noted;
- for configs (YAML, JSON, TOML, INI): key paths with values and lines;
- every other text file as searchable lines;
- an inverted index from terms and normalised numbers to lines, for retrieval.
"""

from __future__ import annotations

import ast
import gc
import os
import re
import threading
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar

import numpy as np

from sabench.verifiers.numbers import number_keys
from sabench.verifiers.stubs import call_name, is_abstract, stub_reason
from sabench.verifiers.terms import term_set, terms
from sabench.verifiers.types import EvidenceKind

MAX_FILE_BYTES = 1_000_000
MAX_FILES = 20_000
MAX_TOTAL_BYTES = 200_000_000  # what one index may read in all; the rest is skipped, reported
_SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv", "venv", ".tox",
              ".mypy_cache", ".pytest_cache", ".ruff_cache", ".ipynb_checkpoints", "wandb"}
_BINARY_EXT = {".png", ".jpg", ".jpeg", ".gif", ".bmp", ".pdf", ".zip", ".gz", ".tgz", ".tar",
               ".pt", ".pth", ".ckpt", ".bin", ".safetensors", ".npy", ".npz", ".pkl", ".pickle",
               ".h5", ".hdf5", ".so", ".o", ".pyc", ".whl", ".mp4", ".wav", ".mp3", ".ttf",
               ".woff", ".ico", ".onnx", ".parquet", ".arrow", ".db", ".sqlite"}
_CONFIG_EXT = {".yaml": "yaml", ".yml": "yaml", ".json": "json", ".toml": "toml", ".ini": "ini",
               ".cfg": "ini", ".conf": "ini"}
_DOC_EXT = {".md", ".rst", ".txt", ".tex", ".html", ".htm", ""}
_DIGIT = re.compile(r"\d")
_EMPTY: frozenset[str] = frozenset()
_GAP = 8
_TEST_PART = re.compile(r"(?:^|/)(?:tests?|testing)(?:/|$)|(?:^|/)test_[^/]*$|_test\.py$")


@dataclass(slots=True)
class Definition:
    """A function, method or class with its line range and, for functions, its calls in order."""

    name: str
    qualname: str
    kind: str  # "function", "method", "class"
    file: str
    start: int
    end: int
    calls: list[tuple[str, int]] = field(default_factory=list)
    stub: str | None = None
    params: list[str] = field(default_factory=list)
    bases: list[str] = field(default_factory=list)  # a class's base classes, last name part


@dataclass(slots=True)
class Assignment:
    """A name or key bound to a constant value (or an expression, then `value` is None)."""

    name: str
    path: str
    value: Any
    file: str
    line: int
    source: str  # assign, field, default, argparse, kwarg, dict, config
    numbers: frozenset[str] = frozenset()


@dataclass(slots=True)
class SkippedFile:
    path: str
    reason: str


@dataclass(slots=True)
class FileEntry:
    """One indexed text file. `roles[i]` is the role of line i+1: code, comment, docstring,
    blank, config or docs."""

    path: str
    kind: EvidenceKind
    lang: str
    lines: list[str]
    roles: list[str]
    parse_error: str | None = None
    entry_point: bool = False

    def executable(self, line: int) -> bool:
        """Whether a 1-based line is executable code or a config value."""
        return self.roles[line - 1] in ("code", "config")


@contextmanager
def cycle_collection_paused() -> Iterator[None]:
    """Pause Python's cycle collector while a repository is indexed and checked.

    Scoring allocates millions of short-lived objects (line term sets, windows, tuples) that
    reference counting frees on its own; the collector's passes over them and over the long-lived
    term caches found almost nothing and took about a sixth of the scoring time. Cycles made in
    the meantime are collected once it runs again.
    """
    if not gc.isenabled():  # nested, or the caller manages the collector
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@dataclass
class RepoIndex:
    """The index of one repository; build it with `RepoIndex.build(root)`."""

    root: Path
    files: dict[str, FileEntry] = field(default_factory=dict)
    definitions: list[Definition] = field(default_factory=list)
    assignments: list[Assignment] = field(default_factory=list)
    imports: list[tuple[str, str, int]] = field(default_factory=list)
    module_calls: list[tuple[str, str, int]] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)
    # term / number key -> global line ids holding it (see `locate`); terms' ids ascend
    term_lines: dict[str, list[int]] = field(default_factory=dict)
    number_lines: dict[str, list[int]] = field(default_factory=dict)
    line_terms: dict[str, list[frozenset[str]]] = field(default_factory=dict)
    line_numbers: dict[str, list[frozenset[str]]] = field(default_factory=dict)
    line_offset: dict[str, int] = field(default_factory=dict)
    _term_ids: dict[str, np.ndarray | None] = field(default_factory=dict, repr=False)
    _number_ids: dict[str, np.ndarray | None] = field(default_factory=dict, repr=False)
    global_file: list[str] = field(default_factory=list, repr=False)
    n_global: int = 0
    _owners: dict[str, list[Definition | None]] = field(default_factory=dict, repr=False)
    cache: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def build(cls, root: Path, max_file_bytes: int = MAX_FILE_BYTES,
              max_files: int = MAX_FILES) -> RepoIndex:
        """Index the repository at `root` (a folder; see `judge.check_repository`).

        Args:
            root: repository folder.
            max_file_bytes: larger files are skipped and reported in `skipped`.
            max_files: files beyond this count are skipped and reported.
        """
        index = cls(root=Path(root).resolve())
        budget = MAX_TOTAL_BYTES
        for rel, path in _walk(index.root, index.skipped, max_files):
            if budget <= 0:
                index.skipped.append(SkippedFile(rel, f"over the {MAX_TOTAL_BYTES}-byte total"))
                continue
            data = _read(path, rel, index.skipped, min(max_file_bytes, budget))
            if data is not None:
                budget -= len(data)
                index._add_file(rel, data)
        index._build_inverted()
        return index

    def release(self) -> None:
        """Drop the per-repository caches, among them the searches that refer back to the
        index, so that the index is freed as soon as its last user lets go of it."""
        self.cache.clear()

    # ----------------------------------------------------------------- queries
    def definitions_in(self, file: str) -> list[Definition]:
        return [d for d in self.definitions if d.file == file]

    def functions(self) -> list[Definition]:
        return [d for d in self.definitions if d.kind != "class"]

    def enclosing(self, file: str, line: int) -> Definition | None:
        """The innermost function or method containing a line."""
        owners = self._owners.get(file)
        if owners is None:
            owners = self._owners[file] = _owner_table(self, file)
        return owners[line - 1] if 0 < line <= len(owners) else None

    def executable_lines(self) -> int:
        return sum(role in ("code", "config") for f in self.files.values() for role in f.roles)

    def window(self, file: str, start: int, end: int) -> str:
        lines = self.files[file].lines
        return "\n".join(lines[max(0, start - 1):end])

    # ----------------------------------------------------------------- building
    def _add_file(self, rel: str, text: str) -> None:
        lines = text.splitlines() or [""]
        suffix = PurePosixPath(rel).suffix.lower()
        kind = _kind_of(rel, suffix)
        if suffix == ".py":
            entry = self._add_python(rel, text, lines, kind)
        elif suffix in _CONFIG_EXT:
            entry = FileEntry(rel, kind, _CONFIG_EXT[suffix], lines, _config_roles(lines))
            for path, value, line in parse_config(lines, _CONFIG_EXT[suffix]):
                self._assign(path.rsplit(".", 1)[-1], path, value, rel, line, "config")
        else:
            role = "code" if suffix in (".sh", ".bash") else "docs"
            entry = FileEntry(rel, kind, suffix.lstrip(".") or "text", lines,
                              [role if ln.strip() else "blank" for ln in lines])
            entry.entry_point = suffix in (".sh", ".bash")
        self.files[rel] = entry

    def _add_python(self, rel: str, text: str, lines: list[str], kind: EvidenceKind) -> FileEntry:
        roles = ["blank" if not ln.strip() else "comment" if ln.lstrip().startswith("#")
                 else "code" for ln in lines]
        entry = FileEntry(rel, kind, "python", lines, roles)
        tree, entry.parse_error = parse_tolerant(text)
        if tree is None:
            return entry
        try:
            _PythonVisitor(self, rel, roles).visit(tree)
        except RecursionError:
            entry.parse_error = "RecursionError: syntax tree too deep"
        entry.entry_point = "__main__" in text or PurePosixPath(rel).stem in (
            "main", "train", "run", "pipeline", "experiment", "evaluate", "eval")
        return entry

    def _assign(self, name: str, path: str, value: Any, file: str, line: int, source: str) -> None:
        nums = frozenset(number_keys(_value_text(value))) if value is not None else frozenset()
        self.assignments.append(Assignment(name, path, value, file, line, source, nums))

    def _build_inverted(self) -> None:
        self._build_arrays()
        term_lines: dict[str, list[int]] = defaultdict(list)
        number_lines: dict[str, list[int]] = defaultdict(list)
        for rel, entry in self.files.items():
            per_line: list[frozenset[str]] = []
            per_line_numbers: list[frozenset[str]] = []
            for gid, line in enumerate(entry.lines, self.line_offset[rel]):
                found = term_set(line) if line.strip() else _EMPTY
                per_line.append(found)
                for term in found:
                    term_lines[term].append(gid)
                keys = _line_numbers(line) if _DIGIT.search(line) else _EMPTY
                per_line_numbers.append(keys)
                for key in keys:
                    number_lines[key].append(gid)
            self.line_terms[rel] = per_line
            self.line_numbers[rel] = per_line_numbers
        # Values computed by the AST (`h = 1 / 40`) are findable at their assignment line.
        for a in self.assignments:
            for key in a.numbers:
                known = self.line_numbers[a.file][a.line - 1] if a.line else _EMPTY
                if a.line and key not in known:
                    number_lines[key].append(self.line_offset[a.file] + a.line - 1)
                    self.line_numbers[a.file][a.line - 1] = known | {key}
        self.term_lines = dict(term_lines)
        self.number_lines = dict(number_lines)

    def _build_arrays(self) -> None:
        """Global line ids (files laid end to end with a gap, so no window spans two files)."""
        offset = 0
        for rel, entry in self.files.items():
            self.line_offset[rel] = offset
            offset += len(entry.lines) + _GAP
        self.n_global = offset
        self.global_file = [""] * offset
        for rel, entry in self.files.items():
            start = self.line_offset[rel]
            self.global_file[start:start + len(entry.lines)] = [rel] * len(entry.lines)

    def term_ids(self, term: str) -> np.ndarray | None:
        """Sorted global line ids holding `term` (None when none does); built on first use,
        since claims ask for a few hundred of a repository's thousands of terms."""
        return self._global_ids(self._term_ids, self.term_lines, term)

    def number_ids(self, key: str) -> np.ndarray | None:
        """Sorted global line ids holding the number `key` (None when none does)."""
        return self._global_ids(self._number_ids, self.number_lines, key)

    @staticmethod
    def _global_ids(cache: dict[str, np.ndarray | None], lines: dict[str, list[int]],
                    key: str) -> np.ndarray | None:
        if key not in cache:
            where = lines.get(key)
            cache[key] = None if where is None else np.unique(np.array(where, dtype=np.int64))
        return cache[key]

    def locate(self, gid: int) -> tuple[str, int]:
        """(file, 1-based line) of a global line id."""
        file = self.global_file[gid]
        return file, gid - self.line_offset[file] + 1


def _owner_table(index: RepoIndex, file: str) -> list[Definition | None]:
    """For each line of a file, the innermost function containing it (outer ones first)."""
    table: list[Definition | None] = [None] * len(index.files[file].lines)
    funcs = sorted((d for d in index.definitions if d.file == file and d.kind != "class"),
                   key=lambda d: d.start)
    for d in funcs:  # later (inner) definitions overwrite the lines of outer ones
        for no in range(d.start, min(d.end, len(table)) + 1):
            table[no - 1] = d
    return table


# --------------------------------------------------------------------- python visitor
# Nodes with nothing below them that the visitor records: names, constants, contexts and
# operators (about half of all nodes), skipped rather than visited.
_LEAVES = frozenset({ast.Name, ast.Constant, ast.Load, ast.Store, ast.Del, ast.alias,
                     *(cls for base in (ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
                       for cls in base.__subclasses__())})


class _PythonVisitor(ast.NodeVisitor):
    """Collects definitions, calls, assignments, imports and docstring lines of one file."""

    def __init__(self, index: RepoIndex, file: str, roles: list[str]) -> None:
        self.index, self.file, self.roles = index, file, roles
        self.scope: list[str] = []
        self.current: list[Definition] = []

    def visit(self, node: ast.AST) -> None:
        handler = self._HANDLERS.get(type(node))
        if handler is not None:
            handler(self, node)
        else:
            self.generic_visit(node)

    def generic_visit(self, node: ast.AST) -> None:
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST) and type(item) not in _LEAVES:
                        self.visit(item)
            elif isinstance(value, ast.AST) and type(value) not in _LEAVES:
                self.visit(value)

    def _mark_docstring(self, body: list[ast.stmt]) -> None:
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            for no in range(body[0].lineno, (body[0].end_lineno or body[0].lineno) + 1):
                self.roles[no - 1] = "docstring"

    def visit_Module(self, node: ast.Module) -> None:
        self._mark_docstring(node.body)
        self.generic_visit(node)

    def _define(self, node: ast.AST, kind: str) -> Definition:
        name = node.name  # type: ignore[attr-defined]
        qual = ".".join([*self.scope, name])
        d = Definition(name, qual, kind, self.file, node.lineno,  # type: ignore[attr-defined]
                       node.end_lineno or node.lineno)  # type: ignore[attr-defined]
        self.index.definitions.append(d)
        return d

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        d = self._define(node, "class")
        d.bases = [b.attr if isinstance(b, ast.Attribute) else b.id for b in node.bases
                   if isinstance(b, (ast.Attribute, ast.Name))]
        self._mark_docstring(node.body)
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        in_class = bool(self.scope) and not self.current
        d = self._define(node, "method" if in_class else "function")
        d.stub = None if is_abstract(node) else stub_reason(node)
        d.params = [a.arg for a in node.args.args + node.args.kwonlyargs]
        self._mark_docstring(node.body)
        self._defaults(node, d.qualname)
        self.scope.append(node.name)
        self.current.append(d)
        self.generic_visit(node)
        self.current.pop()
        self.scope.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def _defaults(self, node: ast.FunctionDef | ast.AsyncFunctionDef, qual: str) -> None:
        args = node.args
        positional = args.posonlyargs + args.args
        for arg, default in zip(positional[len(positional) - len(args.defaults):], args.defaults,
                                strict=True):
            self._record(arg.arg, f"{qual}.{arg.arg}", default, "default")
        for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
            if default is not None:
                self._record(arg.arg, f"{qual}.{arg.arg}", default, "default")

    def _record(self, name: str, path: str, node: ast.AST, source: str) -> None:
        value = const_value(node)
        if value is _NO_VALUE and isinstance(node, ast.Call) and call_name(node) in (
                "field", "Field") and node.keywords:
            for kw in node.keywords:
                if kw.arg == "default":
                    value = const_value(kw.value)
                elif kw.arg == "default_factory" and isinstance(kw.value, ast.Lambda):
                    value = const_value(kw.value.body)  # `lambda: [0.0, 1.0, 4.0]`
        self.index._assign(name, path, None if value is _NO_VALUE else value, self.file,
                           node.lineno if hasattr(node, "lineno") else 0, source)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._target(target, node.value, "assign")
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self._target(node.target, node.value, "field" if self.scope and not self.current
                         else "assign")
        self.generic_visit(node)

    def _target(self, target: ast.AST, value: ast.AST, source: str) -> None:
        name = _target_name(target)
        if name:
            self._record(name, ".".join([*self.scope, name]), value, source)

    def visit_Dict(self, node: ast.Dict) -> None:
        for key, value in zip(node.keys, node.values, strict=True):
            if isinstance(key, ast.Constant) and isinstance(key.value, str) and \
                    not isinstance(value, ast.Dict):
                self._record(key.value, key.value, value, "dict")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        name = call_name(node)
        if self.current:
            self.current[-1].calls.append((name, node.lineno))
        elif not self.scope:
            self.index.module_calls.append((self.file, name, node.lineno))
        if name == "add_argument":
            self._argparse(node)
        for kw in node.keywords:
            if kw.arg and kw.arg not in ("default", "help", "type", "dest"):
                self._record(kw.arg, f"{name}.{kw.arg}", kw.value, "kwarg")
        self.generic_visit(node)

    def _argparse(self, node: ast.Call) -> None:
        flags = [a.value for a in node.args if isinstance(a, ast.Constant)
                 and isinstance(a.value, str)]
        default = next((kw.value for kw in node.keywords if kw.arg == "default"), None)
        if flags and default is not None:
            name = max(flags, key=len).lstrip("-").replace("-", "_")
            self._record(name, f"args.{name}", default, "argparse")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.index.imports.append((self.file, alias.name, node.lineno))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.index.imports.append((self.file, node.module or "", node.lineno))

    def visit_Expr(self, node: ast.Expr) -> None:
        # A bare string in the middle of code is documentation too.
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for no in range(node.lineno, (node.end_lineno or node.lineno) + 1):
                self.roles[no - 1] = "docstring"
        self.generic_visit(node)

    # Dispatch by node type (NodeVisitor's name lookup per node is the slow part); a table of
    # plain functions, as bound methods kept on the visitor would tie it (and the index) into
    # a reference cycle.
    _HANDLERS: ClassVar[dict[type, Callable[[_PythonVisitor, Any], None]]] = {
        ast.Module: visit_Module, ast.ClassDef: visit_ClassDef,
        ast.FunctionDef: visit_FunctionDef, ast.AsyncFunctionDef: visit_FunctionDef,
        ast.Assign: visit_Assign, ast.AnnAssign: visit_AnnAssign, ast.Dict: visit_Dict,
        ast.Call: visit_Call, ast.Import: visit_Import, ast.ImportFrom: visit_ImportFrom,
        ast.Expr: visit_Expr}


_NO_VALUE = object()
_FENCE = re.compile(r"^\s*```.*$", re.MULTILINE)


def parse_tolerant(text: str) -> tuple[ast.Module | None, str | None]:
    """Parse Python that may be wrapped in markdown fences or cut off at the end.

    Returns:
        The tree (of the whole file, else of the part before the first error) and the error
        message when the file as a whole does not parse.
    """
    try:
        return _parse(text), None
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        error = f"{type(exc).__name__}: {exc}"[:200]
        lineno = getattr(exc, "lineno", None)
    # Agents often wrap files in ```python fences; blanking them keeps line numbers.
    unfenced = _FENCE.sub("", text)
    for attempt in (unfenced, _cut(unfenced, lineno)):
        try:
            return _parse(attempt), error
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            lineno = getattr(exc, "lineno", None)
    return (_try(_cut(unfenced, lineno)), error)


#: CPython up to 3.12 keeps `ast.parse`'s recursion depth in shared state, so two threads
#: parsing at once can fail with "SystemError: AST constructor recursion depth mismatch"
#: (gh-106905); LangGraph runs parallel branches (`Send`) in threads, so every parse of ours
#: goes through `parse_python` and this lock.
_AST_LOCK = threading.Lock()


def parse_python(text: str, mode: str = "exec") -> ast.AST:
    """`ast.parse`, one thread at a time, without the warnings the scored code earns (invalid
    escape sequences and the like): they are the repository's business, not lines on the
    user's console."""
    with _AST_LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return ast.parse(text, mode=mode)


def parse_recovering(text: str, limit: int = 60) -> ast.Module | None:
    """The tree of a file that does not parse as a whole, with each line that breaks it
    (one at a time, at most `limit`) replaced by `pass` at its indentation, or blanked where
    its indentation is the error: a broken line in the middle of a file hides none of the
    code after it, as cutting the file there would. None when no tree comes of it."""
    lines = _FENCE.sub("", text).split("\n")
    for _ in range(limit):
        try:
            return _parse("\n".join(lines))
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            number = getattr(exc, "lineno", None)
            if not isinstance(exc, SyntaxError) or not number or number > len(lines):
                return None
            line = lines[number - 1]
            indent = line[:len(line) - len(line.lstrip())]
            mended = "" if "indent" in str(exc.msg) else f"{indent}pass"
            if line == mended:
                return None
            lines[number - 1] = mended
    return None


def _parse(text: str) -> ast.Module:
    return parse_python(text)  # type: ignore[return-value]


def _cut(text: str, lineno: int | None) -> str:
    if not lineno or lineno <= 1:
        return ""
    return "\n".join(text.splitlines()[: lineno - 1])


def _try(text: str) -> ast.Module | None:
    try:
        return _parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def const_value(node: ast.AST) -> Any:
    """The constant a simple expression evaluates to (`3e-4`, `-1`, `1/40`, `(0.9, 0.95)`,
    `int(1e6)`), or `_NO_VALUE` when it is not a constant."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = const_value(node.operand)
        if isinstance(inner, (int, float)) and not isinstance(inner, bool):
            return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, (ast.Tuple, ast.List)):
        items = [const_value(elt) for elt in node.elts[:64]]
        return _NO_VALUE if any(i is _NO_VALUE for i in items) else items
    if isinstance(node, ast.BinOp):
        return _binop(node)
    if isinstance(node, ast.Call) and call_name(node) in ("int", "float") and len(node.args) == 1:
        inner = const_value(node.args[0])
        if isinstance(inner, (int, float)):
            return inner
    return _NO_VALUE


def _binop(node: ast.BinOp) -> Any:
    left, right = const_value(node.left), const_value(node.right)
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (left, right)):
        return _NO_VALUE
    try:
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        if isinstance(node.op, ast.Mult):
            return left * right
        if isinstance(node.op, ast.Div):
            return left / right
        if isinstance(node.op, ast.Pow) and abs(right) <= 64:
            return left ** right
    except (ZeroDivisionError, OverflowError):
        return _NO_VALUE
    return _NO_VALUE


def _target_name(target: ast.AST) -> str:
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute):
        return target.attr
    if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant) and \
            isinstance(target.slice.value, str):
        return target.slice.value
    return ""


def _value_text(value: Any) -> str:
    if isinstance(value, bool):
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


# --------------------------------------------------------------------- configs
_YAML_KEY = re.compile(r"^(\s*)(?:-\s+)?[\"']?([\w.\-/ ]+?)[\"']?\s*:\s*(.*?)\s*$")
_INI_KEY = re.compile(r"^\s*[\"']?([\w.\-]+)[\"']?\s*[=:]\s*(.*?)\s*$")
_SECTION = re.compile(r"^\s*\[+\s*([^\]]+?)\s*\]+\s*$")


def parse_config(lines: list[str], lang: str) -> list[tuple[str, str, int]]:
    """Key paths, value texts and line numbers of a YAML/JSON/TOML/INI file.

    A line scanner rather than a full parser so that every key keeps its line number and a
    malformed file still yields what can be read. YAML and JSON nest by indentation; TOML and
    INI by `[section]` headers. List items under a key are reported under that key.
    """
    if lang in ("toml", "ini"):
        return _scan_sections(lines)
    out: list[tuple[str, str, int]] = []
    stack: list[tuple[int, str]] = []
    for no, raw in enumerate(lines, 1):
        line = raw.split(" #", 1)[0] if lang == "yaml" else raw
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _YAML_KEY.match(line)
        indent = len(line) - len(line.lstrip())
        if match:
            key, value = match.group(2).strip(), match.group(3).rstrip(",").strip()
            while stack and stack[-1][0] >= indent:
                stack.pop()
            path = ".".join([s for _, s in stack] + [key])
            if value in ("", "{", "[") or value.startswith("&"):
                stack.append((indent, key))
            out.append((path, value.strip("\"'"), no))
        elif stack and line.strip().lstrip("- ").strip(",[]{}\"'"):
            out.append((".".join(s for _, s in stack), line.strip().lstrip("- ").rstrip(","), no))
    return out


def _scan_sections(lines: list[str]) -> list[tuple[str, str, int]]:
    out: list[tuple[str, str, int]] = []
    section = ""
    for no, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith(("#", ";")):
            continue
        header = _SECTION.match(line)
        if header:
            section = header.group(1)
            continue
        match = _INI_KEY.match(line)
        if match:
            key = f"{section}.{match.group(1)}" if section else match.group(1)
            out.append((key, match.group(2).strip("\"'"), no))
    return out


def _config_roles(lines: list[str]) -> list[str]:
    return ["blank" if not ln.strip() else "comment" if ln.lstrip().startswith(("#", ";", "//"))
            else "config" for ln in lines]


# --------------------------------------------------------------------- files
def _kind_of(rel: str, suffix: str) -> EvidenceKind:
    if _TEST_PART.search(rel):
        return EvidenceKind.TEST
    if suffix == ".py" or suffix in (".sh", ".bash"):
        return EvidenceKind.CODE
    if suffix in _CONFIG_EXT:
        return EvidenceKind.CONFIG
    return EvidenceKind.DOCS


def _walk(root: Path, skipped: list[SkippedFile], max_files: int):
    """Yield (relative posix path, path) of regular files; iterative, so deep trees are fine."""
    stack = [root]
    count = 0
    while stack:
        folder = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            skipped.append(SkippedFile(_rel(root, Path(folder)), f"unreadable folder: {exc}"))
            continue
        subdirs = []
        for entry in entries:
            rel = _rel(root, Path(entry.path))
            if entry.is_symlink():
                target = _inside(root, Path(entry.path))
                if target is None:
                    skipped.append(SkippedFile(rel, "symlink leaving the repository"))
                    continue
                if target.is_dir():
                    skipped.append(SkippedFile(rel, "symlinked folder not followed"))
                    continue
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in _SKIP_DIRS:
                    subdirs.append(Path(entry.path))
                continue
            if not entry.is_file():
                continue
            count += 1
            if count > max_files:
                skipped.append(SkippedFile(rel, f"over the {max_files}-file limit"))
                continue
            yield rel, Path(entry.path)
        stack.extend(reversed(subdirs))


def _rel(root: Path, path: Path) -> str:
    """The repository-relative name; bytes that are not UTF-8 shown as `\\xff` escapes, so
    results and reports (JSON, HTML) can carry every name."""
    rel = path.relative_to(root).as_posix()
    return rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _inside(root: Path, path: Path) -> Path | None:
    """The resolved target of a symlink if it stays inside the repository, else None."""
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    return target if target.is_relative_to(root) else None


def _read(path: Path, rel: str, skipped: list[SkippedFile], cap: int) -> str | None:
    """The decoded text of a file, or None (and a skip record) for binaries and huge files."""
    if path.suffix.lower() in _BINARY_EXT:
        skipped.append(SkippedFile(rel, "binary file"))
        return None
    try:
        size = path.stat().st_size
        if size > cap:
            skipped.append(SkippedFile(rel, f"larger than {cap} bytes ({size})"))
            return None
        data = path.read_bytes()
    except OSError as exc:
        skipped.append(SkippedFile(rel, f"unreadable: {exc}"))
        return None
    return decode(data, rel, skipped)


def decode(data: bytes, rel: str = "", skipped: list[SkippedFile] | None = None) -> str | None:
    """Text from bytes: UTF-8 (BOM aware), UTF-16 with a BOM, else UTF-8 with replacement.

    Binary data (NUL bytes without a UTF-16 BOM) gives None and a skip record.
    """
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    if b"\x00" in data[:8192]:
        if skipped is not None:
            skipped.append(SkippedFile(rel, "binary file"))
        return None
    return data.decode("utf-8-sig", errors="replace")


@lru_cache(maxsize=100_000)
def _line_numbers(line: str) -> frozenset[str]:
    return frozenset(number_keys(line))


def text_terms(text: str) -> list[str]:
    """Re-exported for callers that tokenise evidence the same way as the index."""
    return terms(text)
