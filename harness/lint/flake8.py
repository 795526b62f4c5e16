"""The rules as a flake8 plugin (``flake8 --select PTF``): flake8 reads the files and handles
``# noqa``; the rules that apply are those of the installed torch, as in ``pitfalls lint``."""

from __future__ import annotations

import ast

from torch_pitfalls import __version__
from torch_pitfalls.lint import active_rules
from torch_pitfalls.lint.cli import installed_torch
from torch_pitfalls.lint.engine import walk


class Plugin:
    name = "torch-pitfalls"
    version = __version__
    _rules = None

    def __init__(self, tree: ast.AST, filename: str = "stdin"):  # flake8 passes what a plugin's parameters name
        self.tree, self.filename = tree, filename

    def run(self):
        if Plugin._rules is None:
            Plugin._rules = active_rules(installed_torch())
        for hit in walk(self.tree, Plugin._rules, path=self.filename):
            yield hit.line, hit.col - 1, f"{hit.rule.id} {hit.rule.message}", type(self)
