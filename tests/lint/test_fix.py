"""`pitfalls lint --fix`: each fix proven by running it on its cases' broken programs on the local
torch (one run of torch_pitfalls.lint.fix_proofs, shared), sabotaged fixes caught, and the command line:
safe and unsafe fixes, --diff, --unsafe-fixes, files that do not parse, the record's verdicts."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from planting import ROOT

from torch_pitfalls.cli import main
from torch_pitfalls.lint import RULES_BY_ID
from torch_pitfalls.lint.fix_proofs import prove, prove_all
from torch_pitfalls.lint.fixes import Edit, fix_sha256, safety
from torch_pitfalls.lint.rules import FIXES, module_of
from torch_pitfalls.loader import case_id_of, find_case_files
from torch_pitfalls.matrix import DEFAULT_VERSIONS

CASE_FILES = {case_id_of(p): p for p in find_case_files(ROOT / "cases")}
# Fixes right by construction whose case cannot prove them: the case's fixed program does more
# than the broken one (its check asks for that), so the linter's fix of the broken one is refused.
CANNOT_PROVE = {
    "PTF013": "the model was never run on the ids",  # the fixed program also runs a model on the ids
}


@pytest.fixture(scope="session")
def local_proofs() -> dict:
    return prove_all(ROOT / "cases")


def test_every_fix_is_proven_by_running_it_on_the_local_torch(local_proofs):
    assert set(local_proofs["fixes"]) == set(FIXES)
    for rule, proof in local_proofs["fixes"].items():
        if rule in CANNOT_PROVE:
            assert not proof["proven"] and CANNOT_PROVE[rule] in proof["why"], (rule, proof)
        else:
            assert proof["proven"], (rule, proof["why"])
            assert all(case["fixed"] >= 1 for case in proof["cases"].values()), rule  # the fix did something
    assert all(proof["sha256"] == fix_sha256(rule) for rule, proof in local_proofs["fixes"].items())


def test_a_wrong_fix_and_a_fix_that_does_nothing_are_not_proven(monkeypatch):
    """The proof's own sabotage: a fix that renames to the wrong function (it runs, but the check
    refuses its value), and one that edits nothing."""
    path = CASE_FILES["deprecated-init-without-underscore"]
    right = FIXES["PTF001"]
    wrong = replace(right, edits=lambda src, f: [Edit(e.start, e.end, "xavier_normal_") for e in right.edits(src, f)])
    monkeypatch.setitem(FIXES, "PTF001", wrong)
    result = prove("PTF001", path)
    assert not result["proven"] and "check rejects the fixed result" in result["why"], result
    monkeypatch.setitem(FIXES, "PTF001", replace(right, edits=lambda src, f: []))
    assert prove("PTF001", path) == {
        "proven": False,
        "why": "nothing fixed in the broken program: the fix found nothing to change",
    }


def test_a_syntax_fix_is_proven_by_compiling_and_by_torch_accepting_its_keyword(monkeypatch):
    """PTF003's proof (the file did not parse, so no run of the case's fix program applies): the
    right keyword compiles and torch takes it; a misspelt one compiles too but torch refuses it."""
    path = CASE_FILES["cuda-async-keyword"]
    assert prove("PTF003", path)["proven"]
    right = FIXES["PTF003"]
    wrong = replace(right, edits=lambda src, f: [Edit(e.start, e.end, "nonblocking") for e in right.edits(src, f)])
    monkeypatch.setitem(FIXES, "PTF003", wrong)
    result = prove("PTF003", path)
    assert not result["proven"] and "TypeError" in result["why"] and "nonblocking" in result["why"], result


def _record(proven: dict[str, bool], sha=None) -> dict:
    """A record of these fixes on every release, each keyed by its rule's module as it is now."""
    return {
        "releases": {
            v: {
                "fixes": {
                    rule: {
                        "sha256": sha or fix_sha256(rule),
                        "proven": ok,
                        "why": "" if ok else "the linter-fixed program emitted a warning",
                    }
                    for rule, ok in proven.items()
                },
            }
            for v in DEFAULT_VERSIONS
        }
    }


def test_safe_means_proven_on_every_release_where_the_rule_applies():
    from torch_pitfalls.lint import rule_ranges

    rule = RULES_BY_ID["PTF117"]  # its case: FutureWarning from 2.4
    ranges = rule_ranges(rule)
    assert safety(rule, _record({"PTF117": True}), DEFAULT_VERSIONS, ranges) is None
    broken = _record({"PTF117": True})
    broken["releases"]["2.5.1"]["fixes"]["PTF117"].update(proven=False, why="the check rejects it")
    assert safety(rule, broken, DEFAULT_VERSIONS, ranges) == "not proven on 2.5.1: the check rejects it"
    before = _record({"PTF117": True})
    before["releases"]["1.13.1"]["fixes"]["PTF117"].update(proven=False, why="no such function")
    assert safety(rule, before, DEFAULT_VERSIONS, ranges) is None  # 1.13.1: the rule does not apply there
    missing = _record({"PTF117": True})
    del missing["releases"]["2.6.0"]
    assert safety(rule, missing, DEFAULT_VERSIONS, ranges) == "not observed on 2.6.0"
    stale = safety(rule, _record({"PTF117": True}, sha="0" * 64), DEFAULT_VERSIONS, ranges)
    assert stale.startswith("not observed on 2.4.1: recorded from another text of the rule")
    assert safety(
        RULES_BY_ID["PTF126"], _record({"PTF126": True}), DEFAULT_VERSIONS, rule_ranges(RULES_BY_ID["PTF126"])
    ).startswith("weights_only=False unpickles")


def _safe_fixes(record: dict) -> dict[str, str | None]:
    from torch_pitfalls.lint import rule_ranges

    return {rule: safety(RULES_BY_ID[rule], record, DEFAULT_VERSIONS, rule_ranges(RULES_BY_ID[rule])) for rule in FIXES}


def test_editing_one_rules_module_unproves_its_fix_alone(monkeypatch, tmp_path):
    """A proof is keyed by its rule's module (check, record and fix): a copy of PTF117's module with one
    line changed stands in for an edit of it, and only PTF117's fix loses its proof."""
    record = _record({rule: True for rule in FIXES})
    before = _safe_fixes(record)
    assert before["PTF117"] is None and before["PTF001"] is None  # proven as recorded
    module = module_of("PTF117")
    edited = tmp_path / Path(module.__file__).name
    edited.write_text(Path(module.__file__).read_text() + "# an edit\n")
    monkeypatch.setattr(module, "__file__", str(edited))
    after = _safe_fixes(record)
    assert after.pop("PTF117").startswith("not observed on 2.4.1: recorded from another text of the rule")
    assert after == {rule: why for rule, why in before.items() if rule != "PTF117"}  # every other fix as it was


def test_a_record_of_the_whole_fixes_file_is_stale_everywhere():
    """Records made before the per-rule keys (one hash of harness/lint/fixes.py for the release) are read
    as another text of every rule: each fix waits for `make fix-versions`."""
    old = _record({rule: True for rule in FIXES})
    for release in old["releases"].values():
        release["fixes_sha256"] = "0" * 64
        for proof in release["fixes"].values():
            del proof["sha256"]
    assert all(
        why is not None and (why.startswith("not observed on") or FIXES[rule].caution == why)
        for rule, why in _safe_fixes(old).items()
    )


CODE = """\
import torch
from torch import nn


def init(model, path):
    nn.init.xavier_uniform(model.weight)
    return torch.load(path)
"""


@pytest.fixture
def checkout(tmp_path):
    """A corpus beside a reports folder whose fix record says: every fix proven everywhere."""
    (tmp_path / "cases").symlink_to(ROOT / "cases")
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "lint-fix-proofs.json").write_text(json.dumps(_record({r: True for r in FIXES})))
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "init.py").write_text(CODE)
    return tmp_path


def lint(checkout, *argv):
    return main(["--cases", str(checkout / "cases"), "lint", "--all-versions", *argv])


def test_fix_applies_the_safe_fixes_and_says_why_not_the_others(checkout, capsys):
    target = checkout / "code" / "init.py"
    assert lint(checkout, "--format", "json", str(target)) == 1
    found = {f["rule"]: f["fix"] for f in json.loads(capsys.readouterr().out)["findings"]}
    assert found["PTF001"]["safe"] and not found["PTF126"]["safe"]
    assert lint(checkout, "--diff", str(target)) == 1  # it would change: exit 1, nothing written
    out = capsys.readouterr().out
    assert "-    nn.init.xavier_uniform(model.weight)\n+    nn.init.xavier_uniform_(model.weight)" in out
    assert "weights_only" not in out and target.read_text() == CODE
    assert lint(checkout, "--fix", str(target)) == 1  # PTF126 is left: exit 1
    out = capsys.readouterr().out
    assert target.read_text() == CODE.replace("xavier_uniform(", "xavier_uniform_(")
    assert "PTF126" in out and "not fixed: unsafe fix (weights_only=False unpickles" in out
    assert lint(checkout, "--fix", "--unsafe-fixes", str(target)) == 0
    assert "torch.load(path, weights_only=False)" in target.read_text()
    assert lint(checkout, "--diff", str(target)) == 0  # nothing left to change


def test_an_unproven_fix_is_not_applied_and_the_record_says_why(checkout, capsys):
    record = _record({r: True for r in FIXES})
    record["releases"]["2.9.1"]["fixes"]["PTF001"].update(proven=False, why="the check rejects it")
    (checkout / "reports" / "lint-fix-proofs.json").write_text(json.dumps(record))
    target = checkout / "code" / "init.py"
    assert lint(checkout, "--fix", "--select", "PTF001", str(target)) == 1
    assert target.read_text() == CODE
    assert "not fixed: unsafe fix (not proven on 2.9.1: the check rejects it)" in capsys.readouterr().out
    assert lint(checkout, "--format", "sarif", "--select", "PTF001", str(target)) == 1
    (result,) = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    assert result["properties"]["fix"]["safe"] is False and "2.9.1" in result["properties"]["fix"]["why_unsafe"]


def test_cuda_async_true_parses_after_the_fix_and_a_fix_that_would_not_parse_is_refused(checkout, capsys):
    import ast

    fine = checkout / "code" / "async_kw.py"
    fine.write_text("import torch\nx = torch.zeros(1)\nx = x.cuda(async=True)\n")
    assert lint(checkout, "--fix", str(fine)) == 0
    ast.parse(fine.read_text())
    assert fine.read_text().endswith("x = x.cuda(non_blocking=True)\n")
    worse = checkout / "code" / "two_errors.py"
    text = 'import torch\nx = torch.zeros(1).cuda(async=True)\nprint "done"\n'  # Python 2 as well
    worse.write_text(text)
    assert lint(checkout, "--fix", str(worse)) == 1
    assert worse.read_text() == text
    assert "not fixed: the fixed file would not parse" in capsys.readouterr().out


def test_a_fix_keeps_the_files_line_endings(checkout):
    crlf = checkout / "code" / "crlf.py"
    crlf.write_bytes(CODE.replace("\n", "\r\n").encode())
    lint(checkout, "--fix", "--select", "PTF001", str(crlf))
    assert crlf.read_bytes() == CODE.replace("xavier_uniform(", "xavier_uniform_(").replace("\n", "\r\n").encode()


def test_unsafe_fixes_alone_is_a_usage_error(checkout, capsys):
    assert lint(checkout, "--unsafe-fixes", str(checkout / "code")) == 2
    assert "--unsafe-fixes goes with --fix or --diff" in capsys.readouterr().err


# Spellings from public training scripts (found with the code search: diffusers-style and YOLO-style
# argument parsers, AMP setups in trainers, a Lightning scheduler config), each with its fix.
PUBLIC = [
    (
        'parser.add_argument("--local_rank", type=int, default=-1, help="For distributed training: local_rank")',
        'parser.add_argument("--local-rank", "--local_rank", type=int, default=-1, help="For distributed training: local_rank")',
    ),
    (
        "self.scaler = torch.cuda.amp.GradScaler(enabled=self.args.amp)",
        'self.scaler = torch.amp.GradScaler("cuda", enabled=self.args.amp)',
    ),
    (
        "self.autocast = torch.cuda.amp.autocast(enabled=kwargs.get('fp16', False))",
        "self.autocast = torch.autocast(\"cuda\", enabled=kwargs.get('fp16', False))",
    ),
    (
        "scheduler = ReduceLROnPlateau(optimizer, mode='min', patience=lr_patience, factor=lr_factor, verbose=verbose)",
        "scheduler = ReduceLROnPlateau(optimizer, mode='min', patience=lr_patience, factor=lr_factor)",
    ),
    (
        "torch.nn.init.xavier_uniform(m.weight.data, gain=nn.init.calculate_gain('relu'))",
        "torch.nn.init.xavier_uniform_(m.weight.data, gain=nn.init.calculate_gain('relu'))",
    ),
    (
        "ckpt = torch.load(\n        args.resume,\n        map_location='cpu',\n    )",
        "ckpt = torch.load(\n        args.resume,\n        map_location='cpu', weights_only=False,\n    )",
    ),
]
HEADER = (
    "import argparse\nimport torch\nfrom torch import nn\nfrom torch.optim.lr_scheduler import ReduceLROnPlateau\n\n\n"
    "def setup(self, parser, optimizer, m, args, kwargs, lr_patience, lr_factor, verbose):\n"
)


@pytest.mark.parametrize("before, after", PUBLIC, ids=[b.split("(")[0].split(".")[-1] for b, _ in PUBLIC])
def test_fixes_of_spellings_from_public_code(before, after):
    from torch_pitfalls.lint import active_rules, lint_text
    from torch_pitfalls.lint.fixes import fix_file_text

    rules = active_rules(None)
    text = HEADER + "    " + before + "\n"
    result = fix_file_text(text, lambda now: lint_text(now, "train.py", rules))
    assert result.text == HEADER + "    " + after + "\n", [f.as_text() for f in lint_text(text, "train.py", rules)]


def test_the_local_rank_fix_run_takes_both_spellings_into_the_same_destination():
    from torch_pitfalls.lint import RULES_BY_ID, lint_text
    from torch_pitfalls.lint.fixes import fix_file_text

    text = "import argparse\nparser = argparse.ArgumentParser()\nparser.add_argument('--local_rank', type=int, default=-1)\n"
    fixed = fix_file_text(text, lambda now: lint_text(now, "launch.py", [RULES_BY_ID["PTF132"]])).text
    assert fixed != text
    namespace = {}
    exec(compile(fixed, "launch.py", "exec"), namespace)  # the fixed program, run
    parser = namespace["parser"]
    assert parser.parse_args(["--local-rank=3"]).local_rank == parser.parse_args(["--local_rank", "3"]).local_rank == 3
