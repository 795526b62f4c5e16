"""Embed coral-reef hydrophone recordings into shards for downstream linear probes.

A frozen pretrained audio encoder turns each 5-second window into a 256-d vector. Embeddings
are computed in large batches and written per recording; a linear probe for "fish chorus
present" is then fitted on the shards as a sanity check.
"""
import argparse
import json
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

SAMPLE_RATE = 8000
WINDOW = 5 * SAMPLE_RATE


class FrozenEncoder(nn.Module):
    def __init__(self, dim=256):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv1d(1, 64, 400, stride=160), nn.GELU(),
            nn.Conv1d(64, 128, 5, stride=2), nn.GELU(),
            nn.Conv1d(128, dim, 5, stride=2), nn.GELU(),
        )

    def forward(self, wave):
        return self.conv(wave.unsqueeze(1)).mean(dim=-1)


def windows_of(wave):
    n = wave.numel() // WINDOW
    return wave[: n * WINDOW].view(n, WINDOW)


def compact(t):
    if t.storage().size() != t.numel() or t.storage_offset() != 0:
        return t.clone()
    return t


@torch.no_grad()
def embed_recordings(encoder, recordings, batch_windows, device):
    names, chunks, offsets = [], [], [0]
    for name, wave in recordings:
        w = windows_of(wave)
        names.append(name)
        chunks.append(w)
        offsets.append(offsets[-1] + len(w))
    all_windows = torch.cat(chunks)
    embeddings = torch.cat([encoder(all_windows[i:i + batch_windows].to(device)).cpu()
                            for i in range(0, len(all_windows), batch_windows)])
    return {name: embeddings[offsets[k]:offsets[k + 1]] for k, name in enumerate(names)}


def write_shards(per_recording, out_dir):
    out_dir.mkdir(parents=True, exist_ok=True)
    index = {}
    for name, emb in per_recording.items():
        path = out_dir / f"{name}.pt"
        torch.save(compact(emb), path)
        index[name] = {"path": path.name, "windows": emb.shape[0]}
    (out_dir / "index.json").write_text(json.dumps(index, indent=1))
    return index


def fit_probe(out_dir, index, labels, epochs=200, lr=0.05):
    xs, ys = [], []
    for name, info in index.items():
        emb = torch.load(out_dir / info["path"], weights_only=True)
        xs.append(emb)
        ys.append(torch.full((len(emb),), float(labels[name])))
    x, y = torch.cat(xs), torch.cat(ys)
    x = (x - x.mean(0)) / (x.std(0) + 1e-6)
    probe = nn.Linear(x.shape[1], 1)
    optimizer = torch.optim.LBFGS(probe.parameters(), lr=lr, max_iter=epochs)

    def closure():
        optimizer.zero_grad()
        loss = F.binary_cross_entropy_with_logits(probe(x).squeeze(1), y)
        loss.backward()
        return loss

    optimizer.step(closure)
    with torch.no_grad():
        acc = ((probe(x).squeeze(1) > 0).float() == y).float().mean().item()
    return acc


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--audio", default="data/reef_audio.npz")
    ap.add_argument("--labels", default="data/reef_chorus_labels.json")
    ap.add_argument("--encoder", default="weights/reef_encoder.pt")
    ap.add_argument("--out", default="shards/reef_v2")
    ap.add_argument("--batch-windows", type=int, default=64)
    args = ap.parse_args(argv)

    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    encoder = FrozenEncoder()
    encoder.load_state_dict(torch.load(args.encoder, map_location="cpu", weights_only=True))
    encoder.to(device).eval()
    audio = np.load(args.audio)
    recordings = [(name, torch.from_numpy(audio[name].astype(np.float32))) for name in sorted(audio.files)]
    per_recording = embed_recordings(encoder, recordings, args.batch_windows, device)
    index = write_shards(per_recording, Path(args.out))
    with open(args.labels) as fh:
        labels = json.load(fh)
    acc = fit_probe(Path(args.out), index, labels)
    print(f"wrote {len(index)} shards; probe training accuracy {acc:.3f}")


if __name__ == "__main__":
    main()
