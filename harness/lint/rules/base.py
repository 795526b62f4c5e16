"""What every rule is made of: the ``Rule`` record and the small matchers the rules share (which
call, which method, which keyword, which qualified name, what a receiver holds). A name list or
a helper that one rule uses lives in that rule's module; one that several use, in rules/shared/."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from torch_pitfalls.lint.engine import Context
from torch_pitfalls.lint.guards import deliberate

if TYPE_CHECKING:
    from torch_pitfalls.lint.fixes import Fix


class _Unsure:
    """A check's third answer: the pattern is there, on an object the bindings cannot prove to be
    torch's (a method name on a receiver of unknown type). False in a boolean test, so ``a and
    unsure`` stays quiet; reported only with ``--preview``, labelled (engine.py). As ``a and b``
    returns the first falsy operand, a check puts the part that may be UNSURE last."""

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "UNSURE"


UNSURE = _Unsure()
# what each kind of harm costs; a rule whose harm is a cost (time, memory) is quiet in test code,
# where one small run pays it once and no result changes (scope.py, --costs-in-tests)
COST_HARMS = ("speed", "memory")


@dataclass(frozen=True)
class Rule:
    id: str
    cases: tuple[str, ...]  # the cases whose broken code it flags (the first is its page)
    message: str  # what goes wrong, and the fix
    test: Callable[[ast.AST, Context], bool] | None  # None: a rule with nothing to match in a tree (on_syntax_error)
    nodes: type | tuple[type, ...] = ast.AST  # the node types it looks at (the engine offers it only those)
    # what goes wrong: "correctness" (a wrong result, an error, a warning), "speed" (the same result,
    # slower) or "memory" (the same result, more memory held); a cost is quiet in test code unless
    # asked (COST_HARMS, harness/lint/scope.py)
    harm: str = "correctness"
    # An upgrade case's rule (an API a release removed, deprecated or changed): quiet where the code
    # keeps the older API on purpose, behind a guard the engine cannot see from one statement or in
    # an ``except`` fallback (guards.deliberate) and, with ``deliberate_warning`` (a rule whose effect
    # on the releases it names is a warning), where that warning is silenced on purpose.
    upgrade: bool = False
    deliberate_warning: bool = False
    # A deprecated name to stop using is one decision per file (the import, or a file-wide rename):
    # one finding per file, the first sure one of the walk (engine.Walker; an UNSURE one does not count).
    once_per_file: bool = False
    fix: Fix | None = None  # the mechanical fix of ``pitfalls lint --fix`` (fixes.py), built in this rule's module
    # For a pitfall that is a SyntaxError (the file does not parse): ``on_syntax_error(text)`` returns
    # where it is in the text, (line, column) each, and the text repaired in memory with every line
    # and column kept, from which the rest of the file is checked (harness/lint/__init__.py).
    on_syntax_error: Callable[[str], tuple[list[tuple[int, int]], str]] | None = None
    # Words one of which the file's text must hold for the rule to be able to match (a name it
    # matches is written in the file, in its import or its call): the rule is not run on a file
    # without any of them. Empty: run on every file. tests/lint/test_rule_modules.py holds each word
    # list to the rule's variant set and cases.
    needs: tuple[str, ...] = ()
    # For a rule that looks at calls: the names a call it can match ends with (the method's name, or the
    # function's last name once import aliases are read: ``F.interpolate``, ``from torch import load as
    # ld`` -> ``load``); the engine offers it only those calls (engine.Walker). Empty: every call.
    # tests/lint/test_call_dispatch.py holds each list to the rule's findings without the dispatch.
    calls: tuple[str, ...] = ()
    # The rule's case shows its pitfall in code whose use or type its file hides (a helper handed to a
    # profiler, a model class imported from another file), where the rule's default level, which reports
    # only what the file shows, is quiet: the case proves the rule with --preview (tests/lint/test_lint.py).
    # The text says why (a clause the case page shows after "With --preview, ... reports X on it:"); empty: the
    # default level proves it.
    case_at_preview: str = ""
    # Non-empty: the rule reports only with --preview, whatever it proves, and this says why in its label
    # ("[preview: <this>]"): whether its harm occurs depends on what the code does not show (a copy's cost, an
    # input's shape, what runs after a write), and its read findings on code it was not tuned on fell under the
    # 60% a rule needs. Empty: it reports by default.
    preview_only: str = ""

    def judged(self, found, node: ast.AST, ctx: Context):
        """The check's answer ``found`` (any value) as True, False or UNSURE (the pattern on an object not
        known to be torch's). The engine calls the check itself, catching engine.UNUSUAL_CODE, and this
        only for an answer that is not False or None (most answers, on most nodes)."""
        if (found or found is UNSURE) and self.upgrade and deliberate(node, ctx.module, self.deliberate_warning):
            return False
        if found is UNSURE or self.preview_only:
            return UNSURE
        return bool(found)

    @property
    def case(self) -> str:
        return self.cases[0]


def last_names(*qualified: str) -> tuple[str, ...]:
    """``calls`` for a rule that matches these qualified names: each one's last name."""
    return tuple(dict.fromkeys(q.rsplit(".", 1)[-1] for q in qualified))


# --- small matchers -----------------------------------------------------------------------
def _kw(call: ast.Call, name: str):
    return next((k.value for k in call.keywords if k.arg == name), None)


def _has_kw(call: ast.Call, name: str) -> bool:
    return any(k.arg == name for k in call.keywords) or any(k.arg is None for k in call.keywords)  # **kwargs: unknown


def _is_call_to(node, ctx, *names) -> bool:
    return isinstance(node, ast.Call) and ctx.qualified(node.func) in names


def _method(node, *names) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in names


def _use_of(node, ctx, *names) -> bool:
    """A reference to one of these qualified names, outside a feature or version guard."""
    return (
        isinstance(node, (ast.Attribute, ast.Name))
        and isinstance(node.ctx, ast.Load)
        and not ctx.guarded
        and ctx.qualified(node) in names
    )


def _self_attr(node, attr: str) -> bool:
    """``self.<attr>``."""
    return isinstance(node, ast.Attribute) and node.attr == attr and getattr(node.value, "id", None) == "self"


def _const(node, value) -> bool:
    return isinstance(node, ast.Constant) and node.value == value and type(node.value) is type(value)


def _called_name(node) -> str:
    """The last name of what a call calls: ``F.log_softmax`` -> ``log_softmax``."""
    if isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Call):  # nn.Softmax(dim=1)(x)
            return _called_name(f)
        return getattr(f, "attr", getattr(f, "id", ""))
    return ""


def receiver_holds(call_or_attr, ctx, *kinds):
    """Whether the object a method is called on (or an attribute read from) holds one of ``kinds``
    (bindings.py: "tensor", "module", "optimizer", ...): True where the bindings prove it, False
    where they prove something else or it is an imported module other than torch, UNSURE where
    nothing is known (a parameter, another library's object)."""
    func = call_or_attr.func if isinstance(call_or_attr, ast.Call) else call_or_attr
    receiver = func.value
    q = ctx.qualified(receiver)
    if q is not None:
        return q.startswith("torch.") and "tensor" in kinds and q in TENSOR_NAMES_OF_TORCH
    kind = ctx.kind(receiver)
    if kind is None:
        return UNSURE
    return kind in kinds


TENSOR_NAMES_OF_TORCH = ("torch.Tensor",)  # Tensor.cholesky(x): the method through the class


def _arg(call: ast.Call, index: int, name: str):
    """An argument passed by position or by keyword."""
    if len(call.args) > index and not any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
        return call.args[index]
    return _kw(call, name)


def _bound_name(node) -> bool:
    """A name or a ``self.`` attribute: what bindings can tell the value of."""
    return isinstance(node, ast.Name) or (isinstance(node, ast.Attribute) and getattr(node.value, "id", None) == "self")


def _receiver_may_be_tensor(call: ast.Call, ctx):
    """Whether the object a method is called on is a tensor: True where the bindings prove it,
    UNSURE where they cannot tell (``lazy_covar.cholesky()``, ``td.refine_names(...)``: other
    libraries' objects have these methods too), False for an imported module other than torch
    (``torch_scatter.scatter(..., reduce=...)``), an object known to be something else, or ``self``
    in a class that defines the method itself (``self.storage()`` of a storage-backend class)."""
    receiver = call.func.value
    if isinstance(receiver, ast.Name) and receiver.id in ("self", "cls") and ctx.klass is not None:
        if any(
            isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == call.func.attr for s in ctx.klass.body
        ):
            return False
    return receiver_holds(call, ctx, "tensor")


CALL = ast.Call
REFS = (ast.Attribute, ast.Name)  # a reference to a qualified name
