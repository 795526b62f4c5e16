"""Which torch the linted code runs on (harness/lint/declared.py, releases.py) and which rules a
file gets (harness/lint/scope.py): a package's declared torch requirement narrows --all-versions,
PTF126 reads what a load holds where the code only runs on >= 2.6, and the speed rule (PTF020) is
quiet in test code unless --costs-in-tests (alias --speed-in-tests)."""

from __future__ import annotations

import json
import textwrap

import pytest

from torch_pitfalls.cli import main
from torch_pitfalls.lint import RULES_BY_ID, lint_text, rule_ranges
from torch_pitfalls.lint.declared import _declared_in, declared_for
from torch_pitfalls.lint.releases import Releases
from torch_pitfalls.lint.rules.ptf126_torch_load_weights_only_default import WEIGHTS_ONLY_WARNS

# Variable (a <0.4 case), a load of unknown content, a load of a state dict saved just before, one
# handed to load_state_dict (torchao's test_awq.py:177 and hieradet.py:285 in build/realcode), and
# a CPU factory copied to the GPU
CODE = textwrap.dedent("""\
    import tempfile
    import torch
    from torch.autograd import Variable

    def train_step(model, path):
        x = Variable(torch.ones(2), volatile=True)
        anything = torch.load(path)
        with tempfile.NamedTemporaryFile() as f:
            torch.save(model.state_dict(), f.name)
            state = torch.load(f.name, map_location="cpu")
        sd = torch.load(path)
        model.load_state_dict(sd)
        model.load_state_dict(torch.load(path))
        z = torch.zeros(3, 3).cuda()
        return x, anything, state, z
""")
EVERY = [("PTF002", 6), ("PTF126", 7), ("PTF126", 10), ("PTF126", 11), ("PTF126", 13)]
ON_2_6 = [("PTF126", 7)]  # >= 2.6 only: no Variable (<0.4), tensor-only loads quiet


def found(argv, capsys):
    code = main(["lint", "--format", "json", *argv])
    report = json.loads(capsys.readouterr().out)
    return code, report, [(f["rule"], f["line"]) for f in report["findings"]]


@pytest.fixture
def tree(tmp_path):
    """Three packages: one declaring torch>=2.6 in pyproject.toml, an unpacked wheel whose
    dist-info METADATA says the same (only in an extra, as diffusers does), one declaring nothing."""
    (tmp_path / "proj" / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "proj" / "pyproject.toml").write_text(
        '[project]\nname = "p"\ndependencies = ["numpy", "torch >= 2.6"]\n'
    )
    (tmp_path / "proj" / "src" / "pkg" / "m.py").write_text(CODE)
    wheel = tmp_path / "site"
    (wheel / "whl" / "ops").mkdir(parents=True)
    (wheel / "whl" / "ops" / "m.py").write_text(CODE)
    info = wheel / "whl-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: whl\nVersion: 1.0\n"
        'Requires-Dist: numpy\nRequires-Dist: torch>=2.6; extra == "torch"\n\nA wheel.\n'
    )
    (info / "RECORD").write_text("whl/__init__.py,,\nwhl/ops/m.py,,\nwhl-1.0.dist-info/METADATA,,\n")
    (wheel / "other-2.0.dist-info").mkdir()  # another distribution beside it, declaring torch<2.0
    (wheel / "other-2.0.dist-info" / "METADATA").write_text("Name: other\nRequires-Dist: torch<2.0\n")
    (wheel / "other-2.0.dist-info" / "top_level.txt").write_text("other\n")
    (tmp_path / "loose").mkdir()
    (tmp_path / "loose" / "m.py").write_text(CODE)
    return tmp_path


def test_all_versions_reads_each_packages_declared_torch(tree, capsys):
    code, report, _ = found(["--all-versions", str(tree)], capsys)
    by_file = {}
    for f in report["findings"]:
        by_file.setdefault(f["path"].split(str(tree))[1].split("/")[1], []).append((f["rule"], f["line"]))
    assert code == 1
    assert by_file == {"proj": ON_2_6, "site": ON_2_6, "loose": EVERY}
    assert sorted((d["source"].split(str(tree))[1], d["torch"]) for d in report["declared"]) == [
        ("/proj/pyproject.toml", "torch>=2.6"),
        ("/site/whl-1.0.dist-info/METADATA", "torch>=2.6 (in an extra)"),
    ]


@pytest.mark.parametrize("others", [0, 1])
def test_a_wheel_unpacked_down_to_its_metadata_declares_for_its_folder(tmp_path, capsys, others):
    """A dist-info that lists no files governs the folder it is the only distribution of; beside
    another one, nothing says which of them installed the code, and nothing is declared."""
    (tmp_path / "whl").mkdir()
    (tmp_path / "whl" / "m.py").write_text(CODE)
    for name in ["whl-1.0", "other-2.0"][: 1 + others]:
        (tmp_path / f"{name}.dist-info").mkdir()
        (tmp_path / f"{name}.dist-info" / "METADATA").write_text("Name: x\nRequires-Dist: torch>=2.6\n")
    assert found(["--all-versions", str(tmp_path)], capsys)[2] == (EVERY if others else ON_2_6)


def test_ignore_declared_and_torch_give_every_release_or_one(tree, capsys):
    assert found(["--all-versions", "--ignore-declared", str(tree / "proj")], capsys)[2] == EVERY
    assert found(["--torch", "2.5", str(tree / "proj")], capsys)[2] == [f for f in EVERY if f[0] != "PTF002"]
    assert found(["--torch", "2.7", str(tree / "loose")], capsys)[2] == ON_2_6  # --torch wins over no declaration
    assert main(["lint", "--ignore-declared", str(tree / "proj")]) == 2
    assert "--ignore-declared goes with --all-versions" in capsys.readouterr().err


def test_the_text_header_says_what_was_declared(tree, capsys):
    main(["lint", "--all-versions", str(tree / "proj")])
    err = capsys.readouterr().err
    assert "every release each package declares (--all-versions)" in err
    assert f"{tree / 'proj'}: torch>=2.6 (from pyproject.toml)" in err


def test_another_packages_malformed_line_does_not_stop_the_torch_reading(tmp_path, capsys):
    """A declaration is judged on torch alone: pixyz 0.3.3's wheel declares "flake8 (==3.9.2pytest-cov)" in an
    extra, which is not PEP 508; its torch line is still read (round 14's held-out half)."""
    (tmp_path / "pyproject.toml").write_text(
        '[project]\ndependencies = ["torch>=2.6"]\n[project.optional-dependencies]\n'
        'dev = ["flake8 (==3.9.2pytest-cov)"]\n'
    )
    (tmp_path / "m.py").write_text(CODE)
    main(["lint", "--all-versions", str(tmp_path)])
    assert f"{tmp_path}: torch>=2.6 (from pyproject.toml)" in capsys.readouterr().err


@pytest.mark.parametrize(
    "pyproject, problem",
    [
        ('[project\nname = "p"\n', "not valid TOML"),
        ('[project]\ndependencies = ["torch >= = 2"]\n', "is not a PEP 508 requirement"),
        ('[project]\ndependencies = ["torch>=2.6,<2.4"]\n', "admits no release"),
    ],
)
def test_a_bad_declaration_is_a_one_line_usage_error(tmp_path, capsys, pyproject, problem):
    (tmp_path / "pyproject.toml").write_text(pyproject)
    (tmp_path / "m.py").write_text(CODE)
    assert main(["lint", "--all-versions", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert captured.out == "" and len(err) == 1 and problem in err[0] and "pyproject.toml" in err[0]
    assert main(["lint", "--all-versions", "--ignore-declared", str(tmp_path)]) == 1  # the way out it names
    capsys.readouterr()


def test_a_torch_only_in_an_extra_is_what_the_package_declares(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "d"\ndependencies = ["numpy"]\n'
        '[project.optional-dependencies]\ntorch = ["torch>=2.6"]\ndev = ["pytest"]\n'
    )
    found = declared_for(tmp_path / "m.py")
    assert found.text == "torch>=2.6 (in an extra)" and not found.releases.meets((">=2.4,<2.6",))


def test_setup_cfg_and_nearest_declaration(tmp_path):
    (tmp_path / "setup.cfg").write_text("[options]\ninstall_requires =\n    numpy\n    torch>=1.13,<2.4\n")
    (tmp_path / "inner").mkdir()
    (tmp_path / "inner" / "pyproject.toml").write_text('[project]\nname = "i"\ndependencies = ["numpy"]\n')
    outer, inner = declared_for(tmp_path / "a.py"), declared_for(tmp_path / "inner" / "b.py")
    assert outer.text == "torch<2.4,>=1.13" and outer.releases.meets((">=2.0,<2.4",))
    assert not outer.releases.meets((">=2.6",))
    assert inner.text == "no torch requirement" and inner.releases.is_every  # the nearest project, not its parent


def test_setup_py_literal_requirements_are_read_never_run(tmp_path):
    """spinningup declares ``'torch==1.3.1'`` only in setup.py's ``install_requires``: read from the call's
    literal list (or a module-level list it names, or an extra), never by running the script; a computed
    list or a setup.py that does not parse declares nothing, and requirements.txt beside it is read."""

    def project(name, setup_py, requirements=None):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "setup.py").write_text(setup_py)
        if requirements is not None:
            (folder / "requirements.txt").write_text(requirements)
        return folder

    pinned = project(
        "pinned", "from setuptools import setup\nsetup(name='spinup', install_requires=['numpy', 'torch==1.3.1'])\n"
    )
    named = project(
        "named", "import setuptools\nREQS = ['torch>=2.6']\nsetuptools.setup(name='n', install_requires=REQS)\n"
    )
    extra = project("extra", "setup(name='e', install_requires=['numpy'], extras_require={'gpu': ['torch<2.0']})\n")
    computed = project(
        "computed", "setup(name='c', install_requires=open('requirements.txt').read().split())\n", "torch==2.1.0\n"
    )
    broken = project("broken", "print 'python 2'\nsetup(install_requires=['torch==1.0'])\n", "numpy\n")
    assert declared_for(pinned / "m.py").text == "torch==1.3.1"
    assert not declared_for(pinned / "m.py").releases.meets((">=2.4",))
    assert declared_for(named / "m.py").text == "torch>=2.6"
    assert declared_for(extra / "m.py").text == "torch<2.0 (in an extra)"
    assert declared_for(computed / "m.py").text == "torch==2.1.0"
    assert declared_for(broken / "m.py").text == "no torch requirement"


def test_an_applications_requirements_txt_pins_its_torch(tmp_path, capsys):
    """A training repository without a package says what it runs on in requirements.txt (DiffDock pins
    torch==1.13.1): PTF126's 2.6 change is not on it. pip's options, URL requirements and lines it
    would reject but that are not torch's are passed over; a pyproject.toml that names no torch (a
    tool's settings) leaves the pins in force."""
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 100\n")
    (tmp_path / "requirements.txt").write_text(
        "--extra-index-url https://download.pytorch.org/whl/cu117\nnumpy>=1.20\n"
        "torch==1.13.1+cu117  # the cluster's\nopencv-python>=4.*\ngit+https://github.com/a/b.git\n"
    )
    (tmp_path / "m.py").write_text(CODE)
    found = declared_for(tmp_path / "m.py")
    assert found.source.name == "requirements.txt" and found.text == "torch==1.13.1+cu117"
    assert [r for r, _ in found_rules(tmp_path, capsys) if r == "PTF126"] == []
    (tmp_path / "requirements.txt").write_text("torch>=2.6\n")
    _declared_in.cache_clear()
    assert ("PTF126", 7) in found_rules(tmp_path, capsys)
    (tmp_path / "requirements.txt").write_text("torch>=2.x\n")
    _declared_in.cache_clear()
    assert main(["lint", "--all-versions", str(tmp_path)]) == 2
    assert "requirements.txt: 'torch>=2.x' is not a PEP 508 requirement" in capsys.readouterr().err


def test_a_conda_environment_file_pins_its_torch(tmp_path, capsys):
    """A repository set up with conda says its torch in environment.yml, under pip: (MiniGPT-4 pins
    torch==2.0.0) or as conda's pytorch package (``=2.0`` is conda's 2.0.*); PTF126's 2.4 warning is
    then not on it. A file that is not YAML is a usage error naming it."""
    env = tmp_path / "environment.yml"
    env.write_text("name: x\ndependencies:\n  - python=3.9\n  - pip\n  - pip:\n    - torch==2.0.0\n    - torchvision\n")
    (tmp_path / "m.py").write_text(CODE)
    found = declared_for(tmp_path / "m.py")
    assert found.source.name == "environment.yml" and found.text == "torch==2.0.0"
    assert [r for r, _ in found_rules(tmp_path, capsys) if r == "PTF126"] == []
    for spec, text in (
        ("pytorch::pytorch=2.4", "torch==2.4.*"),
        ("pytorch==2.5.1=py3.10_cuda12.1_cudnn9_0", "torch==2.5.1"),
        ("pytorch>=2.6", "torch>=2.6"),
        ("pytorch >= 1.13", "torch>=1.13"),
    ):
        env.write_text(f"dependencies:\n  - pytorch-cuda=12.1\n  - {spec}\n")
        _declared_in.cache_clear()
        assert declared_for(tmp_path / "m.py").text == text, spec
    env.write_text("dependencies:\n  - pytorch=2.4\n")
    _declared_in.cache_clear()
    assert ("PTF126", 7) in found_rules(tmp_path, capsys)
    env.write_text("dependencies: [pytorch=2.4\n")
    _declared_in.cache_clear()
    assert main(["lint", "--all-versions", str(tmp_path)]) == 2
    assert "environment.yml: not YAML" in capsys.readouterr().err


def found_rules(folder, capsys):
    return found(["--all-versions", str(folder)], capsys)[2]


def test_releases_meet_ranges():
    declared = Releases.of_specifiers([">=2.6"])
    assert declared.meets((">=2.4",)) and not declared.meets(("<0.4",)) and not declared.meets((">=2.4,<2.6",))
    assert Releases.of_specifiers(["!=2.4.0,>=2.4,<2.5"]).meets((">=2.4,<2.6",))  # 2.4.1 lies in both
    assert not Releases.of_specifiers(["==2.4.0"]).meets((">=2.4.1",))
    assert Releases.of_specifiers([">=3.0"]).meets((">=2.14",))  # a later release than any known
    assert Releases.one("2.13.0+cpu").meets((">=2.6",)) and Releases.every().meets(("<0.4",))


def test_ptf126s_warning_range_is_its_cases():
    """The range PTF126 treats as 'every load warns' is the warning case's own (not a copy that drifts)."""
    warning_case = next(r for r in RULES_BY_ID.values() if "torch-load-weights-only-warning" in r.cases)
    from dataclasses import replace

    assert rule_ranges(replace(warning_case, cases=("torch-load-weights-only-warning",))) == (WEIGHTS_ONLY_WARNS,)


def test_ptf126_on_2_6_reads_what_the_load_holds():
    rule = [RULES_BY_ID["PTF126"]]
    lines = lambda releases: [f.line for f in lint_text(CODE, "m.py", rule, releases=releases)]  # noqa: E731
    assert lines(Releases.every()) == [7, 10, 11, 13]
    assert lines(Releases.one("2.5.1")) == [7, 10, 11, 13]
    assert lines(Releases.one("2.6.0")) == [7]
    saved_elsewhere = CODE.replace("torch.save(model.state_dict(), f.name)", "torch.save(model.state_dict(), path)")
    assert [f.line for f in lint_text(saved_elsewhere, "m.py", rule, releases=Releases.one("2.6.0"))] == [7, 10]


@pytest.mark.parametrize(
    "name",
    [
        "tests/test_m.py",
        "pkg/test_m.py",
        "pkg/m_test.py",
        "conftest.py",
        "test/helpers.py",
        "pkg/utils/testing_utils.py",
        "pkg/testing/helpers.py",
    ],
)
def test_the_speed_rule_is_quiet_in_test_code_unless_asked(tmp_path, capsys, name):
    path = tmp_path / "proj" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(CODE)
    # PTF020 (time) reports only with --preview; in test code not even there, unless asked
    assert ("PTF020", 14) not in found(["--all-versions", "--preview", str(path)], capsys)[2]
    assert ("PTF002", 6) in found(["--all-versions", str(path)], capsys)[2]  # correctness rules stay on
    assert ("PTF020", 14) in found(["--all-versions", "--preview", "--speed-in-tests", str(path)], capsys)[2]
    (tmp_path / "proj" / "latest_contest.py").write_text(CODE)  # "test" inside another word is not test code
    contest = str(tmp_path / "proj" / "latest_contest.py")
    assert ("PTF020", 14) in found(["--all-versions", "--preview", contest], capsys)[2]


def test_a_test_folder_above_the_project_is_not_test_code(tmp_path, capsys):
    proj = tmp_path / "test" / "proj"
    proj.mkdir(parents=True)
    (proj / "pyproject.toml").write_text('[project]\nname = "p"\ndependencies = ["torch"]\n')
    (proj / "m.py").write_text(CODE)
    assert ("PTF020", 14) in found(["--all-versions", "--preview", str(proj)], capsys)[2]


HEAD = textwrap.dedent("""\
    import torch
    from torch import nn

    class Head(nn.Module):
        def __init__(self, levels):
            super().__init__()
            self.stride = torch.zeros(levels)
            self.grid = torch.zeros(levels, 2)
""")
MODEL = textwrap.dedent("""\
    from torch import nn

    class Model(nn.Module):
        def _apply(self, fn):
            super()._apply(fn)
            head = self.layers[-1]
            head.stride = fn(head.stride)
            return self
""")


@pytest.mark.parametrize("layout", ["declared", "init_chain"])
def test_ptf015_a_packages_own_apply_override_moves_its_attribute(tmp_path, capsys, layout):
    """A model class's ``_apply`` in another file of the package moves the head's ``stride``
    (applied.py): only the head file is linted; the package's files are read from disk. The same
    override in another package beside it moves nothing here."""
    if layout == "declared":
        (tmp_path / "proj").mkdir()
        (tmp_path / "proj" / "pyproject.toml").write_text('[project]\nname = "p"\ndependencies = ["torch>=2.0"]\n')
        pkg, other = tmp_path / "proj" / "src" / "pkg", tmp_path / "proj" / "elsewhere"
    else:
        pkg, other = tmp_path / "pkg", tmp_path / "other"
        for folder in (pkg, pkg / "nn", other):
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "__init__.py").write_text("")
    (pkg / "nn").mkdir(parents=True, exist_ok=True)
    (pkg / "nn" / "head.py").write_text(HEAD)
    other.mkdir(parents=True, exist_ok=True)
    (other / "head.py").write_text(HEAD)
    (other / "model.py").write_text(MODEL.replace("head.stride = fn(head.stride)", "pass"))
    (pkg / "model.py").write_text(MODEL)  # (read once per package and process: written before any lint)
    # a head class alone (no file builds and moves it here): PTF015 reports it with --preview
    assert found(["--preview", "--select", "PTF015", str(pkg / "nn" / "head.py")], capsys)[2] == [("PTF015", 8)]
    assert found(["--preview", "--select", "PTF015", str(other / "head.py")], capsys)[2] == [
        ("PTF015", 7),
        ("PTF015", 8),
    ]


VOCODER = textwrap.dedent("""\
    import torch

    def pad_tensor(x, pad):
        padded = torch.zeros(x.size(0), x.size(1) + 2 * pad).to(x.device)
        padded[:, pad:pad + x.size(1)] = x
        return padded

    def generate(model, x, steps):
        x = pad_tensor(x, 4)
        with torch.no_grad():
            for _ in range(steps):
                x = model(x)
        return x
""")
TRAIN = textwrap.dedent("""\
    from pkg.vocoder import pad_tensor

    def train(model, loader, opt):
        for x, y in loader:
            loss = (model(pad_tensor(x, 2)) - y).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
""")


def test_ptf020_a_helper_called_once_here_is_reported_when_another_file_of_the_package_calls_it(tmp_path, capsys):
    """PTF020 is quiet on a copy in a helper the file calls only once per call of a function that then runs
    its loop of steps; not when the helper's name is used in another file of its package (package.py),
    which may call it per batch."""
    alone, shared = tmp_path / "alone" / "pkg", tmp_path / "shared" / "pkg"
    for pkg in (alone, shared):
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "vocoder.py").write_text(VOCODER)
    (shared / "train.py").write_text(TRAIN)
    assert found(["--preview", "--select", "PTF020", str(alone / "vocoder.py")], capsys)[2] == []
    # the other file's loop is not read: how often the helper runs is not shown here (--preview)
    assert found(["--select", "PTF020", str(shared / "vocoder.py")], capsys)[2] == []
    assert found(["--preview", "--select", "PTF020", str(shared / "vocoder.py")], capsys)[2] == [("PTF020", 4)]


FORCES = textwrap.dedent("""\
    import torch
    from torch import nn

    class ForceOutput(nn.Module):
        def forward(self, energy, pos):
            return -torch.autograd.grad(energy, pos, create_graph=self.training)[0]
""")
INFERENCE = textwrap.dedent("""\
    def evaluate(model, loader):
        model.eval()
        out = []
        for batch in loader:
            out.append(model(batch).detach().cpu())
        return out
""")


def test_ptf016_is_preview_where_a_model_of_the_package_differentiates_inside_forward(tmp_path, capsys):
    """An evaluation loop without no_grad is reported, except where a module of its package calls
    torch.autograd.grad in forward (forces of an energy model: evaluating needs autograd): then --preview."""
    plain, forces = tmp_path / "plain" / "pkg", tmp_path / "forces" / "pkg"
    for pkg in (plain, forces):
        (pkg / "scripts").mkdir(parents=True)
        for folder in (pkg, pkg / "scripts"):
            (folder / "__init__.py").write_text("")
        (pkg / "scripts" / "inference.py").write_text(INFERENCE)
    (forces / "force_output.py").write_text(FORCES)
    assert found(["--select", "PTF016", str(plain / "scripts" / "inference.py")], capsys)[2] == [("PTF016", 5)]
    assert found(["--select", "PTF016", str(forces / "scripts" / "inference.py")], capsys)[2] == []
    assert found(["--preview", "--select", "PTF016", str(forces / "scripts" / "inference.py")], capsys)[2] == [
        ("PTF016", 5)
    ]


TRAIN_MODE_EVAL = textwrap.dedent("""\
    import torch
    from torch import nn

    def compare(x):
        a = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 1))
        b = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 1))
        b.load_state_dict(a.state_dict())
        with torch.no_grad():
            torch.manual_seed(0)
            first = a(x)
            torch.manual_seed(0)
            second = b(x)
        return (first == second).all()
""")


def test_ptf236_in_test_code_is_preview(tmp_path, capsys):
    """A model with Dropout run under no_grad in train mode is reported in a script, and only with --preview in
    test code, where two models run in train mode on one seed and compared is the test's purpose."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "compare.py").write_text(TRAIN_MODE_EVAL)
    (tmp_path / "tests" / "test_compare.py").write_text(TRAIN_MODE_EVAL)
    assert found(["--select", "PTF236", str(tmp_path / "compare.py")], capsys)[2] == [("PTF236", 10), ("PTF236", 12)]
    assert found(["--select", "PTF236", str(tmp_path / "tests" / "test_compare.py")], capsys)[2] == []
    assert found(["--preview", "--select", "PTF236", str(tmp_path / "tests" / "test_compare.py")], capsys)[2] == [
        ("PTF236", 10),
        ("PTF236", 12),
    ]


LOGGER = textwrap.dedent("""\
    from torch.utils.tensorboard import SummaryWriter

    class Logger:
        def __init__(self, log_dir):
            self.writer = SummaryWriter(log_dir)

        def scalar(self, tag, value, step):
            self.writer.add_scalar(tag, value, step)
""")
RUN = textwrap.dedent("""\
    from pkg.logger import Logger

    def main(steps):
        logger = Logger("runs")
        for step in range(steps):
            logger.scalar("loss", 1.0 / (step + 1), step)
        logger.writer.close()
""")


def test_ptf281_a_writer_kept_on_an_object_is_closed_by_another_file_of_the_package(tmp_path, capsys):
    """PTF281 (with --preview, where it reports) reports a writer kept on an object that no file closes; not one that another file of its package
    closes through the object (logger.writer.close()), which this file cannot see."""
    alone, shared = tmp_path / "alone" / "pkg", tmp_path / "shared" / "pkg"
    for pkg in (alone, shared):
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "logger.py").write_text(LOGGER)
    (shared / "run.py").write_text(RUN)
    assert found(["--preview", "--select", "PTF281", str(alone / "logger.py")], capsys)[2] == [("PTF281", 5)]
    assert found(["--preview", "--select", "PTF281", str(shared / "logger.py")], capsys)[2] == []
