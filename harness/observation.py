"""What one run of a variant produced: its value, the exception it raised, the warnings it emitted
(and, run by the harness, what it printed).

``observe(fn, *args)`` is all a learner needs to look at a case without the harness; the
runner uses the same function, so what a notebook shows is what the tests check.
"""

from __future__ import annotations

import re
import subprocess
import warnings
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

import torch

SHORT = 240  # characters of a value or message kept in reports
LISTED_WARNINGS = 3  # warnings named in a summary; a variant that warns in a loop stays one line


class CaseTimeout(BaseException):
    """Raised into a variant that ran past its time limit (BaseException: cases can't swallow it)."""


@dataclass
class Observation:
    value: Any = None
    error: BaseException | None = None
    warnings: list[warnings.WarningMessage] = field(default_factory=list)
    output: str = ""  # what the variant printed (stdout and stderr), cut short when long
    output_chars: int = 0  # how much it printed in all

    def raised(self, exc_type: type[BaseException], pattern: str | None = None) -> bool:
        """The run raised ``exc_type`` (or a subclass) whose message matches ``pattern``."""
        if not isinstance(self.error, exc_type):
            return False
        return pattern is None or re.search(pattern, str(self.error), re.IGNORECASE) is not None

    def warned(self, category: type[Warning], pattern: str | None = None) -> bool:
        """The run emitted a warning of ``category`` (or a subclass) matching ``pattern``."""
        return any(
            issubclass(w.category, category) and (pattern is None or re.search(pattern, str(w.message), re.IGNORECASE))
            for w in self.warnings
        )

    def warned_as(self, pattern: str, *categories: type[Warning]) -> str | bool:
        """The name of the first of ``categories`` under which the run emitted a warning matching
        ``pattern``, or False: the form a symptom takes where a warning changed category."""
        return next((c.__name__ for c in categories if self.warned(c, pattern)), False)

    def summary(self) -> str:
        """A short text for reports and failure messages."""
        parts = []
        if self.error is not None:
            parts.append(f"raised {type(self.error).__name__}: {first_line(str(self.error))}")
        else:
            parts.append(f"returned {_short(self.value)}")
        for w in self.warnings[:LISTED_WARNINGS]:
            parts.append(f"warned {w.category.__name__}: {first_line(str(w.message))}")
        if len(self.warnings) > LISTED_WARNINGS:
            parts.append(f"and {len(self.warnings) - LISTED_WARNINGS} more warnings")
        if self.output_chars:
            parts.append(f"printed {self.output_chars} characters, starting {_short(self.output[:SHORT])}")
        return "; ".join(parts)

    def __str__(self) -> str:
        return self.summary()


def observe(fn, *args, **kwargs) -> Observation:
    """Call ``fn`` and record what happened, with every warning shown (none filtered as 'once')."""
    return observe_within(nullcontext(), fn, *args, **kwargs)


def observe_within(context, fn, *args, **kwargs) -> Observation:
    """``observe``, with ``context`` entered around the call itself (inside the warning capture),
    where the runner guards global state and the time limit."""
    obs = Observation()
    warn_always = torch.is_warn_always_enabled()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.set_warn_always(True)  # torch's C++ warn-once warnings too
        try:
            with context:
                obs.value = fn(*args, **kwargs)
        except (KeyboardInterrupt, CaseTimeout, subprocess.TimeoutExpired):
            raise  # a subprocess the variant started outlived its stretched limit: the machine's timeout
        except BaseException as exc:  # SystemExit included: argparse exits, and that is a symptom
            obs.error = exc
        finally:
            torch.set_warn_always(warn_always)
    obs.warnings = list(caught)
    return obs


def first_line(text: str, limit: int | None = SHORT) -> str:
    """The first line of a message, cut to ``limit`` characters (None: whole): what the harness
    quotes of an exception or a warning in summaries, records, fingerprints and errors."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if limit is None or len(line) <= limit else line[: limit - 1] + "…"


def _short(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        text = (
            f"tensor(shape={tuple(value.shape)}, dtype={str(value.dtype).replace('torch.', '')}, device={value.device})"
        )
        if value.numel() <= 16 and not value.is_meta:  # a CUDA result's values too, copied back
            text = repr(value.detach().cpu())
    else:
        text = repr(value)
    text = " ".join(text.split())
    return text if len(text) <= SHORT else text[: SHORT - 1] + "…"
