import argparse
import json
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

FEATURES = ["hold", "down_down", "up_down", "key_code"]


class KeystrokeEncoder(nn.Module):
    def __init__(self, n_keys=128, key_dim=16, hidden=96, embed_dim=64):
        super().__init__()
        self.key_embed = nn.Embedding(n_keys, key_dim)
        self.timing = nn.Linear(3, key_dim)
        self.conv = nn.Sequential(
            nn.Conv1d(2 * key_dim, hidden, 5, padding=2), nn.GELU(),
            nn.Conv1d(hidden, hidden, 5, padding=4, dilation=2), nn.GELU(),
        )
        self.proj = nn.Linear(2 * hidden, embed_dim)

    def forward(self, timings, keys):
        x = torch.cat([self.timing(torch.log1p(timings)), self.key_embed(keys)], dim=-1)
        h = self.conv(x.transpose(1, 2))
        pooled = torch.cat([h.mean(dim=2), h.amax(dim=2)], dim=1)
        return F.normalize(self.proj(pooled), dim=1)


def load_encoder(ckpt_path):
    ckpt = torch.load(ckpt_path, map_location="cpu", weights_only=True)
    hparams = ckpt["hyper_parameters"]
    encoder = KeystrokeEncoder(
        n_keys=hparams["n_keys"], key_dim=hparams["key_dim"],
        hidden=hparams["hidden"], embed_dim=hparams["embed_dim"],
    )
    encoder.load_state_dict(ckpt["state_dict"], strict=False)
    return encoder.eval(), hparams


def example_inputs(seq_len, n_keys):
    g = torch.Generator().manual_seed(0)
    timings = torch.rand(2, seq_len, 3, generator=g) * 0.3
    keys = torch.randint(0, n_keys, (2, seq_len), generator=g)
    return timings, keys


def export(encoder, hparams, out_dir):
    out_dir.mkdir(parents=True, exist_ok=True)
    timings, keys = example_inputs(hparams["seq_len"], hparams["n_keys"])
    seq = torch.export.Dim("seq", min=8, max=512)
    batch = torch.export.Dim("batch", min=1, max=256)
    program = torch.export.export(
        encoder, (timings, keys),
        dynamic_shapes={"timings": {0: batch, 1: seq}, "keys": {0: batch, 1: seq}},
    )
    torch.export.save(program, out_dir / "keystroke_encoder.pt2")
    with torch.no_grad():
        reference = encoder(timings, keys)
        exported = program.module()(timings, keys)
    torch.testing.assert_close(exported, reference)
    return reference


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ckpt", default="lightning_logs/version_3/checkpoints/last.ckpt")
    p.add_argument("--out-dir", default="export/keystroke")
    args = p.parse_args()
    encoder, hparams = load_encoder(args.ckpt)
    reference = export(encoder, hparams, Path(args.out_dir))
    meta = {
        "features": FEATURES,
        "embed_dim": hparams["embed_dim"],
        "threshold": hparams.get("verify_threshold", 0.8),
        "example_norms": reference.norm(dim=1).tolist(),
    }
    (Path(args.out_dir) / "meta.json").write_text(json.dumps(meta, indent=2))
    print(f"exported encoder with {sum(p.numel() for p in encoder.parameters())} parameters")


if __name__ == "__main__":
    main()
