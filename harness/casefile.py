"""A case file, read once: the one reader every capability asks about a case's text.

A case module is a story first (title, symptom, the broken code, why, the fix, where it comes
from) and, in one final section headed ``## How the harness checks it``, what only the harness
needs: ``symptom``, ``near_miss``, ``check``, ``stable`` and ``CASE = Case(...)``. This module
parses the file once (one ``ast.parse``; jupytext for the cells, only when cells are asked for,
so the linter never imports it) and answers what lint, watch's explainer, the docs site and
``pitfalls show`` ask: the title, the story's sections, each variant's program and line range,
the patterns its symptom asks of errors and warnings, the fix's paragraph, the version ranges.
Nothing here imports the case or torch.
"""

from __future__ import annotations

import ast
import functools
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

HARNESS_HEADING = "## How the harness checks it"  # where the story ends and the harness's part begins
HARNESS_DEFS = ("symptom", "check", "near_miss", "stable")  # what the harness calls, never the reader
VARIANTS = ("broken", "fixed", "near_miss")
RUNNERS = ("compile", "exec", "eval", "run_python")  # what runs a program a case keeps in a string
# Where each name a case imports from the package lives (its lazy exports, and the notebook's inlining).
HELPER_MODULES = {
    "communicate": "torch_pitfalls.helpers",
    "ops_called": "torch_pitfalls.helpers",
    "run_python": "torch_pitfalls.helpers",
    "run_pythons": "torch_pitfalls.helpers",
    "saved_bytes": "torch_pitfalls.helpers",
    "seeded": "torch_pitfalls.helpers",
    "reseed": "torch_pitfalls.helpers",
    "observe": "torch_pitfalls.observation",
    "Observation": "torch_pitfalls.observation",
}


class CaseFileError(ValueError):
    """A case file that cannot be read as one: it names the file and what is wrong."""


@dataclass(frozen=True)
class Cell:
    kind: str  # "markdown" or "code"
    source: str  # markdown without the comment markers; code as written
    tags: tuple[str, ...]
    harness: bool  # in the harness's section (after HARNESS_HEADING)


def _defined(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return set()


def _used(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


class CaseFile:
    """One case file's text, its syntax tree and what they say (see the module's docstring)."""

    def __init__(self, path: Path | str, text: str | None = None):
        self.path = Path(path)
        self.text = self.path.read_text(encoding="utf-8") if text is None else text

    @functools.cached_property
    def tree(self) -> ast.Module:
        try:
            return ast.parse(self.text, str(self.path))
        except SyntaxError as e:
            raise CaseFileError(f"{self.path}: does not parse: {e.msg} (line {e.lineno})") from None

    @functools.cached_property
    def _defs(self) -> dict[str, ast.stmt]:
        return {name: node for node in self.tree.body for name in _defined(node)}

    # -- the story --------------------------------------------------------------------------------

    @functools.cached_property
    def cells(self) -> tuple[Cell, ...]:
        import jupytext  # the percent-format reader; only the site and `show` need cells

        notebook = jupytext.reads(self.text, fmt="py:percent")
        out, harness = [], False
        for cell in notebook.cells:
            if cell.cell_type == "markdown" and any(
                line.strip() == HARNESS_HEADING for line in cell.source.splitlines()
            ):
                harness = True
            out.append(Cell(cell.cell_type, cell.source, tuple(cell.metadata.get("tags", ())), harness))
        return tuple(out)

    @functools.cached_property
    def story_cells(self) -> tuple[Cell, ...]:
        return tuple(c for c in self.cells if not c.harness)

    @functools.cached_property
    def harness_cells(self) -> tuple[Cell, ...]:
        return tuple(c for c in self.cells if c.harness)

    @functools.cached_property
    def markdown(self) -> str:
        """The story's prose, as one Markdown text (its comment markers removed)."""
        lines, inside = [], False
        for line in self.text.splitlines():
            if line.startswith("# %%"):
                inside = "[markdown]" in line
                continue
            if inside:
                if line.strip() == f"# {HARNESS_HEADING}":
                    break
                lines.append(line[2:] if line.startswith("# ") else line.lstrip("#"))
        return "\n".join(lines)

    @functools.cached_property
    def sections(self) -> dict[str, str]:
        """Each ``##`` heading of the story and its text (the title's paragraph under ``""``)."""
        out, name, body = {}, "", []
        for line in self.markdown.splitlines():
            heading = re.match(r"##\s+(.+?)\s*$", line)
            if heading:
                out[name] = "\n".join(body).strip()
                name, body = heading.group(1), []
            elif not line.startswith("# "):
                body.append(line)
        out[name] = "\n".join(body).strip()
        return out

    @property
    def fix_paragraph(self) -> str:
        """The first paragraph of "The fix", joined into one line."""
        return " ".join(self.sections.get("The fix", "").split("\n\n")[0].split())

    # -- the facts --------------------------------------------------------------------------------

    @functools.cached_property
    def case_call(self) -> ast.Call:
        node = self._defs.get("CASE") if "tree" in self.__dict__ else self._case_statement()
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and getattr(node.value.func, "id", None) == "Case"
        ):
            return node.value
        raise CaseFileError(f"{self.path}: no CASE = Case(...) at module level")

    def _case_statement(self) -> ast.stmt | None:
        """``CASE = Case(...)`` read alone, from its line to the end of the file: a linter run asks
        every rule's case for its version ranges, and parsing a case's whole story for them was a
        third of a second at each start. Where the text has no such line, or that tail does not
        parse alone, the whole file is read as before."""
        at = self.text.find("\nCASE = Case(")
        if at < 0:
            return self._defs.get("CASE")
        try:
            body = ast.parse(self.text[at + 1 :]).body
        except SyntaxError:
            return self._defs.get("CASE")
        return body[0] if body else None

    def fact(self, name: str):
        """A literal keyword of ``Case(...)`` (``title``, ``kind``, ``devices``...), or None."""
        for kw in self.case_call.keywords:
            if kw.arg == name:
                try:
                    return ast.literal_eval(kw.value)
                except ValueError:
                    return None
        return None

    @property
    def title(self) -> str:
        return str(self.fact("title") or "")

    @functools.cached_property
    def affects_ranges(self) -> tuple[str, ...]:
        """The ``versions`` of every ``Affects`` of ``affects`` (``"*"`` where none is given)."""
        node = next((k.value for k in self.case_call.keywords if k.arg == "affects"), None)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return (node.value,)
        if isinstance(node, (ast.Tuple, ast.List)):
            out = []
            for entry in node.elts:
                if isinstance(entry, ast.Call):
                    given = [k.value for k in entry.keywords if k.arg == "versions"] + entry.args[:1]
                    out.append(given[0].value if given and isinstance(given[0], ast.Constant) else "*")
            return tuple(out)
        return ("*",)

    # -- the variants -----------------------------------------------------------------------------

    def variant_nodes(self, variant: str) -> list[ast.stmt]:
        """The module-level statements of one variant's program: the imports, the variant function
        and the definitions it refers to, transitively, in source order."""
        if variant not in self._defs:
            raise CaseFileError(f"{self.path}: no function {variant}()")
        keep, todo = set(), [variant]
        while todo:
            node = self._defs.get(todo.pop())
            if node is None or id(node) in keep:
                continue
            keep.add(id(node))
            todo.extend(_used(node) - {variant})
        return [n for n in self.tree.body if isinstance(n, (ast.Import, ast.ImportFrom)) or id(n) in keep]

    def variant_source(self, variant: str) -> str:
        """The source text of one variant's program: what a linter reads as that program."""
        body = self.variant_nodes(variant)
        return "\n\n".join(self._segment(n) for n in body) + "\n"

    @functools.cached_property
    def _utf8_lines(self) -> list[bytes]:
        """The text's lines as UTF-8 (ast's column offsets count bytes)."""
        return [line.encode() for line in self.text.splitlines(keepends=True)]

    def _segment(self, node: ast.AST) -> str:
        """``ast.get_source_segment(self.text, node)``, from lines split once (that function splits
        the whole file on every call: most of the time the linter's bench spent reading cases)."""
        lines = self._utf8_lines
        first, last, start = node.lineno - 1, node.end_lineno - 1, node.col_offset
        decorators = getattr(node, "decorator_list", None)
        if decorators:  # a definition's source starts at its first decorator's @ (ast's starts at def)
            first, start = min(d.lineno for d in decorators) - 1, node.col_offset
        if first == last:
            return lines[first][start : node.end_col_offset].decode()
        parts = [lines[first][start:], *lines[first + 1 : last], lines[last][: node.end_col_offset]]
        return b"".join(parts).decode()

    def variant_programs(self, variant: str) -> list[tuple[str, str]]:
        """(label, source) of every program a variant is: its view, and each module-level string it
        hands to compile/exec/eval/run_python (a case about code that cannot be imported keeps it in
        a string: ``.cuda(async=True)``)."""
        view = self.variant_source(variant)
        tree = ast.parse(view)
        strings = {
            n.targets[0].id: n.value.value
            for n in tree.body
            if isinstance(n, ast.Assign)
            and len(n.targets) == 1
            and isinstance(n.targets[0], ast.Name)
            and isinstance(n.value, ast.Constant)
            and isinstance(n.value.value, str)
        }
        programs = [(f"{self.path.stem}.{variant}.py", view)]
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", getattr(node.func, "attr", None)) in RUNNERS
                and node.args
            ):
                arg = node.args[0]
                if isinstance(arg, ast.Name) and arg.id in strings:
                    programs.append((f"{self.path.stem}.{variant}.{arg.id}.py", strings[arg.id]))
        # A fragment of code the variant itself hands to a helper of the case that runs it in a child
        # interpreter (``_export_in_child(LEGACY_CALL)``): the statements the reader is shown as that
        # variant's code, a program of their own once dedented, under the case's imports.
        own = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == variant), None)
        imports = "".join(ast.unparse(n) + "\n" for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)))
        imports += _string_imports(tree)
        for node in ast.walk(own) if own is not None else ():
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) not in RUNNERS:
                for arg in node.args:
                    fragment = _code_fragment(strings.get(arg.id)) if isinstance(arg, ast.Name) else None
                    if fragment is not None:
                        programs.append((f"{self.path.stem}.{variant}.{arg.id}.py", imports + fragment))
        return programs

    def uses_device(self, variant: str) -> bool:
        """Whether the variant's own body reads its ``device`` argument (handing it to a helper is
        a read): a variant that never does runs the same on every device."""
        node = self._defs.get(variant)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not node.args.args:
            return False
        name = node.args.args[0].arg
        return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in ast.walk(node))

    # -- what the symptom asks ----------------------------------------------------------------------

    def defined_names(self) -> tuple[frozenset[str], frozenset[str]]:
        """(functions, classes) the case's code defines anywhere, the harness's own names aside."""
        functions, classes = set(), set()
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name not in HARNESS_DEFS + VARIANTS:
                functions.add(node.name)
            elif isinstance(node, ast.ClassDef):
                classes.add(node.name)
        return frozenset(functions), frozenset(classes)

    @functools.cached_property
    def _constants(self) -> dict[str, object]:
        """Module-level names bound once to a literal (``C = 3``, ``SHAPE = "2x3"``)."""
        bound: dict[str, list] = {}
        for node in self.tree.body:
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
                continue
            target, value = node.targets[0], node.value
            if isinstance(target, ast.Name):
                bound.setdefault(target.id, []).append(value)
            elif isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
                for name, item in zip(target.elts, value.elts):  # N, H, W = 2, 6, 8
                    if isinstance(name, ast.Name):
                        bound.setdefault(name.id, []).append(item)
        return {
            name: values[0].value
            for name, values in bound.items()
            if len(values) == 1 and isinstance(values[0], ast.Constant)
        }

    def _string(self, node: ast.AST) -> str | None:
        """A string literal, or an f-string whose every value is such a constant (formatted as
        Python would); None for anything known only at run time."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if not isinstance(node, ast.JoinedStr):
            return None
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            elif (
                isinstance(value, ast.FormattedValue)
                and isinstance(value.value, ast.Name)
                and value.value.id in self._constants
                and value.conversion == -1
                and value.format_spec is None
            ):
                parts.append(format(self._constants[value.value.id]))
            else:
                return None
        return "".join(parts)

    @functools.cached_property
    def _raised_arguments(self) -> tuple[ast.AST, ...]:
        """The pattern argument of every ``run.raised(type, pattern)`` call of the file."""
        return tuple(
            node.args[1]
            for node in ast.walk(self.tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "raised"
            and len(node.args) > 1
        )

    @functools.cached_property
    def pinned_patterns(self) -> tuple[str, ...]:
        """The ``run.raised`` patterns built from the case's own constants (``rf"got {H} channels"``):
        they ask for values its program chose, which a user's program does not share."""
        found = (self._string(arg) for arg in self._raised_arguments if isinstance(arg, ast.JoinedStr))
        return tuple(p for p in found if p is not None)

    @functools.cached_property
    def raised_patterns(self) -> tuple[str, ...]:
        """The patterns of the case's ``run.raised(type, pattern)`` calls that the file fixes: a
        literal, or an f-string of module-level constants (``rf"got {C} channels"``)."""
        return tuple(p for p in map(self._string, self._raised_arguments) if p is not None)

    @functools.cached_property
    def warned_patterns(self) -> tuple[str | None, ...]:
        """The message patterns the case asks of warnings: the second argument of
        ``run.warned(category, pattern)``, the first of ``run.warned_as(pattern, ...)``; a pattern held
        in a variable is looked up among the file's string assignments to that name (None: any)."""
        strings: dict[str, list[str]] = {}
        for node in ast.walk(self.tree):
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            ):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        strings.setdefault(target.id, []).append(node.value.value)
        found: list[str | None] = []
        for node in ast.walk(self.tree):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("warned", "warned_as")
            ):
                continue
            index = 0 if node.func.attr == "warned_as" else 1
            arg = (
                node.args[index]
                if len(node.args) > index
                else next((k.value for k in node.keywords if k.arg == "pattern"), None)
            )
            if arg is None:
                found.append(None)
            elif isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                found.append(arg.value)
            elif isinstance(arg, ast.Name) and arg.id in strings:
                found += strings[arg.id]
            else:
                found.append(None)  # a pattern built at run time: it could be any
        return tuple(found)


def statements_of(source: str) -> list[tuple[ast.stmt, str, int]]:
    """A code cell's top-level statements: (node, its text with the comments and blank lines
    before it, its first line within the cell)."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    out, start = [], 0
    for n, node in enumerate(tree.body):
        end = node.end_lineno if n < len(tree.body) - 1 else len(lines)
        out.append((node, "".join(lines[start:end]), start + 1))
        start = end
    return out


@functools.lru_cache(maxsize=512)
def _read(path: Path, stamp: tuple[int, int]) -> CaseFile:
    return CaseFile(path)


def read_case(path: Path | str) -> CaseFile:
    """The case file at ``path``, read once per version of its text (cached by size and mtime)."""
    path = Path(path)
    try:
        st = path.stat()
    except OSError as e:
        raise CaseFileError(f"{path}: cannot be read: {e.strerror}") from None
    return _read(path, (st.st_mtime_ns, st.st_size))


def _string_imports(tree: ast.Module) -> str:
    """The import lines of the module's own code strings (a ``HEADER`` the case writes above each fragment
    it runs, ``import torch.distributed as dist``): a fragment is checked with the names it runs with."""
    found = []
    for stmt in tree.body:
        if not isinstance(stmt, ast.Assign):
            continue
        for node in ast.walk(stmt.value):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                for line in node.value.splitlines():
                    line = line.strip()
                    if line.startswith(("import ", "from ")) and line not in found and _parses(line):
                        found.append(line)
    return "".join(line + "\n" for line in found)


def _parses(line: str) -> bool:
    try:
        return isinstance(ast.parse(line).body[0], (ast.Import, ast.ImportFrom))
    except SyntaxError:
        return False


def _code_fragment(text: str | None) -> str | None:
    """``text`` dedented, where it is Python code that calls something (a template with ``{...}`` fields
    or a plain message is not a program)."""
    if not text or "\n" not in text.strip():
        return None
    code = textwrap.dedent(text)
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    return code if any(isinstance(n, ast.Call) for n in ast.walk(tree)) else None
