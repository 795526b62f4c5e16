"""Which code sits behind a feature or version guard: ``if hasattr(torch, "func")``, a version
comparison (both branches: the old API in the ``else`` of ``if torch >= 2.0`` is deliberate), a
flag defined from one (``TORCH_GE_2_1 = version.parse(torch.__version__) >= ...``), a version
helper (``is_torch_version(">=", "2.3")``), ``except ImportError``, the ``except`` fallback after
a newer API was tried, and a deprecation warning silenced on purpose (``warnings.catch_warnings()``
with an ``"ignore"`` filter). The portable spellings name the old API on purpose, so the rules about
removed or deprecated APIs stay quiet there.

The engine knows the guards it can see from one ``if``/``try`` (``_is_guard_test``,
``_handles_missing``); ``deliberate`` adds those that need the whole module (flags and helpers
defined elsewhere in it, fallback handlers, silenced warnings), computed once per module."""

from __future__ import annotations

import ast
import re

from torch_pitfalls.lint.walking import children, walk

GUARD_CALLS = ("hasattr", "getattr", "find_spec")
GUARD_WORDS = ("__version__", "Version", "version", "parse_version")
GUARD_ERRORS = ("ImportError", "ModuleNotFoundError", "AttributeError")
# what an ``except`` that falls back to an older API catches when the newer one is missing or
# refuses an argument (``try: torch.load(f, weights_only=True) except TypeError: torch.load(f)``)
FALLBACK_ERRORS = GUARD_ERRORS + (
    "TypeError",
    "NameError",
    "RuntimeError",
    "NotImplementedError",
    "Exception",
    "BaseException",
    None,
)
# a name that says it holds or computes a torch version comparison: TORCH_VERSION, digit_version,
# is_torch_greater_or_equal, _TORCH_GREATER_EQUAL_2_0, TORCH_2_4, TORCH_GE_2_1, torch_2_0_or_later
_COMPARES = re.compile(r"greater|less|newer|older|after|before|at_?least|(^|_)(ge|gt|le|lt|eq)(_|$)|\d")
# ``torch.version.cuda`` / ``.hip`` say which build, not which release
_BUILD_ATTRS = ("cuda", "hip", "git_version", "debug")


# PyTorch's usual short name beside a release: WITH_PT20, _PT_2_1, IS_PT2 (not "pt" inside a word)
_PT_RELEASE = re.compile(r"(^|_)pt_?\d")


def _version_name(name: str | None) -> bool:
    if not name:
        return False
    low = name.lower()
    return "version" in low or (("torch" in low or bool(_PT_RELEASE.search(low))) and bool(_COMPARES.search(low)))


def _mentions_guard(node: ast.AST, flags: frozenset) -> bool:
    if isinstance(node, ast.Attribute):
        if node.attr in _BUILD_ATTRS and getattr(node.value, "attr", getattr(node.value, "id", None)) == "version":
            return False  # torch.version.cuda: a build check
        if node.attr in GUARD_WORDS or _version_name(node.attr) or node.attr in flags:
            return True
        return _mentions_guard(node.value, flags)
    if isinstance(node, ast.Name):
        return node.id in GUARD_WORDS or _version_name(node.id) or node.id in flags
    if isinstance(node, ast.Call):
        called = getattr(node.func, "id", getattr(node.func, "attr", None))
        if called in GUARD_CALLS:
            return True
    return any(_mentions_guard(child, flags) for child in children(node))


def _is_guard_test(test: ast.AST, flags: frozenset = frozenset()) -> bool:
    return _mentions_guard(test, flags)


def _caught(handler: ast.ExceptHandler) -> tuple[str, ...]:
    names = [handler.type] if not isinstance(handler.type, ast.Tuple) else handler.type.elts
    return tuple(getattr(n, "id", getattr(n, "attr", None)) for n in names if n is not None)


def _handles_missing(handler: ast.ExceptHandler) -> bool:
    return any(name in GUARD_ERRORS for name in _caught(handler))


def _falls_back(handler: ast.ExceptHandler) -> bool:
    """A handler that does something other than re-raise or log: the older API's spelling."""
    caught = _caught(handler) if handler.type is not None else (None,)
    if not any(name in FALLBACK_ERRORS for name in caught):
        return False
    return not all(isinstance(s, (ast.Raise, ast.Pass)) for s in handler.body)


# --- the module's own flags and silenced regions, once per module ---------------------------
def _flags(module: ast.AST) -> frozenset:
    """Names assigned a version or feature test (``_TORCH_GE_2 = version.parse(...) >= ...``,
    ``HAS_FUNC = hasattr(torch, "func")``), and functions that return one."""
    flags: set[str] = set()
    for _ in range(2):  # a flag defined from another flag
        frozen = frozenset(flags)
        for node in walk(module):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if isinstance(
                    node.value, (ast.Compare, ast.Call, ast.BoolOp, ast.UnaryOp, ast.Name, ast.Attribute)
                ) and _is_guard_test(node.value, frozen):
                    flags.update(getattr(t, "id", getattr(t, "attr", None)) for t in targets)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                returns = [s.value for s in walk(node) if isinstance(s, ast.Return) and s.value is not None]
                if returns and all(
                    isinstance(r, (ast.Compare, ast.BoolOp, ast.UnaryOp)) and _is_guard_test(r, frozen) for r in returns
                ):
                    flags.add(node.name)
    flags.discard(None)
    return frozenset(flags)


# the category torch's deprecations use since 2.4 (#126898; UserWarning or DeprecationWarning before,
# as the cases clip-grad-norm-without-underscore and concat-dataset-cummulative-sizes show): an
# "ignore" filter for UserWarning or DeprecationWarning alone does not silence them
_DEPRECATION_CATEGORIES = ("FutureWarning", "Warning")


# which branch of a version or feature test runs on the older torch (and so holds the older API on
# purpose); the other branch runs on a current torch, where the rules apply as anywhere else
_NEWER = re.compile(r"greater|newer|after|at_?least|above|(^|_)(ge|gt)(_|$)|(^|_)\d+(_\d+)+$|^has_|available")
_OLDER = re.compile(r"less|older|before|below|(^|_)(le|lt)(_|$)")
_FLIP = {"body": "orelse", "orelse": "body", None: None}


def _current_version(node: ast.AST) -> bool:
    """An expression that reads the running torch's version (``torch.__version__``, ``TORCH_VERSION``)."""
    for sub in walk(node):
        name = getattr(sub, "attr", getattr(sub, "id", "")) or ""
        if name == "__version__" or ("version" in name.lower() and "torch" in name.lower()):
            return True
    return False


def _old_branch(test: ast.AST, assigned: dict, depth: int = 0) -> str | None:
    """ "body" or "orelse": the branch that runs on the older torch; None when the test does not say."""
    if depth > 3:
        return None
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _FLIP[_old_branch(test.operand, assigned, depth + 1)]
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        op, left, right = test.ops[0], test.left, test.comparators[0]
        newer = {ast.Gt: "orelse", ast.GtE: "orelse", ast.Lt: "body", ast.LtE: "body"}.get(type(op))
        if _current_version(left) and not _current_version(right):
            return newer
        if _current_version(right) and not _current_version(left):
            return _FLIP[newer]
        return None
    if isinstance(test, ast.Call):
        called = getattr(test.func, "id", getattr(test.func, "attr", "")) or ""
        if called in GUARD_CALLS:
            return "orelse"  # hasattr(torch, "func"): true where the newer API exists
        first = test.args[0] if test.args else None
        if isinstance(first, ast.Constant) and first.value in (">=", ">", "<", "<="):  # is_torch_version(">=", "2.3")
            return "orelse" if first.value.startswith(">") else "body"
        return _named_direction(called)
    if isinstance(test, (ast.Name, ast.Attribute)):
        name = getattr(test, "id", getattr(test, "attr", ""))
        if name in assigned:
            return _old_branch(assigned[name], assigned, depth + 1)
        return _named_direction(name)
    return None


def _named_direction(name: str) -> str | None:
    low = name.lower()
    if _OLDER.search(low):
        return "body"
    if _NEWER.search(low):
        return "orelse"
    return None


def _ignores_warnings(body) -> bool:
    """An ``"ignore"`` filter that silences a deprecation: no category, a deprecation category, or a
    message pattern (a filter aimed at one warning)."""
    for node in walk(ast.Module(body=body, type_ignores=[])):
        if (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) in ("simplefilter", "filterwarnings")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value == "ignore"
        ):
            category = next((k.value for k in node.keywords if k.arg == "category"), None)
            if category is None and len(node.args) > 2:
                category = node.args[2] if node.func.attr == "filterwarnings" else node.args[1]
            elif category is None and getattr(node.func, "attr", None) == "simplefilter" and len(node.args) > 1:
                category = node.args[1]
            message = any(k.arg == "message" for k in node.keywords) or (
                getattr(node.func, "attr", None) == "filterwarnings" and len(node.args) > 1
            )
            name = getattr(category, "id", getattr(category, "attr", None))
            if category is None or message or name in _DEPRECATION_CATEGORIES:
                return True
    return False


def _span(nodes) -> list[tuple]:
    """Where each node starts and ends, as ((line, column), (line, column)): the two branches of a
    one-line ``a if TORCH_GE_2_3 else b`` are told apart by their columns."""
    return [((n.lineno, n.col_offset), (n.end_lineno or n.lineno, n.end_col_offset or 1 << 20)) for n in nodes]


def _regions(module: ast.AST) -> tuple[list, list]:
    """(guarded line spans, silenced line spans) of one module."""
    flags = _flags(module)
    assigned = {
        t.id: n.value
        for n in walk(module)
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name) and t.id in flags
    }
    guarded, silenced = [], []
    for node in walk(module):
        if isinstance(node, (ast.If, ast.IfExp)) and _is_guard_test(node.test, flags):
            body = node.body if isinstance(node.body, list) else [node.body]
            orelse = node.orelse if isinstance(node.orelse, list) else [node.orelse]
            old = _old_branch(node.test, assigned)
            guarded += _span(body if old == "body" else orelse if old == "orelse" else body + orelse)
        elif isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            if any(_handles_missing(h) for h in node.handlers) or (
                all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in node.body)
                and any(_falls_back(h) for h in node.handlers)
            ):
                guarded += _span(node.body)  # an import tried under a broad except: a feature probe
            guarded += _span([h for h in node.handlers if _falls_back(h)])
        elif (
            isinstance(node, (ast.With, ast.AsyncWith))
            and any(
                getattr(i.context_expr, "func", None) is not None
                and getattr(i.context_expr.func, "attr", getattr(i.context_expr.func, "id", None)) == "catch_warnings"
                for i in node.items
            )
            and _ignores_warnings(node.body)
        ):
            silenced += _span(node.body)
    guarded += _after_early_exit(module, flags, assigned)
    return guarded, silenced


def _after_early_exit(module: ast.AST, flags: frozenset, assigned: dict) -> list[tuple]:
    """``if hasattr(t, "untyped_storage"): return t.untyped_storage()`` then the old spelling: what
    follows a guard whose branch always leaves the block is its else branch; old code on purpose
    unless the branch that leaves is the older torch's (``if not TORCH_GE_2_3: raise ...``)."""
    spans = []
    for node in walk(module):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if not isinstance(block, list):
                continue
            for i, stmt in enumerate(block[:-1]):
                if (
                    isinstance(stmt, ast.If)
                    and not stmt.orelse
                    and _is_guard_test(stmt.test, flags)
                    and _always_leaves(stmt.body)
                    and _old_branch(stmt.test, assigned) != "body"
                ):
                    spans.append(((block[i + 1].lineno, 0), (block[-1].end_lineno or block[-1].lineno, 1 << 20)))
                    break
    return spans


def _always_leaves(block) -> bool:
    """Every path through ``block`` ends in return/raise/continue/break: its last statement does, or is
    an if/else, a ``with`` or a ``try`` (body and every handler) whose paths all do."""
    if not block:
        return False
    last = block[-1]
    if isinstance(last, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
        return True
    if isinstance(last, ast.If):
        return _always_leaves(last.body) and _always_leaves(last.orelse)
    if isinstance(last, (ast.With, ast.AsyncWith)):
        return _always_leaves(last.body)
    if isinstance(last, (ast.Try, getattr(ast, "TryStar", ast.Try))):
        if last.finalbody and _always_leaves(last.finalbody):
            return True
        body = last.body + last.orelse if last.orelse else last.body
        return _always_leaves(body) and all(_always_leaves(h.body) for h in last.handlers)
    return False


_CACHE: dict = {"module": None, "regions": ([], [])}


def deliberate(node: ast.AST, module: ast.AST, warning: bool) -> bool:
    """Whether ``node`` sits in code that uses an older API on purpose: behind a guard the engine
    cannot see from one statement, in an ``except`` fallback, or (for a rule about a warning,
    ``warning=True``) where that warning is silenced on purpose."""
    if _CACHE["module"] is not module:  # the last module's regions (the walk goes module by module)
        _CACHE["module"], _CACHE["regions"] = module, _regions(module)
    guarded, silenced = _CACHE["regions"]
    if getattr(node, "lineno", None) is None:
        return False
    at = (node.lineno, node.col_offset)
    spans = guarded + silenced if warning else guarded
    return any(start <= at <= end for start, end in spans)
