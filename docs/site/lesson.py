"""A case module read as a lesson: the story's code for a learner, the harness's part apart.

A case file tells its story first and keeps what only the harness needs in one final section
(``torch_pitfalls.casefile`` reads it and says which cells are which). ``split_lesson`` cuts the
story's code cells into top-level statements (the reader's ``statements_of``) and sorts them:

- *setup*: the imports (the package's own excepted), folded on the page;
- *lesson*: ``broken``, ``fixed``, every other demo and statement;
- *harness*: the final section's code (the predicates, the check, the metadata) and its prose.

Each ``print(observe(broken, "cpu"))`` demo becomes a call cell, ``broken("cpu")``, whose output
is what that call did in the build (``docs.site.outputs``), so a learner reads the broken code,
then what it does. The package's names the lesson itself uses (``seeded``, ``ops_called``,
``observe``…) are inlined into the setup cell from their own modules (``inlined_helpers``).
"""

from __future__ import annotations

import ast
import copy
import difflib
import html
import importlib
import inspect
import textwrap
from dataclasses import dataclass, field

import nbformat

from docs.site.execute import LESSON_CALLS, LESSON_DEVICE, ExecutedCase
from docs.site.outputs import call_outputs, clean, recorded_outputs
from docs.site.stamp import STAMP_KEY, Stamp
from torch_pitfalls.casefile import HELPER_MODULES, read_case, statements_of
from torch_pitfalls.matrix import Matrix

HARNESS_PACKAGE = "torch_pitfalls"
DIFF_MAX_CHANGED = 12  # broken and fixed differing by more lines than this get no diff view
DIFF_MIN_SIMILARITY = 0.4


class LessonError(Exception):
    """A case whose lesson cannot be cut out (its lesson code needs the harness's metadata)."""


@dataclass
class Statement:
    source: str  # its lines, with the comments and blank lines before it
    kind: str  # import | harness-import | case | def | demo | other
    defines: set[str] = field(default_factory=set)
    uses: set[str] = field(default_factory=set)
    demo_of: str | None = None  # "broken"/"fixed" for a demo that prints observe(<it>, "cpu")
    rest: str = ""  # the rest of such a demo, unwrapped: the story it goes on to tell
    call_last: bool = False  # the demo printed observe(...) after the rest, not before it
    cell: int = 0  # index of the cell it came from


@dataclass
class Lesson:
    setup: str  # imports and inlined helpers: the notebook's first code cell, folded on the page
    cells: list  # the lesson's cells in story order (markdown, code with outputs, call cells)
    harness_prose: list[str]  # paragraphs introducing harness-only cells (the near miss's)
    harness_code: str  # the metadata, predicates and checks, as one block
    requires: tuple[str, ...]  # optional modules to install, for the notebook's first cell
    diff: str | None  # a unified diff of broken -> fixed, where they differ by a few lines


def split_lesson(ex: ExecutedCase, m: Matrix | None, stamp: Stamp | None = None) -> Lesson:
    """The case's lesson; made once per case and matrix (the page and the download both ask)."""
    key = (id(m), id(stamp))
    cache = ex.__dict__.setdefault("_lessons", {})
    if key not in cache:
        cache[key] = _split_lesson(ex, m, stamp)
    return cache[key]


def _split_lesson(ex: ExecutedCase, m: Matrix | None, stamp: Stamp | None) -> Lesson:  # noqa: C901 - one pass over the cells, in story order
    nb = ex.notebook
    stamp = stamp or Stamp(ex.torch, dict(nb.metadata.get(STAMP_KEY, {}).get("devices", {})))
    case_cells = read_case(ex.loaded.path).cells  # the notebook's cells, one for one, as the reader split them
    if len(case_cells) != len(nb.cells):
        raise LessonError(f"case {ex.loaded.id}: the notebook has {len(nb.cells)} cells, its file {len(case_cells)}")
    in_harness = {i for i, c in enumerate(case_cells) if c.harness}  # the file's final section
    statements = [s for i, cell in enumerate(nb.cells) if cell.cell_type == "code" for s in _statements(cell.source, i)]
    lesson_names = _lesson_names([s for s in statements if s.cell not in in_harness])
    if "CASE" in lesson_names:
        raise LessonError(f"case {ex.loaded.id}: its lesson code uses CASE, the harness's metadata")
    harness_names = set()
    for s in statements:
        if s.kind == "harness-import":
            harness_names |= s.defines
    helpers = sorted(lesson_names & harness_names & set(HELPER_MODULES))
    unknown = sorted((lesson_names & harness_names) - set(HELPER_MODULES))
    if unknown:
        raise LessonError(
            f"case {ex.loaded.id}: its lesson code uses {', '.join(unknown)} from the harness, "
            "which the notebook cannot inline"
        )

    def part(s: Statement) -> str:
        """setup (imports), lesson, harness, or call (a plain demo, replaced by a call cell)."""
        if s.cell in in_harness or s.kind in ("harness-import", "case"):
            return "harness"  # the story's import of observe/seeded: inlined into the setup instead
        if s.kind == "import":
            return "setup"
        if s.kind == "demo":
            return "call" if s.demo_of and not s.rest else "lesson"
        return "lesson"

    setup = _strip("".join(s.source for s in statements if s.kind == "import"))
    if helpers:  # the harness's modules are written with postponed annotations: a dataclass relies on it
        setup = "from __future__ import annotations\n\n" + setup + "\n\n" + inlined_helpers(helpers)
    demos = {s.demo_of: s.cell for s in statements if s.demo_of}
    first_code = next((i for i, c in enumerate(nb.cells) if c.cell_type == "code"), None)
    calls = {name: _call_cell(ex, name, m, stamp) for name in LESSON_CALLS if name in ex.calls}

    diff = _diff(statements)
    cells, prose, harness, pending_defs = [], [], [], ""
    for i, cell in enumerate(nb.cells):
        mine = [s for s in statements if s.cell == i]
        if cell.cell_type == "markdown":
            if i in in_harness:
                prose.append(cell.source)
            else:
                cells.append(cell)
            continue
        harness.extend(s.source for s in mine if part(s) == "harness")
        lesson_src = _strip("".join(s.rest or s.source for s in mine if part(s) == "lesson"))
        if i == first_code:  # its definitions go with the broken code, not above it
            pending_defs = lesson_src
            continue
        defines = set().union(*(s.defines for s in mine)) if mine else set()
        if "broken" in defines and pending_defs:
            cells.append(_code(pending_defs))
            pending_defs = ""
        here = []
        for name in LESSON_CALLS:
            if name in calls and (demos.get(name) == i or (name in defines and name not in demos)):
                here.append(calls.pop(name))
                if name == "fixed" and diff:
                    here.append(diff_cell(diff))
        if lesson_src:
            outputs = _without_printed_runs(
                cell.outputs, [ex.calls[s.demo_of].run for s in mine if s.demo_of and s.rest and s.demo_of in ex.calls]
            )
            code = _code(lesson_src, outputs, cell.metadata)
            # a demo's call comes before the rest of its story; a definition's call after it
            call_first = any(s.demo_of and not s.call_last for s in mine)
            cells.extend([*here, code] if call_first else [code, *here])
        else:
            cells.extend(here)
    if pending_defs:  # no broken cell after the first one: the definitions stay where they were
        cells.insert(1, _code(pending_defs))
    cells.extend(calls.values())
    harness_code = "\n\n\n".join(_strip(text).rstrip("\n") for text in harness if text.strip())
    return Lesson(setup, cells, prose, harness_code, _installable(ex.loaded.case.requires), diff)


def diff_cell(diff: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_markdown_cell(f"What the fix changes, line by line:\n\n```diff\n{diff}\n```\n")


# --- statements -------------------------------------------------------------------------------


def _statements(source: str, cell: int) -> list[Statement]:
    return [_classify(node, text, cell, first) for node, text, first in statements_of(source)]


def _classify(node: ast.stmt, text: str, cell: int, first_line: int) -> Statement:
    uses = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    if isinstance(node, (ast.Import, ast.ImportFrom)) or (
        isinstance(node, ast.Try) and all(isinstance(b, (ast.Import, ast.ImportFrom)) for b in node.body)
    ):
        imports = [node] if not isinstance(node, ast.Try) else node.body
        names = {(a.asname or a.name).split(".")[0] for i in imports for a in i.names}
        harness = any(_module_of(i).split(".")[0] == HARNESS_PACKAGE for i in imports)
        return Statement(text, "harness-import" if harness else "import", names, uses, cell=cell)
    if isinstance(node, ast.If) and "__name__" in ast.unparse(node.test):
        name, rest, last = _demo_of(node, text, first_line)
        return Statement(text, "demo", set(), uses, name, rest, last, cell)
    defines = set()
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        defines = {node.name}
    elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        defines = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    if defines == {"CASE"}:
        return Statement(text, "case", defines, uses, cell=cell)
    return Statement(text, "def" if defines else "other", defines, uses - defines, cell=cell)


def _module_of(node) -> str:
    return node.module or "" if isinstance(node, ast.ImportFrom) else node.names[0].name


def _demo_of(node: ast.If, text: str, first_line: int) -> tuple[str | None, str, bool]:
    """For ``if __name__ == "__main__":`` whose body starts (or ends) with ``print(observe(broken,
    "cpu"))``: the name it demonstrates (its call cell replaces that line), the rest of the body
    unwrapped (a notebook runs as ``__main__``) where there is more, and whether the call came last."""
    if not node.body or node.orelse:
        return None, "", False
    first, last = _printed_observe(node.body[0]), _printed_observe(node.body[-1])
    if len(node.body) == 1:
        return first, "", False
    if (first or last) is None or ast.unparse(node.test) not in ('__name__ == "__main__"', "__name__ == '__main__'"):
        return None, "", False
    lines = text.splitlines(keepends=True)  # the text starts at first_line
    if first:
        return first, textwrap.dedent("".join(lines[node.body[1].lineno - first_line :])), False
    body = lines[node.body[0].lineno - first_line : node.body[-2].end_lineno - first_line + 1]
    return last, textwrap.dedent("".join(body)), True


def _printed_observe(stmt: ast.stmt) -> str | None:
    """``print(observe(broken, "cpu"))`` (or ``fixed``): the name; None for anything else."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if not (
        isinstance(call, ast.Call)
        and getattr(call.func, "id", None) == "print"
        and len(call.args) == 1
        and not call.keywords
    ):
        return None
    inner = call.args[0]
    if (
        isinstance(inner, ast.Call)
        and getattr(inner.func, "id", None) == "observe"
        and len(inner.args) == 2
        and not inner.keywords
        and isinstance(inner.args[0], ast.Name)
        and inner.args[0].id in LESSON_CALLS
        and isinstance(inner.args[1], ast.Constant)
        and inner.args[1].value == LESSON_DEVICE
    ):
        return inner.args[0].id
    return None


def _without_printed_runs(outputs: list, runs: list) -> list:
    """A demo's outputs without the summary lines its removed ``print(observe(...))`` wrote."""
    if not runs:
        return outputs
    kept = copy.deepcopy(outputs)
    for run in runs:
        line = clean(str(run)) + "\n"
        for out in kept:
            if out.output_type == "stream" and line in out.text:
                out.text = out.text.replace(line, "", 1)
                break
    kept = [o for o in kept if o.output_type != "stream" or o.text]
    return kept if any(STAMP_KEY not in o.get("metadata", {}) for o in kept) else []  # no stamp under nothing


def _closure(statements: list[Statement], roots: set[str], start: list[Statement]) -> set[str]:
    """Every name used by ``start`` or by a definition of a name already found, transitively."""
    found = set(roots)
    for s in start:
        found |= s.uses
    while True:
        more = set()
        for s in statements:
            if s.kind == "def" and s.defines & found:
                more |= s.uses - found
        if not more:
            return found
        found |= more


def _lesson_names(statements: list[Statement]) -> set[str]:
    roots = [s for s in statements if (s.kind == "demo" and (s.demo_of is None or s.rest)) or s.kind == "other"]
    return _closure(statements, set(LESSON_CALLS), roots)


def _strip(text: str) -> str:
    return text.strip("\n").rstrip() + "\n" if text.strip() else ""


def _code(source: str, outputs=None, metadata=None) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source.rstrip("\n"))
    cell.outputs = list(outputs or [])
    if metadata:
        cell.metadata = dict(metadata)
    return cell


# --- the call cells ---------------------------------------------------------------------------


def call_source(name: str, raises: bool) -> str:
    if not raises:
        return f'{name}("{LESSON_DEVICE}")'
    return (
        f'try:\n    {name}("{LESSON_DEVICE}")\n'
        f"except Exception as error:  # shown, and the notebook goes on\n"
        f'    print(f"{{type(error).__name__}}: {{error}}")'
    )


def _call_cell(ex: ExecutedCase, name: str, m: Matrix | None, stamp: Stamp) -> nbformat.NotebookNode:
    """``broken("cpu")`` with what it did in the build; or, where the case's optional module is
    missing here, what the version matrix recorded on the newest release that ran it."""
    call = ex.calls[name]
    missing = _missing_module(call.run.error, ex.loaded.case.requires)
    if missing and m is not None:
        recorded = recorded_call(m, ex.loaded.id, name)
        if recorded is None:
            raise LessonError(f"case {ex.loaded.id}: {missing} is not importable here and no report records {name}")
        text, version, report = recorded
        cell = _code(call_source(name, text.startswith("raised ")))
        cell.outputs = recorded_outputs(text, None) + [_recorded_stamp(version, report)]
        return cell
    raises = call.run.error is not None
    cell = _code(call_source(name, raises))
    cell.outputs = call_outputs(call.run, call.printed, None, (ex.root,)) + [stamp.output([LESSON_DEVICE])]
    return cell


def _missing_module(error, requires: tuple[str, ...]) -> str | None:
    if isinstance(error, ImportError) and getattr(error, "name", None):
        top = error.name.split(".")[0]
        if any(r.split(".")[0] == top for r in requires):
            return error.name
    return None


def recorded_call(m: Matrix, case_id: str, name: str) -> tuple[str, str, str] | None:
    """(the record's text of ``name``, the release, the report's path) from the newest release
    of the matrix whose cpu record ran it (its text not a missing module)."""
    for cell in reversed(m.row(case_id, LESSON_DEVICE)):
        text = getattr(cell.record, name, "") if cell.record is not None else ""
        if text and "ModuleNotFoundError" not in text:
            report = m.reports.get((cell.version, LESSON_DEVICE))
            return text, cell.version, f"reports/{report.name}" if report else "reports/"
    return None


def _recorded_stamp(version: str, report: str) -> nbformat.NotebookNode:
    text = f"recorded by the version matrix on torch {version} ({report})"
    markup = f"recorded by the version matrix on <samp>torch {html.escape(version)} ({html.escape(report)})</samp>"
    return nbformat.v4.new_output(
        "display_data",
        data={"text/plain": f"[{text}]", "text/html": f'<p class="pitfalls-stamp">{markup}</p>'},
        metadata={STAMP_KEY: {"torch": version, "devices": [LESSON_DEVICE], "recorded": report}},
    )


def _installable(requires: tuple[str, ...]) -> tuple[str, ...]:
    """The distributions a notebook installs: a torch submodule comes with torch."""
    return tuple(dict.fromkeys(r.split(".")[0] for r in requires if r.split(".")[0] != "torch"))


# --- the diff view ----------------------------------------------------------------------------


def _diff(statements: list[Statement]) -> str | None:
    """broken -> fixed as a unified diff, where the two differ by a few lines and share some."""
    sources = {
        s.defines.copy().pop(): _strip(_without_leading_comments(s.source))
        for s in statements
        if s.kind == "def" and s.defines & set(LESSON_CALLS)
    }
    if set(sources) != set(LESSON_CALLS):
        return None
    a, b = sources["broken"].splitlines(), sources["fixed"].splitlines()
    body_a, body_b = a[1:], b[1:]  # the def lines differ by name only
    changed = sum(1 for line in difflib.ndiff(body_a, body_b) if line[:1] in "+-")
    similar = difflib.SequenceMatcher(None, body_a, body_b).ratio()
    if not body_a or not body_b or changed == 0 or changed > DIFF_MAX_CHANGED or similar < DIFF_MIN_SIMILARITY:
        return None
    return "\n".join(difflib.unified_diff(a, b, "broken", "fixed", lineterm="", n=2))


def _without_leading_comments(source: str) -> str:
    lines = source.splitlines(keepends=True)
    while lines and (not lines[0].strip() or lines[0].lstrip().startswith("#")):
        lines.pop(0)
    return "".join(lines)


# --- the harness's helpers, inlined -----------------------------------------------------------


def inlined_helpers(names: list[str]) -> str:
    """The harness's definitions of ``names`` (and what they need from their modules), as plain
    code: a notebook that uses ``seeded`` or ``ops_called`` then runs with torch alone."""
    blocks, imports = [], []
    for module_name in sorted({HELPER_MODULES[n] for n in names}):
        module = importlib.import_module(module_name)
        tree = ast.parse(inspect.getsource(module))
        source = inspect.getsource(module)
        defs = {}
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                defs[node.name] = node
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    if isinstance(t, ast.Name):
                        defs[t.id] = node
        wanted = [n for n in names if HELPER_MODULES[n] == module_name]
        needed, todo = [], list(wanted)
        while todo:
            name = todo.pop()
            if name in needed or name not in defs:
                continue
            needed.append(name)
            todo.extend(n.id for n in ast.walk(defs[name]) if isinstance(n, ast.Name) and n.id in defs)
        used = {n.id for name in needed for n in ast.walk(defs[name]) if isinstance(n, ast.Name)}
        used |= {
            n.value.id
            for name in needed
            for n in ast.walk(defs[name])
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
        }
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)) and not (
                isinstance(node, ast.ImportFrom) and node.module == "__future__"
            ):
                kept = [a for a in node.names if (a.asname or a.name).split(".")[0] in used]
                if kept:
                    node = type(node)(**{**{f: getattr(node, f) for f in node._fields}, "names": kept})
                    imports.append(ast.unparse(node))
            elif isinstance(node, ast.Try) and any(
                (a.asname or a.name) in used for b in node.body if isinstance(b, ast.Import) for a in b.names
            ):
                imports.append(ast.get_source_segment(source, node))
        for node in tree.body:  # the module's order, so each definition follows what it needs
            if node in [defs[n] for n in needed]:
                blocks.append(_with_decorators(source, node))
    header = "# Copied from the project's harness/ package (what this case's code calls), so torch alone runs it."
    return "\n".join([header, *dict.fromkeys(imports)]) + "\n\n\n" + "\n\n\n".join(blocks) + "\n"


def _with_decorators(source: str, node) -> str:
    lines = source.splitlines()
    start = min([d.lineno for d in getattr(node, "decorator_list", [])] + [node.lineno]) - 1
    return "\n".join(lines[start : node.end_lineno])
