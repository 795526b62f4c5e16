"""What: An LR scheduler stepped before the optimizer in a loop, or once per batch for a schedule that
counts epochs.
Why: Before optimizer.step() the schedule's first value is skipped (PyTorch warns since 1.1); per batch,
StepLR or CosineAnnealingLR(T_max=epochs) runs len(loader) times too fast.
Fix: step it after optimizer.step(), once per epoch for an epoch schedule.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import LOADER_NAME
from torch_pitfalls.lint.rules.base import CALL, Rule, _arg, _called_name, _method
from torch_pitfalls.lint.rules.shared.flow import context_at, helper_calls
from torch_pitfalls.lint.rules.shared.modules import constructions
from torch_pitfalls.lint.rules.shared.training_loop import _enclosing_loops, _looks_like_optimizer, _optimizer_step
from torch_pitfalls.lint.walking import children, kept_on, walk


def _scheduler_step(call, ctx) -> bool:
    if not _method(call, "step") or len(call.args) > 1:  # a diffusion scheduler's step(out, t, x) is not this
        return False
    receiver = call.func.value
    held = ctx.held(receiver)
    if held is not None:
        return held.kind == "scheduler"
    name = (getattr(receiver, "id", getattr(receiver, "attr", "")) or "").lower()
    if "sched" not in name or call.args:
        return False
    if any(k.arg not in ("epoch", "metrics") for k in call.keywords):
        return False  # step(cur_epoch=e, cur_step=i): LAVIS's own scheduler, which sets the lr it is told
    # named like a scheduler, of a type the bindings cannot tell: torch's, unless every scheduler the
    # file builds comes from another library (vq-vae-2's own CycleScheduler, which counts iterations)
    built = kept_on(ctx.module, "_ptf026_built_schedulers", lambda tree: _built_schedulers(tree, ctx))
    return not built or any(q.startswith(_TORCH_LIKE) for q in built)


# libraries whose schedulers are torch's (transformers' get_*_schedule_with_warmup returns a LambdaLR)
_TORCH_LIKE = ("torch.", "transformers.", "timm.", "diffusers.", "lightning.", "pytorch_lightning.", "accelerate.")


def _built_schedulers(tree, ctx) -> list[str]:
    """The qualified names of what the file assigns to names like ``scheduler`` or ``self.lr_sched``,
    where the call is of another module's name (``from scheduler import CycleScheduler``) or torch's;
    a class or function of this file is left out (it may be a torch scheduler's subclass)."""
    found = []
    for n in walk(tree):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call):
            names = [getattr(t, "id", getattr(t, "attr", "")) or "" for t in n.targets]
            q = ctx.qualified(n.value.func) or ""
            if any("sched" in t.lower() for t in names) and "." in q:
                found.append(q)
    return found


# words of a callee's name that say it keeps or reports the optimizer's state, not steps it
# (``save_ckpt(model, optimizer, scheduler, epoch)`` after the epoch's scheduler step)
_KEEPS_STATE = ("save", "ckpt", "checkpoint", "log", "print", "dump", "write")


def _uses_optimizer(call, ctx) -> bool:
    """An optimizer step, or a call handed the optimizer (``train_step(model, opt)``) that is not
    named for saving or reporting it."""
    if _optimizer_step(call, ctx):
        return True
    return (
        isinstance(call, ast.Call)
        and not any(w in (_called_name(call) or "").lower() for w in _KEEPS_STATE)
        and any(
            ctx.kind(a) == "optimizer" or _looks_like_optimizer(a)
            for a in call.args
            if isinstance(a, (ast.Name, ast.Attribute))
        )
    )


def _scheduler_before_optimizer(node, ctx) -> bool:
    """In one loop body, the LR scheduler steps before the optimizer does: the first learning rate
    of the schedule is skipped (PyTorch warns from 1.1); step the scheduler after optimizer.step()."""
    if not isinstance(node, (ast.For, ast.While)):
        return False
    calls = [n for n in walk(node) if isinstance(n, ast.Call) and _scheduler_step(n, ctx)]
    if not calls:
        return False
    first_call = min(calls, key=lambda n: (n.lineno, n.col_offset))
    first = (first_call.lineno, first_call.col_offset)
    if _after_the_first_pass(first_call, node, ctx) or _on_a_metric(first_call, ctx):
        return False
    own = _schedulers_optimizer(first_call, ctx)
    if own is None and any(
        isinstance(n, ast.Call) and (n.lineno, n.col_offset) < first and _optimizer_step(n, ctx)
        for stmt in node.body
        for n in walk(stmt)
    ):
        return False  # an optimizer stepped just before it: which one this scheduler drives is unknown
    # the loop's own body only: a scheduler in a nested loop is that loop's business
    direct = [n for stmt in node.body for n in _walk_no_loops(stmt)]
    if not any(isinstance(n, ast.Call) and (n.lineno, n.col_offset) == first for n in direct):
        return False
    later = [
        n
        for stmt in node.body
        for n in walk(stmt)
        if isinstance(n, ast.Call)
        and (n.lineno, n.col_offset) > first
        and _uses_optimizer(n, ctx)
        and (own is None or any(isinstance(x, ast.Name) and x.id == own for x in walk(n)))
    ]
    return bool(later)


def _on_a_metric(step, ctx) -> bool:
    """A ReduceLROnPlateau (every construction the scheduler may come from is one): it has no schedule whose
    first value the order could skip, and torch does not warn about its order."""
    ctors = _constructors(step.func.value, step.lineno, ctx)
    return bool(ctors) and all(
        isinstance(c, ast.Call) and (ctx.qualified(c.func) or "").endswith("ReduceLROnPlateau") for c in ctors
    )


def _schedulers_optimizer(step, ctx) -> str | None:
    """The name of the optimizer a scheduler was built on (``StepLR(opt, ...)`` -> ``opt``), or None:
    another optimizer's step later in the loop is that optimizer's business."""
    receiver = step.func.value
    ctor = ctx.value_of(receiver, step.lineno) if isinstance(receiver, ast.Name) else None
    if isinstance(ctor, ast.Call) and ctor.args and isinstance(ctor.args[0], ast.Name):
        return ctor.args[0].id
    return None


_EPOCH_SCHEDULERS = ("StepLR", "MultiStepLR", "ExponentialLR")  # their sizes count epochs by design
# an ExponentialLR gamma at or above this decays per optimizer step (HiFi-GAN/BigVGAN's 0.999996 from a
# config); a literal gamma below it (0.9, 0.95) is a decay per epoch, and a gamma the file does not
# show could be either
_PER_STEP_GAMMA = 0.999


_LENGTH_SCHEDULERS = {
    "CosineAnnealingLR": ("T_max", 1),
    "CosineAnnealingWarmRestarts": ("T_0", 1),
    "PolynomialLR": ("total_iters", 1),
}


def _counts_epochs(ctor, ctx) -> bool:
    """The scheduler's schedule is written in epochs: StepLR/MultiStepLR, an ExponentialLR with a literal
    per-epoch gamma, or a cosine or polynomial one whose length is the number of epochs
    (``T_max=args.epochs``)."""
    name = (ctx.qualified(ctor.func) or "").rsplit(".", 1)[-1]
    if not (ctx.qualified(ctor.func) or "").startswith("torch.optim.lr_scheduler."):
        return False
    if name == "ExponentialLR":  # one decay per step() of either kind: its gamma says which
        gamma = _arg(ctor, 1, "gamma")
        return isinstance(gamma, ast.Constant) and isinstance(gamma.value, float) and gamma.value < _PER_STEP_GAMMA
    if name in _EPOCH_SCHEDULERS:
        return not _sized_in_steps(_arg(ctor, 1, "milestones" if name == "MultiStepLR" else "step_size"))
    if name in _LENGTH_SCHEDULERS:
        kw, at = _LENGTH_SCHEDULERS[name]
        length = _arg(ctor, at, kw)
        return length is not None and "epoch" in ast.unparse(length).lower() and not _times_a_count(length)
    return False


def _times_a_count(length) -> bool:
    """The epochs multiplied by a per-epoch count (``args.epochs * updates_per_epoch``, ``epochs *
    len(loader)``): a length in optimizer steps."""
    return "len(" in ast.unparse(length) or any(
        isinstance(n, ast.BinOp)
        and isinstance(n.op, ast.Mult)
        and not isinstance(n.left, ast.Constant)
        and not isinstance(n.right, ast.Constant)
        for n in walk(length)
    )


def _sized_in_steps(size) -> bool:
    """A step size written in optimizer steps, not epochs: ``step_size=200_000``, ``milestones=[30_000,
    60_000]`` (no run has that many epochs), ``step_size=args.decay_iters``, ``len(loader) * 30``."""
    if size is None:
        return False
    text = ast.unparse(size).lower()
    if any(w in text for w in ("iter", "step", "batch", "len(")):
        return True
    numbers = [n.value for n in walk(size) if isinstance(n, ast.Constant) and isinstance(n.value, int)]
    return bool(numbers) and min(numbers) >= _STEPS_NOT_EPOCHS


_STEPS_NOT_EPOCHS = 1000


def _over_batches(loop, ctx) -> bool:
    """A loop over a DataLoader's batches (``for x, y in loader``, ``enumerate(loader)``) that goes on past
    its first batch (a body ending in a bare ``break`` runs once per pass of the loop around it)."""
    if not isinstance(loop, ast.For) or any(isinstance(stmt, ast.Break) for stmt in loop.body):
        return False
    it = loop.iter
    if isinstance(it, ast.Call) and getattr(it.func, "id", None) in ("enumerate", "tqdm") and it.args:
        it = it.args[0]
    kind = ctx.kind(it)  # a DataLoader, or an unbound name that says it is one (train_loader, as bindings.py reads it)
    return kind == "loader" or (
        kind is None and bool(LOADER_NAME.search(getattr(it, "id", getattr(it, "attr", "")) or ""))
    )


def _epoch_scheduler_per_batch(node, ctx) -> bool:
    """``scheduler.step()`` in the loop over batches where the schedule counts epochs: it runs
    len(loader) times faster than written (CosineAnnealingLR(T_max=epochs) done in one epoch). The loop
    may be a caller's: a trainer's ``on_batch_end()`` hook stepping ``self.scheduler``, called per batch."""
    if not (_method(node, "step") and not node.args):
        return False
    ctors = _constructors(node.func.value, node.lineno, ctx)
    if not ctors or not all(isinstance(c, ast.Call) and _counts_epochs(c, ctx) for c in ctors):
        return False
    return _per_batch(node, ctx)


def _constructors(receiver, line, ctx) -> list:
    """The calls that may have built the scheduler ``receiver`` holds: a name's assignment, or for a
    parameter what every call site in the module passes; a ``self.`` attribute's constructions."""
    if isinstance(receiver, ast.Name):
        ctor = ctx.value_of(receiver, line)
        return [ctor] if ctor is not None else ctx.bindings.passed_values(receiver.id, ctx.chain(), line) or []
    if isinstance(receiver, ast.Attribute) and getattr(receiver.value, "id", None) == "self":
        return [call for call, _chain in constructions(receiver, ctx.chain(), line, ctx.klass, ctx) or []]
    return []


def _per_batch(node, ctx, depth: int = 0) -> bool:
    """``node`` runs once per batch: inside a loop over a loader, or in a helper (a method called on
    ``self``, a function of the module) one of whose calls is."""
    loop = next(_enclosing_loops(node, ctx), None)
    if loop is not None:
        return _over_batches(loop, ctx)
    fn = ctx.function
    if depth > 1 or not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.name.startswith("__"):
        return False
    for site in helper_calls(fn, ctx) or ():
        caller = context_at(site, ctx)
        if caller is not None and _per_batch(site, caller, depth + 1):
            return True
    return False


def _counter(loop) -> str | None:
    """The name that counts the loop's passes: a ``for`` loop's target, or the name a ``while`` loop
    tests (``while epoch < max_epochs:``)."""
    if isinstance(loop, ast.For):
        return loop.target.id if isinstance(loop.target, ast.Name) else None
    test = loop.test
    if isinstance(test, ast.Compare) and isinstance(test.left, ast.Name):
        return test.left.id
    return None


def _after_the_first_pass(call, loop, ctx) -> bool:
    """The step sits under ``if epoch > start:`` (or ``!=``) on the loop's counter: it never runs on the
    first pass, so each one follows the optimizer steps of the pass before (MACE's training loop)."""
    counter = _counter(loop)
    up = ctx.parent(call)
    while counter is not None and up is not None and up is not loop:
        if (
            isinstance(up, ast.If)
            and isinstance(up.test, ast.Compare)
            and len(up.test.ops) == 1
            and isinstance(up.test.ops[0], (ast.Gt, ast.NotEq))
            and isinstance(up.test.left, ast.Name)
            and up.test.left.id == counter
            and call in [n for stmt in up.body for n in walk(stmt)]
        ):
            return True
        up = ctx.parent(up)
    return False


def _scheduler_misplaced(node, ctx) -> bool:
    """Reported at the scheduler.step() to move: the one stepped per batch, or the first one of a loop
    body that steps it before the optimizer."""
    if not (isinstance(node, ast.Call) and _scheduler_step(node, ctx)):
        return False
    if _positioned(node, ctx):
        return False
    if _epoch_scheduler_per_batch(node, ctx):
        return True
    for loop in _enclosing_loops(node, ctx):
        if _scheduler_before_optimizer(loop, ctx):
            steps = [n for n in walk(loop) if isinstance(n, ast.Call) and _scheduler_step(n, ctx)]
            return min(steps, key=lambda n: (n.lineno, n.col_offset)) is node
    return False


def _positioned(step, ctx) -> bool:
    """``scheduler.step(epoch)`` given the counter of a loop around it (a ReduceLROnPlateau's argument is its
    metric, not a position): the schedule is set to that position, whatever ran before it in the pass, so no
    value is skipped and none runs too fast (torch warns of the argument's deprecation, not of a wrong rate)."""
    given = step.args[0] if step.args else next((k.value for k in step.keywords if k.arg == "epoch"), None)
    if given is None or _on_a_metric(step, ctx):
        return False
    counters = {_counter(loop) for loop in _enclosing_loops(step, ctx)} - {None}
    return any(isinstance(n, ast.Name) and n.id in counters for n in walk(given))


def _walk_no_loops(node):
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        if not isinstance(n, (ast.For, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            todo.extend(children(n))


RULE = Rule(
    "PTF026",
    ("scheduler-step-placement",),
    "the LR scheduler is stepped in the wrong place: before the optimizer in this loop (the schedule's "
    "first value is skipped; PyTorch warns since 1.1), or once per batch where its schedule counts epochs "
    "(StepLR, CosineAnnealingLR(T_max=epochs): it runs len(loader) times too fast); step it after "
    "optimizer.step(), once per epoch for an epoch schedule",
    _scheduler_misplaced,
    nodes=CALL,
    calls=("step",),
)
