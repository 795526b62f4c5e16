"""torch_pitfalls.surface: what a torch release says to its users, and what changed between two. Run on
two small planted "torch" trees, so every kind of change is known in advance."""

from __future__ import annotations

import json
import textwrap

import pytest

from torch_pitfalls.surface.cli import main
from torch_pitfalls.surface.diff import diff
from torch_pitfalls.surface.scan import scan_tree

OLD = """
import warnings

def load(f, map_location=None, weights_only=False):
    pass

def legacy(x):
    warnings.warn("legacy() is deprecated, use modern()")

def reworded():
    warnings.warn("this goes away", DeprecationWarning)

class Sampler:
    def __init__(self, data_source=None):
        pass
"""
NEW = """
import warnings
from typing_extensions import deprecated

def load(f, map_location=None, weights_only=None):
    if weights_only is None:
        warnings.warn(f"weights_only defaults to {True} now", category=FutureWarning)

@deprecated("legacy() is deprecated, use modern()", category=FutureWarning)
def legacy(x):
    pass

def reworded():
    warnings.warn("this goes away", FutureWarning)

class Sampler:
    def __init__(self):
        pass
"""


def plant(root, version, source, native=b""):
    pkg = root / version / "torch"
    (pkg / "lib").mkdir(parents=True)
    (pkg / "version.py").write_text(f"__version__ = '{version}+cu121'\n")
    (pkg / "serialization.py").write_text(textwrap.dedent(source))
    (pkg / "_dynamo").mkdir()
    (pkg / "_dynamo" / "eval.py").write_text("import warnings\nwarnings.warn('internal news')\n")
    (pkg / "lib" / "libtorch_cpu.so").write_bytes(b"\x00\x01" + native + b"\x00_ZN3foo10deprecatedEv\x00")
    return pkg


@pytest.fixture
def surfaces(tmp_path):
    old = scan_tree(plant(tmp_path, "2.5.1", OLD))
    new = scan_tree(plant(tmp_path, "2.6.0", NEW, b"torch.cross without dim is deprecated and will be removed"))
    return old, new


def test_a_scan_reads_warnings_signatures_and_native_messages(surfaces):
    old, new = surfaces
    assert old["torch"] == "2.5.1+cu121"
    assert {(w["where"], w["category"]) for w in old["warnings"]} >= {
        ("serialization:legacy", "UserWarning"),
        ("serialization:reworded", "DeprecationWarning"),
    }
    assert old["signatures"]["serialization:load"] == ["f, map_location=None, weights_only=False"]
    # an f-string's filled-in parts read as {}; a @deprecated decorator is a warning of its function
    assert {
        "where": "serialization:load",
        "category": "FutureWarning",
        "message": "weights_only defaults to {} now",
        "file": "serialization.py",
        "line": 7,
    } in new["warnings"]
    assert ("serialization:legacy", "FutureWarning") in {(w["where"], w["category"]) for w in new["warnings"]}
    # native strings: sentences only, never a mangled symbol that happens to say 'deprecated'
    assert new["native"] == ["torch.cross without dim is deprecated and will be removed"]
    assert old["native"] == []


def test_a_diff_names_each_kind_of_change(surfaces):
    d = diff(*surfaces)
    assert (d["from"], d["to"]) == ("2.5.1+cu121", "2.6.0+cu121")
    assert [w["message"] for w in d["warnings_added"]] == ["weights_only defaults to {} now"]
    assert {(w["where"], w["from"], w["to"]) for w in d["warnings_recategorised"]} == {
        ("serialization:legacy", "UserWarning", "FutureWarning"),
        ("serialization:reworded", "DeprecationWarning", "FutureWarning"),
    }
    assert d["warnings_removed"] == []
    assert {s["name"]: s["to"] for s in d["signatures_changed"]} == {
        "serialization:load": ["f, map_location=None, weights_only=None"],
        "serialization:Sampler.__init__": ["self"],
    }
    assert d["native_added"] == ["torch.cross without dim is deprecated and will be removed"]
    # internal packages are left out unless asked for
    assert "internal news" not in json.dumps(d)


def test_internal_packages_only_with_all(tmp_path, surfaces):
    old, new = surfaces
    new = {
        **new,
        "warnings": [
            *new["warnings"],
            {
                "where": "_dynamo.eval",
                "category": "UserWarning",
                "message": "new internal news",
                "file": "_dynamo/eval.py",
                "line": 2,
            },
        ],
    }
    assert "new internal news" not in json.dumps(diff(old, new))
    assert "new internal news" in json.dumps(diff(old, new, everything=True))


def test_the_cli_diffs_consecutive_releases_in_version_order(tmp_path, surfaces, capsys):
    out = tmp_path / "scans"
    out.mkdir()
    old, new = surfaces
    (out / "torch-2.10.0.json").write_text(json.dumps({**new, "torch": "2.10.0"}))  # sorts after 2.6, not before
    (out / "torch-2.5.1.json").write_text(json.dumps(old))
    (out / "torch-2.6.0.json").write_text(json.dumps(new))
    assert main(["diff", str(out), "--json"]) == 0
    diffs = json.loads(capsys.readouterr().out)
    assert [(d["from"], d["to"]) for d in diffs] == [("2.5.1+cu121", "2.6.0+cu121"), ("2.6.0+cu121", "2.10.0")]
    assert main(["diff", str(out), "--from", "2.6.0"]) == 0
    assert "== torch 2.5.1" not in capsys.readouterr().out


def test_the_cli_refuses_what_it_cannot_diff(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["diff", str(tmp_path)])
    assert exc.value.code == 2
    assert "fewer than two scanned releases" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["scan", str(tmp_path), "--out", str(tmp_path / "x.json")])
    assert exc.value.code == 2
    assert not (tmp_path / "x.json").exists()
