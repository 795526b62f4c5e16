import argparse
import json

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

N_FFT, HOP = 512, 160


def log_spectrogram(wave, window):
    spec = torch.stft(wave, n_fft=N_FFT, hop_length=HOP, window=window, return_complex=True)
    return torch.log1p(spec.abs().pow(2))


class BirdClips(Dataset):
    def __init__(self, npz_path):
        data = np.load(npz_path)
        self.waves = torch.from_numpy(data["waves"].astype(np.float32))
        self.labels = torch.from_numpy(data["species"].astype(np.int64))
        self.window = torch.hann_window(N_FFT)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        wave = self.waves[i]
        wave = (wave - wave.mean()) / (wave.std() + 1e-5)
        return log_spectrogram(wave, self.window).unsqueeze(0), self.labels[i]


class SongCNN(nn.Module):
    def __init__(self, n_species, width=24):
        super().__init__()
        layers, cin = [], 1
        for cout in (width, 2 * width, 4 * width, 4 * width):
            layers += [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.GELU(), nn.MaxPool2d(2)]
            cin = cout
        self.body = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.3), nn.Linear(cin, n_species))

    def forward(self, spec):
        return self.head(self.body(spec))


def train_epoch(model, loader, optimizer, scaler, device, use_amp, max_norm):
    model.train()
    for spec, label in loader:
        spec, label = spec.to(device, non_blocking=True), label.to(device, non_blocking=True)
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device_type=device.type, dtype=torch.float16, enabled=use_amp):
            loss = F.cross_entropy(model(spec), label, label_smoothing=0.05)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        scaler.step(optimizer)
        scaler.update()


@torch.inference_mode()
def predict(model, loader, device):
    model.eval()
    probs, labels = [], []
    for spec, label in loader:
        logits = model(spec.to(device)).float()
        probs.append(F.softmax(logits, dim=1).cpu())
        labels.append(label)
    return torch.cat(probs), torch.cat(labels)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train", default="songs_train.npz")
    parser.add_argument("--valid", default="songs_valid.npz")
    parser.add_argument("--species", default="species.json")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=48)
    args = parser.parse_args()
    with open(args.species) as fh:
        names = json.load(fh)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    use_amp = device.type == "cuda"
    train_loader = DataLoader(BirdClips(args.train), batch_size=args.batch_size, shuffle=True, drop_last=True, num_workers=2)
    valid_loader = DataLoader(BirdClips(args.valid), batch_size=args.batch_size, num_workers=2)
    model = SongCNN(len(names)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for epoch in range(args.epochs):
        train_epoch(model, train_loader, optimizer, scaler, device, use_amp, max_norm=5.0)
        probs, labels = predict(model, valid_loader, device)
        top1 = (probs.argmax(dim=1) == labels).float().mean().item()
        top3 = (probs.topk(3, dim=1).indices == labels[:, None]).any(dim=1).float().mean().item()
        print(f"epoch {epoch}: top1 {top1:.3f} top3 {top3:.3f}")
    torch.save({"model": model.state_dict(), "species": names}, "song_cnn.pt")


if __name__ == "__main__":
    main()
