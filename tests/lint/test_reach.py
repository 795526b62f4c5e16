"""Code nothing in its application calls (harness/lint/reach.py): a finding there is reported only with
--preview, labelled; a library's code, a module nothing imports or runs, and anything the project names
(by a call, an attribute, an import or a string) stay reached."""

from __future__ import annotations

import textwrap

from torch_pitfalls.lint import active_rules, lint_text, reach

RULES = active_rules(None)

GAN = """
import torch


class GAN(object):
    def train(self, path):
        state = torch.load(path)
        return state

    def load(self, path):
        self.state = torch.load(path)
"""

MAIN = """
import utils
from gan import GAN

if __name__ == "__main__":
    GAN().train("w.pt")
    utils.report()
"""

UTILS = """
def report():
    print("done")
"""


def _project(tmp_path, files: dict[str, str]):
    reach._texts.cache_clear()  # a run reads each project once; these tests change one between runs
    reach._library_modules.cache_clear()
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return tmp_path


def _loads(tmp_path, name="gan.py", preview=False):
    path = tmp_path / name
    return [(f.line, f.preview, f.as_text()) for f in lint_text(path.read_text(), str(path), RULES, preview=preview)]


def _load_line(text: str) -> int:
    return next(i for i, line in enumerate(textwrap.dedent(text).splitlines(), 1) if "self.state = torch.load" in line)


def _train_line(text: str) -> int:
    return next(i for i, line in enumerate(textwrap.dedent(text).splitlines(), 1) if "state = torch.load" in line)


def test_a_method_nothing_calls_is_reported_only_with_preview_and_labelled(tmp_path):
    _project(tmp_path, {"gan.py": GAN, "main.py": MAIN, "utils.py": UTILS, "requirements.txt": "torch\n"})
    assert [line for line, _, _ in _loads(tmp_path)] == [_train_line(GAN)]  # train() runs, load() never
    previewed = {line: (preview, text) for line, preview, text in _loads(tmp_path, preview=True)}
    assert previewed[_load_line(GAN)][0] and reach.PREVIEW_LABEL in previewed[_load_line(GAN)][1]
    assert not previewed[_train_line(GAN)][0]


def test_a_library_keeps_every_function_reached(tmp_path):
    _project(tmp_path, {"gan.py": GAN, "main.py": MAIN, "utils.py": UTILS, "pyproject.toml": "[project]\nname='g'\n"})
    assert len(_loads(tmp_path)) == 2


def test_a_module_nothing_imports_or_runs_keeps_its_functions(tmp_path):
    _project(tmp_path, {"gan.py": GAN, "main.py": "print('unrelated')\n"})
    assert len(_loads(tmp_path)) == 2


def test_a_name_in_a_string_or_an_attribute_of_a_project_module_is_a_call(tmp_path):
    by_string = MAIN + '    getattr(GAN(), "load")("w.pt")\n'
    _project(tmp_path, {"gan.py": GAN, "main.py": by_string, "utils.py": UTILS})
    assert len(_loads(tmp_path)) == 2
    through_module = MAIN.replace("from gan import GAN", "import gan\nfrom gan import GAN") + "    gan.GAN.load\n"
    _project(tmp_path, {"main.py": through_module})
    assert len(_loads(tmp_path)) == 2


def test_a_star_import_leaves_everything_reached_and_a_file_that_does_not_parse_still_names(tmp_path):
    _project(
        tmp_path, {"gan.py": GAN, "main.py": MAIN.replace("import utils", "from utils import *"), "utils.py": UTILS}
    )
    assert len(_loads(tmp_path)) == 2
    _project(tmp_path, {"main.py": MAIN, "broken.py": "x.cuda(async=True)\nGAN().load('w.pt')\n"})
    assert len(_loads(tmp_path)) == 2
    _project(tmp_path, {"broken.py": "x.cuda(async=True)  # then GAN().load('w.pt')\n"})  # a comment calls nothing
    assert len(_loads(tmp_path)) == 1


def test_a_method_of_a_class_a_framework_may_call_is_reached(tmp_path):
    module = GAN.replace("class GAN(object):", "class GAN(torch.nn.Module):")
    _project(tmp_path, {"gan.py": module, "main.py": MAIN, "utils.py": UTILS})
    assert len(_loads(tmp_path)) == 2


def test_a_text_without_a_file_is_not_read_for_reach(tmp_path):
    assert len(lint_text(textwrap.dedent(GAN), str(tmp_path / "absent.py"), RULES)) == 2


def test_a_module_imported_among_others_on_one_line_is_another_librarys(tmp_path):
    """``import utils, torch``: ``torch.load`` is torch's, not a call of the project's ``load``."""
    _project(tmp_path, {"gan.py": GAN.replace("import torch", "import os, torch"), "main.py": MAIN, "utils.py": UTILS})
    assert [line for line, _, _ in _loads(tmp_path)] == [_train_line(GAN)]
