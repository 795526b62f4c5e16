"""What a detector is: the case it belongs to, what it reports, and where it looks.

A detector sees the torch calls it names (``functions``) through the watcher's
``TorchFunctionMode``: ``before`` runs ahead of the call, ``after`` once it returned, with the
state ``before`` gave. Detectors that need torch's global module or optimizer hooks, or one
patched factory, install them in ``start`` and remove them in ``stop``. Every method runs
guarded: an exception in it is one watcher error line, never the user's crash."""

from __future__ import annotations

import functools


class Detector:
    case: str = ""  # the corpus case that proves this detector
    message: str = ""  # what goes wrong and the fix, one line
    pedantic: bool = False  # heuristic: only with --pedantic
    watcher = None  # set by the watcher that runs it

    def functions(self) -> tuple:
        """The torch callables whose calls ``before`` and ``after`` see."""
        return ()

    def before(self, func, args, kwargs):
        return None

    def after(self, func, args, kwargs, result, state) -> None:
        pass

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def report(self, detail: str = "", site=None, message: str | None = None) -> None:
        self.watcher.report(self, detail=detail, site=site, message=message)


def arg(args, kwargs, index: int, name: str, default=None):
    """A call's argument given by position or by keyword."""
    if len(args) > index:
        return args[index]
    return kwargs.get(name, default)


class ClassPatch:
    """One attribute of a class (``nn.Module.train``, ``DataLoader.__init__``) replaced, while a
    detector watches, by ``make(original)``; ``restore`` puts the original back only if the patch is
    still the class's own (a patch made on top of it later is not undone; the watcher stops its
    detectors in the reverse order of their start, so patches come off in turn)."""

    def __init__(self, owner: type, name: str, make):
        self.owner, self.name = owner, name
        self.original = owner.__dict__[name]
        self.patched = functools.wraps(self.original)(make(self.original))
        setattr(owner, name, self.patched)

    def restore(self) -> None:
        if self.owner.__dict__.get(self.name) is self.patched:
            setattr(self.owner, self.name, self.original)
