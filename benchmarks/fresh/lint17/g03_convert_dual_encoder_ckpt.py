"""Convert an image-text dual encoder exported from the old research codebase into a PyTorch
state dict for the serving model, then check the converted model on a few paired examples.

The old export stores dense kernels as (in_features, out_features), names them
"<scope>/kernel" and "<scope>/bias", and keeps the LayerNorm scales as "gamma"/"beta".
"""
import argparse
import json
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

RENAMES = {
    "kernel": "weight",
    "gamma": "weight",
    "beta": "bias",
    "embeddings": "weight",
}
KEEP_LAYOUT = ("bias", "gamma", "beta", "embeddings")


class Tower(nn.Module):
    def __init__(self, d_in, d_hidden, d_out):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.norm = nn.LayerNorm(d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_out)

    def forward(self, x):
        return self.fc2(F.gelu(self.norm(self.fc1(x))))


class DualEncoder(nn.Module):
    def __init__(self, d_image, d_text, d_hidden, d_embed, vocab):
        super().__init__()
        self.token_embeddings = nn.Embedding(vocab, d_text)
        self.image_tower = Tower(d_image, d_hidden, d_embed)
        self.text_tower = Tower(d_text, d_hidden, d_embed)
        self.logit_scale = nn.Parameter(torch.tensor(2.6592))

    def encode_text(self, tokens):
        return self.text_tower(self.token_embeddings(tokens).mean(dim=1))

    def forward(self, image_feats, tokens):
        img = F.normalize(self.image_tower(image_feats), dim=-1)
        txt = F.normalize(self.encode_text(tokens), dim=-1)
        return self.logit_scale.exp() * img @ txt.t()


def torch_name(old_name):
    parts = old_name.split("/")
    parts[-1] = RENAMES.get(parts[-1], parts[-1])
    return ".".join(parts)


def convert(old_state):
    new_state = {}
    for name, tensor in old_state.items():
        leaf = name.rsplit("/", 1)[-1]
        value = tensor if leaf.endswith(KEEP_LAYOUT) else tensor.T
        new_state[torch_name(name)] = value.contiguous().float()
    return new_state


def load_export(path):
    blob = torch.load(path, map_location="cpu", encoding="latin1")
    return blob["variables"], blob.get("config", {})


@torch.no_grad()
def sanity_check(model, pairs_path):
    pairs = torch.load(pairs_path, map_location="cpu", weights_only=True)
    logits = model(pairs["image_feats"], pairs["tokens"])
    top1 = (logits.argmax(dim=1) == torch.arange(len(logits))).float().mean().item()
    return top1, logits.diagonal().mean().item()


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--export", default="exports/dual_encoder_v3.pt")
    p.add_argument("--pairs", default="exports/check_pairs.pt")
    p.add_argument("--out", default="converted/dual_encoder_v3_torch.pt")
    p.add_argument("--min-top1", type=float, default=0.5)
    args = p.parse_args(argv)

    old_state, cfg = load_export(args.export)
    model = DualEncoder(cfg.get("d_image", 512), cfg.get("d_text", 256), cfg.get("d_hidden", 512),
                        cfg.get("d_embed", 256), cfg.get("vocab", 32000))
    new_state = convert(old_state)
    expected = set(model.state_dict())
    missing, unexpected = expected - set(new_state), set(new_state) - expected
    if missing or unexpected:
        raise SystemExit(f"name mismatch: missing={sorted(missing)} unexpected={sorted(unexpected)}")
    for name, value in model.state_dict().items():
        if value.shape != new_state[name].shape:
            raise SystemExit(f"shape mismatch for {name}: {tuple(new_state[name].shape)} vs {tuple(value.shape)}")
    model.load_state_dict(new_state)
    model.eval()

    top1, mean_pos = sanity_check(model, args.pairs)
    print(f"paired top-1 {top1:.3f}, mean positive logit {mean_pos:.2f}")
    if top1 < args.min_top1:
        raise SystemExit("converted model fails the paired retrieval check")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), out)
    out.with_suffix(".json").write_text(json.dumps({"source": args.export, "config": cfg, "top1": top1}))


if __name__ == "__main__":
    main()
