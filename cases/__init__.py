"""The corpus: one pitfall per module, ``<topic>/<id_with_underscores>.py``.

A package only so that an installed corpus is found by ``pytest --pyargs torch_pitfalls.cases`` (the
wheel installs this folder as ``harness/cases``); nothing imports it, and the cases are loaded
by file (torch_pitfalls.loader), never as submodules of it.
"""
