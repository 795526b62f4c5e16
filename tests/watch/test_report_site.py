"""Findings reported where the cause is (issue 40, item 2): the line to change, not the line where
the harm shows. Each program marks its cause line with ``# <- cause``; the watcher's finding for
the pitfall must be at that line."""

from __future__ import annotations

import warnings

import pytest
from variants import PRELUDE

from torch_pitfalls.watch import watch
from torch_pitfalls.watch.cli import run_program

PROGRAMS = {
    "losses-appended-to-a-local-list": (
        "loss-append-keeps-graph",
        False,
        """
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
def fit(steps):
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.mse_loss(model(torch.randn(4, 3)), torch.randn(4, 1))
        loss.backward()
        opt.step()
        losses.append(loss)  # <- cause
    return losses
fit(6)
""",
    ),
    "losses-appended-to-an-attribute": (
        "loss-append-keeps-graph",
        False,
        """
class Trainer:
    def __init__(self):
        self.model = nn.Linear(3, 1)
        self.opt = torch.optim.Adam(self.model.parameters())
        self.history = []
    def step(self):
        self.opt.zero_grad()
        loss = self.model(torch.randn(4, 3)).pow(2).mean()
        loss.backward()
        self.opt.step()
        self.history.append(loss)  # <- cause
t = Trainer()
for _ in range(6):
    t.step()
""",
    ),
    "losses-stacked-after-the-loop": (
        "loss-append-keeps-graph",
        False,
        """
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
epoch_losses = {"train": []}
for _ in range(2):
    opt.zero_grad()
    loss = F.mse_loss(model(torch.randn(4, 3)), torch.randn(4, 1))
    loss.backward()
    opt.step()
    epoch_losses["train"].append(loss)  # <- cause
mean = torch.stack(epoch_losses["train"]).mean()
""",
    ),
    "softmax-module-then-cross-entropy": (
        "cross-entropy-after-softmax",
        True,
        """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.act = nn.Softmax(dim=1)
    def forward(self, x):
        return self.act(self.fc(x))  # <- cause
net = Net()
loss = nn.CrossEntropyLoss()(net(torch.randn(5, 4)), torch.tensor([0, 1, 2, 0, 1]))
loss.backward()
""",
    ),
    "softmax-under-no-grad-then-cross-entropy": (
        "cross-entropy-after-softmax",
        True,
        """
logits = torch.randn(6, 4)
with torch.no_grad():
    probs = logits.softmax(dim=-1)  # <- cause
print(F.cross_entropy(probs, torch.randint(0, 4, (6,))).item())
""",
    ),
    "plain-attribute-saved-on-cpu": (
        "unregistered-tensor-attribute",
        False,
        """
import os, tempfile
class Scaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.full((3,), 2.0)
        self.lin = nn.Linear(3, 3)
    def forward(self, x):
        return self.lin(x * self.scale)
m = Scaler()
m(torch.randn(2, 3))
with tempfile.TemporaryDirectory() as d:
    torch.save(m.state_dict(), os.path.join(d, "m.pt"))  # <- cause
""",
    ),
    "unshuffled-loader-at-its-construction": (
        "training-data-not-shuffled",
        False,
        """
from torch.utils.data import DataLoader, TensorDataset
x = torch.randn(96, 4)
y = torch.arange(3).repeat_interleave(32)
loader = DataLoader(TensorDataset(x, y), batch_size=8)  # <- cause
net = nn.Linear(4, 3)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for xb, yb in loader:
    opt.zero_grad()
    F.cross_entropy(net(xb), yb).backward()
    opt.step()
""",
    ),
    "plain-list-at-its-assignment": (
        "submodules-in-plain-list",
        False,
        """
class Tower(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(4, 8)
        self.blocks = [nn.Linear(8, 8) for _ in range(3)]  # <- cause
    def forward(self, x):
        x = self.stem(x)
        for block in self.blocks:
            x = torch.relu(block(x))
        return x.sum(1)
tower = Tower()
opt = torch.optim.Adam(tower.parameters())
for _ in range(3):
    opt.zero_grad()
    tower(torch.randn(2, 4)).pow(2).mean().backward()
    opt.step()
""",
    ),
    "plain-list-of-blocks-at-its-assignment": (
        "submodules-in-plain-list",
        False,
        """
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.mix = nn.Linear(6, 6)
    def forward(self, x):
        return torch.tanh(self.mix(x))
class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(3, 6)
        self.blocks = [Block() for _ in range(2)]  # <- cause
    def forward(self, x):
        x = self.inp(x)
        for b in self.blocks:
            x = b(x)
        return x.mean()
model = Stack()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    opt.zero_grad()
    model(torch.randn(4, 3)).backward()
    opt.step()
""",
    ),
    "head-frozen-at-the-filter": (
        "frozen-by-name-filter",
        True,
        """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8))
        self.out = nn.Linear(8, 2)
    def forward(self, x):
        return self.out(self.body(x))
net = Net()
for name, p in net.named_parameters():
    p.requires_grad_(name.startswith("body.2"))  # <- cause
opt = torch.optim.SGD([p for p in net.parameters() if p.requires_grad], lr=0.1)
for _ in range(2):
    opt.zero_grad()
    F.cross_entropy(net(torch.randn(5, 4)), torch.randint(0, 2, (5,))).backward()
    opt.step()
""",
    ),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_reported_at_the_cause(tmp_path, name):
    case, pedantic, body = PROGRAMS[name]
    source = PRELUDE + body
    cause = next(i for i, line in enumerate(source.splitlines(), 1) if line.endswith("# <- cause"))
    script = tmp_path / f"{name}.py"
    script.write_text(source, encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with watch(explain=False, pedantic=pedantic, select=(case,)) as w:
            assert run_program(str(script), [], as_module=False) == (0, None)
    assert w.errors == []
    lines = sorted({f.line for f in w.findings if f.case == case})
    assert lines == [cause], [f.as_text() for f in w.findings]


def test_a_warning_raised_through_a_deprecation_wrapper_is_explained_at_the_users_line(tmp_path):
    """torch marks some APIs with typing_extensions' ``@deprecated``, an installed package's frame
    between torch's call and the user's: the warning's own stacklevel names the user's line, and
    the explained finding is there, not in typing_extensions (found by the false-positive study's
    nanoGPT program)."""
    import torch

    script = tmp_path / "scaler.py"
    script.write_text("import torch\nscaler = torch.cuda.amp.GradScaler(enabled=False)  # <- cause\n", encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        with watch(explain=True) as w:
            assert run_program(str(script), [], as_module=False) == (0, None)
    found = [f for f in w.findings if f.case == "cuda-amp-gradscaler-deprecated"]
    if not hasattr(torch.amp, "GradScaler"):  # before 2.3 the API was not deprecated
        assert found == []
        return
    assert [(f.path, f.line) for f in found] == [(str(script), 2)], [f.as_text() for f in w.findings]


def test_an_explosion_names_the_first_module_whose_output_was_not_finite(tmp_path):
    """A classifier whose logits overflow before its loss does: the report names the layer where
    the overflow starts (the second Linear of the Sequential) and the line that called the model;
    with a mean-squared error the loss overflows first, and the report says so."""
    body = """
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 3))
opt = torch.optim.SGD(model.parameters(), lr=2.0)
x, y = torch.randn(32, 8) * 30, torch.randint(0, 3, (32,))
for step in range(100):
    opt.zero_grad()
    loss = {loss}  # <- called
    loss.backward()
    opt.step()
"""
    details = {}
    for name, loss in (("ce", "F.cross_entropy(model(x), y)"), ("mse", "F.mse_loss(model(x), torch.zeros(32, 3))")):
        source = PRELUDE + body.replace("{loss}", loss)
        called = next(i for i, line in enumerate(source.splitlines(), 1) if line.endswith("# <- called"))
        script = tmp_path / f"{name}.py"
        script.write_text(source, encoding="utf-8")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with watch(explain=False, select=("exploding-gradients-without-clipping",)) as w:
                assert run_program(str(script), [], as_module=False) == (0, None)
        assert w.errors == []
        [found] = w.findings
        details[name] = (found.detail, called, str(script))
    detail, called, script = details["ce"]
    assert f"the first module whose output was not finite: Sequential.2 (Linear) at {script}:{called}" in detail
    assert "the loss itself overflowed" in details["mse"][0]
