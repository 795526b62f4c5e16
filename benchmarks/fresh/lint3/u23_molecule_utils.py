"""Shared graph utilities for the property-prediction models (QM9 / OC20 experiments).

Batching of variable-size molecules, radius graphs, scatter reductions and the radial basis
used by the message-passing layers.
"""

import math

import numpy as np
import torch
import torch.nn as nn

ATOM_KEYS = ["H", "C", "N", "O", "F"]


def scatter_sum(src, index, dim_size):
    out = torch.zeros((dim_size,) + src.shape[1:], dtype=src.dtype, device=src.device)
    return out.index_add_(0, index, src)


def scatter_mean(src, index, dim_size):
    total = scatter_sum(src, index, dim_size)
    count = torch.bincount(index, minlength=dim_size).clamp(min=1).to(src.dtype)
    return total / count.view(-1, *([1] * (src.dim() - 1)))


def collate_molecules(samples):
    """samples: dicts with z (n,), pos (n, 3), y (k,). Returns one disconnected batch graph."""
    z = torch.cat([s["z"] for s in samples])
    pos = torch.cat([s["pos"] for s in samples])
    y = torch.stack([s["y"] for s in samples])  # (B, k): one target row per molecule
    batch = torch.cat([torch.full((len(s["z"]),), i, dtype=torch.long) for i, s in enumerate(samples)])
    return {"z": z, "pos": pos, "y": y, "batch": batch, "num_graphs": len(samples)}


def radius_graph(pos, batch, cutoff):
    """Directed edges (src, dst) between distinct atoms of the same molecule closer than cutoff."""
    same = batch[:, None] == batch[None, :]
    d2 = (pos[:, None, :] - pos[None, :, :]).pow(2).sum(-1)
    keep = same & (d2 < cutoff**2)
    keep.fill_diagonal_(False)
    src, dst = keep.nonzero(as_tuple=True)
    return torch.stack([src, dst])


def edge_lengths(pos, edge_index, eps=1e-9):
    vec = pos[edge_index[1]] - pos[edge_index[0]]
    return torch.sqrt(vec.pow(2).sum(-1) + eps), vec


class GaussianRBF(nn.Module):
    def __init__(self, n_rbf=50, cutoff=5.0):
        super().__init__()
        self.register_buffer("centers", torch.linspace(0.0, cutoff, n_rbf))
        self.width = (cutoff / (n_rbf - 1)) ** 2
        self.cutoff = cutoff

    def forward(self, d):
        rbf = torch.exp(-((d.unsqueeze(-1) - self.centers) ** 2) / (2 * self.width))
        envelope = 0.5 * (torch.cos(math.pi * d / self.cutoff) + 1.0)
        return rbf * envelope.unsqueeze(-1)


class MessageBlock(nn.Module):
    def __init__(self, dim, n_rbf):
        super().__init__()
        self.edge_mlp = nn.Sequential(nn.Linear(2 * dim + n_rbf, dim), nn.SiLU(), nn.Linear(dim, dim))
        self.node_mlp = nn.Sequential(nn.Linear(2 * dim, dim), nn.SiLU(), nn.Linear(dim, dim))
        self.norm = nn.LayerNorm(dim)

    def forward(self, h, edge_index, rbf):
        src, dst = edge_index
        m = self.edge_mlp(torch.cat([h[src], h[dst], rbf], dim=-1))
        agg = scatter_sum(m, dst, h.size(0))
        return self.norm(h + self.node_mlp(torch.cat([h, agg], dim=-1)))


class MPNNStack(nn.Module):
    """Embedding, `depth` message blocks, sum readout per molecule."""

    def __init__(self, n_species=len(ATOM_KEYS) + 1, dim=128, depth=4, n_rbf=50, cutoff=5.0, n_targets=1):
        super().__init__()
        self.embed = nn.Embedding(n_species, dim)
        self.rbf = GaussianRBF(n_rbf, cutoff)
        self.blocks = nn.ModuleList(MessageBlock(dim, n_rbf) for _ in range(depth))
        self.block_names = [f"mp{i}" for i in range(depth)]  # for logging per-block norms
        self.head = nn.Sequential(nn.Linear(dim, dim), nn.SiLU(), nn.Linear(dim, n_targets))
        self.cutoff = cutoff

    def forward(self, g):
        edge_index = radius_graph(g["pos"], g["batch"], self.cutoff)
        d, _ = edge_lengths(g["pos"], edge_index)
        rbf = self.rbf(d)
        h = self.embed(g["z"])
        for block in self.blocks:
            h = block(h, edge_index, rbf)
        return scatter_sum(self.head(h), g["batch"], g["num_graphs"])


def standardize_targets(raw: np.ndarray):
    """Returns a standardized tensor copy plus the statistics; `raw` stays as loaded."""
    y = torch.from_numpy(raw.copy()).float()
    mean, std = y.mean(0), y.std(0)
    y.sub_(mean).div_(std)
    return y, mean, std
