"""A recorded run's texts as a page shows them: a returned value as torch prints it (never the
fingerprint's JSON), messages without colour codes or this machine's paths (``outputs.clean``).

The reports keep a summary of each returned value (``torch_pitfalls.run.fingerprint.value_summary``): a
small tensor's values, a large one's dtype, shape and sum, a container's items. A small tensor is
rebuilt and printed by torch itself; the rest is said in words.
"""

from __future__ import annotations

import json

from docs.site.outputs import clean
from torch_pitfalls.matrix import Matrix


def value_text(summary) -> str:
    """A value summary as a reader would see the value printed."""
    if isinstance(summary, dict) and summary.get("type") == "Tensor":
        return _tensor_text(summary)
    if isinstance(summary, dict) and "items" in summary:
        items = summary["items"]
        if isinstance(items, dict):
            return "{" + ", ".join(f"{k!r}: {value_text(v)}" for k, v in items.items()) + "}"
        more = ", …" if summary.get("len", len(items)) > len(items) else ""
        inner = ", ".join(value_text(v) for v in items) + more
        return (
            f"({inner}{',' if len(items) == 1 and not more else ''})"
            if summary["type"] == "tuple"
            else f"[{inner}]"
            if summary["type"] == "list"
            else f"{summary['type']}({inner})"
        )
    if isinstance(summary, dict) and "repr" in summary:
        return clean(str(summary["repr"]))
    return repr(summary) if isinstance(summary, str) else str(summary)


def _tensor_text(s: dict) -> str:
    import torch

    dtype = getattr(torch, s["dtype"], None)
    if "values" in s and dtype is not None:
        try:
            values = [float("nan") if v == "nan" else v for v in s["values"]]
            text = repr(torch.tensor(values, dtype=dtype).reshape(s["shape"]))
            return text if s.get("device", "cpu") == "cpu" else text[:-1] + f", device='{s['device']}')"
        except (TypeError, ValueError, RuntimeError):
            pass
    shape = "×".join(str(n) for n in s["shape"]) or "0-d"
    total = f", its values summing to {s['sum']}" if "sum" in s else ""
    return f"a {s['dtype']} tensor of shape {shape} on {s.get('device', 'cpu')}{total}"


def change_texts(m: Matrix, change) -> tuple[str, str]:
    """A change's before and after as shown: a changed value printed from the two cells'
    recorded values (the change itself keeps only a cut JSON of them); any other text cleaned."""
    if change.kind == "value-changed":
        values = []
        for version in (change.previous, change.since):
            cell = m.cell(change.case, version, change.device)
            fp = (cell.record.fingerprints or {}).get(change.variant) if cell.record is not None else None
            values.append(value_text(fp["value"]) if fp and fp.get("error") is None else None)
        if None not in values:
            return values[0], values[1]
    return shown(change.before), shown(change.after)


def shown(text: str) -> str:
    """A recorded text: a JSON value summary printed as a value, anything else cleaned."""
    if text.startswith(("{", "[")):
        try:
            return value_text(json.loads(text))
        except ValueError:
            pass
    return clean(text)


def seen_lines(m: Matrix, case_id: str, device: str, variant: str) -> list[tuple[str, str]]:
    """``torch_pitfalls.matrix.claims.what_you_see``'s spans of releases, each with what the variant did
    there in a reader's words: its error, its warnings, its value printed (the harness's own
    words keep the summary's repr, cut short)."""
    from torch_pitfalls.matrix.claims import what_you_see
    from torch_pitfalls.run.fingerprint import remask

    out = []
    for span, words in what_you_see(m, case_id, device, variant):
        first = span.split(",")[0].split("–")[0].strip()  # the group's fingerprint is its first release's
        cell = m.cell(case_id, first, device)
        fp = remask((cell.record.fingerprints or {}).get(variant)) if cell.record is not None else None
        out.append((span, _did(fp) if fp else clean(words)))
    return out


def _did(fp: dict) -> str:
    parts = []
    if fp["error"] is not None:
        parts.append(clean(f"raises {fp['error']['type']}: {fp['error']['message']}"))
    parts.extend(clean(f"warns {w['category']}: {w['message']}") for w in fp["warnings"])
    if fp["error"] is None:
        parts.append("returns " + value_text(fp["value"]) if fp["value"] is not None else "returns None")
    return "; ".join(parts)
