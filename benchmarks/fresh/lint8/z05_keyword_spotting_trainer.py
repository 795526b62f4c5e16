"""Keyword spotting on Speech Commands v2 (11 classes) with a small trainer class and hooks."""
import wave
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

CONFIG = {"root": "data/speech_commands_v2", "sample_rate": 16000, "batch_size": 128, "epochs": 30,
          "lr": 0.05, "milestones": [15, 25], "workers": 4, "seed": 3}
KEYWORDS = ["yes", "no", "up", "down", "left", "right", "on", "off", "stop", "go"]
LABELS = KEYWORDS + ["_unknown_"]


def read_wav(path, length):
    with wave.open(str(path), "rb") as f:
        pcm = np.frombuffer(f.readframes(f.getnframes()), dtype=np.int16)
    audio = torch.from_numpy(pcm.astype(np.float32) / 32768.0)
    return F.pad(audio, (0, max(0, length - audio.numel())))[:length]


class SpeechCommands(Dataset):
    def __init__(self, root, split):
        root = Path(root)
        val = set((root / "validation_list.txt").read_text().split())
        test = set((root / "testing_list.txt").read_text().split())
        self.items = []
        for wav in sorted(root.glob("*/*.wav")):
            rel = f"{wav.parent.name}/{wav.name}"
            where = "validation" if rel in val else "testing" if rel in test else "train"
            if wav.parent.name == "_background_noise_" or where != split:
                continue
            word = wav.parent.name if wav.parent.name in KEYWORDS else "_unknown_"
            self.items.append((wav, LABELS.index(word)))
        self.train = split == "train"

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        path, label = self.items[i]
        audio = read_wav(path, CONFIG["sample_rate"])
        if self.train:
            audio = torch.roll(audio, int(torch.randint(-1600, 1601, ())))
            audio = audio + 0.005 * torch.randn_like(audio)
        return audio, label


class LogSpectrogram(nn.Module):
    def __init__(self, n_fft=480, hop=160):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("window", torch.hann_window(n_fft))

    def forward(self, audio):
        spec = torch.stft(audio, self.n_fft, self.hop, window=self.window, return_complex=True)
        return torch.log1p(spec.abs().pow(2)).unsqueeze(1)


class KWSNet(nn.Module):
    def __init__(self, n_classes, width=64):
        super().__init__()
        self.features = LogSpectrogram()
        self.norm = nn.BatchNorm2d(1)
        layers, cin = [], 1
        for cout in (width, width, 2 * width, 2 * width):
            layers += [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(), nn.MaxPool2d(2)]
            cin = cout
        self.body = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.classifier = nn.Linear(cin, n_classes)

    def forward(self, audio):
        return self.classifier(self.body(self.norm(self.features(audio))))


class Trainer:
    def __init__(self, model, cfg, device):
        self.model, self.cfg, self.device = model.to(device), cfg, device
        self.optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9, nesterov=True)
        self.scheduler = torch.optim.lr_scheduler.MultiStepLR(self.optimizer, cfg["milestones"], gamma=0.1)
        self.criterion = nn.CrossEntropyLoss(label_smoothing=0.1)

    def on_epoch_start(self, epoch):
        self.model.train()
        self.optimizer.zero_grad(set_to_none=True)
        self.meter = {"loss": 0.0, "correct": 0, "seen": 0}

    def training_step(self, batch):
        audio, label = (t.to(self.device) for t in batch)
        logits = self.model(audio)
        loss = self.criterion(logits, label)
        loss.backward()
        self.optimizer.step()
        self.meter["loss"] += loss.item() * label.size(0)
        self.meter["correct"] += (logits.argmax(dim=1) == label).sum().item()
        self.meter["seen"] += label.size(0)

    def on_epoch_end(self, epoch, val_loader):
        self.scheduler.step()
        m = self.meter
        print(f"epoch {epoch:2d}  loss {m['loss'] / m['seen']:.4f}  train acc {m['correct'] / m['seen']:.3f}"
              f"  val acc {self.evaluate(val_loader):.3f}")

    @torch.no_grad()
    def evaluate(self, loader):
        self.model.eval()
        correct = seen = 0
        for audio, label in loader:
            pred = self.model(audio.to(self.device)).argmax(dim=1).cpu()
            correct += (pred == label).sum().item()
            seen += label.size(0)
        return correct / seen

    def fit(self, train_loader, val_loader):
        for epoch in range(self.cfg["epochs"]):
            self.on_epoch_start(epoch)
            for batch in train_loader:
                self.training_step(batch)
            self.on_epoch_end(epoch, val_loader)
        torch.save(self.model.state_dict(), "kws_net.pt")


if __name__ == "__main__":
    torch.manual_seed(CONFIG["seed"])
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_ds = SpeechCommands(CONFIG["root"], "train")
    val_ds = SpeechCommands(CONFIG["root"], "validation")
    train_dl = DataLoader(train_ds, batch_size=CONFIG["batch_size"], shuffle=True, num_workers=CONFIG["workers"], drop_last=True)
    val_dl = DataLoader(val_ds, batch_size=256, num_workers=CONFIG["workers"])
    Trainer(KWSNet(len(LABELS)), CONFIG, device).fit(train_dl, val_dl)
