"""Planted cases for the harness's own tests: small case modules written into a temp dir."""
from __future__ import annotations

import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CASE_TEMPLATE = '''\
import torch
from harness import Affects, Case, Source

CASE = Case(
    id={id!r},
    title="a planted case",
    kind={kind!r},
    affects={affects},
    devices={devices!r},
    sources=(Source("planted by the harness tests"),),
    tags={tags!r},
    isolate={isolate!r},
    timeout={timeout!r},
    requires={requires!r},
)

def broken(device):
{broken}

def symptom(run):
{symptom}

def fixed(device):
{fixed}
'''

# A case whose symptom shows everywhere: the broken variant returns NaN, the fix returns 1.
GOOD = dict(
    kind="silent",
    affects="'>=1.0'",
    devices=("cpu", "cuda"),
    tags=(),
    isolate=(),
    timeout=30.0,
    requires=(),
    broken="return torch.tensor(float('nan'), device=device)",
    symptom="return bool(torch.isnan(run.value))",
    fixed="value = torch.tensor(1.0, device=device)\nassert value.item() == 1.0\nreturn value",
)


def case_source(case_id: str, **overrides) -> str:
    fields = {**GOOD, **overrides}
    for name in ("broken", "symptom", "fixed"):
        fields[name] = textwrap.indent(textwrap.dedent(fields[name]).strip(), "    ")
    return CASE_TEMPLATE.format(id=case_id, **fields)


class Corpus:
    """A temp project with a ``cases/`` folder to plant cases in."""

    def __init__(self, root: Path):
        self.root = root
        self.cases = root / "cases"

    def plant(self, case_id: str, topic: str = "autograd", filename: str | None = None, text: str | None = None, **fields) -> Path:
        folder = self.cases / topic
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / (filename or case_id.replace("-", "_") + ".py")
        path.write_text(text if text is not None else case_source(case_id, **fields))
        return path




def run_corpus(pytester, *args):
    """pytest on the planted cases, with the plugin loaded the way the project's conftest does."""
    return pytester.runpytest_subprocess("-p", "harness.plugin", "-p", "no:cacheprovider", "-rs", "cases", *args)
