"""A weight edited behind autograd's back: an in-place change through ``.data`` between the
forward pass that used a parameter and the backward pass that reads it
(inplace-edit-through-data).

Every in-place operation on a tensor bumps its version counter, and autograd raises at backward
when a tensor it saved has a newer version than the one it saved. ``.data`` hands out a tensor
with the same storage and a counter of its own, so an edit through it changes the numbers and
not the version: backward computes the gradients of a loss nobody computed. The one sound sign is
therefore exactly that: a parameter used by a forward that records a graph whose values changed
before the next backward while its version did not. (A parameter whose ``.data`` was rebound to
other storage, as ZeRO-3 and FSDP do between forward and backward, has another address or shape
and is not an in-place edit.) Looked at over the first few backward passes only: a mistake in a
training loop repeats at every step.
"""

from __future__ import annotations

import math
import weakref

import torch

from torch_pitfalls.watch.detectors.base import Detector
from torch_pitfalls.watch.detectors.graphs import BACKWARD
from torch_pitfalls.watch.detectors.training import _DATA_GET, _listed, _Run
from torch_pitfalls.watch.sites import user_site


def _fingerprint(p: torch.Tensor) -> tuple:
    """Three reductions that an in-place edit (a clamp, a rescale, a fill) changes: no copy of the
    parameter is kept."""
    t = p.detach()
    if not (t.is_floating_point() or t.is_complex()):
        t = t.double()
    return (
        float(t.sum()),
        float(torch.linalg.vector_norm(t, 1)),
        float(torch.linalg.vector_norm(t, 2)),
    )


def _same(a: tuple, b: tuple) -> bool:
    """Equal fingerprints; NaN equals NaN (a parameter already NaN has not been edited)."""
    return all(x == y or (math.isnan(x) and math.isnan(y)) for x, y in zip(a, b))


class _Seen:
    __slots__ = ("ref", "name", "version", "ptr", "shape", "print", "data_site")

    def __init__(self, p, name):
        self.ref, self.name = weakref.ref(p), name
        self.version, self.ptr, self.shape = p._version, p.data_ptr(), tuple(p.shape)
        self.print = _fingerprint(p)
        self.data_site = None  # where .data of it was taken since that forward


class InplaceEditThroughData(Detector):
    """A parameter that requires grad, used by a top-level module called with gradients on, whose
    values changed before the next ``backward()`` while its version counter did not: an in-place
    edit through ``.data`` (``w.data.clamp_()``, ``w.data.mul_()``, ``w.data[...] = ``), which
    autograd cannot see, so backward used the edited weight. Reported at the line that took
    ``.data`` (else at the backward), over the first ``BACKWARDS`` backward passes. The same edit
    under ``torch.no_grad()`` bumps the version and torch raises itself; an edit after backward is
    an update. Fix: constrain weights after ``optimizer.step()``, under ``torch.no_grad()``."""

    case = "inplace-edit-through-data"
    message = (
        "a parameter was changed in place through .data between the forward pass that used it and "
        "backward(): .data hides the edit from autograd's version check, so the gradients were computed "
        "with the edited weight, not the one that produced the loss; apply weight constraints after "
        "optimizer.step(), under torch.no_grad() instead of through .data"
    )
    BACKWARDS = 4  # backward passes looked at

    def functions(self):
        return BACKWARD + (_DATA_GET,)

    def start(self):
        self.seen: dict[int, _Seen] = {}  # id(parameter) -> as the first forward since the last backward used it
        self.backwards = 0
        self.run = _Run.join(self)
        self.run.on_root.append(self._root)

    def stop(self):
        if self._root in self.run.on_root:
            self.run.on_root.remove(self._root)
        self.run.leave(self)
        self.seen = {}

    def _root(self, module) -> None:
        if self.backwards < self.BACKWARDS and torch.is_grad_enabled() and not torch.jit.is_tracing():
            self.watcher.guarded(self, self._record, module)

    def _record(self, module) -> None:
        prefix = type(module).__name__
        for name, p in module.named_parameters():
            if p.requires_grad and id(p) not in self.seen and p.layout == torch.strided and p.numel():
                if p.device.type != "meta":
                    self.seen[id(p)] = _Seen(p, f"{prefix}.{name}")

    def before(self, func, args, kwargs):
        if func not in BACKWARD:  # .data (a method-wrapper: equal to _DATA_GET, not the same object)
            entry = self.seen.get(id(args[0])) if args else None
            if entry is not None and entry.ref() is args[0] and entry.data_site is None:
                entry.data_site = user_site(2)
            return
        if not self.seen:
            return
        self.backwards += 1
        seen, self.seen = self.seen, {}
        edited = []
        for entry in seen.values():
            p = entry.ref()
            if p is None or p._version != entry.version:
                continue  # gone, or changed where autograd could see it (it raises if that matters)
            if p.data_ptr() != entry.ptr or tuple(p.shape) != entry.shape:
                continue  # .data rebound to other storage (ZeRO-3, FSDP), not edited in place
            if not _same(_fingerprint(p), entry.print):
                edited.append(entry)
        if not edited:
            return
        sites = {}
        for entry in edited:
            sites.setdefault(entry.data_site, []).append(entry.name)
        for site, names in sites.items():
            self.report(
                f"{len(names)} parameter(s) changed after the forward that used them, with their version "
                f"unchanged, before this backward: {_listed(names)}",
                site=site or user_site(2),
            )
