"""What a user observes of one variant run, stable across runs of the same torch.

A fingerprint holds the exception (type and message), each warning (category and message) and a
summary of the returned value (type, dtype, shape, and the values where they are deterministic).
Volatile text is masked: memory addresses, temp and install paths, object ids, timings. Two
records of the same case on two torch releases differ in fingerprint exactly when something a
user could see (or match on) changed; ``torch_pitfalls.matrix.changes`` classifies the difference.

A case whose value is not stable by default (random numbers drawn without a seed, a count that
depends on the machine) declares ``stable(value)``: a JSON-able summary of what is stable.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

VALUES_KEPT = 16  # elements of a tensor whose values enter the fingerprint; larger: a digest
WARNINGS_KEPT = 5  # distinct warnings kept; a variant warning in a loop with new text stays small
TEXT_KEPT = 300  # characters of a message or a repr

NOT_QUOTE = r"""[^\s'"():,]"""  # a character of a path or a name, not of the text around it
TORCH_SOURCE = "<torch source>"  # where a C++ warning says it was triggered
_TRIGGERED = r"\s*\(Triggered internally at [^)]*\)?\.?"


@dataclass(frozen=True)
class Mask:
    """One kind of volatile text. ``raw`` finds it in a message and ``placeholder`` is written in its
    place (``mask``); where a record holds the placeholder, followed by ``tail``, the explainer
    (``torch_pitfalls.watch.patterns``) matches ``wildcard``: what a user's message holds there."""

    name: str
    raw: re.Pattern
    placeholder: str
    wildcard: str
    tail: str = ""  # what a record may hold right after the placeholder (the rest of a path)

    @property
    def recorded(self) -> str:
        """The regex that finds the placeholder (and its tail) in a record; a placeholder that
        opens with a space finds it with any space or none (a message is stripped when masked)."""
        text = self.placeholder
        head = r"\s*" + re.escape(text.lstrip()) if text[:1].isspace() else re.escape(text)
        return head + self.tail


# A C++ warning names the torch source line it came from; the build's path and the line number
# move between releases while the warning stays the same. A user's message matches with its
# source line or without one.
TRIGGERED = Mask(
    "triggered",
    re.compile(_TRIGGERED),
    f" (Triggered internally at {TORCH_SOURCE})",
    rf"(?:{_TRIGGERED})?",
    tail=r"\.?",
)
# The masks, applied in this order: each is read by ``mask`` (the raw text to its placeholder) and by
# the explainer (the placeholder back to a wildcard), so a record and its reading agree.
MASKS = (
    TRIGGERED,
    # Install and temp locations differ between environments, not between behaviours.
    Mask(
        "site_packages",
        re.compile(rf"(?:/{NOT_QUOTE}+)*/(?:site|dist)-packages/"),
        "<site-packages>/",
        rf"{NOT_QUOTE}*",
        tail=rf"{NOT_QUOTE}*",
    ),
    Mask(
        "python_lib",
        re.compile(rf"(?:/{NOT_QUOTE}+)*/lib/python3\.\d+/"),
        "<python-lib>/",
        rf"{NOT_QUOTE}*",
        tail=rf"{NOT_QUOTE}*",
    ),
    Mask(
        "tmp",
        re.compile(rf"(?:/{NOT_QUOTE}*)*/(?:tmp|pitfalls-[\w-]+){NOT_QUOTE}*"),
        "<tmp>",
        rf"{NOT_QUOTE}*",
        tail=rf"{NOT_QUOTE}*",
    ),
    Mask("address", re.compile(r"\b0x[0-9a-fA-F]{4,}\b"), "0x…", r"0x[0-9a-fA-F]+"),
    Mask("id", re.compile(r"\b(?:id|pid)[=: ]\s*\d+\b"), "id=…", r"(?:id|pid)[=: ]\s*\d+"),
    Mask(
        "time",
        re.compile(r"\b\d+(?:\.\d+)?\s?(?:ns|us|µs|ms|s)\b(?![\w.])"),
        "<time>",
        r"\d+(?:\.\d+)?\s?(?:ns|us|µs|ms|s)",
    ),
)


def mask(text: str) -> str:
    """``text`` with addresses, paths, ids and timings replaced by placeholders, cut short."""
    for m in MASKS:
        text = m.raw.sub(m.placeholder, text)
    text = " ".join(text.split())
    return text if len(text) <= TEXT_KEPT else text[: TEXT_KEPT - 1] + "…"


def remask(fp: dict | None) -> dict | None:
    """A recorded fingerprint with today's masks applied to its messages (records made before a
    mask was added compare the way new ones will)."""
    if fp is None:
        return None
    out = dict(fp)
    if fp.get("error"):
        out["error"] = {**fp["error"], "message": mask(fp["error"]["message"])}
    seen, warnings = set(), []
    for w in fp.get("warnings", []):
        key = (w["category"], mask(w["message"]))
        if key not in seen:
            seen.add(key)
            warnings.append({"category": key[0], "message": key[1]})
    out["warnings"] = warnings
    return out


def value_summary(value: Any) -> Any:
    """A JSON-able summary of a returned value: deterministic parts only."""
    import torch

    if isinstance(value, torch.Tensor):
        out = {
            "type": "Tensor",
            "dtype": str(value.dtype).replace("torch.", ""),
            "shape": list(value.shape),
            "device": value.device.type,
        }
        # values from any device (a CUDA result copied back): the NaN a lesson is about must show on every device
        if not value.is_meta and value.layout == torch.strided:
            flat = value.detach().reshape(-1).cpu()
            if flat.numel() <= VALUES_KEPT:
                out["values"] = [_number(x) for x in flat.tolist()]
            elif flat.dtype.is_floating_point or flat.dtype.is_complex:
                out["sum"] = _number(
                    flat.double().sum().item() if not flat.dtype.is_complex else flat.abs().double().sum().item()
                )
        return out
    if value is None or isinstance(value, (bool, int, str)):
        return mask(value) if isinstance(value, str) else value
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, (list, tuple)):
        items = [value_summary(v) for v in value[:VALUES_KEPT]]
        return {"type": type(value).__name__, "len": len(value), "items": items}
    if isinstance(value, dict):
        keys = list(value)[:VALUES_KEPT]
        return {"type": type(value).__name__, "items": {mask(str(k)): value_summary(value[k]) for k in keys}}
    return {"type": type(value).__name__, "repr": mask(repr(value))}


def _number(x: Any) -> Any:
    """Floats to 6 significant digits (the last bits of a sum differ with the summation order);
    nan and inf as strings, which JSON can carry."""
    if isinstance(x, bool) or isinstance(x, int):
        return x
    if isinstance(x, complex):
        return [_number(x.real), _number(x.imag)]
    if math.isnan(x) or math.isinf(x):
        return str(x)
    return float(f"{x:.6g}")


def fingerprint(run, stable=None) -> dict:
    """The fingerprint of an ``Observation``; ``stable`` replaces the default value summary."""
    from torch_pitfalls.observation import first_line  # torch: only where a run is fingerprinted

    error = None
    if run.error is not None:
        error = {"type": type(run.error).__name__, "message": mask(first_line(str(run.error), None))}
    seen = []
    for w in run.warnings:
        entry = (w.category.__name__, mask(first_line(str(w.message), None)))
        if entry not in seen:  # a warning emitted in a loop is one behaviour
            seen.append(entry)
    warns = [{"category": c, "message": m} for c, m in seen[:WARNINGS_KEPT]]
    if len(seen) > WARNINGS_KEPT:
        warns.append({"category": "…", "message": f"and {len(seen) - WARNINGS_KEPT} more distinct warnings"})
    value = None
    if run.error is None:
        value = stable(run.value) if stable is not None else value_summary(run.value)
    return {"error": error, "warnings": warns, "value": value}
