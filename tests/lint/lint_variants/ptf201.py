"""PTF201 (requires-grad-typo): ``.require_grad = ...`` on a tensor, a parameter or a module freezes nothing."""

PITFALL = {
    "parameters_loop": """
import torch.nn as nn
def freeze(model: nn.Module):
    for p in model.parameters():
        p.require_grad = False
""",
    "named_parameters_loop": """
import torchvision
model = torchvision.models.resnet18(weights=None)
for name, param in model.named_parameters():
    if not name.startswith("fc"):
        param.require_grad = False
""",
    "positional_table": """
import math
import torch
import torch.nn as nn
class PositionalEmbedding(nn.Module):
    def __init__(self, d_model, max_len=512):
        super().__init__()
        pe = torch.zeros(max_len, d_model).float()
        pe.require_grad = False
        position = torch.arange(0, max_len).float().unsqueeze(1)
        pe[:, 0::2] = torch.sin(position)
        self.register_buffer("pe", pe.unsqueeze(0))
""",
    "discriminator_freeze_in_method": """
import torch.nn as nn
class GAN(nn.Module):
    def __init__(self):
        super().__init__()
        self.discriminator = nn.Sequential(nn.Linear(8, 1))
        self.generator = nn.Linear(4, 8)
    def freeze_d(self):
        for p in self.discriminator.parameters():
            p.require_grad = False
""",
    "mask_from_batch": """
import torch
def train(model, train_loader, optimizer, criterion):
    for i, (x, y) in enumerate(train_loader):
        mask = (x.clone() > 0.04).float()
        mask.require_grad = False
        optimizer.zero_grad()
        loss = criterion(model(x, mask), y)
        loss.backward()
""",
    "features_of_pretrained": """
import torch
import torchvision
model = torchvision.models.vgg16(weights=None)
for param in model.features.parameters():
    param.require_grad = False
model.classifier[6] = torch.nn.Linear(4096, 2)
""",
    "module_itself": """
import torch.nn as nn
encoder = nn.LSTM(32, 64)
encoder.require_grad = False
""",
    "enumerate_parameters": """
import torch.nn as nn
def freeze_all(base_models):
    for base_model in base_models:
        base_model.classifier = nn.Identity()
        for index, param in enumerate(base_model.parameters()):
            param.require_grad = False
""",
    "weight_of_layer": """
import torch.nn as nn
emb = nn.Embedding(100, 16)
emb.weight.require_grad = False
""",
}

NEAR_MISS = {
    "spelled_right": """
import torch.nn as nn
def freeze(model: nn.Module):
    for p in model.parameters():
        p.requires_grad = False
""",
    "method_call": """
def freeze(backbone):
    backbone.requires_grad_(False)
""",
    "own_flag_on_self": """
import torch.nn as nn
class Adapter(nn.Module):
    def __init__(self, dim, require_grad=True):
        super().__init__()
        self.require_grad = require_grad
        self.proj = nn.Linear(dim, dim)
""",
    "config_object": """
class Config:
    pass
cfg = Config()
cfg.require_grad = False
""",
    "own_attribute_read_back": """
import torch
def mark(t, flag):
    t.require_grad = flag
def marked(t):
    return getattr(t, "require_grad", None), t.require_grad
x = torch.zeros(3)
mark(x, True)
""",
}

SEEN = {
    "positional_table": "https://github.com/codertimo/BERT-pytorch/pull/104 (pe = torch.zeros(max_len, d_model).float(); pe.require_grad = False), also https://github.com/pytorch/benchmark/pull/1771 and https://github.com/thuml/Time-Series-Library/pull/743",
    "features_of_pretrained": "code search 'require_grad = False': a notebook freezing model.features.parameters() before replacing the classifier",
    "mask_from_batch": "code search 'require_grad = False': mask = x.clone() ... mask.require_grad = False inside 'for i, (x, y) in enumerate(train_loader)'",
    "discriminator_freeze_in_method": "code search 'require_grad = False': an inpainting trainer freezing self.local_discriminator.parameters()",
    "enumerate_parameters": "code search 'require_grad = False': 'for index, param in enumerate(base_model.parameters()): param.require_grad = False'",
    "parameters_loop": "TorchFix TOR002 (https://github.com/pytorch-labs/torchfix): 'Likely typo require_grad in assignment'",
    "spelled_right": "code search 'freeze parameters': freeze(model) loops spelled requires_grad (zhuyuedlut/extract_QA_with_prefix_finetuning src/utils.py)",
}

# A fresh tensor (torch.zeros(...)) never required grad: the misspelt flag changes nothing there.
# Round 4's read held-out half judged 2 such findings harmless (zhouhaoyi/Informer2020 models/embed.py).
NEAR_MISS["positional_table"] = PITFALL.pop("positional_table")
