"""PTF285 (apply-cpu-only): Tensor.apply_(fn), a Python function per element, CPU tensors only."""

PITFALL = {
    "labels_remapped_in_place": """
import torch
def remap(ids, table):
    t = torch.tensor(ids)
    t.apply_(lambda v: table.get(v, 0))
    return t
""",
    "scores_squashed_after_the_model": """
import math
import torch.nn as nn
class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 1)
    def forward(self, x):
        s = self.fc(x).detach()
        s.apply_(lambda v: 1 / (1 + math.exp(-v)))
        return s
""",
    "moved_then_applied": """
import torch
def prepare(values, device):
    t = torch.as_tensor(values, dtype=torch.float32).to(device)
    t.apply_(abs)
    return t
""",
    "slice_of_a_known_tensor": """
import torch
def coords(hm):
    flat = torch.zeros(hm.size(0), 2)
    flat[:, 0].apply_(lambda x: x % 64)
    return flat
""",
    "array_wrapped_then_applied": """
import numpy as np
import torch
def quantize(a: np.ndarray):
    t = torch.from_numpy(a)
    t.apply_(round)
    return t
""",
}

PREVIEW = {
    "heatmap_argmax_of_unknown_type": """
def get_preds_fromhm(hm):
    preds = hm.argmax(-1).float()
    preds.apply_(lambda x: x % hm.size(3) + 1)
    return preds
""",
}

NEAR_MISS = {
    "explicitly_on_the_cpu": """
import torch
def remap(t: torch.Tensor, table):
    return t.cpu().apply_(lambda v: table.get(v, 0)).to(t.device)
""",
    "to_cpu_string": """
import torch
def remap(ids, table, device):
    t = torch.tensor(ids, device=device)
    return t.to("cpu").apply_(lambda v: table.get(v, 0))
""",
    "module_apply_without_underscore": """
import torch.nn as nn
def init(m):
    if isinstance(m, nn.Linear):
        nn.init.zeros_(m.bias)
net = nn.Sequential(nn.Linear(2, 2))
net.apply(init)
""",
    "vectorised": """
import torch
def squash(x: torch.Tensor):
    return torch.sigmoid(x)
""",
}

SEEN = {
    "slice_of_a_known_tensor": "clovaai/stargan-v2 core/wing.py (preds[..., 0].apply_(lambda x: (x - 1) % hm.size(3) + 1) on FAN heatmaps)",
    "heatmap_argmax_of_unknown_type": "clovaai/stargan-v2 core/wing.py get_preds_fromhm (hm a parameter: --preview)",
    "labels_remapped_in_place": "PyTorch docs, Tensor.apply_: 'This function only works with CPU tensors and should not be used in code sections that require high performance'",
    "explicitly_on_the_cpu": "the case apply-cpu-only's own way out: t.cpu().apply_(fn).to(t.device)",
}
