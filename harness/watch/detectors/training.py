"""Training that runs and silently does not learn: a misspelled freeze (requires-grad-typo), a
freeze that momentum outlives (frozen-params-keep-moving), a loss with no past
(loss-rewrapped-from-item), parameters no gradient reaches (parameter-unused-in-forward,
graph-cut-in-forward), layers kept where no optimizer sees them (submodules-in-plain-list), and
loaded weights overwritten by an initialisation (init-after-load-state-dict).

The detectors that need to know which modules ran share one ``_Run`` per watcher: one pair of
global module forward hooks (the stack of running modules, the top-level modules that ran), one
optimizer step pre-hook, and what they saw. Whether a parameter ever received a gradient is
decided when watching ends, over every step that followed a backward: a layer skipped at one step
(LayerDrop, an expert no token chose) is not a layer that never trains.
"""

from __future__ import annotations

import ast
import inspect
import os
import sys
import textwrap
import threading
import weakref
from pathlib import Path

import torch
from torch import nn
from torch.autograd import grad_mode
from torch.nn.modules import module as nn_module
from torch.optim import optimizer as optim

from torch_pitfalls.watch.detectors.base import ClassPatch, Detector
from torch_pitfalls.watch.detectors.graphs import BACKWARD, _roots
from torch_pitfalls.watch.mode import is_compiling
from torch_pitfalls.watch.session import closure_of
from torch_pitfalls.watch.sites import origin, user_site

_MODULE_PY = os.path.join("nn", "modules", "module.py")


def _step_hooks(pre=None, post=None) -> list:
    """Global optimizer step hooks (torch 2.0+; none before)."""
    handles = []
    if pre is not None and hasattr(optim, "register_optimizer_step_pre_hook"):
        handles.append(optim.register_optimizer_step_pre_hook(pre))
    if post is not None and hasattr(optim, "register_optimizer_step_post_hook"):
        handles.append(optim.register_optimizer_step_post_hook(post))
    return handles


def _params(opt):
    return [p for group in opt.param_groups for p in group["params"]]


def _count(opt) -> int:
    return sum(len(group["params"]) for group in opt.param_groups)


def _listed(names: list[str], most: int = 6) -> str:
    names = sorted(names)
    more = f" and {len(names) - most} more" if len(names) > most else ""
    return ", ".join(names[:most]) + more


def _frame_site(frame) -> tuple[str, int, str] | None:
    while frame is not None and origin(frame.f_code.co_filename) != "user":
        frame = frame.f_back
    return None if frame is None else (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)


# -- what the detectors share: the modules that run, the optimizer steps -----------------------------
class _Pending:
    """A parameter an optimizer holds that had no gradient at its first counted step."""

    __slots__ = ("ref", "name", "site")

    def __init__(self, ref, name, site):
        self.ref, self.name, self.site = ref, name, site


class _Census:
    """One optimizer's parameters, over the steps that followed a backward: which ever had a
    gradient, which never did."""

    def __init__(self, opt):
        self.ref = weakref.ref(opt)
        self.kind = type(opt).__name__
        self.backwards = -1  # the backward count at its last counted step
        self.steps = 0
        self.n = -1  # parameters held at the last look
        self.known: set[int] = set()
        self.pending: dict[int, _Pending] = {}
        self.got_any = False


class _Candidate:
    """A module with parameters that ran inside a top-level module's forward without being
    registered in it."""

    __slots__ = ("module", "root", "site", "steps")

    def __init__(self, module, root, site):
        self.module, self.root, self.site, self.steps = weakref.ref(module), weakref.ref(root), site, 0


_RUNS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # watcher -> its _Run


class _Run:
    """The state one watcher's training detectors share. Its module hooks are on every module
    call, so they only push and pop (and, with submodules-in-plain-list, look up one id); all else
    happens per optimizer step, per cut of the graph, or when watching ends."""

    CUT_SITES = 64  # cuts kept until the next step, per site at most CUT_PER_SITE
    CUT_PER_SITE = 4

    @classmethod
    def join(cls, detector, census: bool = False, registry: bool = False) -> "_Run":
        run = _RUNS.get(detector.watcher)
        if run is None:
            run = _RUNS[detector.watcher] = cls(detector.watcher)
        run.add(detector, census, registry)
        return run

    def __init__(self, watcher):
        self.watcher = watcher
        self.members: list = []
        self.thread = threading.get_ident()
        self.off = False
        self.handles: list = []
        self.census_on = self.registry_on = False
        self.feeder = None  # the census detector whose watched calls feed the census
        # the module hooks
        self.stack: list = []
        self.root_grad = True
        self.roots: dict[int, weakref.ref] = {}  # top-level modules that ran
        self.on_root: list = []  # called with each top-level module as its call begins
        self.on_return: list = []  # called with (module, output, stack) as each module call returns
        # the census (parameter-unused-in-forward, graph-cut-in-forward)
        self.backwards = 0
        self.states: dict[int, _Census] = {}
        self.finished: list[_Census] = []
        self.need_cuts = True  # until a step shows no parameter without a gradient
        self.cuts: dict[tuple, list] = {}  # (in a forward, site) -> what was cut there since the last step
        self.quiet: dict[int, weakref.ref] = {}  # modules run with gradients off, outside a recording forward
        self.cut_at: dict[int, tuple] = {}  # id(parameter) -> (its weakref, the site that cut it off, in a forward)
        self._final = None
        self._no_grad_enter = None
        # the registry (submodules-in-plain-list)
        self.members_of: dict[int, list] = {}  # id(root) -> [its weakref, ids of its modules and of outsiders seen]
        self.candidates: list[_Candidate] = []
        self.held: set[int] = set()  # ids of the parameters of every optimizer that stepped
        self.sizes: dict[int, tuple] = {}  # id(optimizer) -> (weakref, count, ids)
        self.decide = None

    # -- joining and leaving ---------------------------------------------------------------------
    def add(self, detector, census: bool, registry: bool) -> None:
        self.registry_on = self.registry_on or registry
        if not self.members:
            try:  # always_call (2.1+) keeps the stack right when a forward raises
                post = nn_module.register_module_forward_hook(self._post, always_call=True)
            except TypeError:
                post = nn_module.register_module_forward_hook(self._post)
            self.handles = [nn_module.register_module_forward_pre_hook(self._pre), post]
            self.handles += _step_hooks(pre=self._stepping)
        self.members.append(detector)
        if census and not self.census_on:
            self.census_on, self.feeder = True, detector
            original = grad_mode.no_grad.__dict__.get("__enter__")
            if original is None:
                return
            run = self

            def __enter__(ctx):
                run._entering_no_grad()
                return original(ctx)

            __enter__.original = original
            grad_mode.no_grad.__enter__ = __enter__
            self._no_grad_enter = __enter__

    def leave(self, detector) -> None:
        if detector in self.members:
            self.members.remove(detector)
        if self.members:
            return
        for h in self.handles:
            h.remove()
        self.handles = []
        if self._no_grad_enter is not None and grad_mode.no_grad.__dict__.get("__enter__") is self._no_grad_enter:
            grad_mode.no_grad.__enter__ = self._no_grad_enter.original
        self._no_grad_enter = None
        _RUNS.pop(self.watcher, None)

    def _fail(self, exc: Exception) -> None:
        self.off = True
        who = self.members[0] if self.members else None
        line = f"{type(who).__name__} ({getattr(who, 'case', '')}): {type(exc).__name__}: {exc}"
        if line not in self.watcher.errors:
            self.watcher.errors.append(line)

    def _watching(self) -> bool:
        return not (self.off or self.watcher.busy or threading.get_ident() != self.thread)

    # -- the module hooks ------------------------------------------------------------------------
    def _pre(self, module, args):
        if is_compiling() or self.off or self.watcher.busy or threading.get_ident() != self.thread:
            return
        try:
            stack = self.stack
            if stack:
                root = stack[0]
                if self.registry_on:
                    entry = self.members_of.get(id(root))
                    if entry is None or entry[0]() is not root or id(module) not in entry[1]:
                        self._unlisted(root, module)
                if self.census_on and self.need_cuts and not torch.is_grad_enabled():
                    if self.root_grad:  # a module run under no_grad inside a forward that records a graph
                        self.cut(("module", weakref.ref(module)), user_site(2), in_forward=True)
                    else:
                        self._quiet(module)
            else:
                self.root_grad = torch.is_grad_enabled()
                if self.census_on and self.need_cuts and not self.root_grad:
                    self._quiet(module)
                for call in self.on_root:
                    call(module)
                ref = self.roots.get(id(module))
                if ref is None or ref() is not module:
                    if len(self.roots) > 256:
                        self.roots = {k: r for k, r in self.roots.items() if r() is not None}
                    self.roots[id(module)] = weakref.ref(module)
            stack.append(module)
        except Exception as exc:  # noqa: BLE001 - the user's program must never see it
            self._fail(exc)

    def _post(self, module, args, output):
        if is_compiling() or threading.get_ident() != self.thread:
            return
        stack = self.stack
        if stack and stack[-1] is module:
            stack.pop()
        else:
            for i in range(len(stack) - 1, -1, -1):
                if stack[i] is module:
                    del stack[i:]
                    break
        if self.on_return and not (self.off or self.watcher.busy):
            try:
                for call in self.on_return:
                    call(module, output, stack)
            except Exception as exc:  # noqa: BLE001 - the user's program must never see it
                self._fail(exc)

    def live_roots(self) -> list[nn.Module]:
        return [m for m in (r() for r in self.roots.values()) if m is not None]

    def parameters_ran(self) -> bool:
        """A module holding a parameter that requires grad ran (as a top-level call)."""
        return any(any(p.requires_grad for p in m.parameters()) for m in self.live_roots())

    # -- the registry: modules run inside a forward that does not own them --------------------------
    def _unlisted(self, root, module) -> None:
        entry = self.members_of.get(id(root))
        if entry is None or entry[0]() is not root:
            if len(self.members_of) > 256:
                self.members_of = {k: e for k, e in self.members_of.items() if e[0]() is not None}
            entry = self.members_of[id(root)] = [weakref.ref(root), set()]
        registered = {id(m) for m in root.modules()}  # again: a layer may have been added since
        entry[1] |= registered
        if id(module) in registered:
            return
        entry[1].add(id(module))  # an outsider: looked at once
        if len(entry[1]) > 100_000:
            entry[1] = registered
        if torch.is_grad_enabled() and any(
            p is not None and p.requires_grad and p.is_leaf for p in module._parameters.values()
        ):
            if len(self.candidates) < 1000:
                self.candidates.append(_Candidate(module, root, user_site(2)))

    def _registry_step(self, opt) -> None:
        size = _count(opt)
        rec = self.sizes.get(id(opt))
        if rec is None or rec[0]() is not opt or rec[1] != size:
            ids = {id(p) for p in _params(opt)}
            rec = self.sizes[id(opt)] = (weakref.ref(opt), size, ids)
            self.held |= ids
        if not self.candidates:
            return
        ripe, kept = [], []
        for c in self.candidates:
            root, module = c.root(), c.module()
            if root is None or module is None:
                continue
            if any(id(p) in rec[2] for p in root.parameters()):
                c.steps += 1  # this optimizer trains the module the candidate ran inside
            # at its optimizer's second step, every optimizer of the loop has stepped once
            (ripe if c.steps >= 2 else kept).append(c)
        self.candidates = kept
        if ripe:
            self._decide(ripe)

    def _decide(self, candidates) -> None:
        groups: dict[tuple, list] = {}
        for c in candidates:
            root, module = c.root(), c.module()
            if root is None or module is None:
                continue
            params = [p for p in module.parameters() if p.requires_grad and p.is_leaf]
            if params and not any(id(p) in self.held for p in params):
                groups.setdefault(c.site, []).append((module, root, len(params)))
        if groups and self.decide is not None:
            self.decide(groups)

    # -- the optimizer step ------------------------------------------------------------------------
    def _stepping(self, opt, args, kwargs):
        if self.off:
            return
        self.stack.clear()  # no forward runs across a step (a forward that raised before 2.1 left it)
        if self.census_on:
            self.watcher.guarded(self.feeder, self._census_step, opt, args, kwargs)
        if self.registry_on and self.decide is not None:
            rec = self.sizes.get(id(opt))
            if self.candidates or rec is None or rec[0]() is not opt or rec[1] != _count(opt):
                self.watcher.guarded(self.decide.__self__, self._registry_step, opt)

    # -- the census: which parameters never received a gradient --------------------------------------
    def backward_ran(self) -> None:
        self.backwards += 1

    def _census_step(self, opt, args, kwargs) -> None:
        census = self.states.get(id(opt))
        if census is None or census.ref() is not opt:
            if census is not None:
                self.finished.append(census)
            census = self.states[id(opt)] = _Census(opt)
        if closure_of(args, kwargs) is not None or census.backwards == self.backwards:
            return  # a closure computes its gradients inside the step; no backward since the last step
        census.backwards = self.backwards
        census.steps += 1
        for key, entry in list(census.pending.items()):
            p = entry.ref()
            if p is None:
                continue
            if p.grad is not None:
                del census.pending[key]
                census.got_any = True
            elif not p.requires_grad:
                del census.pending[key]  # frozen since: no gradient is what was asked for
        if _count(opt) != census.n:  # the first step, or parameters added since
            census.n = _count(opt)
            self._new_parameters(census, opt)
        self._resolve_cuts()

    def _new_parameters(self, census: _Census, opt) -> None:
        fresh = []
        for p in _params(opt):
            if id(p) in census.known:
                continue
            census.known.add(id(p))
            if p.grad is not None:
                census.got_any = True
            elif p.requires_grad:
                fresh.append(p)
        if fresh:
            names = self._names()
            site = user_site(2)
            for p in fresh:
                name = names.get(id(p))
                if name is not None:  # a parameter of a model that ran (not one replaced since)
                    census.pending[id(p)] = _Pending(weakref.ref(p), name, site)

    def _names(self) -> dict[int, str]:
        names: dict[int, str] = {}
        for root in self.live_roots():
            for name, p in root.named_parameters():
                names.setdefault(id(p), f"{type(root).__name__}.{name}")
        return names

    def _unresolved(self) -> dict[int, weakref.ref]:
        out = {}
        for census in self.states.values():
            for key, entry in census.pending.items():
                if key not in self.cut_at and entry.ref() is not None:
                    out[key] = entry.ref
        return out

    def _resolve_cuts(self) -> None:
        """Which parameters still without a gradient lie behind a cut seen since the last step:
        the cuts inside a forward first, then the chosen ones."""
        wanted = self._unresolved()
        if wanted and (self.cuts or self.quiet):
            cuts = sorted(self.cuts.items(), key=lambda item: not item[0][0])
            cuts.append(((False, None), [("module", r) for r in self.quiet.values()]))
            for (in_forward, site), things in cuts:
                for key in self._reach(things, wanted):
                    self.cut_at[key] = (wanted.pop(key), site, in_forward)
                if not wanted:
                    break
        self.cuts.clear()
        self.quiet.clear()
        self.need_cuts = bool(wanted)

    @staticmethod
    def _reach(things, wanted) -> set[int]:
        found, seen, todo = set(), set(), []
        for kind, obj in things:
            if kind == "node":
                todo.append(obj)
            elif kind == "leaf":
                if id(obj) in wanted:
                    found.add(id(obj))
            else:  # a module that ran under no_grad: its own parameters
                module = obj()
                for p in () if module is None else module._parameters.values():
                    if p is not None and id(p) in wanted:
                        found.add(id(p))
        while todo:
            node = todo.pop()
            if node is None or node in seen:
                continue
            seen.add(node)
            variable = getattr(node, "variable", None)
            if variable is not None:
                if id(variable) in wanted:
                    found.add(id(variable))
                continue
            todo.extend(parent for parent, _ in node.next_functions)
        return found

    def cut(self, thing, site, in_forward: bool) -> None:
        """Something cut off the graph at ``site``: inside a forward (graph-cut-in-forward), or in
        the code around the model, where a .detach() or a no_grad block is a choice (a target, a
        frozen teacher, a metric) and what it cut off is left alone."""
        if site is None:
            return
        key = (in_forward, site)
        kept = self.cuts.get(key)
        if kept is None:
            if len(self.cuts) >= self.CUT_SITES:
                return
            kept = self.cuts[key] = []
        elif len(kept) >= self.CUT_PER_SITE:
            del kept[0]
        kept.append(thing)

    def cut_tensor(self, t, site) -> None:
        in_forward = bool(self.stack)
        if t.grad_fn is not None:
            self.cut(("node", t.grad_fn), site, in_forward)
        elif in_forward and t.is_leaf:  # a parameter detached inside a forward
            self.cut(("leaf", t), site, in_forward)

    def _quiet(self, module) -> None:
        """A module run with gradients off outside any forward that records a graph (evaluation, a
        frozen feature extractor, a target network): a parameter of it without a gradient is a choice."""
        if len(self.quiet) < 10_000:
            self.quiet[id(module)] = weakref.ref(module)

    def _entering_no_grad(self) -> None:
        if not self.need_cuts or is_compiling() or not torch.is_grad_enabled() or not self._watching():
            return
        try:
            frame = sys._getframe(2)  # the code entering no_grad
            code = frame.f_code
            if _decorator_wrapper(frame):
                fn = frame.f_locals.get("func")
                fn_code = getattr(fn, "__code__", None)
                if fn_code is None or origin(fn_code.co_filename) != "user":
                    return  # torch's own no_grad functions (clip_grad_norm_, init)
                values = [*frame.f_locals.get("args", ()), *(frame.f_locals.get("kwargs") or {}).values()]
            elif origin(code.co_filename) == "user":
                values = list(frame.f_locals.values())  # `with torch.no_grad():`: what it can reach
            else:
                return
            site = _frame_site(frame)
            for v in values:
                for t in v if isinstance(v, (list, tuple)) else (v,):
                    if isinstance(t, torch.Tensor) and t.requires_grad:
                        self.cut_tensor(t, site)
        except Exception as exc:  # noqa: BLE001
            self._fail(exc)

    def final(self) -> tuple[list, list]:
        """The parameters that never received a gradient, when watching ends: (never reached, cut
        off), each a list of (site, detail)."""
        if self._final is None:
            unused: dict[tuple, list] = {}
            cut: dict[tuple, list] = {}
            for census in [*self.states.values(), *self.finished]:
                if not census.got_any:  # nothing at all had a gradient: another pitfall (a loss with no past)
                    continue
                for key, entry in census.pending.items():
                    at = self.cut_at.get(key)
                    if at is None or at[0] is not entry.ref:
                        unused.setdefault(entry.site, []).append((entry.name, census))
                    elif at[2]:
                        cut.setdefault(at[1], []).append((entry.name, census))
                    # else cut off by a .detach() or no_grad around the model: a choice
            self._final = (
                [(site, self._detail(found)) for site, found in unused.items()],
                [(site, self._detail(found)) for site, found in cut.items()],
            )
        return self._final

    @staticmethod
    def _detail(found) -> str:
        census = found[0][1]
        names = [name for name, _ in found]
        return (
            f"{len(names)} parameter(s) never received a gradient in {census.steps} {census.kind} "
            f"step(s) after backward: {_listed(names)}"
        )


# -- requires-grad-typo -------------------------------------------------------------------------------
TYPOS = ("require_grad", "requires_grads", "require_grads")


class _Misspelled:
    """A data descriptor on torch.Tensor under a misspelled name: it stores the value where
    Python would have (the tensor's __dict__), and tells the detector who assigned it."""

    def __init__(self, detector, name):
        self.detector, self.name = detector, name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        try:
            return obj.__dict__[self.name]
        except KeyError:
            raise AttributeError(f"{type(obj).__name__!r} object has no attribute {self.name!r}") from None

    def __set__(self, obj, value):
        obj.__dict__[self.name] = value
        d = self.detector
        if d.watcher is not None and not d.watcher.busy:
            d.watcher.guarded(d, d._assigned, obj, self.name, value, sys._getframe(1))

    def __delete__(self, obj):
        try:
            del obj.__dict__[self.name]
        except KeyError:
            raise AttributeError(self.name) from None


def _misspelled_value(p, name):
    value = p.__dict__.get(name)
    return value if isinstance(value, (bool, int)) else None


class RequiresGradTypo(Detector):
    """``p.require_grad = False`` (or ``requires_grads``, ``require_grads``): a new attribute that
    autograd never reads, so the tensor keeps requiring grad (or, set to True, keeps not
    requiring it). Reported at the assignment when user code made it and the value contradicts
    ``requires_grad``; a tensor that carried the attribute before watching began is reported at the
    first step of an optimizer that holds it. Fix: ``requires_grad``, or ``module.requires_grad_(False)``,
    a method, which raises on a typo."""

    case = "requires-grad-typo"
    message = (
        "p.require_grad (no s) is a new, meaningless attribute: requires_grad did not change, so a "
        "'frozen' parameter still trains (or a 'trainable' one never does); write p.requires_grad = ..., "
        "or module.requires_grad_(False), a method that raises on a typo"
    )

    def start(self):
        self.installed = []
        for name in TYPOS:
            if not hasattr(torch.Tensor, name):
                setattr(torch.Tensor, name, _Misspelled(self, name))
                self.installed.append(name)
        self.flagged: dict[int, weakref.ref] = {}  # tensors already reported
        self.seen = weakref.WeakKeyDictionary()  # optimizer -> parameter count at its last look
        self.handles = _step_hooks(pre=self._stepping)

    def stop(self):
        for h in self.handles:
            h.remove()
        for name in self.installed:
            if isinstance(torch.Tensor.__dict__.get(name), _Misspelled):
                delattr(torch.Tensor, name)
        self.installed = []

    def _flag(self, t) -> bool:
        ref = self.flagged.get(id(t))
        if ref is not None and ref() is t:
            return False
        self.flagged[id(t)] = weakref.ref(t)
        return True

    def _assigned(self, t, name, value, frame):
        if not isinstance(value, (bool, int)) or bool(value) == t.requires_grad:
            return  # the same as requires_grad: the typo changed nothing that matters
        site = _frame_site(frame)
        if site is None or frame is None or origin(frame.f_code.co_filename) != "user":
            return  # copied by copy/pickle/torch: the step says so, if an optimizer holds it
        if self._flag(t):
            kind = "Parameter" if isinstance(t, nn.Parameter) else "tensor"
            self.report(
                f"{kind} of shape {tuple(t.shape)}: {name} = {value!r}, but requires_grad is {t.requires_grad}",
                site=site,
            )

    def _stepping(self, opt, args, kwargs):
        if self.seen.get(opt) != _count(opt):  # a new optimizer, or new parameters in it
            self.watcher.guarded(self, self._check, opt)

    def _check(self, opt):
        self.seen[opt] = _count(opt)
        found = []
        for p in _params(opt):
            for name in TYPOS:
                value = _misspelled_value(p, name)
                if value is not None and bool(value) != p.requires_grad and self._flag(p):
                    found.append(f"{name} = {value!r} on a parameter of shape {tuple(p.shape)}")
        if found:
            self.report(
                f"{type(opt).__name__}.step() holds {len(found)} parameter(s) whose requires_grad the typo "
                f"did not set: {_listed(found, 3)}",
                site=user_site(2),
            )


# -- frozen-params-keep-moving -----------------------------------------------------------------------
def _changed(before: torch.Tensor, after: torch.Tensor) -> bool:
    if torch.equal(before, after):
        return False
    if before.is_floating_point() or before.is_complex():
        both_nan = before.isnan() & after.isnan()
        return bool(((before != after) & ~both_nan).any())
    return True


class FrozenParamsKeepMoving(Detector):
    """An optimizer step that changes a parameter whose requires_grad is False. Optimizers skip a
    parameter only when its .grad is None: frozen with a zeroed gradient tensor
    (zero_grad(set_to_none=False), p.grad.zero_()), it is still stepped, and momentum, weight decay
    or Adam's averages move it. Each frozen parameter with a gradient tensor is compared across one
    step (a copy before, the values after); one that did not move is not looked at again until it
    is unfrozen. Fix: ``p.grad = None`` when freezing."""

    case = "frozen-params-keep-moving"
    message = (
        "optimizer.step() changed a parameter whose requires_grad is False: its .grad is a zeroed tensor, "
        "not None, so the optimizer still steps it (momentum, weight decay, Adam's averages); set "
        "p.grad = None when freezing, or zero_grad(set_to_none=True)"
    )

    def start(self):
        self.watching: list = []  # (parameter, its values before this step)
        self.settled: set[int] = set()  # frozen parameters a step left alone
        self.flagged: set[int] = set()
        self.handles = _step_hooks(pre=self._pre, post=self._post)

    def stop(self):
        for h in self.handles:
            h.remove()
        self.watching = []

    def _pre(self, opt, args, kwargs):
        self.watcher.guarded(self, self._before, opt)

    def _post(self, opt, args, kwargs):
        if self.watching:
            self.watcher.guarded(self, self._after, opt)

    def _before(self, opt):
        self.watching = []
        for p in _params(opt):
            if p.requires_grad:
                if self.settled:
                    self.settled.discard(id(p))  # unfrozen: a later freeze is looked at again
                continue
            if p.grad is None or id(p) in self.settled or id(p) in self.flagged or p.layout != torch.strided:
                continue
            self.watching.append((p, p.detach().clone()))

    def _after(self, opt):
        moved = []
        for p, before in self.watching:
            if _changed(before, p.detach()):
                self.flagged.add(id(p))
                moved.append(tuple(p.shape))
            else:
                self.settled.add(id(p))
        self.watching = []
        if moved:
            self.report(
                f"{type(opt).__name__}.step() moved {len(moved)} parameter(s) with requires_grad=False "
                f"(shapes {moved[:3]}), each with a gradient tensor instead of None",
                site=user_site(2),
            )


# -- loss-rewrapped-from-item ---------------------------------------------------------------------------
class LossRewrappedFromItem(Detector):
    """``backward()`` on a tensor that is a leaf (no grad_fn), requires grad, and is not a
    Parameter, while a model with trainable parameters has run: a loss rebuilt from its value
    (``torch.tensor(loss.item(), requires_grad=True)``, ``loss.detach().requires_grad_()``), whose
    backward reaches nothing but itself. Fix: backward on the loss autograd computed."""

    case = "loss-rewrapped-from-item"
    message = (
        "backward() on a leaf tensor made by hand (no grad_fn): the loss was rebuilt from its value "
        "(.item(), NumPy, .detach().requires_grad_()), so no parameter gets a gradient and nothing learns; "
        "call backward() on the loss autograd computed, and keep .item() for logging"
    )

    def functions(self):
        return BACKWARD

    def start(self):
        self.run = _Run.join(self)

    def stop(self):
        self.run.leave(self)

    def before(self, func, args, kwargs):
        roots = _roots(func, args, kwargs)
        leaves = [r for r in roots if r.grad_fn is None and r.requires_grad and not isinstance(r, nn.Parameter)]
        if leaves and self.run.parameters_ran():
            shapes = [tuple(r.shape) for r in leaves]
            self.report(f"backward() from a leaf of shape {shapes[0]}: its graph is itself")


# -- parameter-unused-in-forward, graph-cut-in-forward ------------------------------------------------------
_DATA_GET = torch.Tensor.data.__get__
CUTS = (torch.Tensor.detach, torch.Tensor.detach_, _DATA_GET, torch.Tensor.item, torch.Tensor.tolist)


def _decorator_wrapper(frame) -> bool:
    """The frame of torch's wrapper around a function decorated with a context manager
    (``@torch.no_grad()``): named ``decorate_context`` until 2.14; from 2.15 renamed after the
    context manager (``no_grad``), so it is known by its file and the function it holds."""
    code = frame.f_code
    if origin(code.co_filename) != "torch":
        return False
    return code.co_name == "decorate_context" or (
        Path(code.co_filename).name == "_contextlib.py" and callable(frame.f_locals.get("func"))
    )


class _CensusDetector(Detector):
    """Both census detectors see backward calls and the calls that cut a graph; the first to
    start feeds the shared census, so each event is counted once whichever of them run."""

    def functions(self):  # after start: only the feeder sees them
        return BACKWARD + CUTS if self.run.feeder is self else ()

    def start(self):
        self.run = _Run.join(self, census=True)

    def before(self, func, args, kwargs):
        run = self.run
        if func in BACKWARD:
            run.backward_ran()
            return
        if not run.need_cuts or not torch.is_grad_enabled():
            return
        t = args[0] if args else None
        if isinstance(t, torch.Tensor) and t.requires_grad:
            run.cut_tensor(t, user_site(2))

    def _report_final(self, which: int) -> None:
        for site, detail in self.run.final()[which]:
            self.report(detail, site=site)

    def stop(self):
        try:
            self._report_final(self.which)
        finally:
            self.run.leave(self)


class ParameterUnusedInForward(_CensusDetector):
    """Parameters an optimizer holds, that require grad and belong to a model that ran, but had
    no gradient at any optimizer step that followed a backward, while other parameters of that
    optimizer did. Decided when watching ends (a layer skipped at some steps is not reported),
    and reported once per set at the step where they were first without a gradient. Those whose
    graph a cut inside a forward cut off are graph-cut-in-forward's; those cut off around the
    model (a detached target, a module run under no_grad) are left alone.
    Fix: call the layer in forward, or remove it."""

    case = "parameter-unused-in-forward"
    which = 0
    message = (
        "parameters the optimizer holds never received a gradient: forward never used them (a layer "
        "defined in __init__ but not called) or nothing it computed from them reached the loss, so they "
        "keep their initial values; call the layer in forward, or remove it"
    )


class GraphCutInForward(_CensusDetector):
    """Parameters an optimizer holds and that require grad, which never received a gradient
    because, inside a module's forward, what was computed from them was cut off the graph: passed
    to a function decorated with torch.no_grad() (or live in the frame of a ``with
    torch.no_grad()`` block), .detach()-ed, read through .data or .item(), or run as a module under
    no_grad inside a forward that records a graph. The cut is found by walking the cut tensor's
    graph back to those parameters; the report is at the line that cut it. A cut in the code
    around the model (a detached target, a teacher run under no_grad) is a choice: what it cuts
    off is reported by neither detector. Fix: keep forward differentiable, no_grad around evaluation."""

    case = "graph-cut-in-forward"
    which = 1
    message = (
        "parameters the optimizer holds never received a gradient: the graph was cut after they were "
        "used (a torch.no_grad() function, .detach(), .data or .item() on the way to the loss), so every "
        "layer before the cut keeps its initial values; keep forward differentiable and put no_grad "
        "around evaluation only"
    )


# -- submodules-in-plain-list ---------------------------------------------------------------------------
def _holder(root: nn.Module, module: nn.Module) -> tuple[str, object, str]:
    """Where the root keeps the module: ('Tower.blocks, a list', the owner, 'blocks'), or ('', None, '')."""

    def holds(v) -> bool:  # the module, or a module containing it (a block whose layers ran)
        return v is module or (isinstance(v, nn.Module) and any(m is module for m in v.modules()))

    for owner in root.modules():
        for attr, value in vars(owner).items():
            if isinstance(value, (list, tuple)):
                inside = any(holds(v) for v in value)
            elif isinstance(value, dict) and not attr.startswith("_"):
                inside = any(holds(v) for v in value.values())
            else:
                continue
            if inside:
                return f"{type(owner).__name__}.{attr}, a {type(value).__name__}", owner, attr
    return "", None, ""


def _assigned_at(owner, attr: str) -> tuple[str, int, str] | None:
    """The user's line in the owner's class that assigns ``self.<attr>`` (the plain container), or None."""
    try:
        filename = inspect.getsourcefile(type(owner))
        lines, first = inspect.getsourcelines(type(owner))
    except (OSError, TypeError):
        return None
    if filename is None or origin(filename) != "user":
        return None
    try:
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except SyntaxError:
        return None
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AnnAssign)
                else []
            )
            for t in targets:
                if isinstance(t, ast.Attribute) and t.attr == attr and getattr(t.value, "id", None) == "self":
                    return filename, first + node.lineno - 1, fn.name
    return None


class SubmodulesInPlainList(Detector):
    """A module holding parameters that require grad ran, with gradients on, inside the forward of
    a top-level module that does not register it (kept in a list, dict or tuple, created inside
    forward), while an optimizer trains that top-level module and no optimizer holds the module's
    parameters. Decided at that optimizer's second step (every optimizer of a loop has stepped
    by then), or when watching ends. Reported at the line that assigns the plain container
    (``self.blocks = [...]``) when the class's source is the user's, else where the module ran.
    Fix: nn.ModuleList / nn.ModuleDict / nn.Sequential."""

    case = "submodules-in-plain-list"
    message = (
        "a layer ran inside a model's forward without being registered in it (kept in a plain list, "
        "dict or tuple): it is missing from model.parameters(), so no optimizer trains it, and .to(), "
        ".double() and state_dict() skip it; keep layers in nn.ModuleList, nn.ModuleDict or nn.Sequential"
    )

    def start(self):
        self.run = _Run.join(self, registry=True)
        self.run.decide = self._found

    def stop(self):
        try:
            ripe = [c for c in self.run.candidates if c.steps >= 1]
            self.run.candidates = []
            if ripe:
                self.run._decide(ripe)
        finally:
            self.run.decide = None
            self.run.leave(self)

    def _found(self, groups):
        for site, found in groups.items():
            module, root, _ = found[0]
            where, owner, attr = _holder(root, module)
            n = sum(k for _, _, k in found)
            kept_at = _assigned_at(owner, attr) if owner is not None else None
            ran = f"; they run at line {site[1]}" if kept_at and site else ""
            self.report(
                f"{len(found)} {type(module).__name__} module(s) ran in {type(root).__name__}.forward "
                f"unregistered{f' (in {where})' if where else ''}: {n} parameter(s) no optimizer holds{ran}",
                site=kept_at or site,
            )


# -- init-after-load-state-dict ---------------------------------------------------------------------------
_FILLS = ("uniform_", "normal_", "fill_", "zero_", "random_", "exponential_", "log_normal_", "cauchy_")
# The fills, and the nn.init functions themselves: those that hand themselves to torch-function
# modes (uniform_, normal_, constant_, kaiming_uniform_, ...) run their fill out of the mode's sight.
INIT_OPS = tuple(getattr(torch.Tensor, n) for n in _FILLS if hasattr(torch.Tensor, n)) + tuple(
    f
    for n, f in sorted(vars(nn.init).items())
    if n.endswith("_") and not n.startswith("_") and callable(f) and getattr(f, "__module__", "") == nn.init.__name__
)


class _Load:
    __slots__ = ("total", "overwritten", "names", "reported")

    def __init__(self, total):
        self.total, self.overwritten, self.names, self.reported = total, 0, [], False


def _apply_site():
    """The user's line that called the outermost Module.apply now running, or None."""
    frame, outer = sys._getframe(1), None
    while frame is not None:
        if frame.f_code.co_name == "apply" and frame.f_code.co_filename.endswith(_MODULE_PY):
            outer = frame
        frame = frame.f_back
    return None if outer is None else _frame_site(outer.f_back)


class InitAfterLoadStateDict(Detector):
    """Most of what one ``load_state_dict`` wrote (half its elements or more) re-initialised
    before any optimizer step or backward: a random or constant fill (uniform_, normal_, fill_,
    zero_: what nn.init, reset_parameters and ``.data.normal_()`` do) into a loaded parameter's
    whole storage. Reported at the ``module.apply(...)`` line when an apply runs it, else at the
    line of the fill. A copy into the weights (an EMA, a transplant) and a re-initialised head are
    left alone. Fix: initialise first, load last."""

    case = "init-after-load-state-dict"
    message = (
        "an initialisation overwrote the weights load_state_dict had just loaded: the model runs with "
        "fresh random weights and the checkpoint is lost; initialise first and load last"
    )

    def start(self):
        self.loaded: dict[int, tuple] = {}  # data_ptr -> (weakref, numel, its load, name)
        self.depth = 0
        detector = self

        def watched(original):
            def load_state_dict(module, state_dict, *args, **kwargs):
                detector.depth += 1
                try:
                    result = original(module, state_dict, *args, **kwargs)
                finally:
                    detector.depth -= 1
                if detector.depth == 0 and not is_compiling():
                    detector.watcher.guarded(detector, detector._loaded, module, state_dict)
                return result

            return load_state_dict

        self.patch = ClassPatch(nn.Module, "load_state_dict", watched)
        self.handles = _step_hooks(pre=self._stepping)

    def stop(self):
        for h in self.handles:
            h.remove()
        self.patch.restore()

    def _stepping(self, opt, args, kwargs):
        if self.loaded:
            self.loaded.clear()  # trained from here on: writes are updates

    def _loaded(self, module, state_dict):
        keys = set(state_dict.keys()) if hasattr(state_dict, "keys") else set()
        entries = [
            (name, p)
            for name, p in module.named_parameters()
            if name in keys and p.numel() > 0 and p.device.type != "meta" and p.data_ptr() != 0
        ]
        if not entries:
            return
        load = _Load(sum(p.numel() for _, p in entries))
        if not self.loaded:  # from the first load on: the fills, and backward (which ends the watch)
            self.watcher.watch_functions(self, INIT_OPS + BACKWARD)
        prefix = type(module).__name__
        for name, p in entries:
            self.loaded[p.data_ptr()] = (weakref.ref(p), p.numel(), load, f"{prefix}.{name}")

    def before(self, func, args, kwargs):
        if func in BACKWARD:
            self.loaded.clear()
            return
        if not self.loaded:
            return
        t = args[0] if args else kwargs.get("tensor")  # nn.init hands itself over with tensor=
        if not isinstance(t, torch.Tensor):
            return
        entry = self.loaded.get(t.data_ptr())
        if entry is None:
            return
        ref, numel, load, name = entry
        p = ref()
        if p is None or t.numel() != numel or p.data_ptr() != t.data_ptr():
            return
        del self.loaded[t.data_ptr()]
        load.overwritten += numel
        load.names.append(name)
        if not load.reported and 2 * load.overwritten >= load.total:
            load.reported = True
            self.report(
                f"{load.overwritten} of the {load.total} elements load_state_dict wrote re-initialised before "
                f"any step or backward (by here: {_listed(load.names)})",
                site=_apply_site() or user_site(2),
            )
