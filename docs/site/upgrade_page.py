"""The page "Upgrading torch": for each pair of consecutive recorded releases, what changes, by
kind, and whether each case's fix works on both (``pitfalls upgrade FROM TO`` for any pair)."""
from __future__ import annotations

from harness.matrix import Matrix
from harness.matrix.upgrade import upgrade

from docs.site.text import code, esc


def upgrade_page(m: Matrix) -> str:
    """One section per pair of consecutive releases: what changes, by kind, and whether each
    case's fix works on both (the same content as ``pitfalls upgrade FROM TO``)."""
    out = ["# Upgrading torch\n",
           "What changes for a user between one recorded release and the next, read from the "
           "[version matrix](matrix.md): every change in what a case's broken or fixed code raises, warns or "
           "returns, grouped by kind, and whether the case's fixed variant passed on both releases (the portable "
           "spelling). The same for any two releases in a terminal: `pitfalls upgrade 2.3.1 2.6.0` "
           "(`--json`, `--fail-on KIND` to gate a CI job).\n"]
    for device in m.devices:
        for a, b in zip(m.versions, m.versions[1:]):
            result = upgrade(m, a, b, device)
            n = sum(result["by_kind"].values())
            out.append(f"## {a} → {b} ({device})\n")
            if not n:
                out.append("No observed change in any case.\n")
                continue
            out.append(f"{n} change{'s' if n != 1 else ''} in {len(result['cases'])} case"
                       f"{'s' if len(result['cases']) != 1 else ''}: "
                       + ", ".join(f"{k} {code(kind)}" for kind, k in result["by_kind"].items()) + ".\n")
            for case in result["cases"]:
                fix = {True: "the fix works on both", False: "the fix fails on one of them",
                       None: "the fix is not observed on both"}[case["portable_fix"]]
                out.append(f"- [{esc(case['case'])}](cases/{case['case']}.ipynb) ({fix}):")
                for ch in case["changes"]:
                    out.append(f"  - {ch['variant']}, **{ch['kind'].replace('-', ' ')}**: "
                               f"{code(ch['before'])} → {code(ch['after'])}")
            out.append("")
    return "\n".join(out) + "\n"
