import random
import wave
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

WORDS = ["yes", "no", "up", "down", "left", "right", "on", "off", "stop", "go"]
CFG = {
    "root": "data/speech_commands_v2",
    "sample_rate": 16000,
    "n_fft": 480,
    "hop": 160,
    "n_mels": 40,
    "batch_size": 128,
    "epochs": 25,
    "lr": 3e-3,
    "weight_decay": 1e-2,
    "workers": 0,
    "prefetch": 4,
    "seed": 7,
    "ckpt": "runs/kws/last.pt",
}


def read_list(root, name):
    text = (Path(root) / name).read_text()
    return {line.strip() for line in text.splitlines() if line.strip()}


def read_wav(path):
    with wave.open(str(path), "rb") as handle:
        frames = handle.readframes(handle.getnframes())
    return np.frombuffer(frames, dtype=np.int16).astype(np.float32) / 32768.0


class CommandClips(Dataset):
    def __init__(self, root, files, length, shift):
        self.items = [(Path(root) / f, WORDS.index(f.split("/")[0])) for f in sorted(files)]
        self.length = length
        self.shift = shift

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        path, label = self.items[index]
        wave_ = torch.from_numpy(read_wav(path))
        wave_ = F.pad(wave_, (0, max(0, self.length - wave_.numel())))[: self.length]
        if self.shift:
            offset = int(torch.randint(-self.shift, self.shift + 1, (1,)))
            wave_ = torch.roll(wave_, offset)
        return wave_, label


def mel_filters(sr, n_fft, n_mels):
    to_mel = lambda f: 2595.0 * np.log10(1.0 + f / 700.0)
    to_hz = lambda m: 700.0 * (10 ** (m / 2595.0) - 1.0)
    points = to_hz(np.linspace(to_mel(20.0), to_mel(sr / 2), n_mels + 2))
    bins = np.floor((n_fft + 1) * points / sr).astype(int)
    bank = np.zeros((n_mels, n_fft // 2 + 1), dtype=np.float32)
    for m in range(1, n_mels + 1):
        left, centre, right = bins[m - 1], bins[m], bins[m + 1]
        bank[m - 1, left:centre] = (np.arange(left, centre) - left) / max(centre - left, 1)
        bank[m - 1, centre:right] = (right - np.arange(centre, right)) / max(right - centre, 1)
    return torch.from_numpy(bank)


class LogMel(nn.Module):
    def __init__(self, sr, n_fft, hop, n_mels):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("window", torch.hann_window(n_fft))
        self.register_buffer("bank", mel_filters(sr, n_fft, n_mels))

    def forward(self, wave_):
        spec = torch.stft(wave_, self.n_fft, hop_length=self.hop, window=self.window, return_complex=True)
        mel = torch.matmul(self.bank, spec.abs().pow(2))
        logmel = torch.log(mel + 1e-6)
        return (logmel - logmel.mean(dim=(1, 2), keepdim=True)) / (logmel.std(dim=(1, 2), keepdim=True) + 1e-5)


class KeywordNet(nn.Module):
    def __init__(self, cfg, classes):
        super().__init__()
        self.frontend = LogMel(cfg["sample_rate"], cfg["n_fft"], cfg["hop"], cfg["n_mels"])
        layers, cin = [], 1
        for cout in (32, 64, 96, 128):
            layers += [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(), nn.MaxPool2d((2, 2))]
            cin = cout
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(cin, classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")

    def forward(self, wave_):
        x = self.body(self.frontend(wave_).unsqueeze(1))
        return self.head(x.mean(dim=(2, 3)))


def param_groups(model, weight_decay):
    decay = [p for p in model.parameters() if p.ndim > 1]
    rest = [p for p in model.parameters() if p.ndim <= 1]
    return [{"params": decay, "weight_decay": weight_decay}, {"params": rest, "weight_decay": 0.0}]


def make_loader(dataset, cfg, train):
    workers = cfg["workers"]
    return DataLoader(dataset, batch_size=cfg["batch_size"], shuffle=train, drop_last=train, num_workers=workers,
                      prefetch_factor=cfg["prefetch"] if workers > 0 else None, persistent_workers=workers > 0)


def main(cfg=CFG):
    random.seed(cfg["seed"]); np.random.seed(cfg["seed"]); torch.manual_seed(cfg["seed"])
    root = Path(cfg["root"])
    val_files, test_files = read_list(root, "validation_list.txt"), read_list(root, "testing_list.txt")
    all_files = [str(p.relative_to(root)) for w in WORDS for p in sorted((root / w).glob("*.wav"))]
    train_files = [f for f in all_files if f not in val_files and f not in test_files]
    length = cfg["sample_rate"]
    train_loader = make_loader(CommandClips(root, train_files, length, shift=1600), cfg, train=True)
    val_loader = make_loader(CommandClips(root, [f for f in all_files if f in val_files], length, shift=0), cfg, train=False)
    first_waves, first_labels = next(iter(train_loader))
    print("batch", tuple(first_waves.shape), "labels", first_labels[:8].tolist())

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = KeywordNet(cfg, len(WORDS)).to(device)
    optimizer = torch.optim.AdamW(param_groups(model, cfg["weight_decay"]), lr=cfg["lr"])
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=cfg["lr"], epochs=cfg["epochs"],
                                                    steps_per_epoch=len(train_loader))
    for epoch in range(cfg["epochs"]):
        model.train()
        for waves, labels in train_loader:
            waves, labels = waves.to(device, non_blocking=True), labels.to(device, non_blocking=True)
            loss = F.cross_entropy(model(waves), labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            scheduler.step()
        model.eval()
        correct = total = 0
        with torch.no_grad():
            for waves, labels in val_loader:
                preds = model(waves.to(device)).argmax(dim=1).cpu()
                correct += (preds == labels).sum().item()
                total += labels.numel()
        print(f"epoch {epoch} val acc {correct / total:.4f} lr {scheduler.get_last_lr()[0]:.2e}")
        Path(cfg["ckpt"]).parent.mkdir(parents=True, exist_ok=True)
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(), "epoch": epoch}, cfg["ckpt"])


if __name__ == "__main__":
    main()
