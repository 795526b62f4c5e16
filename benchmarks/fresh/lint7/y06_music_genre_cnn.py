"""Music genre classification (GTZAN-style, 10 genres) from precomputed log-mel spectrograms.

Each clip is stored as `<split>/<genre>/<clip>.npy` with shape (128 mels, T frames).
Training takes random 3-second crops; validation averages logits over all crops of a clip.
"""
import glob
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

GENRES = ["blues", "classical", "country", "disco", "hiphop", "jazz", "metal", "pop", "reggae", "rock"]
CROP = 130  # frames, about 3 s at hop 512 / 22.05 kHz
MEL_MEAN, MEL_STD = -31.2, 18.7


class MelClips(Dataset):
    def __init__(self, root, split, train):
        self.files = sorted(glob.glob(os.path.join(root, split, "*", "*.npy")))
        self.labels = [GENRES.index(os.path.basename(os.path.dirname(f))) for f in self.files]
        self.train = train

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        mel = torch.from_numpy(np.load(self.files[i]).astype(np.float32))
        mel = (mel - MEL_MEAN) / MEL_STD
        if self.train:
            start = int(torch.randint(0, mel.shape[1] - CROP + 1, (1,)))
            mel = mel[:, start : start + CROP]
            f0 = int(torch.randint(0, 128 - 16, (1,)))
            mel[f0 : f0 + int(torch.randint(0, 16, (1,)))] = 0.0
        else:
            n = mel.shape[1] // CROP
            mel = mel[:, : n * CROP].reshape(128, n, CROP).permute(1, 0, 2)
        return mel.unsqueeze(-3), self.labels[i]


def conv_block(c_in, c_out):
    return nn.Sequential(
        nn.Conv2d(c_in, c_out, 3, padding=1, bias=False),
        nn.BatchNorm2d(c_out),
        nn.ReLU(inplace=True),
        nn.MaxPool2d(2),
    )


class GenreCNN(nn.Module):
    def __init__(self, n_classes=len(GENRES)):
        super().__init__()
        self.features = nn.Sequential(conv_block(1, 32), conv_block(32, 64), conv_block(64, 128), conv_block(128, 256))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.drop = nn.Dropout(0.3)
        self.fc = nn.Linear(256, n_classes)

    def forward(self, x):
        return self.fc(self.drop(self.pool(self.features(x)).flatten(1)))


class Trainer:
    def __init__(self, model, train_loader, val_set, device, lr=1e-3):
        self.model = model.to(device)
        self.train_loader = train_loader
        self.val_set = val_set
        self.device = device
        self.opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)

    def fit_epoch(self):
        self.model.train()
        self.opt.zero_grad()
        total, n = 0.0, 0
        for mel, genre in self.train_loader:
            mel, genre = mel.to(self.device), genre.to(self.device)
            loss = F.cross_entropy(self.model(mel), genre)
            loss.backward()
            self.opt.step()
            total += loss.item() * genre.numel()
            n += genre.numel()
        return total / n

    @torch.no_grad()
    def clip_accuracy(self):
        self.model.eval()
        hits = 0
        for i in range(len(self.val_set)):
            crops, genre = self.val_set[i]
            logits = self.model(crops.to(self.device)).mean(dim=0)
            hits += int(logits.argmax().item() == genre)
        return hits / len(self.val_set)


def main(root="/data/gtzan_mels", epochs=40):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    train_set = MelClips(root, "train", train=True)
    val_set = MelClips(root, "val", train=False)
    loader = DataLoader(train_set, batch_size=32, shuffle=True, num_workers=4, drop_last=True)
    trainer = Trainer(GenreCNN(), loader, val_set, device)
    for epoch in range(epochs):
        loss = trainer.fit_epoch()
        acc = trainer.clip_accuracy()
        print(f"epoch {epoch:02d}  train loss {loss:.3f}  val clip acc {acc:.3f}")
    torch.save(trainer.model.state_dict(), "genre_cnn.pt")


if __name__ == "__main__":
    main()
