"""Word-piece language model on WikiText-103 with a pre-norm Transformer (nn.TransformerEncoder
with a causal mask). Token ids are pre-tokenised into uint16 memmaps. Training resumes from
the last checkpoint after preemption; bf16 autocast and gradient accumulation.

python m24_wikitext_prenorm_lm.py --data data/wt103 --steps 100000 --resume
"""
import argparse
import math
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def args_():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="data/wt103")
    p.add_argument("--vocab", type=int, default=32000)
    p.add_argument("--ctx", type=int, default=512)
    p.add_argument("--d-model", type=int, default=512)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--accum", type=int, default=4)
    p.add_argument("--steps", type=int, default=100000)
    p.add_argument("--warmup", type=int, default=2000)
    p.add_argument("--lr", type=float, default=6e-4)
    p.add_argument("--ckpt", default="runs/wt103_lm/last.pt")
    p.add_argument("--resume", action="store_true")
    return p.parse_args()


class PreNormLM(nn.Module):
    def __init__(self, vocab, ctx, d, layers, heads):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(ctx, d)
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.1, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers, norm=nn.LayerNorm(d), enable_nested_tensor=False)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.tok.weight

    def forward(self, idx):
        T = idx.shape[1]
        pos = torch.arange(T, device=idx.device)
        mask = nn.Transformer.generate_square_subsequent_mask(T, device=idx.device)
        h = self.blocks(self.tok(idx) + self.pos(pos), mask=mask, is_causal=True)
        return self.lm_head(h)


def batch_from(tokens, batch_size, ctx, device):
    starts = torch.randint(0, len(tokens) - ctx - 1, (batch_size,))
    x = torch.stack([torch.from_numpy(tokens[s:s + ctx].astype(np.int64)) for s in starts.tolist()])
    y = torch.stack([torch.from_numpy(tokens[s + 1:s + ctx + 1].astype(np.int64)) for s in starts.tolist()])
    return x.to(device, non_blocking=True), y.to(device, non_blocking=True)


def lr_lambda(warmup, total):
    def f(step):
        if step < warmup:
            return (step + 1) / warmup
        progress = (step - warmup) / max(1, total - warmup)
        return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress))
    return f


def make_optimizer(model, lr):
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and "pos" not in n]
    rest = [p for n, p in model.named_parameters() if not (p.dim() >= 2 and "pos" not in n)]
    return torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}],
                             lr=lr, betas=(0.9, 0.95))


@torch.no_grad()
def val_loss(model, tokens, args, device, batches=50):
    model.eval()
    losses = []
    for _ in range(batches):
        x, y = batch_from(tokens, args.batch_size, args.ctx, device)
        with torch.autocast(device_type=device.type, dtype=torch.bfloat16):
            logits = model(x)
        losses.append(F.cross_entropy(logits.float().flatten(0, 1), y.flatten()).item())
    model.train()
    return float(np.mean(losses))


def main():
    args = args_()
    torch.manual_seed(1337)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_tok = np.memmap(os.path.join(args.data, "train.bin"), dtype=np.uint16, mode="r")
    val_tok = np.memmap(os.path.join(args.data, "valid.bin"), dtype=np.uint16, mode="r")
    model = PreNormLM(args.vocab, args.ctx, args.d_model, args.layers, args.heads).to(device)
    optimizer = make_optimizer(model, args.lr)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda(args.warmup, args.steps))
    step = 0
    if args.resume and os.path.exists(args.ckpt):
        state = torch.load(args.ckpt, map_location=device, weights_only=True)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        step = state["step"]
        torch.set_rng_state(state["rng"].cpu())
        print(f"resumed at step {step}")
    model.train()
    while step < args.steps:
        optimizer.zero_grad(set_to_none=True)
        for _ in range(args.accum):
            x, y = batch_from(train_tok, args.batch_size, args.ctx, device)
            with torch.autocast(device_type=device.type, dtype=torch.bfloat16):
                logits = model(x)
            loss = F.cross_entropy(logits.float().flatten(0, 1), y.flatten()) / args.accum
            loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        step += 1
        if step % 1000 == 0:
            vl = val_loss(model, val_tok, args, device)
            print(f"step {step:6d}  train {loss.item() * args.accum:.3f}  val {vl:.3f}  ppl {math.exp(vl):.1f}")
            os.makedirs(os.path.dirname(args.ckpt), exist_ok=True)
            torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                        "scheduler": scheduler.state_dict(), "step": step, "rng": torch.get_rng_state()}, args.ckpt)


if __name__ == "__main__":
    main()
