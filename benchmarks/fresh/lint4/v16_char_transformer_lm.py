"""A small character-level GPT trained on a plain-text corpus (tiny-shakespeare by default)."""

import math
import sys

import torch
import torch.nn.functional as F
from torch import nn

BLOCK, D_MODEL, N_HEAD, N_LAYER, DROPOUT = 256, 384, 6, 6, 0.2
BATCH, STEPS, LR = 64, 5000, 3e-4


class CausalSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(D_MODEL, 3 * D_MODEL)
        self.proj = nn.Linear(D_MODEL, D_MODEL)
        self.attn_drop = nn.Dropout(DROPOUT)
        self.register_buffer("future", torch.ones(BLOCK, BLOCK).triu(1).byte(), persistent=False)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, N_HEAD, C // N_HEAD).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))
        att = att.masked_fill(self.future[:T, :T], float("-inf"))
        att = self.attn_drop(att.softmax(dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(y)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(D_MODEL), nn.LayerNorm(D_MODEL)
        self.attn = CausalSelfAttention()
        self.mlp = nn.Sequential(nn.Linear(D_MODEL, 4 * D_MODEL), nn.GELU(),
                                 nn.Linear(4 * D_MODEL, D_MODEL), nn.Dropout(DROPOUT))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class CharGPT(nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.tok = nn.Embedding(vocab, D_MODEL)
        self.pos = nn.Embedding(BLOCK, D_MODEL)
        self.blocks = nn.Sequential(*[Block() for _ in range(N_LAYER)])
        self.ln_f = nn.LayerNorm(D_MODEL)
        self.head = nn.Linear(D_MODEL, vocab, bias=False)

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.blocks(self.tok(idx) + self.pos(pos))
        return self.head(self.ln_f(x))

    @torch.no_grad()
    def generate(self, idx, n_new, temperature=1.0):
        for _ in range(n_new):
            logits = self(idx[:, -BLOCK:])[:, -1] / temperature
            idx = torch.cat([idx, torch.multinomial(logits.softmax(-1), 1)], dim=1)
        return idx


def get_batch(data, device):
    starts = torch.randint(len(data) - BLOCK - 1, (BATCH,))
    x = torch.stack([data[s:s + BLOCK] for s in starts])
    y = torch.stack([data[s + 1:s + BLOCK + 1] for s in starts])
    return x.to(device), y.to(device)


def main(path="input.txt"):
    text = open(path, encoding="utf-8").read()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
    split = int(0.9 * len(data))
    train, val = data[:split], data[split:]

    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = CharGPT(len(chars)).to(device)
    matrices = [p for p in model.parameters() if p.dim() >= 2]
    vectors = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": matrices, "weight_decay": 0.1},
                             {"params": vectors, "weight_decay": 0.0}], lr=LR)
    for step in range(STEPS + 1):
        if step % 500 == 0:
            model.eval()
            with torch.no_grad():
                xv, yv = get_batch(val, device)
                val_loss = F.cross_entropy(model(xv).flatten(0, 1), yv.flatten()).item()
            model.train()
            print(f"step {step}: val loss {val_loss:.3f}")
        xb, yb = get_batch(train, device)
        loss = F.cross_entropy(model(xb).flatten(0, 1), yb.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    model.eval()
    start = torch.tensor([[stoi["\n"]]], device=device)
    sys.stdout.write("".join(chars[i] for i in model.generate(start, 500)[0].tolist()))
    torch.save({"model": model.state_dict(), "chars": chars}, "char_gpt.pt")


if __name__ == "__main__":
    main()
