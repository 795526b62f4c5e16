"""PTF234 (parameter-unused-in-forward): a layer with parameters built in __init__ that nothing reads."""

PITFALL = {
    "fusion_norm_never_applied": """
import torch
from torch import nn
class Fusion(nn.Module):
    def __init__(self, d_img, d_txt, d, n_classes):
        super().__init__()
        self.img_proj = nn.Linear(d_img, d)
        self.txt_proj = nn.Linear(d_txt, d)
        self.fuse_norm = nn.LayerNorm(2 * d)
        self.classifier = nn.Linear(2 * d, n_classes)
    def forward(self, img, txt):
        fused = torch.cat([self.img_proj(img), self.txt_proj(txt)], dim=-1)
        return self.classifier(fused)
""",
    "subclass_forward_skips_a_layer": """
import torch
from torch import nn
class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 8)
        self.out = nn.Linear(8, 1)
class Shallow(Backbone):
    def forward(self, x):
        return self.out(torch.relu(self.fc1(x)))
""",
    "learned_scale_never_used": """
import torch
import torch.nn as nn
class ScaledHead(nn.Module):
    def __init__(self, d, n):
        super().__init__()
        self.fc = nn.Linear(d, n)
        self.logit_scale = nn.Parameter(torch.ones([]) * 2.659)
    def forward(self, x):
        return self.fc(x)
""",
    "layer_left_after_a_refactor": """
import torch.nn as nn
import torch.nn.functional as F
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3)
        self.fc1 = nn.Linear(16 * 30 * 30, 128)
        self.fc2 = nn.Linear(128, 64)
        self.fc3 = nn.Linear(128, 10)
    def forward(self, x):
        x = F.relu(self.conv1(x)).flatten(1)
        return self.fc3(F.relu(self.fc1(x)))
""",
    "attention_projection_not_applied": """
import torch
from torch import nn
class AttentionBlock(nn.Module):
    def __init__(self, channels, heads=4):
        super().__init__()
        self.heads = heads
        self.norm = nn.GroupNorm(8, channels)
        self.to_qkv = nn.Linear(channels, 3 * channels)
        self.proj_attn = nn.Linear(channels, channels)
    def forward(self, x):
        b, c, h, w = x.shape
        t = self.norm(x).flatten(2).transpose(1, 2)
        q, k, v = self.to_qkv(t).chunk(3, dim=-1)
        a = torch.softmax(q @ k.transpose(1, 2) / c ** 0.5, dim=-1) @ v
        return x + a.transpose(1, 2).reshape(b, c, h, w)
""",
    "auxiliary_head_of_this_file_unused": """
import torch
from torch import nn
class AuxHead(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Linear(d, 1))
    def forward(self, h):
        return self.mlp(h)
class Model(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d, d), nn.ReLU())
        self.aux = AuxHead(d)
        self.head = nn.Linear(d, 3)
    def forward(self, x):
        return self.head(self.body(x))
""",
}

NEAR_MISS = {
    "unused_layer_without_parameters": """
import torch
from torch import nn
class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.act = nn.ReLU()
        self.drop = nn.Dropout(0.1)
        self.pad = nn.ReplicationPad1d((0, 2))
        self.inorm = nn.InstanceNorm1d(8)
    def forward(self, x):
        return torch.relu(self.fc(x))
""",
    "used_in_a_helper_method": """
from torch import nn
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 32)
        self.norm = nn.LayerNorm(32)
    def encode(self, x):
        return self.norm(self.proj(x))
    def forward(self, x):
        return self.encode(x).mean(0)
""",
    "layers_read_by_a_built_name": """
import torch
from torch import nn
class Stack(nn.Module):
    def __init__(self, n=3):
        super().__init__()
        self.n = n
        self.layer0 = nn.Linear(8, 8)
        self.layer1 = nn.Linear(8, 8)
        self.layer2 = nn.Linear(8, 8)
    def forward(self, x):
        for i in range(self.n):
            x = torch.relu(getattr(self, f"layer{i}")(x))
        return x
""",
    "every_child_run_in_order": """
from torch import nn
class Chain(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)
    def forward(self, x):
        for layer in self.children():
            x = layer(x)
        return x
""",
    "subclass_uses_the_layer": """
import torch
from torch import nn
class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 8)
        self.out = nn.Linear(8, 1)
class Complete(Backbone):
    def forward(self, x):
        h = torch.relu(self.fc1(x))
        return self.out(torch.relu(self.fc2(h)))
""",
    "frozen_buffer_like_parameter": """
import torch
from torch import nn
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.prior = nn.Parameter(torch.zeros(2), requires_grad=False)
    def forward(self, x):
        return self.fc(x)
""",
    "head_applied_by_the_caller": """
import torch
from torch import nn
class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Linear(32, 16)
        self.classifier = nn.Linear(16, 10)
    def forward(self, x):
        return torch.relu(self.features(x))
def predict(model, x):
    return model.classifier(model(x)).argmax(-1)
""",
    "weight_penalty_over_every_parameter": """
import torch
from torch import nn
class Regularized(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)
        self.spare = nn.Linear(4, 4)
    def forward(self, x):
        penalty = sum(p.pow(2).sum() for p in self.parameters())
        return self.fc(x), penalty
""",
}

SEEN = {
    "layer_left_after_a_refactor": "https://github.com/pytorch/vision/issues/2505 (fc2 no longer used in forward: DDP's 'some parameters are unused'; remove it from __init__ or find_unused_parameters=True)",
    "attention_projection_not_applied": "https://github.com/Project-MONAI/GenerativeModels/issues/402 (proj_attn built in the attention block, not applied in forward: 'parameters that were not used in producing loss' under DDP)",
    "fusion_norm_never_applied": "benchmarks/fresh/lint3/u19_multimodal_model.py (fuse_norm built, never applied; tuning material) and PyTorch-GAN implementations/sgan/sgan.py (Generator.label_emb built, never used)",
    "learned_scale_never_used": "vit-pytorch vit_pytorch/look_vit.py (pos_embedding = nn.Parameter(...) built while forward adds fixed sincos positions)",
}
