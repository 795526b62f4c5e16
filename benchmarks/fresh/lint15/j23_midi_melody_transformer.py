import argparse
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

PAD, BOS, EOS = 0, 1, 2


def causal_mask(n, device):
    return torch.triu(torch.ones(n, n, dtype=torch.uint8, device=device), diagonal=1)


class SelfAttention(nn.Module):
    def __init__(self, dim, heads, dropout):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.drop = nn.Dropout(dropout)

    def forward(self, x, mask):
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // self.heads)
        scores = scores.masked_fill(mask, float("-inf"))
        weights = self.drop(scores.softmax(dim=-1))
        return self.proj((weights @ v).transpose(1, 2).reshape(b, n, d))


class Block(nn.Module):
    def __init__(self, dim, heads, dropout):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = SelfAttention(dim, heads, dropout)
        self.ff = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim), nn.Dropout(dropout))

    def forward(self, x, mask):
        x = x + self.attn(self.ln1(x), mask)
        return x + self.ff(self.ln2(x))


class MelodyLM(nn.Module):
    def __init__(self, vocab, dim=256, heads=8, layers=6, max_len=512, dropout=0.1):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim, padding_idx=PAD)
        self.pos = nn.Embedding(max_len, dim)
        self.blocks = nn.ModuleList(Block(dim, heads, dropout) for _ in range(layers))
        self.norm = nn.LayerNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.lm_head.weight = self.tok.weight

    def forward(self, ids):
        n = ids.shape[1]
        x = self.tok(ids) + self.pos(torch.arange(n, device=ids.device))
        mask = causal_mask(n, ids.device)
        for block in self.blocks:
            x = block(x, mask)
        return self.lm_head(self.norm(x))


def load_sequences(path, length):
    tokens = np.load(path, allow_pickle=False)
    rows = len(tokens) // (length + 1)
    return torch.from_numpy(tokens[: rows * (length + 1)].astype(np.int64)).view(rows, length + 1)


@torch.no_grad()
def generate(model, prompt, steps, temperature=1.0, top_k=32):
    model.eval()
    ids = prompt.clone()
    for _ in range(steps):
        logits = model(ids[:, -512:])[:, -1] / temperature
        kth = logits.topk(top_k, dim=-1).values[:, -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
        nxt = torch.multinomial(logits.softmax(-1), 1)
        ids = torch.cat([ids, nxt], dim=1)
        if (nxt == EOS).all():
            break
    return ids


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train", default="data/folk_melodies_train.npy")
    parser.add_argument("--valid", default="data/folk_melodies_valid.npy")
    parser.add_argument("--vocab", type=int, default=388)
    parser.add_argument("--length", type=int, default=256)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--steps", type=int, default=20000)
    parser.add_argument("--lr", type=float, default=3e-4)
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    train = load_sequences(args.train, args.length)
    valid = load_sequences(args.valid, args.length)
    model = MelodyLM(args.vocab).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.0)
    warmup = 1000
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / warmup))
    for step in range(1, args.steps + 1):
        model.train()
        batch = train[torch.randint(0, len(train), (args.batch,))].to(device)
        logits = model(batch[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, args.vocab), batch[:, 1:].reshape(-1), ignore_index=PAD)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        if step % 1000 == 0:
            model.eval()
            with torch.no_grad():
                vb = valid[:64].to(device)
                vloss = F.cross_entropy(model(vb[:, :-1]).reshape(-1, args.vocab), vb[:, 1:].reshape(-1),
                                        ignore_index=PAD)
            print(f"step {step}: train {loss.item():.3f} valid {vloss.item():.3f} ppl {math.exp(vloss.item()):.1f}")
    sample = generate(model, torch.tensor([[BOS]], device=device), 256)
    np.save("melody_sample.npy", sample.cpu().numpy())
    torch.save(model.state_dict(), "melody_lm.pt")


if __name__ == "__main__":
    main()
