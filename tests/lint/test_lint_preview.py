"""A rule fires by default only where what it matches is torch's; ``--preview`` adds its pattern on
objects whose type the file does not show, labelled in every output format. And a rule whose harm
is a cost (memory: PTF016) is quiet in test code unless ``--costs-in-tests``."""

from __future__ import annotations

import json
import textwrap

from torch_pitfalls.cli import main

# the same method on a tensor the file makes, and on a parameter nothing tells the type of
# (gpytorch's LinearOperator has its own cholesky())
CODE = textwrap.dedent("""\
    import torch

    def factor(cov):
        return cov.cholesky()

    def sample(n):
        a = torch.randn(n, n)
        return (a @ a.T + torch.eye(n)).cholesky()
""")


def lint(argv, capsys):
    code = main(["lint", *argv])
    return code, capsys.readouterr().out


def test_an_unknown_receiver_is_quiet_by_default_and_labelled_with_preview(tmp_path, capsys):
    path = tmp_path / "m.py"
    path.write_text(CODE)
    _, out = lint(["--select", "PTF135", "--format", "json", str(path)], capsys)
    assert [(f["line"], f["preview"]) for f in json.loads(out)["findings"]] == [(8, False)]
    _, out = lint(["--select", "PTF135", "--format", "json", "--preview", str(path)], capsys)
    assert [(f["line"], f["preview"]) for f in json.loads(out)["findings"]] == [(4, True), (8, False)]
    _, out = lint(["--select", "PTF135", "--preview", str(path)], capsys)
    lines = [line for line in out.splitlines() if ": PTF135 " in line]
    assert ["[preview" in line for line in lines] == [True, False]
    _, out = lint(["--select", "PTF135", "--format", "sarif", "--preview", str(path)], capsys)
    results = json.loads(out)["runs"][0]["results"]
    assert [(r["level"], r.get("properties", {}).get("preview")) for r in results] == [
        ("note", True),
        ("warning", None),
    ]


EVALUATE = textwrap.dedent("""\
    import torch

    def evaluate(model, loader):
        model.eval()
        total = 0.0
        for x, y in loader:
            total += (model(x).argmax(1) == y).float().sum().item()
        return total
""")


def test_a_memory_rule_is_quiet_in_test_code_unless_asked(tmp_path, capsys):
    (tmp_path / "tests").mkdir()
    for name in ("train.py", "tests/test_eval.py"):
        (tmp_path / name).write_text(EVALUATE)
    _, out = lint(["--select", "PTF016", "--format", "json", str(tmp_path)], capsys)
    assert [f["path"].rsplit("/", 1)[-1] for f in json.loads(out)["findings"]] == ["train.py"]
    _, out = lint(["--select", "PTF016", "--format", "json", "--costs-in-tests", str(tmp_path)], capsys)
    assert sorted(f["path"].rsplit("/", 1)[-1] for f in json.loads(out)["findings"]) == ["test_eval.py", "train.py"]


def test_a_file_with_a_byte_order_mark_is_read(tmp_path, capsys):
    """Python runs a file that starts with a UTF-8 byte-order mark; the linter reads it too."""
    path = tmp_path / "m.py"
    path.write_text("\ufeff" + CODE, encoding="utf-8")
    _, out = lint(["--format", "json", str(path)], capsys)
    assert [(f["rule"], f["line"]) for f in json.loads(out)["findings"]] == [("PTF135", 8)]
