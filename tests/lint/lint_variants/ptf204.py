"""PTF204 (bool-of-multielement-tensor): a loss class called with the tensors (the constructor, not the loss)."""

PITFALL = {
    "lightning_training_step": """
import torch.nn as nn
import pytorch_lightning as pl
class Model(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        x, y = batch
        y_hat = self(x)
        loss = nn.CrossEntropyLoss(y_hat, y)
        return {"loss": loss}
""",
    "bare_name_from_import": """
from torch.nn import CrossEntropyLoss
def train(model, train_loader):
    for data, labels in train_loader:
        output = model(data)
        loss = CrossEntropyLoss(output, labels)
        loss.backward()
""",
    "mse_then_backward": """
import torch.nn as nn
def fit(pred, target):
    loss = nn.MSELoss(pred, target)
    loss.backward()
""",
    "tensors_built_here": """
import torch
import torch.nn as nn
outputs = torch.randn(4, 3)
labels = torch.tensor([0, 1, 2, 1])
loss = nn.CrossEntropyLoss(outputs, labels)
""",
    "bce_in_sum": """
import torch.nn as nn
def total_loss(m_pred, m, d_pred, d):
    return nn.BCELoss(m_pred, m) + nn.L1Loss()(d_pred, d)
""",
    "item_on_it": """
import torch.nn as nn
def evaluate(model, loader):
    total = 0.0
    for x, y in loader:
        total += nn.SmoothL1Loss(model(x), y).item()
    return total
""",
}

NEAR_MISS = {
    "built_then_called": """
import torch.nn as nn
def step(outputs, labels):
    criterion = nn.CrossEntropyLoss()
    return criterion(outputs, labels)
""",
    "class_weights": """
import torch
import torch.nn as nn
weights = torch.tensor([1.0, 2.0, 0.5])
criterion = nn.CrossEntropyLoss(weights)
""",
    "old_positional_size_average": """
import torch.nn as nn
class CrossEntropyLoss2d(nn.Module):
    def __init__(self, weight=None, size_average=True):
        super().__init__()
        self.nll_loss = nn.NLLLoss2d(weight, size_average)
    def forward(self, inputs, targets):
        return self.nll_loss(inputs, targets)
""",
    "weight_and_flag_literal": """
import torch
import torch.nn as nn
w = torch.ones(10)
criterion = nn.NLLLoss(w, False)
""",
    "functional": """
import torch.nn.functional as F
def step(y_hat, y):
    return F.cross_entropy(y_hat, y)
""",
}

PITFALL["done_mask_tested_for_truth"] = """
import torch
class Returns:
    def __init__(self, n):
        self.acc = torch.zeros(n)
        self.done_returns = []
    def record(self, reward, done):
        self.acc += reward
        if done:
            self.done_returns += self.acc[done].tolist()
            self.acc[done] = 0
def run(envs, policy, n, steps):
    tracker = Returns(n)
    for _ in range(steps):
        r, d = envs.step(policy())
        tracker.record(torch.as_tensor(r), torch.as_tensor(d, dtype=torch.bool))
"""
PITFALL["while_any_sequence_unfinished"] = """
import torch
def greedy(model, start, max_len, eos):
    tokens = start.clone()
    alive = torch.ones(start.size(0), dtype=torch.bool)
    while alive:
        nxt = model(tokens).argmax(-1)
        tokens = torch.cat([tokens, nxt[:, None]], 1)
        alive = alive & (nxt != eos)
        tokens[~alive, -1] = eos
    return tokens
"""
NEAR_MISS["zero_dim_comparison"] = """
import torch
def maybe_save(model, loss, best):
    better = torch.as_tensor(loss < best)
    if better:
        torch.save(model.state_dict(), "best.pt")
"""
NEAR_MISS["list_of_flags_used_as_an_index"] = """
def pick(rows, flags):
    if flags:
        return rows[flags]
    return rows
pick([1, 2], [True, False])
"""
NEAR_MISS["mask_tested_with_any"] = """
import torch
def reset(acc, done: torch.Tensor):
    done = done.bool()
    if done.any():
        acc[done] = 0
    return acc
"""

NEAR_MISS["count_used_as_an_integer_index"] = """
import torch
def cutoff(freqs, fmin):
    scale = freqs.clone()
    ix = torch.sum(scale < fmin)
    if ix and ix < len(scale):
        scale[:ix] = scale[ix]
    return scale
"""

NEAR_MISS["numpy_mask_not_torch"] = """
import numpy as np
def drop(values, scores):
    keep = np.asarray(scores) > 0
    if keep:
        return values[keep]
    return values
"""

SEEN = {
    "count_used_as_an_integer_index": "facebookresearch/mbrl-lib mbrl/util/math.py (powerlaw_psd_gaussian: ix = torch.sum(s_scale < fmin); if ix and ...: s_scale[:ix] = s_scale[ix])",
    "done_mask_tested_for_truth": "benchmarks/fresh/lint14 n26_warehouse_picker_a2c.py (tuning half, missed at its first run: if dones: on the vectorised environments' done tensor, then used as a mask)",
    "lightning_training_step": "https://github.com/Lightning-AI/pytorch-lightning/issues/501 (loss = nn.CrossEntropyLoss(y_hat, y): 'That's a class')",
    "bare_name_from_import": "https://github.com/imranparuk/speaker-recognition-3d-cnn/issues/2 (loss = CrossEntropyLoss(output, labels) in train.py)",
    "bce_in_sum": "https://github.com/nikhilroxtomar/DDANet/issues/1 (the loss class given m_pred, m; fixed as nn.BCEWithLogitsLoss()(m_pred, m))",
    "old_positional_size_average": "find_string 'F.nll_loss(F.softmax(': FocalLoss2d's self.nll_loss = nn.NLLLoss2d(weight, size_average) (the pre-0.4 signature)",
}
