"""The "Start here" page: what the site is, how to read a case page, and ten pitfalls to begin with."""

from __future__ import annotations

from importlib import metadata

from docs.site.symptom_page import Symptom
from docs.site.text import md
from torch_pitfalls.loader import LoadedCase

# Ten to begin with, chosen from the pitfall catalogue (../shared/catalogue.md): the examples the
# project was specified with (starred there) and the pitfalls that two of the five source posts
# describe, leaving out those fixed in torch long ago (historical), the two that need a GPU to
# show, and custom autograd Functions, which few learners write.
TEN = (
    "missing-zero-grad",
    "train-eval-mode",
    "backward-twice",
    "nan-grad-through-mask",
    "grad-accumulation-unscaled",
    "inplace-op-cannot-promote",
    "interpolate-3d-input",
    "softmax-singleton-axis",
    "l2-normalize-all-dims",
    "gradcheck-float32",
)

INTRO = """\
# Start here

This site is a collection of PyTorch pitfalls: code that looks right and runs, but computes something else,
or stops with a message that does not say what is wrong. Each pitfall is shown as the smallest program
that has it, with what that program really prints, why it happens, and the fix.

The site has two editions, this English one and a Chinese one (中文版), with the same cases and the same outputs:
the link at the top of every page (中文 / English) opens the same page in the other edition.

## How to read a case

Every case page tells one story, in the same order.

1. The title and one paragraph: the symptom as you would meet it in your own program.
2. The broken code, the smallest that shows the pitfall, and right under it what it printed when this site was built.
   The small grey line under an output names the torch release and the device that printed it.
3. Why it happens.
4. The fixed code and what it prints.
5. Where the pitfall comes from (the posts and upstream issues that describe it), and how it behaves on every torch release
   that the project has run (the version matrix).

Each case can be downloaded as a Python file or as a Jupyter notebook, from the links at the top of its page.
"""

TEN_INTRO = """\
## Ten pitfalls to begin with

These ten come from the project's catalogue of pitfalls: they are the examples it was specified with and the pitfalls
that two of its five source posts describe. Cases fixed in torch long ago, cases that need a GPU to show, and custom
autograd functions, which few learners write, were left out.
"""

WAYS_ON = """\
## Where to go next

- [Find a pitfall by its symptom](symptoms.md): NaN, a wrong shape, silently wrong values, slowness, an error message or a warning.
- Type a few words of an error message into the search box: it searches the text of every case page.
- [What changes when you upgrade torch](upgrade.md): pick two releases and see what changes between them.
- {ref}`The table of all cases <cases>`, which you can filter by topic, kind, tag and symptom.

## The tools, on your own code

The cases come with a command, `pitfalls`, in one package that installs beside the torch you already have and never
installs or replaces torch. From a clone of the project's repository:

```text
python -m build --wheel
pip install dist/torch_pitfalls-{version}-py3-none-any.whl
```

- `pitfalls lint train.py`: the pitfalls that can be seen in the code itself ([Linters](linters.md)).
- `pitfalls watch train.py`: runs your program and reports the pitfalls it meets while it runs ([Watching a run](watching.md)).
- `python train.py 2>&1 | pitfalls explain`: names the cases behind an error or a warning torch printed.
- `pitfalls upgrade 2.4.1 2.6.0`: what changes between two releases, case by case ([Upgrading torch](upgrade.md)).
- `pytest --pyargs torch_pitfalls.cases`: every case, run on your torch and your device.
"""


def start_page(cases: list[LoadedCase], symptoms: dict[str, Symptom]) -> str:
    titles = {lc.id: lc.case.title for lc in cases}
    out = [INTRO, TEN_INTRO]
    for n, case_id in enumerate((c for c in TEN if c in titles), start=1):
        line = f"{n}. [{md(titles[case_id])}](cases/{case_id}.ipynb)"
        if case_id in symptoms:
            line += f": {md(symptoms[case_id].line)}"
        out.append(line)
    out += ["", WAYS_ON.replace("{version}", metadata.version("torch-pitfalls"))]  # the wheel's name
    return "\n".join(out) + "\n"
