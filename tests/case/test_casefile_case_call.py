"""A case's ``CASE = Case(...)`` is read from its own lines where it can be (the linter asks every
rule's case for its version ranges at each start): what that gives must be what the whole file's
tree gives, for every case, and anything else falls back to the whole file."""

from __future__ import annotations

import ast

import pytest
from planting import ROOT

from torch_pitfalls.casefile import CaseFile, CaseFileError
from torch_pitfalls.loader import find_case_files

CASE_FILES = find_case_files(ROOT / "cases")


def _dump(node) -> str:
    return ast.dump(node, include_attributes=False)


@pytest.mark.parametrize("path", CASE_FILES, ids=lambda p: p.stem)
def test_the_case_call_read_alone_is_the_one_in_the_whole_tree(path):
    alone = CaseFile(path)
    facts = (alone.title, alone.affects_ranges)
    assert "tree" not in alone.__dict__, "the whole file was parsed to read the Case(...) call"
    whole = CaseFile(path)
    whole.tree  # noqa: B018 - parse the whole file first: case_call then reads its tree
    assert _dump(alone.case_call) == _dump(whole.case_call)
    assert facts == (whole.title, whole.affects_ranges)


def test_a_case_call_that_does_not_parse_alone_is_read_from_the_whole_file():
    # the first "CASE = Case(" line is inside a string: the text from there on does not parse alone
    text = 'DOC = """\nCASE = Case(title="quoted")\n"""\nCASE = Case(title="t", affects=">=2.0")\n'
    assert (CaseFile("c.py", text).title, CaseFile("c.py", text).affects_ranges) == ("t", (">=2.0",))
    broken = "def f(:\n    pass\nCASE = Case(title='t')\n"
    assert CaseFile("c.py", broken).title == "t"  # the call alone parses: the story's error is not its business


def test_a_file_without_the_call_is_named():
    with pytest.raises(CaseFileError, match="no CASE = Case"):
        CaseFile("c.py", "import torch\n").case_call  # noqa: B018
