"""Evaluate a trained music-genre CNN on the GTZAN test fold (10 genres x 10 clips).

    python q22_music_genre_eval.py --ckpt runs/genre_cnn/best.pt --split splits/test_fold.txt
"""
import argparse
import json
import os
import wave

import numpy as np
import torch
import torch.nn as nn
from sklearn.metrics import confusion_matrix
from torch.utils.data import DataLoader, Dataset

GENRES = ["blues", "classical", "country", "disco", "hiphop", "jazz", "metal", "pop", "reggae", "rock"]
SR, N_FFT, HOP, N_MELS, SECONDS = 22050, 2048, 512, 96, 29


def mel_matrix(sr=SR, n_fft=N_FFT, n_mels=N_MELS):
    mel = lambda f: 1127.0 * torch.log1p(f / 700.0)
    inv = lambda m: 700.0 * (torch.exp(m / 1127.0) - 1.0)
    edges = inv(torch.linspace(0.0, float(mel(torch.tensor(sr / 2.0))), n_mels + 2))
    freqs = torch.linspace(0.0, sr / 2.0, n_fft // 2 + 1)
    lower, centre, upper = edges[:-2, None], edges[1:-1, None], edges[2:, None]
    up = (freqs - lower) / (centre - lower)
    down = (upper - freqs) / (upper - centre)
    return torch.clamp(torch.minimum(up, down), min=0.0)


class GTZANClips(Dataset):
    def __init__(self, root, list_file):
        with open(list_file) as f:
            self.items = [line.strip() for line in f if line.strip()]
        self.root, self.fb, self.window = root, mel_matrix(), torch.hann_window(N_FFT)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        rel = self.items[i]
        with wave.open(os.path.join(self.root, rel), "rb") as w:
            pcm = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16).astype(np.float32) / 32768.0
        x = torch.from_numpy(pcm[: SR * SECONDS].copy())
        spec = torch.stft(x, N_FFT, HOP, window=self.window, return_complex=True).abs().pow(2)
        logmel = torch.log10(self.fb @ spec + 1e-8)
        logmel = (logmel + 4.0) / 4.0
        return logmel.unsqueeze(0), GENRES.index(rel.split("/")[0])


class GenreCNN(nn.Module):
    def __init__(self, n_classes=10):
        super().__init__()
        layers, c_in = [], 1
        for c_out in (32, 64, 128, 256):
            layers += [nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out),
                       nn.ELU(), nn.MaxPool2d((2, 4))]
            c_in = c_out
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(0.5), nn.Linear(256, n_classes))

    def forward(self, x):
        h = self.features(x)
        return self.classifier(h.amax(dim=(2, 3)))


def init_weights(m):
    if isinstance(m, nn.Conv2d):
        nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
    elif isinstance(m, nn.BatchNorm2d):
        nn.init.ones_(m.weight)
        nn.init.zeros_(m.bias)
    elif isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight)
        nn.init.zeros_(m.bias)


def build_model(n_classes, checkpoint=None):
    model = GenreCNN(n_classes)
    if checkpoint is not None:
        state = torch.load(checkpoint, map_location="cpu", weights_only=True)
        model.load_state_dict(state["model"])
    model.apply(init_weights)
    return model


def decide(logits):
    return logits.argmax(0)


def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="data/gtzan/genres_wav")
    ap.add_argument("--split", default="splits/test_fold.txt")
    ap.add_argument("--ckpt", default="runs/genre_cnn/best.pt")
    ap.add_argument("--batch-size", type=int, default=len(GENRES))
    ap.add_argument("--report", default="runs/genre_cnn/test_report.json")
    return ap.parse_args()


def main():
    args = parse()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    loader = DataLoader(GTZANClips(args.root, args.split), batch_size=args.batch_size, shuffle=False, num_workers=4)
    model = build_model(len(GENRES), args.ckpt).to(device).eval()

    preds, labels, nll, n = [], [], 0.0, 0
    with torch.inference_mode():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            logits = model(x)
            nll += nn.functional.cross_entropy(logits, y, reduction="sum").item()
            n += y.numel()
            preds.append(decide(logits).cpu())
            labels.append(y.cpu())
    preds, labels = torch.cat(preds).numpy(), torch.cat(labels).numpy()

    acc = float((preds == labels).mean())
    cm = confusion_matrix(labels, preds, labels=list(range(len(GENRES))))
    per_genre = {g: float(cm[i, i] / max(cm[i].sum(), 1)) for i, g in enumerate(GENRES)}
    print(f"clips {n}  accuracy {acc:.3f}  mean NLL {nll / n:.3f}")
    for g, r in per_genre.items():
        print(f"  {g:10s} recall {r:.2f}")
    os.makedirs(os.path.dirname(args.report), exist_ok=True)
    with open(args.report, "w") as f:
        json.dump({"accuracy": acc, "nll": nll / n, "per_genre": per_genre, "confusion": cm.tolist()}, f, indent=2)


if __name__ == "__main__":
    main()
