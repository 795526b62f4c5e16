"""One torch release's surface, read from its installed files: warnings, public signatures and
native deprecation messages (see the package's docstring)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

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
        self.warnings.append(
            {"where": self._where(), "category": category, "message": " ".join(message.split()), "line": line}
        )

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
        is_warn = (
            isinstance(fn, ast.Attribute)
            and fn.attr in ("warn", "warn_explicit")
            and _name(fn.value) in ("warnings", "_warnings")
        ) or (isinstance(fn, ast.Name) and fn.id == "warn")
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
        native.update(
            m.group().decode().strip()
            for m in PRINTABLE.finditer(data)
            if b" " in m.group() and NATIVE_WORDS.search(m.group())
        )
    return {"torch": version, "warnings": warnings, "signatures": signatures, "native": sorted(native)}


def _version_of(torch_dir: Path) -> str:
    text = (torch_dir / "version.py").read_text()
    return re.search(r"__version__\s*=\s*['\"]([^'\"]+)", text).group(1)
