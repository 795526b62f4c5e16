"""Keyword spotting (Speech Commands subset) with a log-spectrogram front end and a small CNN."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchaudio

LABELS = ["yes", "no", "up", "down", "left", "right", "on", "off", "stop", "go"]
SAMPLE_RATE = 16000


class SpectrogramFrontend(nn.Module):
    def __init__(self, n_fft=400, hop=160):
        super().__init__()
        self.n_fft = n_fft
        self.hop = hop
        self.register_buffer("window", torch.hann_window(n_fft))

    def forward(self, wave):  # (batch, samples)
        spec = torch.stft(wave, self.n_fft, self.hop, window=self.window)
        power = spec.pow(2).sum(-1)
        return torch.log(power + 1e-6).unsqueeze(1)  # (batch, 1, freq, frames)


class KWSNet(nn.Module):
    def __init__(self, n_classes=len(LABELS)):
        super().__init__()
        self.frontend = SpectrogramFrontend()
        self.features = nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(64, 128, 3, padding=1), nn.BatchNorm2d(128), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
        )
        self.classifier = nn.Linear(128, n_classes)

    def forward(self, wave):
        x = self.features(self.frontend(wave))
        return self.classifier(x.flatten(1))


def pad_to_one_second(wave):
    wave = wave[:, :SAMPLE_RATE]
    return F.pad(wave, (0, SAMPLE_RATE - wave.shape[-1]))


def collate(batch):
    waves, labels = [], []
    for wave, sr, label, *_ in batch:
        if label in LABELS:
            waves.append(pad_to_one_second(wave).squeeze(0))
            labels.append(LABELS.index(label))
    return torch.stack(waves), torch.tensor(labels)


def main():
    train_set = torchaudio.datasets.SPEECHCOMMANDS("./data", download=True, subset="training")
    loader = torch.utils.data.DataLoader(train_set, batch_size=128, shuffle=True, collate_fn=collate, num_workers=4)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    net = KWSNet().to(device)
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    nll = nn.NLLLoss()

    for epoch in range(15):
        net.train()
        for i, (wave, target) in enumerate(loader):
            wave, target = wave.to(device), target.to(device)
            optimizer.zero_grad()
            output = net(wave)
            loss = nll(output, target)
            loss.backward()
            optimizer.step()
            if i % 50 == 0:
                print(f"[{epoch}] {i:4d} loss={loss.item():.4f}")
        torch.save(net.state_dict(), f"kws_epoch{epoch}.pt")


if __name__ == "__main__":
    main()
