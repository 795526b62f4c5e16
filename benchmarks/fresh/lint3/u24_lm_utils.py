"""Utilities for the small causal language models: data blocks, model, scoring, sampling, checkpoints."""

import logging
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import Dataset

log = logging.getLogger("lm")


class TokenBlocks(Dataset):
    """A flat uint16 token file cut into (input, target) blocks of `block` tokens."""

    def __init__(self, path, block=512):
        self.tokens = torch.from_file(path, size=os.path.getsize(path) // 2, dtype=torch.int16)
        self.block = block

    def __len__(self):
        return (len(self.tokens) - 1) // self.block

    def __getitem__(self, i):
        chunk = self.tokens[i * self.block : (i + 1) * self.block + 1].to(torch.int64) & 0xFFFF
        return chunk[:-1], chunk[1:]


def pad_prompts(prompts, pad_id):
    """Right-pads a list of 1-D id tensors; returns ids and an attention mask (1 = real token)."""
    length = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), length), pad_id, dtype=torch.long)
    mask = torch.zeros((len(prompts), length), dtype=torch.long)
    for i, p in enumerate(prompts):
        ids[i, : len(p)] = p
        mask[i, : len(p)] = 1
    return ids, mask


class TinyLM(nn.Module):
    def __init__(self, vocab, d=384, heads=6, layers=6, ctx=512, dropout=0.1):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.zeros(1, ctx, d))
        block = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(block, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.tok.weight  # weight tying
        nn.init.normal_(self.pos, std=0.02)

    def forward(self, ids, attention_mask=None):
        T = ids.size(1)
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool, device=ids.device), diagonal=1)
        pad = None if attention_mask is None else attention_mask == 0
        h = self.blocks(self.tok(ids) + self.pos[:, :T], mask=causal, src_key_padding_mask=pad, is_causal=True)
        return self.lm_head(self.norm(h))


def lm_loss(logits, targets, ignore_index=-100):
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1), ignore_index=ignore_index)


@torch.no_grad()
def perplexity(model, loader, device, max_batches=200):
    was_training = model.training
    model.eval()
    nll, count = 0.0, 0
    for i, (x, y) in enumerate(loader):
        if i == max_batches:
            break
        x, y = x.to(device), y.to(device)
        nll += lm_loss(model(x), y).item() * y.numel()
        count += y.numel()
    model.train(was_training)
    return math.exp(nll / count)


@torch.no_grad()
def sequence_logprob(model, ids, attention_mask):
    """Sum of log p(token | prefix) over the real tokens of each row, for reranking."""
    logp = F.log_softmax(model(ids, attention_mask)[:, :-1].float(), dim=-1)
    tok_logp = logp.gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)
    return (tok_logp * attention_mask[:, 1:]).sum(dim=1)


@torch.no_grad()
def sample(model, prompt, steps=100, temperature=0.8, top_k=50):
    was_training = model.training
    model.eval()
    ids = prompt.unsqueeze(0)
    for _ in range(steps):
        logits = model(ids[:, -model.pos.size(1):])[:, -1] / temperature
        kth = torch.topk(logits, top_k, dim=-1).values[:, -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
        nxt = torch.multinomial(F.softmax(logits, dim=-1), num_samples=1)
        ids = torch.cat([ids, nxt], dim=1)
    model.train(was_training)
    return ids[0]


def save_checkpoint(path, model, optimizer, scheduler, step, config):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "step": step, "config": dict(config)}, path)


def load_checkpoint(path, model, optimizer=None, scheduler=None, device="cpu"):
    ckpt = torch.load(path, map_location=device, weights_only=True)
    model.load_state_dict(ckpt["model"])
    if optimizer is not None:
        optimizer.load_state_dict(ckpt["optimizer"])
    if scheduler is not None:
        scheduler.load_state_dict(ckpt["scheduler"])
    log.info("loaded %s at step %d", path, ckpt["step"])
    return ckpt["step"]
