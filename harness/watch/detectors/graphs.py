"""What a backward pass shows: NaN gradients from a finite loss (nan-grad-through-mask), and
losses kept with their graphs after backward (loss-append-keeps-graph)."""

from __future__ import annotations

import ast
import linecache
import math
import sys
import weakref

import torch

from torch_pitfalls.watch.detectors.base import Detector, arg
from torch_pitfalls.watch.sites import origin, shown_path, user_site


def _roots(func, args, kwargs) -> list[torch.Tensor]:
    first = arg(args, kwargs, 0, "tensors" if func is torch.autograd.backward else "self")
    if isinstance(first, torch.Tensor):
        return [first]
    if isinstance(first, (list, tuple)):
        return [t for t in first if isinstance(t, torch.Tensor)]
    return []


def leaves(roots) -> list[torch.Tensor]:
    """The leaf tensors whose .grad a backward from ``roots`` will write (its AccumulateGrad nodes)."""
    out, seen = [], set()
    todo = [r.grad_fn for r in roots if r.grad_fn is not None]
    while todo:
        node = todo.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        variable = getattr(node, "variable", None)
        if variable is not None:
            out.append(variable)
        todo.extend(parent for parent, _ in node.next_functions)
    return out


BACKWARD = (torch.Tensor.backward, torch.autograd.backward)


def finite(t: torch.Tensor) -> bool:
    t = t.detach()
    return math.isfinite(t.item()) if t.numel() == 1 else bool(torch.isfinite(t).all())


class NanGradThroughMask(Detector):
    case = "nan-grad-through-mask"
    message = (
        "a finite loss gave NaN gradients: an inf computed in the forward (a division by zero, log or "
        "sqrt at 0) was masked out afterwards, and its backward multiplies 0 by inf; make the input safe "
        "before the operation (torch.where on the input, then on the result)"
    )

    def functions(self):
        return BACKWARD

    def before(self, func, args, kwargs):
        roots = _roots(func, args, kwargs)
        if not roots or not all(finite(r) for r in roots):
            return None  # a NaN or inf loss is another problem, and says so itself
        return leaves(roots)

    def after(self, func, args, kwargs, result, state):
        if not state:
            return
        grads = [t.grad for t in state if t.grad is not None]
        # One sum per gradient: NaN anywhere makes it NaN. Only then (or for +inf beside -inf)
        # look element by element.
        if (
            grads
            and bool(torch.stack([g.sum() for g in grads]).isnan().any())
            and any(bool(torch.isnan(g).any()) for g in grads)
        ):
            bad = [tuple(t.shape) for t in state if t.grad is not None and bool(torch.isnan(t.grad).any())]
            self.report(f"NaN in the gradient of {len(bad)} leaf tensor(s), shapes {bad[:3]}")


ACCUMULATING = tuple(
    f
    for f in (
        torch.Tensor.add,
        torch.Tensor.__add__,
        torch.Tensor.__radd__,
        torch.Tensor.add_,
        torch.Tensor.__iadd__,
        torch.add,
        torch.stack,
        torch.cat,
        torch.sum,
    )
    if f is not None
)


# -- where a kept loss was put: the append, not the backward that finds it ---------------------------
APPENDERS = ("append", "extend", "insert", "appendleft")
LOOKED_AT = 8  # the last elements of a list searched for a kept loss


def _holds(container, tensors) -> bool:
    if isinstance(container, dict):
        return False
    try:
        tail = list(container)[-LOOKED_AT:] if isinstance(container, (list, tuple)) else []
    except Exception:  # noqa: BLE001 - a foreign container
        return False
    return any(x is t for x in tail for t in tensors)


def _holder_paths(name, value, tensors) -> list[tuple]:
    """How a frame's variable reaches a list holding one of ``tensors``: (name,), (name, "[]") for
    a dict's list, (name, attr) for an object's list attribute."""
    if isinstance(value, list):
        return [(name,)] if _holds(value, tensors) else []
    if isinstance(value, dict):
        return (
            [(name, "[]")] if any(isinstance(v, list) and _holds(v, tensors) for v in list(value.values())[:64]) else []
        )
    attrs = getattr(value, "__dict__", None)
    if isinstance(attrs, dict) and not isinstance(value, type):
        return [(name, a) for a, v in list(attrs.items())[:256] if isinstance(v, list) and _holds(v, tensors)]
    return []


def _path(node) -> tuple:
    """``losses`` -> ("losses",); ``self.losses`` -> ("self", "losses"); ``h["train"]`` -> ("h", "[]")."""
    parts = []
    while True:
        if isinstance(node, ast.Name):
            return (node.id, *reversed(parts))
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
        elif isinstance(node, ast.Subscript):
            parts.append("[]")
        else:
            return ()
        node = node.value


def _appends_in(tree, first, last, paths) -> int | None:
    """The first line between ``first`` and ``last`` that calls .append (.extend, ...) on one of ``paths``."""
    found = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in APPENDERS
        and first <= node.lineno <= last
        and _path(node.func.value) in paths
    ]
    return min(found) if found else None


def _scope(tree, line) -> tuple[int, int]:
    """The lines of the innermost function around ``line`` (the whole file at module level)."""
    best = (1, 10**9)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= (node.end_lineno or 0):
            if node.lineno >= best[0]:
                best = (node.lineno, node.end_lineno)
    return best


def append_site(tensors) -> tuple | None:
    """The user's line that appended one of ``tensors`` to a list its frame can reach, found from
    the innermost user frame outwards: the cause of a loss kept alive with its graph."""
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if origin(code.co_filename) == "user":
            paths = set()
            for name, value in list(frame.f_locals.items()):
                paths.update(_holder_paths(name, value, tensors))
            if paths:
                try:  # the file read once, for the function around the line and the appends in it
                    tree = ast.parse("".join(linecache.getlines(code.co_filename)))
                except (SyntaxError, ValueError):
                    tree = None
                if tree is not None:
                    first, last = _scope(tree, frame.f_lineno)
                    line = _appends_in(tree, first, last, paths)
                    if line is not None:
                        return code.co_filename, line, code.co_name
        frame = frame.f_back
    return None


class LossAppendKeepsGraph(Detector):
    case = "loss-append-keeps-graph"
    message = (
        "a loss that was already backpropagated is kept as a tensor, and with it its whole graph, every "
        "step; keep loss.item() (or loss.detach()) for logging"
    )
    KEPT = 3  # this many backpropagated losses of one backward call alive at once
    # In a backpropagated root's grad_fn metadata: the optimizer steps run when its backward()
    # ran, and which backward of its line it was. A sum of the current step's losses is logging
    # (DCGAN's errD = errD_real + errD_fake); a sum that still holds a loss of an earlier step, or
    # one whose backward line has run again since (a loop without an optimizer), accumulates.
    FLAG = "pitfalls_watch_backpropagated"

    def __init__(self):
        self.alive: dict[tuple, list] = {}
        self.steps = 0
        self.backwards: dict[tuple, int] = {}  # user line of a backward() -> how many ran there

    def start(self):
        from torch.optim import optimizer

        self.handles = [optimizer.register_optimizer_step_post_hook(self._stepped)]

    def stop(self):
        for h in self.handles:
            h.remove()

    def _stepped(self, opt, args, kwargs):
        self.steps += 1

    def functions(self):
        return BACKWARD + ACCUMULATING

    def before(self, func, args, kwargs):
        if func in BACKWARD or not torch.is_grad_enabled():
            return None
        # Read before the call: an in-place `total += loss` moves total's old graph one level down.
        parts = [a for a in args if isinstance(a, torch.Tensor)]
        for a in args:
            if isinstance(a, (list, tuple)):
                parts += [t for t in a if isinstance(t, torch.Tensor)]
        return any(self._from_an_earlier_step(p.grad_fn) for p in parts)

    def after(self, func, args, kwargs, result, state):
        if func in BACKWARD:
            self._backpropagated(func, args, kwargs)
        elif state and isinstance(result, torch.Tensor) and result.requires_grad:
            # `total = total + loss` / `total += loss` / torch.stack(losses): a graph built on a finished
            # one; a list's losses were kept where they were appended
            site = None
            if func in (torch.stack, torch.cat):
                parts = [t for a in args if isinstance(a, (list, tuple)) for t in a if isinstance(t, torch.Tensor)]
                site = append_site(parts)
            self.report(f"{getattr(func, '__name__', func)} builds on a loss whose backward() already ran", site=site)

    def _from_an_earlier_step(self, node) -> bool:
        """The node is a loss backpropagated in an earlier step, or sums one (`total = total +
        loss` after `loss.backward()`; `total += loss` before it, seen at the next step)."""
        if node is None:
            return False
        nodes = [node, *(parent for parent, _ in node.next_functions if parent is not None)]
        for n in nodes:
            mark = n.metadata.get(self.FLAG)
            if mark is not None:
                step, site, nth = mark
                if step < self.steps or nth < self.backwards.get(site, 0):
                    return True
        return False

    def _backpropagated(self, func, args, kwargs):
        if arg(args, kwargs, 2, "retain_graph"):
            return  # the graph is kept on purpose
        roots = [r for r in _roots(func, args, kwargs) if r.grad_fn is not None]
        site = user_site(2)
        nth = self.backwards[site] = self.backwards.get(site, 0) + 1
        kept = [ref for ref in self.alive.get(site, []) if ref() is not None]
        for r in roots:
            r.grad_fn.metadata.setdefault(self.FLAG, (self.steps, site, nth))
            kept.append(weakref.ref(r))
        self.alive[site] = kept
        if len(kept) > self.KEPT:
            alive = [t for t in (ref() for ref in kept) if t is not None]
            self.report(
                f"{len(kept) - 1} earlier losses backpropagated at line {site[1] if site else '?'} are still alive, "
                "each holding its graph",
                site=append_site(alive) or site,
            )


class ExplodingLoss(Detector):
    """A loss that grew ``GROWTH`` times or more above its first finite value, then became inf or
    NaN: exploding gradients, each step larger than the last, until the numbers overflowed. A loss
    that is NaN from the first step (bad data, a log of zero) is another pitfall and is left alone.
    Reported once, at the ``backward()`` of the first non-finite loss. Fix: clip the gradient norm
    between ``backward()`` and ``step()`` (``torch.nn.utils.clip_grad_norm_``), and look at the
    learning rate and the initialisation.

    The report also names the first module whose output was not finite in the forward pass that
    gave that loss, and the line that called it: where the overflow starts, what guardtower and
    torch-audit report for any NaN. A global forward hook finds it, checking each module's output;
    it is armed only once the loss has grown ``ARM`` times, so a healthy run never pays for it."""

    case = "exploding-gradients-without-clipping"
    message = (
        "the loss grew by orders of magnitude and then became inf/nan: exploding gradients, each step larger "
        "than the last; clip the gradient norm between backward() and step() "
        "(torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)), and check the learning rate "
        "and the scale of the inputs"
    )
    GROWTH = 1000.0
    ARM = 10.0

    def __init__(self):
        self.first = None  # |loss| of the first finite, non-zero loss
        self.peak = 0.0
        self.done = False
        self.hooks = []  # the forward hooks, once armed
        self.root, self.depth = None, 0  # the outermost module in its forward, and how deep we are
        self.first_bad = None  # (module's name, site) of this step's first non-finite output

    def functions(self):
        return BACKWARD

    def stop(self) -> None:
        self._disarm()

    def _arm(self) -> None:
        from torch.nn.modules import module as nn_module

        if self.hooks:
            return
        try:  # a forward that raises still ends (2.1+), so the depth stays right
            post = nn_module.register_module_forward_hook(self._output, always_call=True)
        except TypeError:
            post = nn_module.register_module_forward_hook(self._output)
        self.hooks = [nn_module.register_module_forward_pre_hook(self._enter), post]
        self.root, self.depth = None, 0

    def _disarm(self) -> None:
        for h in self.hooks:
            h.remove()
        self.hooks = []

    def _enter(self, module, args) -> None:
        if self.depth == 0:
            self.root = module
        self.depth += 1

    def _output(self, module, args, output) -> None:
        self.depth = max(self.depth - 1, 0)
        # hooks run innermost first: the first non-finite output seen is the module where it starts
        if self.first_bad is not None or self.watcher.busy:
            return
        if isinstance(output, torch.Tensor) and output.is_floating_point() and output.numel():
            if not bool(torch.isfinite(output.detach()).all()):
                self.first_bad = (self._name(module), user_site(2))

    def _name(self, module) -> str:
        """``head.2 (Linear)``: its path in the outermost module being run, and its type."""
        kind = type(module).__name__
        if self.root is not None and module is not self.root:
            for name, sub in self.root.named_modules():
                if sub is module:
                    return f"{type(self.root).__name__}.{name} ({kind})"
        return kind

    def before(self, func, args, kwargs):
        if self.done:
            return
        roots = [r for r in _roots(func, args, kwargs) if r.numel() == 1 and r.grad_fn is not None]
        if len(roots) != 1 or not (roots[0].is_floating_point() or roots[0].is_complex()):
            return
        value = abs(roots[0].detach().item())
        if math.isfinite(value):
            if self.first is None:
                if value > 0:
                    self.first = value
            else:
                self.peak = max(self.peak, value)
                if self.peak >= self.ARM * self.first:
                    self._arm()
            self.first_bad = None  # the next forward pass is looked at afresh
            return
        armed = bool(self.hooks)
        self._disarm()
        if self.first is None:
            self.done = True  # non-finite from the start: not an explosion
            return
        self.done = True
        if self.peak >= self.GROWTH * self.first:
            detail = f"loss {self.first:.3g} at first, {self.peak:.3g} at its largest, then {value}"
            if self.first_bad is not None:
                kind, site = self.first_bad
                where = f" at {shown_path(site[0])}:{site[1]}" if site else ""
                detail += f"; the first module whose output was not finite: {kind}{where}"
            elif armed:
                detail += "; every module's output was finite in that forward pass: the loss itself overflowed"
            self.report(detail)
