"""The torch a package says it supports, read the way ruff reads ``requires-python``: from the
nearest declaration above the file.

Where it is read (the first folder, walking up from the file, that holds one of these wins):

* ``pyproject.toml``: ``[project] dependencies`` (PEP 621), else ``[project.optional-dependencies]``
  (diffusers and transformers declare torch only in an extra such as ``torch``);
* ``setup.cfg``: ``[options] install_requires``, else ``[options.extras_require]``;
* ``setup.py``, where neither names torch: the literal ``install_requires`` / ``extras_require`` of its
  ``setup(...)`` call (read, never run; computed lists are passed over);
* ``<name>-<version>.dist-info/METADATA`` beside the file's top-level folder (an installed or
  unpacked wheel): its ``Requires-Dist`` lines, the dist-info being the one whose ``top_level.txt``
  or ``RECORD`` names that folder (site-packages holds many), or the folder's only one where it
  lists no files at all (a wheel unpacked down to its METADATA);
* ``requirements.txt``, where none of those names torch: how an application (a training repository
  without a package) says what it runs on, often a pin (``torch==1.13.1``). pip's options (``-r``,
  ``--index-url``, ``--hash``) and requirements given by URL are passed over;
* ``environment.yml`` (or ``.yaml``), where none of those names torch: a conda environment's ``pip:``
  entries and its ``pytorch`` package (``pytorch=2.0.0``).

That folder is the project's root: if it declares nothing about torch, nothing is declared (the
search does not go on into an enclosing project, which would be someone else's). Of the torch
requirements, the unconditional ones hold together (their intersection); without any, the ones
under an environment marker, else those under an extra, each a way to install the package (their
union). Bad input (a pyproject that is not TOML, a requirement that is not PEP 508, a range no
release can meet) raises ``DeclarationError`` naming the file: the caller turns it into a usage
error, never a crash and never a silent guess.
"""

from __future__ import annotations

import ast
import configparser
import functools
import re

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11: the same parser as a package (a dependency there)
    import tomli as tomllib
from dataclasses import dataclass
from email.parser import HeaderParser
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from torch_pitfalls.lint.releases import Releases


class DeclarationError(ValueError):
    """A declaration that cannot be read: the message names the file and what is wrong."""


@dataclass(frozen=True)
class Declared:
    root: Path  # the folder holding the declaration
    source: Path  # the file it was read from
    releases: Releases  # every release the declaration admits (Releases.every() when it names no torch)
    text: str  # what it says, e.g. "torch>=2.6" (or "no torch requirement")

    @property
    def names_torch(self) -> bool:
        return not self.releases.is_every


def declared_for(path: Path) -> Declared | None:
    """The declaration governing ``path`` (a file), or None when no folder above it has one."""
    path = Path(path).resolve()
    for folder in path.parents:
        found = _declared_in(folder, path.relative_to(folder).parts[0])
        if found is not None:
            return found
    return None


@functools.lru_cache(maxsize=None)
def _declared_in(folder: Path, top: str) -> Declared | None:
    pyproject, setup_cfg, pinned = folder / "pyproject.toml", folder / "setup.cfg", folder / "requirements.txt"
    found = None
    if pyproject.is_file():
        requirements = _from_pyproject(pyproject)
        if requirements is not None or not setup_cfg.is_file():
            found = _declared(folder, pyproject, *(requirements or ([], [])))
    if found is None and setup_cfg.is_file():
        found = _declared(folder, setup_cfg, *_from_setup_cfg(setup_cfg))
    setup_py = folder / "setup.py"
    if (found is None or not found.names_torch) and setup_py.is_file():
        from_setup_py = _from_setup_py(setup_py)
        in_setup_py = _declared(folder, setup_py, *from_setup_py) if from_setup_py is not None else None
        if in_setup_py is not None and (found is None or in_setup_py.names_torch):
            found = in_setup_py
    if found is None:
        meta = _dist_info_metadata(folder, top)
        if meta is not None:
            found = _declared(folder, meta, _from_metadata(meta), [])
    for env, read in ((pinned, _from_requirements_txt), *((folder / n, _from_environment_yml) for n in _CONDA_FILES)):
        if (found is None or not found.names_torch) and env.is_file():
            from_pins = _declared(folder, env, read(env), [])
            if from_pins.names_torch or found is None:
                found = from_pins
    return found


_CONDA_FILES = ("environment.yml", "environment.yaml")


def _from_environment_yml(path: Path) -> list[Requirement]:
    """The torch of a conda environment file: its ``pip:`` entries as pip reads them, and a conda
    package ``pytorch``/``torch`` (``pytorch=2.0.0``, ``pytorch::pytorch>=1.8``; conda's ``=2.0`` is
    ``2.0.*``, a build string after a second ``=`` is passed over)."""
    import yaml  # PyYAML: a declared dependency (jupytext's too)

    try:
        data = yaml.safe_load(_read(path))
    except yaml.YAMLError as exc:
        raise DeclarationError(f"{path}: not YAML ({str(exc).splitlines()[0]})") from None
    entries = (data or {}).get("dependencies") if isinstance(data, dict) else None
    if entries is not None and not isinstance(entries, list):
        raise DeclarationError(f"{path}: 'dependencies' must be a list, got {type(entries).__name__}")
    lines = []
    for entry in entries or ():
        if isinstance(entry, dict):  # - pip: [...]
            pip = entry.get("pip") or []
            lines += [line for line in pip if isinstance(line, str) and _is_torch_line(line)]
        elif isinstance(entry, str) and (conda := _CONDA_TORCH.fullmatch(entry.strip())):
            lines.append("torch" + _conda_version(conda.group("version") or "", path))
    return _requirements(lines, path)


# ``[channel::]pytorch[ version][=build]`` or with an operator; group "version" is what follows the name
_CONDA_TORCH = re.compile(r"(?:[\w.-]+::)?(?:pytorch|torch)(?P<version>(?:\s+|[=<>!~]).*)?")


def _conda_version(spec: str, path: Path) -> str:
    """A conda version spec as PEP 440: ``=2.0`` (and a bare ``2.0``) is ``==2.0.*``, ``==2.0.0`` and
    operators as they are; a build string (``=2.1.0=py3.10_cuda11.8``) is dropped."""
    spec = re.sub(r"([=<>!~]=?)\s+", r"\1", spec.strip())  # "pytorch >= 1.13": the operator and its version
    if not spec:
        return ""
    if spec.startswith("=="):
        return "==" + spec[2:].split("=")[0].split()[0]
    if spec[0] in "<>!~":
        return spec.split()[0]
    version = spec.lstrip("=").split("=")[0].split()[0]
    return f"=={version}" if version.endswith("*") or version.count(".") >= 2 else f"=={version}.*"


def _is_torch_line(line: str) -> bool:
    name = _NAME.match(line.strip())
    return bool(name) and canonicalize_name(name.group()) == "torch" and "://" not in line and " @ " not in line


def _declared(folder: Path, source: Path, requirements: list[Requirement], in_extras: list[Requirement]) -> Declared:
    """``in_extras``: the requirements of pyproject's optional-dependencies / setup.cfg's extras_require
    (METADATA writes an extra as a marker, ``extra == "torch"``, so its extras are in ``requirements``)."""
    torch = [r for r in requirements if canonicalize_name(r.name) == "torch"]
    plain = [r for r in torch if r.marker is None]
    marked = [r for r in torch if r.marker is not None and "extra" not in str(r.marker)]
    extras = [r for r in torch if r.marker is not None and "extra" in str(r.marker)]
    extras += [r for r in in_extras if canonicalize_name(r.name) == "torch"]
    if plain:  # every unconditional requirement holds at once
        together = SpecifierSet(",".join(str(r.specifier) for r in plain if str(r.specifier)))
        specs, text = (together,), "torch" + (str(together) or "")
    elif marked or extras:  # any one platform's (else any one extra's) requirement: a way to install it
        chosen = marked or extras
        specs = tuple(dict.fromkeys(r.specifier for r in chosen))
        text = " or ".join(f"torch{s}" for s in specs) + (" (in an extra)" if not marked else " (under a marker)")
    else:
        return Declared(folder, source, Releases.every(), "no torch requirement")
    if any(not str(s) for s in specs):  # a bare `torch` admits every release
        return Declared(folder, source, Releases.every(), "torch (any release)")
    releases = Releases.of_specifiers(specs)
    if releases.is_empty:
        raise DeclarationError(f"{source}: the torch requirement {text!r} admits no release")
    return Declared(folder, source, releases, text)


def _requirements(lines, source: Path) -> list[Requirement]:
    out = []
    for line in lines:
        line = line.split("#", 1)[0].strip() if isinstance(line, str) else line
        if not line:
            continue
        if not isinstance(line, str):
            raise DeclarationError(f"{source}: a requirement must be a string, got {line!r}")
        try:
            out.append(Requirement(line))
        except InvalidRequirement as exc:
            name = _NAME.match(line)
            if name and canonicalize_name(name.group()) != "torch":
                continue  # another package's line (pixyz's wheel: "flake8 (==3.9.2pytest-cov)"): judged on torch alone
            raise DeclarationError(
                f"{source}: {line!r} is not a PEP 508 requirement ({str(exc).splitlines()[0]})"
            ) from None
    return out


def _from_requirements_txt(path: Path) -> list[Requirement]:
    """The torch requirements of a pip requirements file (its other lines, pip's options and requirements
    given by URL are not read: a file written for pip, not for this linter, is judged on torch alone)."""
    lines = [
        line.split(" #", 1)[0].split("--hash", 1)[0].strip().rstrip("\\").strip() for line in _read(path).splitlines()
    ]
    return _requirements([line for line in lines if _is_torch_line(line)], path)


_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DeclarationError(f"{path}: cannot be read ({exc})") from None


def _from_pyproject(path: Path) -> tuple[list[Requirement], list[Requirement]] | None:
    """The project's requirements and its extras'; None when the file has no ``[project]``
    dependencies at all (a ``setup.cfg`` beside it may then hold them)."""
    try:
        data = tomllib.loads(_read(path))
    except tomllib.TOMLDecodeError as exc:
        raise DeclarationError(f"{path}: not valid TOML ({exc})") from None
    project = data.get("project")
    if not isinstance(project, dict):
        return None
    deps, extras = project.get("dependencies"), project.get("optional-dependencies")
    if deps is None and extras is None:
        return None
    if deps is not None and not isinstance(deps, list):
        raise DeclarationError(f"{path}: [project] dependencies must be a list of strings")
    if extras is not None and not isinstance(extras, dict):
        raise DeclarationError(f"{path}: [project.optional-dependencies] must be a table")
    in_extras = []
    for name, lines in (extras or {}).items():
        if not isinstance(lines, list):
            raise DeclarationError(f"{path}: [project.optional-dependencies] {name} must be a list of strings")
        in_extras += _requirements(lines, path)
    return _requirements(deps or [], path), in_extras


def _from_setup_py(path: Path) -> tuple[list[Requirement], list[Requirement]] | None:
    """The literal ``install_requires`` and ``extras_require`` of a ``setup(...)`` call (lists written in
    the call or assigned once at module level, as spinningup's ``'torch==1.3.1'``); None where there is no
    such call or its requirements are computed (read from a file, built in a loop): a script, not a
    declaration, so it is not run; requirements.txt beside it is read instead. A setup.py that does not
    parse declares nothing here (linting it reports the syntax error)."""
    try:
        tree = ast.parse(_read(path))
    except (SyntaxError, ValueError):
        return None
    assigned = {
        t.id: n.value for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)
    }

    def literal(node):
        node = assigned.get(node.id, node) if isinstance(node, ast.Name) else node
        try:
            return ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None

    for call in ast.walk(tree):
        func = call.func if isinstance(call, ast.Call) else None
        if not (isinstance(func, ast.Name) and func.id == "setup") and not (
            isinstance(func, ast.Attribute) and func.attr == "setup"
        ):
            continue
        keywords = {k.arg: k.value for k in call.keywords if k.arg}
        install = literal(keywords["install_requires"]) if "install_requires" in keywords else []
        extras = literal(keywords["extras_require"]) if "extras_require" in keywords else {}
        if not isinstance(install, (list, tuple)) or not isinstance(extras, dict):
            return None
        lines = [line for line in install if isinstance(line, str) and _is_torch_line(line)]
        extra_lines = [
            line
            for group in extras.values()
            for line in ([group] if isinstance(group, str) else group if isinstance(group, (list, tuple)) else ())
            if isinstance(line, str) and _is_torch_line(line)
        ]
        return _requirements(lines, path), _requirements(extra_lines, path)
    return None


def _from_setup_cfg(path: Path) -> tuple[list[Requirement], list[Requirement]]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(_read(path), source=str(path))
    except configparser.Error as exc:
        raise DeclarationError(f"{path}: not a readable setup.cfg ({str(exc).splitlines()[0]})") from None
    found = _requirements(parser.get("options", "install_requires", fallback="").splitlines(), path)
    in_extras = []
    if parser.has_section("options.extras_require"):
        for _, lines in parser.items("options.extras_require"):
            in_extras += _requirements(lines.splitlines(), path)
    return found, in_extras


def _dist_info_metadata(folder: Path, top: str) -> Path | None:
    """The METADATA of the distribution in ``folder`` that installed the top-level ``top``."""
    infos = sorted(folder.glob("*.dist-info"))
    if not infos:
        return None
    module = top[:-3] if top.endswith(".py") else top
    for info in infos:
        if module in _top_levels(info) and (info / "METADATA").is_file():
            return info / "METADATA"
    # A wheel unpacked alone, its dist-info kept down to METADATA: nothing in the folder says what
    # else could have installed the file, so the folder's only distribution did.
    if len(infos) == 1 and not _top_levels(infos[0]) and (infos[0] / "METADATA").is_file():
        return infos[0] / "METADATA"
    return None


def _top_levels(info: Path) -> set[str]:
    names = set()
    for listing in ("top_level.txt", "RECORD"):  # a module per line; a file (its first folder) per row
        try:
            lines = (info / listing).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:  # absent (top_level.txt is optional) or unreadable: the other may name it
            continue
        for line in lines:
            first = line.split(",", 1)[0].split("/", 1)[0].strip()
            names.add(first[:-3] if first.endswith(".py") else first)
    return names - {""}


def _from_metadata(path: Path) -> list[Requirement]:
    headers = HeaderParser().parsestr(_read(path))
    return _requirements(headers.get_all("Requires-Dist") or [], path)
