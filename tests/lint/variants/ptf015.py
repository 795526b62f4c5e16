"""PTF015: a tensor kept as a plain attribute of an nn.Module (not a buffer, not a Parameter)."""

PITFALL = {
    "tensor_literal": """
import torch
import torch.nn as nn
class Affine(nn.Module):
    def __init__(self):
        super().__init__()
        self.offset = torch.tensor([1.0, 2.0, 3.0])
    def forward(self, x):
        return x + self.offset
""",
    "mask_in_attention": """
import torch
from torch import nn
class CausalSelfAttention(nn.Module):
    def __init__(self, block_size):
        super().__init__()
        self.mask = torch.tril(torch.ones(block_size, block_size))
        self.scale = torch.ones(1)
""",
    "positional_table_zeros": """
import torch
import torch.nn as nn
class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000):
        super().__init__()
        self.pe = torch.zeros(max_len, d_model)
""",
    "subclass_of_own_base": """
import torch
import torch.nn as nn
class Base(nn.Module):
    pass
class Normalizer(Base):
    def __init__(self):
        super().__init__()
        self.mean = torch.tensor([0.485, 0.456, 0.406])
        self.std = torch.tensor([0.229, 0.224, 0.225])
""",
    "lightning_module_eye": """
import torch
import pytorch_lightning as pl
class Model(pl.LightningModule):
    def __init__(self, n):
        super().__init__()
        self.identity = torch.eye(n)
""",
}

NEAR_MISS = {
    "register_buffer": """
import torch
import torch.nn as nn
class Affine(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("offset", torch.tensor([1.0, 2.0, 3.0]))
""",
    "parameter": """
import torch
import torch.nn as nn
class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(3))
""",
    "not_a_module": """
import torch
class Meter:
    def __init__(self):
        self.total = torch.zeros(1)
""",
    "cache_in_forward": """
import torch
import torch.nn as nn
class Probe(nn.Module):
    def forward(self, x):
        self.last = torch.zeros_like(x)
        return x
""",
}

SEEN = {
    "lightning_module_eye": "https://github.com/Lightning-AI/pytorch-lightning/issues/3674",
    "positional_table_zeros": "https://github.com/pytorch/audio/pull/457",
    "tensor_literal": "https://github.com/pytorch/pytorch/issues/2641",
    "register_buffer": "https://github.com/Lightning-AI/pytorch-lightning/issues/1978",
}
