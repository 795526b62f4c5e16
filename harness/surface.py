"""What a torch release says to its users, read from its files, and what changed between two.

    python -m harness.surface scan SITE_PACKAGES/torch --out build/surface/torch-2.6.0.json
    python -m harness.surface fetch 2.5.1 2.6.0 --uv .venv/bin/uv      # download, scan, delete
    python -m harness.surface diff build/surface [--from 2.5.1 --to 2.6.0] [--all] [--json]

The upgrade cases were found with it: every release's "surface" is

* ``warnings``: each ``warnings.warn``/``warn``/``@deprecated`` in torch's Python files, with
  the function it sits in, its category and its message (string literals joined, ``{}`` for
  what an f-string fills in);
* ``signatures``: each public function's and method's parameters with their defaults (``.py``
  and the ``.pyi`` stubs of the C++ ops), so a default that flips or a parameter that goes shows;
* ``native``: the text of the C++ libraries' messages that announce a deprecation or removal
  (``TORCH_WARN`` and ``TORCH_CHECK`` texts are only in the ``.so`` files).

``diff`` lists, between consecutive releases, the warnings added and removed, the defaults
changed, the parameters and public functions removed, and the native messages added. It is a
finder, not a judge: each hit is a lead to read and then to run, never a result by itself.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from packaging.version import Version

# Internal machinery whose changes users rarely meet directly: scanned, but left out of `diff`
# unless --all (a compiler's private warnings would bury the public API's).
INTERNAL = ("_dynamo/", "_inductor/", "_functorch/", "_export/", "_refs/", "_prims/", "_decomp/",
            "_higher_order_ops/", "_subclasses/", "_vendor/", "testing/", "fx/experimental/",
            "utils/_sympy/", "_logging/", "_lazy/", "_library/", "_strobelight/", "compiler/",
            "distributed/_", "distributed/tensor/_", "_numpy/", "include/", "share/", "bin/")
NATIVE_WORDS = re.compile(rb"deprecat|will be removed|no longer supported|is removed|has been removed", re.I)
PRINTABLE = re.compile(rb"[\x20-\x7e]{24,}")


def _text(node: ast.AST | None) -> str:
    """A message as written: literal parts joined, '{}' where a value is filled in."""
    if node is None:
        return ""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        return _text(node.left) + ("" if isinstance(node.op, ast.Add) else "%") + _text(node.right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return _text(node.func.value)
    return "{}"


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


class _Scanner(ast.NodeVisitor):
    def __init__(self, module: str):
        self.module, self.scope = module, []
        self.warnings: list[dict] = []
        self.signatures: dict[str, list[str]] = {}

    def _where(self) -> str:
        return self.module + (":" + ".".join(self.scope) if self.scope else "")

    def _warn(self, category: str, message: str, line: int) -> None:
        self.warnings.append({"where": self._where(), "category": category, "message": " ".join(message.split()),
                              "line": line})

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._decorators(node)
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    def _decorators(self, node) -> None:
        for dec in node.decorator_list:
            if isinstance(dec, ast.Call) and _name(dec.func) == "deprecated":
                kw = {k.arg: k.value for k in dec.keywords}
                category = _name(kw["category"]) if "category" in kw else "DeprecationWarning"
                self.scope.append(node.name)
                self._warn(category, _text(dec.args[0] if dec.args else None), node.lineno)
                self.scope.pop()

    def visit_FunctionDef(self, node) -> None:
        self._decorators(node)
        public = not node.name.startswith("_") or node.name == "__init__"
        if public and all(not s.startswith("_") for s in self.scope):
            key = ".".join([*self.scope, node.name])
            self.signatures.setdefault(key, []).append(self._signature(node.args))
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    @staticmethod
    def _signature(args: ast.arguments) -> str:
        """Parameters and defaults only (annotations change too often to be news)."""
        parts = []
        positional = [*args.posonlyargs, *args.args]
        defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        for a, d in zip(positional, defaults):
            parts.append(a.arg if d is None else f"{a.arg}={ast.unparse(d)}")
        if args.vararg:
            parts.append("*" + args.vararg.arg)
        elif args.kwonlyargs:
            parts.append("*")
        for a, d in zip(args.kwonlyargs, args.kw_defaults):
            parts.append(a.arg if d is None else f"{a.arg}={ast.unparse(d)}")
        if args.kwarg:
            parts.append("**" + args.kwarg.arg)
        return ", ".join(parts)

    def visit_Call(self, node: ast.Call) -> None:
        fn = node.func
        is_warn = (isinstance(fn, ast.Attribute) and fn.attr in ("warn", "warn_explicit")
                   and _name(fn.value) in ("warnings", "_warnings")) or (isinstance(fn, ast.Name) and fn.id == "warn")
        if is_warn and node.args:
            kw = {k.arg: k.value for k in node.keywords}
            cat = kw.get("category", node.args[1] if len(node.args) > 1 else None)
            self._warn(_name(cat) if cat is not None else "UserWarning", _text(node.args[0]), node.lineno)
        self.generic_visit(node)


def scan_tree(torch_dir: Path) -> dict:
    """The surface of one installed (or unpacked) torch package."""
    torch_dir = Path(torch_dir)
    version = _version_of(torch_dir)
    warnings, signatures = [], {}
    for path in sorted([*torch_dir.rglob("*.py"), *torch_dir.rglob("*.pyi")]):
        rel = path.relative_to(torch_dir).as_posix()
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except (SyntaxError, ValueError):
            continue
        module = rel.rsplit(".", 1)[0].replace("/", ".").removesuffix(".__init__")
        s = _Scanner(module)
        s.visit(tree)
        warnings += [{**w, "file": rel} for w in s.warnings]
        for name, sigs in s.signatures.items():
            signatures[f"{module}:{name}"] = sorted(set(sigs))
    native = set()
    for lib in sorted((torch_dir / "lib").glob("*.so*")):
        data = lib.read_bytes()
        native.update(m.group().decode().strip() for m in PRINTABLE.finditer(data) if b" " in m.group() and NATIVE_WORDS.search(m.group()))
    return {"torch": version, "warnings": warnings, "signatures": signatures, "native": sorted(native)}


def _version_of(torch_dir: Path) -> str:
    text = (torch_dir / "version.py").read_text()
    return re.search(r"__version__\s*=\s*['\"]([^'\"]+)", text).group(1)


def fetch(versions: list[str], uv: str, out: Path, force: bool = False) -> None:
    """Install each torch alone (no dependencies) into a temp dir, scan it, delete it; a release
    already scanned is kept unless ``force``."""
    out.mkdir(parents=True, exist_ok=True)
    for version in versions:
        if (out / f"torch-{version}.json").exists() and not force:
            print(f"surface: torch {version}: already scanned ({out / f'torch-{version}.json'})")
            continue
        with tempfile.TemporaryDirectory(prefix=f"surface-{version}-", dir=out) as tmp:
            env = {**os.environ, "UV_CACHE_DIR": str(Path(tmp) / "cache")}
            cmd = [uv, "pip", "install", "--quiet", "--no-deps", "--python", sys.executable,
                   "--target", str(Path(tmp) / "site"), f"torch=={version}"]
            done = subprocess.run(cmd, env=env)
            if done.returncode != 0:
                raise SystemExit(f"surface: torch {version}: uv could not fetch it (exit {done.returncode})")
            surface = scan_tree(Path(tmp) / "site" / "torch")
        target = out / f"torch-{version}.json"
        target.write_text(json.dumps(surface, indent=0, sort_keys=True))
        print(f"surface: torch {version}: {len(surface['warnings'])} warnings, "
              f"{len(surface['signatures'])} signatures, {len(surface['native'])} native messages -> {target}")


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
    return {"from": old["torch"], "to": new["torch"],
            "warnings_added": added, "warnings_removed": [{"where": w[0], "category": w[1], "message": w[2]} for w in removed],
            "warnings_recategorised": recategorised, "signatures_changed": changed_sigs, "functions_removed": sorted(gone),
            "native_added": sorted(set(new["native"]) - set(old["native"])),
            "native_removed": sorted(set(old["native"]) - set(new["native"]))}


def _print(d: dict) -> None:
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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m harness.surface", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("scan", help="scan an installed torch package directory")
    s.add_argument("torch_dir", type=Path)
    s.add_argument("--out", type=Path, required=True)
    f = sub.add_parser("fetch", help="download each torch (no dependencies), scan it, delete it")
    f.add_argument("versions", nargs="*", help="releases (default: the matrix's)")
    f.add_argument("--force", action="store_true", help="scan again a release already scanned")
    f.add_argument("--uv", default=shutil.which("uv", path=str(Path(sys.executable).parent)) or "uv")
    f.add_argument("--out", type=Path, default=Path("build/surface"))
    d = sub.add_parser("diff", help="what changed between consecutive scanned releases")
    d.add_argument("directory", type=Path, nargs="?", default=Path("build/surface"))
    d.add_argument("--from", dest="start")
    d.add_argument("--to", dest="end")
    d.add_argument("--all", action="store_true", help="include torch's internal packages")
    d.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    if args.command == "scan":
        if not (args.torch_dir / "version.py").is_file():
            p.error(f"{args.torch_dir} is not a torch package directory (no version.py)")
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(scan_tree(args.torch_dir), indent=0, sort_keys=True))
        return 0
    if args.command == "fetch":
        from harness.matrix import DEFAULT_VERSIONS

        fetch(args.versions or list(DEFAULT_VERSIONS), args.uv, args.out, args.force)
        return 0
    files = sorted(args.directory.glob("torch-*.json"), key=lambda f: Version(f.stem.split("-", 1)[1].split("+")[0]))
    surfaces = [json.loads(f.read_text()) for f in files]
    if len(surfaces) < 2:
        p.error(f"{args.directory}: fewer than two scanned releases (run `fetch` first)")
    pairs = list(zip(surfaces, surfaces[1:]))
    rel = lambda s: Version(s["torch"].split("+")[0])
    if args.start:
        pairs = [(a, b) for a, b in pairs if rel(a) >= Version(args.start)]
    if args.end:
        pairs = [(a, b) for a, b in pairs if rel(b) <= Version(args.end)]
    diffs = [diff(a, b, args.all) for a, b in pairs]
    if args.json:
        json.dump(diffs, sys.stdout, indent=1)
    else:
        for d in diffs:
            _print(d)
    return 0


if __name__ == "__main__":
    sys.exit(main())
