"""What: torch's TensorBoard ``SummaryWriter`` that the file never closes or flushes (no ``with``, no ``close()``).
Why: ``add_scalar`` only queues an event; a daemon thread writes the queue out and dies with the process: what it
has not written when the script ends is lost (for a short run, every scalar). Only with --preview: what runs
after the last write decides it.
Fix: ``with SummaryWriter(logdir) as writer:``, or ``writer.close()`` in a ``finally``; ``writer.flush()`` at
points you cannot afford to lose.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

from torch_pitfalls.lint.bindings import arguments
from torch_pitfalls.lint.package import package_texts
from torch_pitfalls.lint.rules.base import Rule
from torch_pitfalls.lint.walking import kept_on, walk

# torch's writer: tensorboardX's (from 2.1) registers its close() to run at interpreter exit, so a script that
# ends loses nothing there
_WRITERS = ("torch.utils.tensorboard.SummaryWriter", "torch.utils.tensorboard.writer.SummaryWriter")
_ENDS = ("close", "flush", "__exit__")  # what writes the queue out


def _last_name(node) -> str | None:
    """``writer`` -> ``writer``; ``self.tb.writer`` -> ``writer``."""
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


def _file_uses(module: ast.Module, ctx):
    """What the file does with any object, by the last name it is read through: the names whose ``close``/
    ``flush`` it reads (a call, or ``atexit.register(writer.close)``), the names it hands to a call of
    something the file does not define (which may close it), and, for each function of the file, the
    parameter names a call of it binds to each name handed to it (``train(model, writer)`` -> ``tb``)."""
    ended, handed_out, into = set(), set(), {}
    functions = {n.name: n for n in walk(module) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    classes = {n.name: n for n in walk(module) if isinstance(n, ast.ClassDef)}
    for node in walk(module):
        if isinstance(node, ast.Attribute) and node.attr in _ENDS and (name := _last_name(node.value)):
            ended.add(name)
        if isinstance(node, (ast.Return, ast.Yield)) and node.value is not None:  # the caller keeps it
            values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            handed_out.update(name for v in values if (name := _last_name(v)))
        if not isinstance(node, ast.Call):
            continue
        target = _callee(node, functions, classes)
        if target is None:  # something the file does not define: it may close what it is handed
            handed_out.update(name for a in (*node.args, *(k.value for k in node.keywords)) if (name := _last_name(a)))
            continue
        fn, bound = target
        for param, arg in (arguments(node, fn, bound) if fn is not None else {}).items():
            if (name := _last_name(arg)) is not None:
                into.setdefault(name, set()).add(param)
    return ended, handed_out, into


def _callee(call: ast.Call, functions, classes):
    """(the file's function or class ``__init__`` that ``call`` calls, the leading parameters it does not pass:
    ``self``), ``(None, 0)`` for a class of the file without an ``__init__``; None where the file does not define
    what it calls."""
    callee = _last_name(call.func)
    if callee in functions:
        fn = functions[callee]
        first = fn.args.args[0].arg if fn.args.args else None
        return fn, int(first in ("self", "cls") and isinstance(call.func, ast.Attribute))
    if callee in classes:  # Logger(writer): its __init__
        init = next((f for f in classes[callee].body if getattr(f, "name", None) == "__init__"), None)
        return (init, 1) if init is not None else (None, 0)
    return None


def _aliases(name: str, module: ast.Module, into) -> set:
    """``name`` and every name it reaches: a parameter it is handed to, an attribute that parameter is
    stored in (``self.writer = writer``), and on."""
    found, todo = set(), [name]
    stored = kept_on(module, "_ptf281_stored", _stored_in)
    while todo:
        current = todo.pop()
        if current in found:
            continue
        found.add(current)
        todo += into.get(current, ())
        todo += stored.get(current, ())
    return found


def _stored_in(module: ast.Module) -> dict:
    """For each name assigned to an attribute or another name (``self.writer = tb``), the names it is stored as."""
    stored = {}
    for node in walk(module):
        if isinstance(node, ast.Assign) and (source := _last_name(node.value)):
            for target in node.targets:
                if (name := _last_name(target)) and name != source:
                    stored.setdefault(source, set()).add(name)
    return stored


def _never_closed(node, ctx) -> bool:
    if not (isinstance(node, ast.Call) and ctx.qualified(node.func) in _WRITERS):
        return False
    value, parent = node, ctx.parent(node)
    while isinstance(parent, ast.IfExp) and parent.test is not value:  # SummaryWriter(d) if use_tb else None
        value, parent = parent, ctx.parent(parent)
    if not isinstance(parent, (ast.Assign, ast.AnnAssign)) or parent.value is not value:
        return False  # a with item, returned, handed on, kept in a container: closed or kept where we cannot see
    targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
    names = {_last_name(t) for t in targets}
    if None in names:
        return False  # unpacked or subscripted: not followed
    module = ctx.module
    ended, handed_out, into = kept_on(module, "_ptf281_uses", lambda m: _file_uses(m, ctx))
    reach = set().union(*(_aliases(n, module, into) for n in names))
    if reach & ended or reach & handed_out:
        return False
    # kept at module level or on an object: another file of the package may close it (logger.writer.close())
    kept = any(isinstance(t, ast.Attribute) for t in targets) or not ctx.chain()
    return not (kept and _closed_elsewhere(reach, ctx))


def _closed_elsewhere(names, ctx) -> bool:
    if ctx.path is None or not os.path.isfile(ctx.path):
        return False
    here = Path(ctx.path).resolve()
    ends = re.compile(r"\b(%s)\s*\.\s*(%s)\b" % ("|".join(map(re.escape, sorted(names))), "|".join(_ENDS)))
    return any(p != here and ends.search(text) for p, text in package_texts(here).items())


RULE = Rule(
    id="PTF281",
    cases=("tensorboard-writer-not-closed",),
    message=(
        "this SummaryWriter is never closed or flushed (no with, no close()): its events wait in a queue that a "
        "daemon thread writes out, and what is still queued when the run ends or stops is lost; use "
        "`with SummaryWriter(...) as writer:` or close() it in a finally"
    ),
    test=_never_closed,
    nodes=ast.Call,
    needs=("SummaryWriter",),
    calls=("SummaryWriter",),
    # read findings on code it was not tuned on: 1 true of 19 (the thread drains its queue while the run goes on)
    preview_only="its harm depends on what the run does after its last write",
    case_at_preview=(
        "the rule reports only with `--preview`, since whether anything queued is lost depends on what the run "
        "does after its last write (a checkpoint, an evaluation, any work gives the thread time), which the code "
        "does not show"
    ),
)
