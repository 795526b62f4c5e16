"""What: a DataLoader given a batch_sampler together with batch_size (other than 1), shuffle=True, a
sampler or drop_last=True.
Why: A batch sampler already decides the order, the batch size and the last incomplete batch, so the
constructor refuses any of the options it replaces: ValueError "batch_sampler option is mutually
exclusive with batch_size, shuffle, sampler, and drop_last"; the loader is never built.
Fix: pass only batch_sampler=; put the shuffling inside it (BatchSampler(RandomSampler(data), ...)).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import LOADERS
from torch_pitfalls.lint.rules.base import CALL, UNSURE, Rule, _arg, last_names
from torch_pitfalls.lint.rules.shared.flow import _chosen, _values
from torch_pitfalls.lint.rules.shared.options import default_constant
from torch_pitfalls.lint.walking import walk

# DataLoader(dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, ...): positions
_POSITION = {"batch_size": 1, "shuffle": 2, "sampler": 3, "batch_sampler": 4, "drop_last": 7}


def _given(call, ctx, name):
    """What the call passes for ``name`` (by position or keyword), the branch the module takes for an
    ``a if flag else b``; None where it passes nothing."""
    value = _arg(call, _POSITION[name], name)
    return None if value is None else _chosen(value, ctx, call.lineno)


def _constants(value, ctx, line):
    """The literal values an expression may hold: itself, or every value a name is bound to here
    (through the module's call sites for a parameter); None where one of them is not a literal."""
    if isinstance(value, ast.Constant):
        return [value.value]
    if isinstance(value, ast.Name):
        found = _values(value.id, ctx.chain(), line, ctx.bindings)
        if found and all(isinstance(v, ast.Constant) for v in found):
            return [v.value for v in found]
    default = default_constant(value, ctx, line=line)  # cfg["shuffle"] of a config dict, an option's default
    return [default.value] if default is not None else None


def _may_be_none(value, ctx, line) -> bool:
    """The expression may be None: the literal, an ``a if c else None``, ``x or None``, a name bound
    (anywhere it may come from) to one of those, a parameter whose call sites the module does not
    show, or a call of a function of this module that may return None."""
    if isinstance(value, ast.Constant):
        return value.value is None
    if isinstance(value, ast.Name):
        found = _values(value.id, ctx.chain(), line, ctx.bindings)
        return found is None or any(isinstance(v, ast.Name) or _may_be_none(v, ctx, line) for v in found)
    if isinstance(value, ast.Call):
        fn = ctx.bindings.module_function(value.func.id) if isinstance(value.func, ast.Name) else None
        return fn is not None and any(
            isinstance(r, ast.Return)
            and (r.value is None or (isinstance(r.value, ast.Constant) and r.value.value is None))
            for r in walk(fn)
        )
    return not isinstance(value, (ast.List, ast.ListComp, ast.Tuple, ast.GeneratorExp))


def _conflicts(call, ctx, line) -> tuple[bool, bool]:
    """(written, inferred): a replaced option given a literal value the constructor refuses
    (``shuffle=True``, ``batch_size=32``, a sampler built in the call); one given a value the file shows
    only through names (``batch_size=args.batch_size``: refused unless it is 1)."""
    written = inferred = False
    size = _given(call, ctx, "batch_size")
    if size is not None:
        known = _constants(size, ctx, line)
        if known is not None and any(v != 1 for v in known):
            written = written or isinstance(size, ast.Constant) or all(v is not None for v in known)
        elif known is None and not isinstance(size, (ast.IfExp, ast.BoolOp)):
            inferred = True  # ``batch_size=args.batch_size``: refused unless it is 1
    for flag in ("shuffle", "drop_last"):
        value = _given(call, ctx, flag)
        known = _constants(value, ctx, line) if value is not None else None
        if known is not None and any(v is True or (type(v) is int and v) for v in known):
            written = True
    sampler = _given(call, ctx, "sampler")
    if sampler is not None and not _may_be_none(sampler, ctx, line):
        written = True
    return written, inferred


def _batch_sampler_with_others(node, ctx):
    if not (isinstance(node, ast.Call) and ctx.qualified(node.func) in LOADERS):
        return False
    if any(isinstance(a, ast.Starred) for a in node.args):
        return False
    batch_sampler = _given(node, ctx, "batch_sampler")
    if batch_sampler is None or (isinstance(batch_sampler, ast.Constant) and batch_sampler.value is None):
        return False
    written, inferred = _conflicts(node, ctx, node.lineno)
    if _may_be_none(batch_sampler, ctx, node.lineno):  # a batch sampler the file does not show: maybe None
        return UNSURE if written else False
    return written or inferred


RULE = Rule(
    "PTF256",
    ("batch-sampler-exclusive",),
    "a DataLoader given batch_sampler= refuses batch_size (other than 1), shuffle=True, sampler= and "
    "drop_last=True: ValueError 'batch_sampler option is mutually exclusive with batch_size, shuffle, "
    "sampler, and drop_last'; pass only batch_sampler= and shuffle inside it (BatchSampler(RandomSampler(data), ...))",
    _batch_sampler_with_others,
    nodes=CALL,
    calls=last_names(*LOADERS),
    needs=("batch_sampler",),
)
