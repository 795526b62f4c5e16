"""torch.distributed as rules read it: whether a file starts a process group, and whether code runs on one
rank only (behind a test of the process's rank)."""

from __future__ import annotations

import ast
import re

from torch_pitfalls.lint.walking import kept_on, walk

INIT = ("torch.distributed.init_process_group", "torch.distributed.distributed_c10d.init_process_group")
# words of a test, a function or a decorator that ask which process this is (rank 0, the main process)
_RANK_WORDS = re.compile(r"rank|main_process|is_main|master|primary|global_zero|leader|chief|is_root|process_index")


def starts_process_group(ctx, scope=None) -> bool:
    """The file (or ``scope``, a function of it) calls torch.distributed.init_process_group: its code runs once
    per rank. Kept on the node asked about."""
    return kept_on(
        scope if scope is not None else ctx.module,
        "_starts_process_group",
        lambda tree: any(isinstance(n, ast.Call) and ctx.qualified(n.func) in INIT for n in walk(tree)),
    )


def asks_rank(expr) -> bool:
    """An expression about the process's identity: ``rank == 0``, ``dist.get_rank() == 0``,
    ``args.local_rank in (-1, 0)``, ``is_main_process()``, ``accelerator.is_main_process``."""
    return bool(_RANK_WORDS.search(ast.unparse(expr).lower()))


def on_one_rank(node, ctx, depth: int = 0) -> bool:
    """``node`` runs on some ranks only: under a test of the rank (an ``if``, a conditional, after an early
    ``if rank != 0: return``), in a function named or decorated for the main process (``save_on_master``,
    ``@rank_zero_only``), or in a function of this file every call of which is so. A function the file
    names nowhere is taken to run on one rank (who calls it is not seen), unless it starts the process group
    itself; one handed to a launcher (``mp.spawn(run, ...)``) runs on every rank."""
    up = ctx.parent(node)
    fn = None
    while up is not None:
        if isinstance(up, (ast.If, ast.IfExp, ast.While)) and (asks_rank(up.test) or _tests_device_index(up.test, ctx)):
            return True
        if isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef)):
            fn = up
            break
        up = ctx.parent(up)
    if fn is None:  # module-level code: every rank runs it, but a spawning file's __main__ block only the parent
        return _in_parent_only(node, ctx)
    if depth > 3:
        return True  # too far to follow: not reported
    if _RANK_WORDS.search(fn.name.lower()) or any(asks_rank(d) for d in fn.decorator_list):
        return True
    if _returns_early_off_rank(fn, node):
        return True
    calls = _calls_of(fn, ctx)
    if not calls:  # it starts the group, or is handed to a launcher (mp.spawn(run, ...)): every rank runs it
        names = [n for n in walk(ctx.module) if isinstance(n, ast.Name) and n.id == fn.name]
        if names and all(_in_parent_only(n, ctx) for n in names):
            return True  # handed on only in a spawning file's __main__ block: the parent runs it
        return not starts_process_group(ctx, fn) and not names
    return all(on_one_rank(call, ctx, depth + 1) for call in calls)


_DDP = (
    "torch.nn.parallel.DistributedDataParallel",
    "torch.nn.parallel.distributed.DistributedDataParallel",
)


def _tests_device_index(test, ctx) -> bool:
    """``if self.gpu_id == 0:`` where the file hands that value to DistributedDataParallel as the process's
    device (``DDP(model, device_ids=[gpu_id])``, ``self.gpu_id = gpu_id``): one process per device, so the
    device index is the rank under another name (CMGAN's trainer)."""
    if not (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == 0
    ):
        return False
    return ast.unparse(test.left) in kept_on(ctx.module, "_ddp_device_indexes", lambda tree: _device_indexes(tree, ctx))


def _device_indexes(tree, ctx) -> frozenset:
    """The names handed to DistributedDataParallel's ``device_ids`` (or ``output_device``), and the ``self.``
    attributes the file assigns from them."""
    handed = set()
    for n in walk(tree):
        if isinstance(n, ast.Call) and ctx.qualified(n.func) in _DDP:
            for k in n.keywords:
                if k.arg == "device_ids" and isinstance(k.value, (ast.List, ast.Tuple)):
                    handed |= {ast.unparse(e) for e in k.value.elts if isinstance(e, (ast.Name, ast.Attribute))}
                elif k.arg == "output_device" and isinstance(k.value, (ast.Name, ast.Attribute)):
                    handed.add(ast.unparse(k.value))
    if not handed:
        return frozenset()
    for n in walk(tree):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name) and n.value.id in handed:
            handed |= {ast.unparse(t) for t in n.targets if isinstance(t, ast.Attribute)}
    return frozenset(handed)


_SPAWNS = (
    "torch.multiprocessing.spawn",
    "torch.multiprocessing.start_processes",
    "torch.multiprocessing.spawn.spawn",
    "multiprocessing.Process",
    "torch.multiprocessing.Process",
)


def _in_parent_only(node, ctx) -> bool:
    """``node`` is module-level code under a ``__main__`` test (``if __name__ == "__main__":``, or a test calling
    a function of the file that returns one) in a file that starts its ranks itself (``mp.spawn``): the spawned
    processes import the file under another name, so only the parent runs that block. Under torchrun every
    process is ``__main__`` and runs it."""
    if not kept_on(
        ctx.module,
        "_spawns",
        lambda tree: any(isinstance(n, ast.Call) and ctx.qualified(n.func) in _SPAWNS for n in walk(tree)),
    ):
        return False
    up, guarded = ctx.parent(node), False
    if isinstance(up, ast.keyword):
        up = ctx.parent(up)
    if isinstance(up, ast.Call) and ctx.qualified(up.func) in _SPAWNS:
        return False  # mp.spawn(worker, ...), Process(target=worker): the spawned processes run it
    while up is not None:
        if isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return False
        if isinstance(up, ast.If) and _main_test(up.test, ctx):
            guarded = True
        up = ctx.parent(up)
    return guarded


def _main_test(test, ctx) -> bool:
    """``__name__ == "__main__"``, or a call of a function of the file whose every return is that test."""
    if isinstance(test, ast.Compare):
        return any(isinstance(n, ast.Name) and n.id == "__name__" for n in (test.left, *test.comparators))
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and not test.args:
        fn = ctx.bindings.module_function(test.func.id)
        returns = [r for r in walk(fn) if isinstance(r, ast.Return)] if fn is not None else []
        return bool(returns) and all(r.value is not None and _main_test(r.value, ctx) for r in returns)
    return False


def _returns_early_off_rank(fn, node) -> bool:
    """``if rank != 0: return`` (or ``if not is_main(): return``) before ``node`` in the function."""
    return any(
        isinstance(s, ast.If)
        and s.lineno < node.lineno
        and asks_rank(s.test)
        and any(isinstance(b, ast.Return) for b in s.body)
        for s in walk(fn)
    )


def _calls_of(fn, ctx) -> list:
    """The calls of ``fn`` in this file: by its name for a module function, of any attribute of that name for
    a method (``self.save(...)``, ``trainer.fit()``)."""
    name = fn.name
    out = [c for c, _chain, _klass in ctx.bindings.call_sites(name)] if ctx.bindings.module_function(name) is fn else []
    if any(fn in klass.body for klass in ctx.bindings.classes().values()):  # a method: ``self.save(...)``, ``t.fit()``
        out = [
            n
            for n in walk(ctx.module)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == name
        ]
    return out
