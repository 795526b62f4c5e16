"""PTF208 (clip-grad-after-step): gradients clipped after the step that used them."""

PITFALL = {
    "trainer_clip_after_step": """
import torch as th
def fit(model, loader, optimizer, max_grad_norm, loss_fn):
    for batch in loader:
        loss = loss_fn(model, batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if max_grad_norm is not None:
            th.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
""",
    "from_import": """
from torch.nn.utils import clip_grad_norm_
def train(model, opt, loader, clip):
    for x, y in loader:
        opt.zero_grad()
        loss = model(x, y)
        loss.backward()
        opt.step()
        clip_grad_norm_(model.parameters(), clip)
""",
    "old_spelling_module": """
import torch
def train_step(model, optimizer, loss):
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    torch.nn.utils.clip_grad.clip_grad_norm_(model.parameters(), 10)
""",
    "clip_value": """
import torch.nn as nn
def update(net, opt, loss):
    loss.backward()
    opt.step()
    nn.utils.clip_grad_value_(net.parameters(), 0.5)
    opt.zero_grad()
""",
    "scaler_step": """
import torch
def step(model, optimizer, scaler, loss):
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
""",
    "self_optimizer": """
import torch
class Trainer:
    def __init__(self, model, lr):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    def train_batch(self, loss):
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 5.0)
""",
}

NEAR_MISS = {
    "clip_then_step": """
import torch
def train(model, optimizer, loss, clip):
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    optimizer.step()
""",
    "gan_two_optimizers": """
import torch
def step(G, D, opt_g, opt_d, d_loss, g_loss):
    d_loss.backward(retain_graph=True)
    g_loss.backward()
    opt_d.step()
    torch.nn.utils.clip_grad_norm_(G.parameters(), 1.0)
    opt_g.step()
""",
    "backward_in_between": """
import torch
def step(model, opt, loss_a, loss_b):
    loss_a.backward()
    opt.step()
    opt.zero_grad()
    loss_b.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
""",
    "amp_branches": """
import torch
def step(model, optimizer, scaler, loss, use_amp):
    if use_amp:
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
    else:
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
""",
    "norm_measured_only": """
import math
import torch
def step(model, optimizer, loss):
    loss.backward()
    optimizer.step()
    total = torch.nn.utils.clip_grad_norm_(model.parameters(), math.inf)
    return total
""",
    "scheduler_step_before": """
import torch
def epoch(model, optimizer, scheduler, loader):
    scheduler.step()
    for x in loader:
        optimizer.zero_grad()
        model(x).sum().backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
""",
}

SEEN = {
    "trainer_clip_after_step": "https://github.com/awslabs/graphstorm/issues/1366 and https://github.com/awslabs/graphstorm/pull/1382 (th.nn.utils.clip_grad_norm_ after self.optimizer.step())",
    "from_import": "https://github.com/jongwook/onsets-and-frames/issues/24 (clip_grad_norm_ after .backward() and .step())",
    "old_spelling_module": "https://github.com/VGraphRNN/VGRNN/issues/4 (clip_grad_norm called after opt.step())",
    "clip_then_step": "https://github.com/pytorch/pytorch/issues/309 (backward, clip_grad_norm, optimizer.step: the order that clips)",
    "amp_branches": "https://github.com/Seeker98/CRWKV/issues/3 (if use_grad_clip: clip_grad_norm_ ... self.optimizer_g.step())",
}

# The clip in a hook of the trainer, called right after the step (fresh set 13's m17, tuning half, missed at its
# first run); called between backward and step, it clips what the step uses.
_HOOKED = """
import torch
from torch import nn
class Trainer:
    def __init__(self, model, lr):
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    def clip_hook(self):
        self.last_norm = float(nn.utils.clip_grad_norm_(self.model.parameters(), 1.0))
    def fit_epoch(self, loader):
        for x, y in loader:
            loss = nn.functional.mse_loss(self.model(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            {first}
            {second}
"""
PITFALL["clip_in_a_hook_called_after_the_step"] = _HOOKED.format(first="self.optimizer.step()", second="self.clip_hook()")
NEAR_MISS["clip_in_a_hook_called_before_the_step"] = _HOOKED.format(first="self.clip_hook()", second="self.optimizer.step()")
SEEN["clip_in_a_hook_called_after_the_step"] = (
    "benchmarks/fresh/lint13 m17_building_footprints.py (tuning half, missed at its first run)"
)
