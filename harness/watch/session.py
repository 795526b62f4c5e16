"""The watcher: detectors switched on around user code, their findings gathered per place.

``watch()`` is the context manager; ``pitfalls watch`` and ``pytest --pitfalls-watch`` use the
same ``Watcher``. Findings are de-duplicated per case and user-code line (with a count), and a
detector that fails is switched off after one error line: the user's program never sees the
watcher's own exceptions."""

from __future__ import annotations

import contextlib
import os
import warnings

from torch_pitfalls.watch.detectors.base import Detector
from torch_pitfalls.watch.findings import Finding, json_report, sarif_report, text_report
from torch_pitfalls.watch.sites import origin, shown_path, site_on_stack, user_site, user_site_of


def closure_of(args, kwargs):
    """The closure an optimizer step was given, as a global step hook sees the call (args[0] is the
    optimizer), or None."""
    return kwargs.get("closure", args[1] if len(args) > 1 else None)


class Watcher:
    def __init__(self, pedantic: bool = False, explain: bool = True, select: tuple[str, ...] = ()):
        self.pedantic, self.explain, self.select = pedantic, explain, tuple(select)
        self.detectors: list = []
        self.errors: list[str] = []
        self.busy = False  # True while the watcher's own code runs: its torch calls are not watched
        self._findings: dict[tuple, Finding] = {}
        self._failed: set[int] = set()
        self._mode = None
        self._explainer = None
        self._showwarning = None
        self._pid = os.getpid()
        self.context = ""
        self._table: dict = {}
        self._handles: list = []
        self._stepping = False
        self._aside = False  # the mode is off the stack while an optimizer steps

    # -- switching on and off -------------------------------------------------------------
    def __enter__(self) -> "Watcher":
        self.start()
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc is not None and not isinstance(exc, (KeyboardInterrupt, SystemExit)):
            self.explain_exception(exc)
        self.stop()
        return False

    def start(self) -> None:
        from torch.optim import optimizer as optim

        from torch_pitfalls.watch.detectors import detectors_for
        from torch_pitfalls.watch.mode import FastPathsKept, WatchMode, put_back, set_aside

        self.detectors = detectors_for(self.pedantic, self.select)
        self._table = {}
        for d in self.detectors:
            d.watcher = self
            self.guarded(d, d.start)
            self.watch_functions(d, self.guarded(d, d.functions) or ())
        self._mode = WatchMode(self, self._table)
        self._mode.__enter__()
        self._set_aside, self._put_mode_back = set_aside, put_back
        self._fast_paths = FastPathsKept(self._mode)
        self._fast_paths.start()
        # An optimizer's step is torch's own code updating parameters: nothing there is the user's
        # pitfall, and its dozens of in-place ops per step would cost every watched step.
        if hasattr(optim, "register_optimizer_step_pre_hook"):  # 2.0+
            self._handles = [
                optim.register_optimizer_step_pre_hook(self._enter_step),
                optim.register_optimizer_step_post_hook(self._leave_step),
            ]
        self._showwarning = warnings.showwarning
        warnings.showwarning = self._on_warning

    def watch_functions(self, detector, functions) -> None:
        """Let ``detector`` see calls of these torch callables (at start, or later, as a detector
        that needs them only once something happened: an array shared with NumPy)."""
        before = detector.before if type(detector).before is not Detector.before else None
        after = detector.after if type(detector).after is not Detector.after else None
        for fn in functions:
            entries = self._table.setdefault(fn, [])
            if all(e[0] is not detector for e in entries):
                entries.append((detector, before, after))

    def _enter_step(self, opt, args, kwargs):
        self._stepping, self.busy = self.busy, True
        if not self._aside:  # the step's dozens of ops skip the mode altogether (its closure excepted)
            self._aside = self._set_aside(self._mode)
        # A closure is the user's code (LBFGS; PyTorch Lightning runs training_step and backward in
        # one): it is watched, inside the step that is not. args[0] is the optimizer.
        in_kwargs = "closure" in kwargs
        closure = closure_of(args, kwargs)
        if closure is None or getattr(closure, "_pitfalls_watched", False):
            return None
        watcher = self

        def watched(*a, **k):
            was, watcher.busy = watcher.busy, watcher._stepping
            back = watcher._put_back()
            try:
                return closure(*a, **k)
            finally:
                if back:
                    watcher._aside = watcher._set_aside(watcher._mode)
                watcher.busy = was

        watched._pitfalls_watched = True
        if in_kwargs:
            return args, {**kwargs, "closure": watched}
        return (args[0], watched, *args[2:]), kwargs

    def _leave_step(self, opt, args, kwargs):
        self.busy = self._stepping
        self._put_back()

    def _put_back(self) -> bool:
        """The mode back on the stack, if a step set it aside; whether it was."""
        if not self._aside:
            return False
        self._put_mode_back(self._mode)
        self._aside = False
        return True

    def stop(self) -> None:
        if self._mode is None:
            return
        for h in self._handles:
            h.remove()
        self._put_back()  # a step that raised never came back to _leave_step
        self._fast_paths.stop()
        if self._showwarning is not None:
            warnings.showwarning, self._showwarning = self._showwarning, None
        self._mode.__exit__(None, None, None)
        self._mode = None
        for d in reversed(self.detectors):  # last started, first stopped: patches on patches come off in turn
            self._failed.discard(id(d))  # switched off after an error, it still takes back its hooks and patches
            self.guarded(d, d.stop)

    # -- detectors report here ------------------------------------------------------------
    def guarded(self, detector, method, *args):
        """Run a detector's method with the watcher marked busy; an exception switches that
        detector off and becomes one error line."""
        if id(detector) in self._failed:
            return None
        with self._busy():
            try:
                return method(*args)
            except Exception as exc:  # noqa: BLE001 - the user's program must never see it
                self._failed.add(id(detector))
                self.errors.append(f"{type(detector).__name__} ({detector.case}): {type(exc).__name__}: {exc}")
                return None

    def report(self, detector, detail: str = "", site=None, message: str | None = None, kind: str = "detected") -> None:
        if os.getpid() != self._pid:
            return
        site = site or user_site(2) or ("<unknown>", 0, "")
        path, line, function = site
        key = (detector.case, path, line)
        found = self._findings.get(key)
        if found is not None:
            if found.kind == kind:
                found.count += 1
            else:  # a detector and the explainer saw the same event (a call that also warned)
                found.extra["also"] = kind
            return
        self._findings[key] = Finding(
            case=detector.case,
            message=message or detector.message,
            path=shown_path(path),
            line=line,
            function=function,
            kind=kind,
            detail=detail,
            pedantic=getattr(detector, "pedantic", False),
        )
        if self.context:  # e.g. the pytest test that was running
            self._findings[key].extra["first_seen_in"] = self.context

    # -- the explainer: errors and warnings torch raised, named by the case that records them
    def _explainer_or_none(self):
        if self._explainer is None:
            from torch_pitfalls.watch.explain import Explainer

            self._explainer = Explainer.for_installed_torch()
        return self._explainer

    def _on_warning(self, message, category, filename, lineno, file=None, line=None):
        site = user_site(2)
        if origin(filename) == "user" and (site is None or site[:2] != (filename, lineno)):
            # the warning's own stacklevel named the user's line, past a wrapper in an installed
            # package (typing_extensions' @deprecated, which torch uses): that line is the site
            site = site_on_stack(filename, lineno, skip=2)
        self.explain_warning(category, str(message), site)
        if site is not None and origin(filename) == "watch" and not filename.startswith("<"):
            # torch's stacklevel counted the mode's frame: show the user's line, as without the watcher
            filename, lineno, line = site[0], site[1], None
        self._showwarning(message, category, filename, lineno, file, line)

    def explain_warning(self, category: type[Warning], message: str, site=None) -> None:
        """Name the cases whose broken code emits this warning (pytest hands over the warnings it
        records, which never reach ``warnings.showwarning``)."""
        if not self.explain:
            return
        with self._busy():
            try:
                for ex in self._explainer_or_none().for_warning(category, message):
                    self.report(ex, detail=ex.detail, site=site, message=ex.message, kind="explained")
            except Exception as exc:  # noqa: BLE001
                self._note_error("explainer", exc)

    def explain_exception(self, exc: BaseException) -> None:
        if not self.explain:
            return
        with self._busy():
            try:
                site = user_site_of(exc.__traceback__)
                for ex in self._explainer_or_none().for_exception(exc):
                    self.report(ex, detail=ex.detail, site=site, message=ex.message, kind="explained")
            except Exception as err:  # noqa: BLE001
                self._note_error("explainer", err)

    @contextlib.contextmanager
    def _busy(self):
        was, self.busy = self.busy, True
        try:
            yield
        finally:
            self.busy = was

    def _note_error(self, who: str, exc: Exception) -> None:
        line = f"{who}: {type(exc).__name__}: {exc}"
        if line not in self.errors:
            self.errors.append(line)

    # -- what the user reads ---------------------------------------------------------------
    @property
    def findings(self) -> list[Finding]:
        return list(self._findings.values())

    def text(self) -> str:
        return text_report(self.findings, self.errors)

    def to_json(self, exit_status: int | None = None) -> dict:
        return json_report(self.findings, self.errors, _torch_version(), exit_status)

    def to_sarif(self) -> dict:
        from torch_pitfalls import __version__

        return sarif_report(self.findings, __version__)


def _torch_version() -> str | None:
    import torch

    return torch.__version__


def watch(pedantic: bool = False, explain: bool = True, select: tuple[str, ...] = ()) -> Watcher:
    """The watcher as a context manager: ``with watch() as w: ...``, then ``w.findings``."""
    return Watcher(pedantic=pedantic, explain=explain, select=select)
