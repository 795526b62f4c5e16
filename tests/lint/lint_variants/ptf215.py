"""PTF215 (softmax-singleton-axis): a softmax over an axis the code itself made size 1."""

PITFALL = {
    "cbam_spatial_softmax": """
import torch
import torch.nn.functional as F
from torch import nn
class SpatialAttention(nn.Module):
    def __init__(self, kernel_size=7):
        super().__init__()
        self.conv = nn.Conv2d(2, 1, kernel_size, padding=kernel_size // 2, bias=False)
    def forward(self, x):
        avg_out = torch.mean(x, dim=1, keepdim=True)
        max_out, _ = torch.max(x, dim=1, keepdim=True)
        logits = self.conv(torch.cat([avg_out, max_out], dim=1))
        return x * F.softmax(logits, dim=1)
""",
    "linear_one_score_rows": """
import torch
import torch.nn.functional as F
from torch import nn
class EntityAttention(nn.Module):
    def __init__(self, words_dim, hidden):
        super().__init__()
        self.attn = nn.Linear(words_dim + hidden, 1)
    def forward(self, x, outputs):
        x = x.view(-1, x.size(2))
        outputs = outputs.view(-1, outputs.size(2))
        weights = F.softmax(self.attn(torch.cat((x, outputs), 1)), dim=1)
        return weights * outputs
""",
    "matmul_with_a_column": """
import torch
from torch import nn
class AdditiveAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.w_g = nn.Parameter(torch.randn(dim, 1))
        self.scale_factor = dim ** -0.5
    def forward(self, query):
        A = query @ self.w_g
        A = A * self.scale_factor
        A = torch.softmax(A, dim=-1)
        return torch.sum(A * query, dim=1)
""",
    "unsqueeze_then_softmax": """
import torch.nn.functional as F
def pointer_scores(logits):
    scores = logits.unsqueeze(-1)
    return F.softmax(scores, dim=-1)
""",
    "keepdim_mean_then_softmax": """
import torch
def spatial_attn(x):
    a = x.mean(1, keepdim=True)
    return a.softmax(dim=1)
""",
    "softmax_module_on_mask_conv": """
import torch
from torch import nn
class ContextBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv_mask = nn.Conv2d(channels, 1, kernel_size=1)
        self.softmax = nn.Softmax(dim=1)
    def forward(self, x):
        context_mask = self.conv_mask(x)
        context_mask = self.softmax(context_mask)
        return (x * context_mask).sum(dim=(2, 3))
""",
    "functional_conv_from_helper": """
import torch
import torch.nn.functional as F
def attention_logits(feats):
    weight = torch.randn(1, 2, 3, 3, requires_grad=True)
    pooled = torch.cat([feats.mean(dim=1, keepdim=True), feats.amax(dim=1, keepdim=True)], dim=1)
    return weight, F.conv2d(pooled, weight, padding=1)
def attend(feats):
    weight, logits = attention_logits(feats)
    return feats * F.log_softmax(logits, 1)
""",
    "implicit_dim_on_conv_map": """
import torch.nn.functional as F
from torch import nn
head = nn.Conv2d(64, 1, 3, padding=1)
def saliency(feats):
    return F.softmax(head(feats))
""",
    "softmax2d_on_one_channel": """
from torch import nn
class Gate(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.score = nn.Sequential(nn.Conv2d(c, c // 4, 1), nn.ReLU(), nn.Conv2d(c // 4, 1, 1), nn.BatchNorm2d(1))
        self.norm = nn.Softmax2d()
    def forward(self, x):
        return x * self.norm(self.score(x))
""",
    "policy_with_one_action_logit": """
import torch
import torch.nn.functional as F
from torch import nn
class Policy(nn.Module):
    def __init__(self, obs_dim, hidden=128):
        super().__init__()
        self.body = nn.Linear(obs_dim, hidden)
        self.head = nn.Linear(hidden, 1)
    def forward(self, obs):
        return F.log_softmax(self.head(torch.tanh(self.body(obs))), dim=-1)
""",
}

NEAR_MISS = {
    "attention_pooling_over_time": """
import torch
import torch.nn.functional as F
from torch import nn
class AttnPool(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.score = nn.Linear(d, 1)
    def forward(self, h):  # B x T x D
        w = F.softmax(self.score(h), dim=1)  # over T
        return (w * h).sum(dim=1)
""",
    "mask_flattened_first": """
import torch
from torch import nn
class ContextBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv_mask = nn.Conv2d(channels, 1, kernel_size=1)
        self.softmax = nn.Softmax(dim=2)
    def forward(self, x):
        b, c, h, w = x.shape
        mask = self.conv_mask(x).view(b, 1, h * w)
        mask = self.softmax(mask)
        return torch.matmul(x.view(b, c, h * w), mask.transpose(1, 2))
""",
    "sigmoid_gate": """
import torch
from torch import nn
class SpatialAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 1, 7, padding=3)
    def forward(self, x):
        pooled = torch.cat([x.mean(dim=1, keepdim=True), x.amax(dim=1, keepdim=True)], dim=1)
        return x * torch.sigmoid(self.conv(pooled))
""",
    "stable_softmax_by_hand": """
import torch
def stable_softmax(x):
    shifted = x - x.max(dim=1, keepdim=True)[0]
    return torch.softmax(shifted, dim=1)
""",
    "unsqueeze_elsewhere": """
import torch.nn.functional as F
def weights(scores):
    return F.softmax(scores.unsqueeze(1), dim=-1)
""",
    "segmentation_classes": """
import torch.nn.functional as F
from torch import nn
head = nn.Conv2d(64, 21, 1)
def predict(feats):
    return F.softmax(head(feats), dim=1)
""",
    "score_squeezed_first": """
import torch
from torch import nn
class AttnPool(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.score = nn.Linear(d, 1)
    def forward(self, h):
        return torch.softmax(self.score(h).squeeze(-1), dim=-1)
""",
    "two_branches_stacked": """
import torch
from torch import nn
class SelectKernel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.fc = nn.Conv2d(c, c, 1)
        self.softmax = nn.Softmax(dim=1)
    def forward(self, a, b):
        z = torch.cat([self.fc(a).unsqueeze(1), self.fc(b).unsqueeze(1)], dim=1)
        return self.softmax(z)
""",
}

SEEN = {
    "cbam_spatial_softmax": "S3 (the corpus's source post, section 2.3.1): a CBAM spatial_attention reducing the channels to one map then tf.nn.softmax over them; PyTorch CBAM blocks spell the reduction torch.mean/torch.max(x, dim=1, keepdim=True) + nn.Conv2d(2, 1, k) (find_string 'nn.Conv2d(2, 1, kernel_size')",
    "linear_one_score_rows": "https://github.com/DEEP-PolyU/KEQA_WSDM19/issues/2 (F.softmax(self.attn(torch.cat((x, outputs), 1)), dim=1) on a (seq_len*batch, 1) score: all softmax results 1.0)",
    "matmul_with_a_column": "https://github.com/Amshaker/SwiftFormer/issues/2 (A = query @ w_g of shape [B, N, 1], softmax over the last dim: the attention scores are all 1)",
    "unsqueeze_then_softmax": "https://github.com/localminimum/R-net/issues/8 (tf.expand_dims(p1_logits, -1) then tf.nn.softmax over that last dim: all 1s)",
    "keepdim_mean_then_softmax": "https://github.com/HRanWang/Spatial-Re-Scaling/issues/3 (SpatialAttn: x.mean(1, keepdim=True) down to 32x1x24x8, where the paper takes a softmax)",
    "two_branches_stacked": "https://github.com/suvojit-0x55aa/A2S2K-ResNet/issues/4 (unsqueeze(dim=1) of two branches, cat on dim=1, nn.Softmax(dim=1): two entries, not one)",
}
NEAR_MISS["one_column_case_told_apart_by_its_size"] = """
import torch
def predict_proba(model, x, ensemble=False):
    logits = model(x)
    if ensemble:
        logits = logits.mean(dim=1)
        if logits.dim() == 1:
            logits = logits.unsqueeze(1)
    if logits.shape[1] == 1:
        probabilities = torch.sigmoid(logits)
    else:
        probabilities = torch.softmax(logits, dim=1)
    return probabilities
"""
SEEN["one_column_case_told_apart_by_its_size"] = (
    "mambular models/utils/sklearn_base_classifier.py:258-269 (logits unsqueezed to one column on a branch, "
    "sigmoid when logits.shape[1] == 1, else softmax; round 10's tuning half, read wrong)"
)
PITFALL["one_channel_conv_through_its_norm_layer"] = """
import torch
from torch import nn
import torch.nn.functional as F
class SpatialGate(nn.Module):
    def __init__(self, k=7):
        super().__init__()
        self.conv = nn.Conv2d(2, 1, k, padding=k // 2, bias=False)
        self.bn = nn.BatchNorm2d(1)
    def forward(self, x):
        pooled = torch.cat([x.mean(1, keepdim=True), x.amax(1, keepdim=True)], dim=1)
        return x * F.softmax(self.bn(self.conv(pooled)), dim=1)
"""
NEAR_MISS["one_channel_conv_through_its_norm_layer_then_a_sigmoid"] = """
import torch
from torch import nn
class SpatialGate(nn.Module):
    def __init__(self, k=7):
        super().__init__()
        self.conv = nn.Conv2d(2, 1, k, padding=k // 2, bias=False)
        self.bn = nn.BatchNorm2d(1)
    def forward(self, x):
        pooled = torch.cat([x.mean(1, keepdim=True), x.amax(1, keepdim=True)], dim=1)
        return x * torch.sigmoid(self.bn(self.conv(pooled)))
"""
SEEN["one_channel_conv_through_its_norm_layer"] = (
    "the one-channel gate's spelling, nn.Conv2d(F_int, 1, 1) then nn.BatchNorm2d(1) (Attention U-Net's psi, "
    "find_string 'nn.BatchNorm2d(1)'), with the softmax of fresh set 9's q15 (tuning half, read) in place of its sigmoid"
)
SEEN["one_channel_conv_through_its_norm_layer_then_a_sigmoid"] = (
    "Attention U-Net's psi gate (find_string 'nn.BatchNorm2d(1)': Conv2d(F_int, 1, 1), BatchNorm2d(1), Sigmoid)"
)
