"""Small-footprint keyword spotting: a depthwise-separable CNN over 40-band log-mel features,
12 classes (10 keywords + silence + unknown). The model is exported to a microcontroller later,
so it outputs class probabilities directly."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchaudio
from torch.utils.data import DataLoader

from kws_data import KeywordClips  # yields (waveform[16000], label)

N_MELS, N_CLASSES, SAMPLE_RATE = 40, 12, 16000


class DSBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.depthwise = nn.Conv2d(channels, channels, 3, padding=1, groups=channels, bias=False)
        self.pointwise = nn.Conv2d(channels, channels, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        x = F.relu(self.bn1(self.depthwise(x)))
        return F.relu(self.bn2(self.pointwise(x)))


class KWSNet(nn.Module):
    def __init__(self, channels=64, blocks=4):
        super().__init__()
        self.features = torchaudio.transforms.MelSpectrogram(SAMPLE_RATE, n_fft=480, hop_length=160,
                                                             n_mels=N_MELS)
        self.stem = nn.Sequential(nn.Conv2d(1, channels, (10, 4), stride=2, padding=(5, 1), bias=False),
                                  nn.BatchNorm2d(channels), nn.ReLU())
        self.blocks = nn.Sequential(*[DSBlock(channels) for _ in range(blocks)])
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(channels, N_CLASSES)

    def forward(self, wav):
        spec = torch.log(self.features(wav) + 1e-6).unsqueeze(1)  # (B, 1, mels, frames)
        x = self.blocks(self.stem(spec))
        x = self.pool(x).flatten(1)
        return F.softmax(self.fc(x), dim=1)


def train(model, loader, optimizer, criterion, device):
    model.train()
    seen, total = 0, 0.0
    for wav, label in loader:
        wav, label = wav.to(device), label.to(device)
        probs = model(wav)
        loss = criterion(probs, label)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item() * label.size(0)
        seen += label.size(0)
    return total / seen


@torch.no_grad()
def accuracy(model, loader, device):
    model.eval()
    hits = seen = 0
    for wav, label in loader:
        probs = model(wav.to(device))
        hits += (probs.argmax(dim=1).cpu() == label).sum().item()
        seen += label.numel()
    return hits / seen


def main():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    train_dl = DataLoader(KeywordClips("train"), batch_size=128, shuffle=True, num_workers=4)
    val_dl = DataLoader(KeywordClips("validation"), batch_size=256, num_workers=4)
    model = KWSNet().to(device)
    criterion = nn.NLLLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[15, 25], gamma=0.1)
    for epoch in range(30):
        loss = train(model, train_dl, optimizer, criterion, device)
        scheduler.step()
        acc = accuracy(model, val_dl, device)
        print(f"epoch {epoch + 1}: loss {loss:.4f}  val acc {acc:.4f}")
    torch.save(model.state_dict(), "kws_dscnn.pt")


if __name__ == "__main__":
    main()
