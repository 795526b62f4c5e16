"""What: load_state_dict(..., strict=False) whose result is never looked at.
Why: Every key that does not match is skipped silently (with a 'module.' prefix, all of them): the model
keeps the weights it had.
Fix: check the result's missing_keys and unexpected_keys.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, Rule, _arg, _called_name, _const, _method, receiver_holds
from torch_pitfalls.lint.walking import walk

_REPORTERS = ("print", "warn", "warning", "info", "debug", "error", "log", "assert_", "write")


def _result_checked(call, ctx) -> bool:
    """The value of ``call`` is looked at: returned, indexed, unpacked, its fields read, tested,
    compared, printed or logged. Bound to a name: any such use of the name below it counts."""
    parent = ctx.parent(call)
    if isinstance(parent, ast.Expr):
        return False
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
        name = parent.targets[0].id
        uses = [
            n
            for n in walk(ctx.function)
            if isinstance(n, ast.Name)
            and n.id == name
            and isinstance(n.ctx, ast.Load)
            and n.lineno >= parent.lineno
            and n is not call
        ]
        return any(_use_checks(u, ctx) for u in uses)
    if isinstance(parent, ast.Call) and call in parent.args:
        return _passed_to_a_check(parent, parent.args.index(call), ctx)
    return True  # returned, indexed, unpacked, compared, tested, assigned to an attribute ...


def _use_checks(use, ctx) -> bool:
    parent = ctx.parent(use)
    if isinstance(parent, ast.Call) and use in parent.args:
        return _passed_to_a_check(parent, parent.args.index(use), ctx)
    if isinstance(parent, (ast.keyword, ast.Expr)):
        return False
    return True  # res.missing_keys, res[0], return res, if res.missing_keys, assert not res..., f"{res}"


def _passed_to_a_check(call, index, ctx) -> bool:
    """The result handed to ``call`` as its ``index``-th argument is checked there: ``call`` prints or
    logs it, or is a function of this file that tests the keys (``if result.missing_keys``). A
    function of this file that only carries them on does not check; one we cannot see is trusted."""
    name = _called_name(call)
    if name in _REPORTERS or name in ("len", "bool", "any", "all"):
        return True
    callee = next(
        (n for n in walk(ctx.module) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name),
        None,
    )
    if callee is None:
        return True
    params = [a.arg for a in callee.args.args]
    if params and params[0] in ("self", "cls") and isinstance(call.func, ast.Attribute):
        params = params[1:]
    if index >= len(params):
        return True
    param = params[index]
    tests = [n.test for n in walk(callee) if isinstance(n, (ast.If, ast.Assert, ast.While, ast.IfExp))]
    tests += [n for n in walk(callee) if isinstance(n, ast.Call) and _called_name(n) in _REPORTERS + ("len",)]
    return any(isinstance(n, ast.Name) and n.id == param for t in tests for n in walk(t))


def _partial_by_design(state, ctx, line) -> bool:
    """A partial load is what the code means: the state dict is another live module's
    (``controlnet.blocks.load_state_dict(unet.blocks.state_dict(), strict=False)``, copying the parts
    that match), or was built against the model's own keys (``intersect_dicts(ckpt, self.state_dict())``),
    or was filtered in this function (a comprehension with an ``if``, keys popped or deleted), or is a
    dict literal naming each key it loads, or the function compares the keys itself."""
    value = ctx.resolve(state, line) if state is not None else None
    if value is not None:
        parts = [value] + [
            ctx.value_of(n, line) for n in walk(value) if isinstance(n, ast.Name)
        ]  # own = m.state_dict()
        if any(_method(n, "state_dict") for p in parts if p is not None for n in walk(p)):
            return True
    if isinstance(value, ast.DictComp) and any(g.ifs for g in value.generators):
        return True  # {k: v for k, v in sd.items() if k in own}: filtered; a renaming comprehension keeps every key
    if (
        isinstance(value, ast.Dict)
        and value.keys
        and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in value.keys)
    ):
        return True  # {"embedding.weight": w}: the code names each key it loads, the rest is left as it is on purpose
    if any(
        isinstance(n, ast.Name) and n.id in ("missing_keys", "unexpected_keys") and isinstance(n.ctx, ast.Store)
        for n in walk(ctx.function)
    ):
        return True  # the keys are compared by hand in this function
    if isinstance(state, ast.Attribute) and _kept_snapshot(state.attr, ctx):
        return True
    if value is not None and (_fixed_download(value, ctx) or _fixed_file(value, ctx, line)):
        return True
    if not isinstance(state, ast.Name):
        return False
    for n in walk(ctx.function):
        if _method(n, "pop") and getattr(n.func.value, "id", None) == state.id:
            return True
        if isinstance(n, ast.Delete) and any(
            getattr(getattr(t, "value", None), "id", None) == state.id for t in n.targets
        ):
            return True
    return False


# torch's downloaders of a checkpoint at a URL (torchvision's old model_zoo re-exports the first)
_DOWNLOADERS = ("load_url", "load_state_dict_from_url")


def _fixed_download(value, ctx) -> bool:
    """``load_url(model_urls["resnet50"])``: a checkpoint the code downloads from a URL it names itself
    (a string, or an entry of this module's table of URLs), loaded into the class it was published
    for. The pairing is fixed by the code and the same on every run, so the keys it skips (a
    classification head a backbone drops) are the ones its authors chose, not a prefix that varies
    with how a user's checkpoint was saved."""
    if not isinstance(value, ast.Call) or _called_name(value) not in _DOWNLOADERS or not value.args:
        return False
    url = value.args[0]
    if isinstance(url, ast.Subscript):
        url = url.value  # model_urls[arch]: which entry may vary, the table does not
    if isinstance(url, ast.Constant):
        return isinstance(url.value, str)
    return isinstance(url, ast.Name) and any(
        isinstance(n, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == url.id for t in n.targets)
        and isinstance(n.value, (ast.Constant, ast.Dict))
        for n in ctx.module.body
    )


def _fixed_file(value, ctx, line) -> bool:
    """``torch.load("./initmodel/resnet50_v2.pth")``: a checkpoint at a path the code names itself (a string,
    or a name bound to one), loaded into the class it ships with: as for a fixed download, the keys it
    skips are the ones its authors chose, not a prefix that varies with how a user's checkpoint was saved."""
    if not (isinstance(value, ast.Call) and ctx.qualified(value.func) == "torch.load" and value.args):
        return False
    path = value.args[0]
    if isinstance(path, ast.Name):
        path = ctx.value_of(path, line)
    return isinstance(path, ast.Constant) and isinstance(path.value, str)


def _kept_snapshot(attr: str, ctx) -> bool:
    """``m.load_state_dict(m._saved, strict=False)``: a snapshot the code kept on an attribute, restored.
    Every value this module stores in ``._saved`` (other than None) is taken from a live module's
    ``state_dict()``, there or in the function of this module that computes it
    (``m._saved = self._swap_in(m, new)``, which returns the layers it overwrote): its keys are the
    module's own, so loading the subset it holds is partial by design. A checkpoint kept there
    (``self._ckpt = torch.load(path)``) is not a snapshot."""
    stored = [
        n.value
        for n in walk(ctx.module)
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == attr for t in n.targets)
    ]
    stored = [v for v in stored if not (isinstance(v, ast.Constant) and v.value is None)]
    return bool(stored) and all(_reads_state_dict(v, ctx) for v in stored)


def _reads_state_dict(expr, ctx) -> bool:
    """``expr`` calls ``.state_dict()``, or calls a function of this module (``helper(...)``,
    ``self.helper(...)``) that does."""
    if any(_method(n, "state_dict") for n in walk(expr)):
        return True
    called = {
        c.func.id if isinstance(c.func, ast.Name) else c.func.attr
        for c in walk(expr)
        if isinstance(c, ast.Call)
        and (
            isinstance(c.func, ast.Name)
            or (isinstance(c.func, ast.Attribute) and getattr(c.func.value, "id", None) in ("self", "cls"))
        )
    }
    return any(
        isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
        and f.name in called
        and any(_method(n, "state_dict") for n in walk(f))
        for f in walk(ctx.module)
    )


def _retry_after_check(call, ctx) -> bool:
    """The load sits under ``if result.missing_keys:``: a second try after the keys were looked at."""
    node = ctx.parent(call)
    while node is not None and node is not ctx.function:
        if isinstance(node, ast.If) and any(
            isinstance(n, ast.Attribute) and n.attr in ("missing_keys", "unexpected_keys") for n in walk(node.test)
        ):
            return True
        node = ctx.parent(node)
    return False


# what a training checkpoint keeps beside the weights: a dict read for these is the checkpoint, not a state dict
_CHECKPOINT_ENTRIES = frozenset(
    """epoch epochs step global_step iteration iter optimizer optimizer_state_dict optim scheduler lr_scheduler
scaler amp state_dict model model_state_dict net args config cfg hparams hyper_parameters best_acc best_loss
best_score best_metric arch""".split()
)


def _whole_checkpoint(state, call, ctx) -> bool:
    """The dict loaded is a whole training checkpoint: the same binding is read, in this function, for an
    entry a checkpoint keeps beside the weights (``ckpt["epoch"]``, ``ckpt.get("optimizer")``), and no key is
    taken out of it. Its keys are those entries, none a parameter's: a non-strict load matches nothing."""
    if not isinstance(state, ast.Name) or ctx.function is None:
        return False
    chain = ctx.chain()
    loaded, _ = ctx.bindings.lookup(state.id, chain, call.lineno)
    if loaded is None:
        return False
    read = False
    for n in walk(ctx.function):
        if _method(n, "pop", "popitem") and getattr(n.func.value, "id", None) == state.id:
            return False
        if isinstance(n, ast.Subscript) and getattr(n.value, "id", None) == state.id and isinstance(n.ctx, ast.Load):
            key, at = n.slice, n.lineno
        elif _method(n, "get") and getattr(n.func.value, "id", None) == state.id and n.args:
            key, at = n.args[0], n.lineno
        else:
            continue
        if (
            isinstance(key, ast.Constant)
            and key.value in _CHECKPOINT_ENTRIES
            and ctx.bindings.lookup(state.id, chain, at)[0] is loaded
        ):
            read = True
    return read


def _strict_false_unchecked(node, ctx) -> bool:
    """``load_state_dict(sd, strict=False)`` (or ``strict`` as the 2nd positional) whose result,
    the missing and unexpected keys, nobody looks at, unless the load is partial by design
    (``_partial_by_design``: a subset of the keys, or another model's state dict); or of a whole
    checkpoint (``_whole_checkpoint``), which loads nothing whatever the result is used for."""
    if not (_method(node, "load_state_dict") and _const(_arg(node, 1, "strict"), False)):
        return False
    if _whole_checkpoint(_arg(node, 0, "state_dict"), node, ctx):
        return receiver_holds(node, ctx, "module")
    if _result_checked(node, ctx) or _retry_after_check(node, ctx):
        return False
    # a module's key matching; UNSURE on other objects (TensorDict.load_state_dict restores a storage)
    return not _partial_by_design(_arg(node, 0, "state_dict"), ctx, node.lineno) and receiver_holds(node, ctx, "module")


RULE = Rule(
    "PTF010",
    ("load-state-dict-strict-false",),
    "load_state_dict(strict=False) skips every key that does not match, silently (with a 'module.' prefix, "
    "all of them), and this result is never looked at, or the dict is a whole checkpoint whose other entries "
    "the code reads (it matches nothing); load the weights' own dict and check missing_keys/unexpected_keys",
    _strict_false_unchecked,
    nodes=CALL,
    calls=("load_state_dict",),
)
