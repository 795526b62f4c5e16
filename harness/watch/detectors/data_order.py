"""Training batches drawn in dataset order from data sorted by label (training-data-not-shuffled).

A ``DataLoader`` iterates its dataset in order unless told ``shuffle=True``. On data stored class by
class (a folder per class, a table sorted by label, a concatenation of per-class files) every
training batch then holds one class, the model is pulled towards each class in turn and ends each
epoch predicting the last one. Seen while it runs: a loader with a ``SequentialSampler`` whose
batches, each followed by an optimizer step, hold one integer label each, with the label changing
between them. An evaluation loader (no step between its batches) and a loader that shuffles are not
looked at.
"""

from __future__ import annotations

import weakref

import torch
from torch.utils.data import SequentialSampler
from torch.utils.data import dataloader as dl

from torch_pitfalls.watch.detectors.base import ClassPatch, Detector
from torch_pitfalls.watch.detectors.training import _step_hooks
from torch_pitfalls.watch.mode import is_compiling
from torch_pitfalls.watch.sites import user_site


def _labels(batch) -> torch.Tensor | None:
    """The batch's last 1-D integer tensor as long as the batch (its labels), or None."""
    items = list(batch.values()) if isinstance(batch, dict) else list(batch) if isinstance(batch, (list, tuple)) else []
    tensors = [t for t in items if isinstance(t, torch.Tensor)]
    if len(tensors) < 2:
        return None
    size = tensors[0].shape[0] if tensors[0].dim() else 0
    found = None
    for t in tensors[1:]:
        if t.dim() == 1 and t.shape[0] == size and not t.is_floating_point() and not t.is_complex():
            if t.dtype != torch.bool:
                found = t
    return found


class _Order:
    """What one iteration of a sequential loader showed."""

    __slots__ = ("steps", "label", "single", "mixed", "classes", "trained", "done")

    def __init__(self, steps):
        self.steps = steps  # the optimizer steps counted when its last batch was drawn
        self.label = None  # that batch's one label, or None when it held several (or none)
        self.single = 0  # training batches of one label
        self.mixed = 0  # training batches of several
        self.classes: list[int] = []
        self.trained = 0
        self.done = False


class TrainingDataNotShuffled(Detector):
    """A ``DataLoader`` with a ``SequentialSampler`` (``shuffle=False``, the default) whose batches
    are training batches (an optimizer stepped after each) of one integer label each, at least
    ``SINGLE`` of them, with two labels or more among them, and no more batches of several labels
    than runs of one label (the batch at each run's end may straddle two). Reported once per loader, at the line that
    built the loader (else the one that drew the batch). Fix: ``DataLoader(..., shuffle=True)`` (or a ``DistributedSampler``)."""

    case = "training-data-not-shuffled"
    message = (
        "training batches come in dataset order and each holds a single label that changes from run to "
        "run: the data is sorted by label and the DataLoader does not shuffle (shuffle=False is the "
        "default), so the model chases one class at a time; pass shuffle=True for training"
    )
    SINGLE = 4  # single-label training batches before a report
    LOOKED = 1000  # training batches looked at per iteration

    def start(self):
        self.steps = 0
        self.orders: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # iterator -> _Order
        self.reported: set[int] = set()  # ids of the samplers reported
        self.handles = _step_hooks(pre=self._stepped)
        self.made_at: dict[int, tuple] = {}  # id(sampler) -> (weakref, the user's DataLoader(...) line)
        detector = self

        def made(original):
            def __init__(loader, *args, **kwargs):
                original(loader, *args, **kwargs)
                if not is_compiling():
                    detector.watcher.guarded(detector, detector._made, loader)

            return __init__

        def drawn(original):
            def __next__(iterator):
                batch = original(iterator)
                if not is_compiling():
                    detector.watcher.guarded(detector, detector._drawn, iterator, batch)
                return batch

            return __next__

        self.patches = [
            ClassPatch(dl.DataLoader, "__init__", made),
            ClassPatch(dl._BaseDataLoaderIter, "__next__", drawn),
        ]

    def stop(self):
        for h in self.handles:
            h.remove()
        for patch in self.patches:
            patch.restore()

    def _made(self, loader) -> None:
        """Where a loader that draws in order was built: the line to change."""
        sampler = getattr(loader, "sampler", None)
        if isinstance(sampler, SequentialSampler):
            if len(self.made_at) > 256:
                self.made_at = {k: v for k, v in self.made_at.items() if v[0]() is not None}
            self.made_at[id(sampler)] = (weakref.ref(sampler), user_site(2))

    def _stepped(self, opt, args, kwargs):
        self.steps += 1

    def _drawn(self, iterator, batch) -> None:
        order = self.orders.get(iterator)
        if order is None:
            sampler = getattr(getattr(iterator, "_index_sampler", None), "sampler", None)
            order = _Order(self.steps)
            order.done = not isinstance(sampler, SequentialSampler) or id(sampler) in self.reported
            self.orders[iterator] = order
        if order.done:
            return
        if self.steps > order.steps:  # the batch drawn before this one was trained on
            order.trained += 1
            if order.label is None:
                order.mixed += 1
            else:
                order.single += 1
                if not order.classes or order.classes[-1] != order.label:
                    order.classes.append(order.label)
            if order.mixed > len(order.classes):  # one batch at each label's end may hold two
                order.done = True  # batches of several labels: not sorted by label
                return
            if order.single >= self.SINGLE and len(set(order.classes)) >= 2:
                order.done = True
                sampler = iterator._index_sampler.sampler
                self.reported.add(id(sampler))
                made = self.made_at.get(id(sampler))
                site = made[1] if made is not None and made[0]() is sampler else None
                drawn = user_site(2)
                where = f"; drawn at line {drawn[1]}" if site and drawn else ""
                self.report(
                    f"{order.single} of the first {order.trained} training batches each held one label, "
                    f"in runs: {', '.join(map(str, order.classes[:6]))}{where}",
                    site=site or drawn,
                )
                return
            if order.trained >= self.LOOKED:
                order.done = True
                return
        order.steps = self.steps
        labels = _labels(batch)
        order.label = None
        if labels is not None and labels.numel() >= 4:
            first = labels[0]
            if bool((labels == first).all()):
                order.label = int(first)
