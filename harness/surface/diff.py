"""What changed between two scanned releases, as a user of the older one meets it."""

from __future__ import annotations

# Internal machinery whose changes users rarely meet directly: scanned, but left out of `diff`
# unless --all (a compiler's private warnings would bury the public API's).
INTERNAL = (
    "_dynamo/",
    "_inductor/",
    "_functorch/",
    "_export/",
    "_refs/",
    "_prims/",
    "_decomp/",
    "_higher_order_ops/",
    "_subclasses/",
    "_vendor/",
    "testing/",
    "fx/experimental/",
    "utils/_sympy/",
    "_logging/",
    "_lazy/",
    "_library/",
    "_strobelight/",
    "compiler/",
    "distributed/_",
    "distributed/tensor/_",
    "_numpy/",
    "include/",
    "share/",
    "bin/",
)


def _public(where_or_file: str) -> bool:
    path = where_or_file.replace(".", "/")
    return not any(path.startswith(p) or ("/" + p) in path for p in INTERNAL)


def diff(old: dict, new: dict, everything: bool = False) -> dict:
    """What a user of `old` may meet in `new`, by kind."""

    def warns(s):
        return {(w["where"], w["category"], w["message"]) for w in s["warnings"] if everything or _public(w["file"])}

    ow, nw = warns(old), warns(new)
    # A message reworded in place is one change, not a removal and an addition.
    by_where_old = {}
    for w in ow - nw:
        by_where_old.setdefault(w[0], []).append(w)
    added, removed, recategorised = [], sorted(ow - nw), []
    for w in sorted(nw - ow):
        twin = next((o for o in by_where_old.get(w[0], []) if o[2] == w[2]), None)
        if twin:
            recategorised.append({"where": w[0], "message": w[2], "from": twin[1], "to": w[1]})
            removed.remove(twin)
        else:
            added.append({"where": w[0], "category": w[1], "message": w[2]})
    changed_sigs, gone = [], []
    for name, sigs in old["signatures"].items():
        if not (everything or _public(name.split(":")[0])):
            continue
        if name not in new["signatures"]:
            gone.append(name)
        elif set(sigs) != set(new["signatures"][name]):
            changed_sigs.append({"name": name, "from": sigs, "to": new["signatures"][name]})
    # a function that moved to another module is not gone
    moved = {n.split(":")[1] for n in new["signatures"]}
    gone = [n for n in gone if n.split(":")[1] not in moved]
    return {
        "from": old["torch"],
        "to": new["torch"],
        "warnings_added": added,
        "warnings_removed": [{"where": w[0], "category": w[1], "message": w[2]} for w in removed],
        "warnings_recategorised": recategorised,
        "signatures_changed": changed_sigs,
        "functions_removed": sorted(gone),
        "native_added": sorted(set(new["native"]) - set(old["native"])),
        "native_removed": sorted(set(old["native"]) - set(new["native"])),
    }


def print_diff(d: dict) -> None:
    print(f"== torch {d['from']} -> {d['to']}")
    for w in d["warnings_added"]:
        print(f"  + warn {w['category']:<22} {w['where']}: {w['message'][:160]}")
    for w in d["warnings_recategorised"]:
        print(f"  ~ warn {w['from']} -> {w['to']} {w['where']}: {w['message'][:120]}")
    for w in d["warnings_removed"]:
        print(f"  - warn {w['category']:<22} {w['where']}: {w['message'][:160]}")
    for s in d["signatures_changed"]:
        print(f"  ~ sig  {s['name']}: {' | '.join(s['from'])[:150]}  ->  {' | '.join(s['to'])[:150]}")
    for n in d["functions_removed"]:
        print(f"  - def  {n}")
    for m in d["native_added"]:
        print(f"  + c++  {m[:200]}")
    for m in d["native_removed"]:
        print(f"  - c++  {m[:200]}")
