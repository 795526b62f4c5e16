import argparse
import wave
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

SPECIES = ["ae_aegypti", "ae_albopictus", "an_arabiensis", "an_gambiae", "c_pipiens", "c_quinquefasciatus"]
CLIP = 5000


def list_recordings(root, split):
    items = []
    for label, species in enumerate(SPECIES):
        for path in sorted((Path(root) / split / species).glob("*.wav")):
            items.append((path, label))
    return items


def read_wav(path):
    with wave.open(str(path)) as w:
        pcm = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16).astype(np.float32) / 32768.0
    pcm = pcm[:CLIP] if len(pcm) >= CLIP else np.pad(pcm, (0, CLIP - len(pcm)))
    return (pcm - pcm.mean()) / (pcm.std() + 1e-6)


class Wingbeats(Dataset):
    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        path, label = self.items[i]
        return torch.from_numpy(read_wav(path)).unsqueeze(0), label


def conv_stack(widths, kernel=9):
    layers, cin = [], 1
    for cout in widths:
        layers += [nn.Conv1d(cin, cout, kernel, padding=kernel // 2, bias=False), nn.BatchNorm1d(cout),
                   nn.ReLU(), nn.MaxPool1d(4)]
        cin = cout
    return nn.Sequential(*layers, nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(cin, len(SPECIES)))


def make_loaders(root, batch_size, workers):
    common = dict(batch_size=batch_size, num_workers=workers, pin_memory=torch.cuda.is_available())
    train = DataLoader(Wingbeats(list_recordings(root, "train")), drop_last=True, **common)
    val = DataLoader(Wingbeats(list_recordings(root, "val")), **common)
    return train, val


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--root", default="data/wingbeats")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--epochs", type=int, default=40)
    p.add_argument("--lr", type=float, default=1e-2)
    args = p.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    train, val = make_loaders(args.root, args.batch_size, args.workers)
    model = conv_stack([32, 64, 128, 128]).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, nesterov=True)
    sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[20, 30], gamma=0.1)
    criterion = nn.CrossEntropyLoss()

    for epoch in range(args.epochs):
        model.train()
        for x, y in train:
            x, y = x.to(device), y.to(device)
            loss = criterion(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        sched.step()
        model.eval()
        confusion = torch.zeros(len(SPECIES), len(SPECIES), dtype=torch.long)
        with torch.no_grad():
            for x, y in val:
                pred = model(x.to(device)).argmax(dim=1).cpu()
                confusion += torch.bincount(y * len(SPECIES) + pred, minlength=len(SPECIES) ** 2).view(len(SPECIES), -1)
        per_class = confusion.diag() / confusion.sum(dim=1).clamp(min=1)
        print(f"epoch {epoch}: balanced acc {per_class.mean():.3f}")
    torch.save(model.state_dict(), "wingbeat_cnn.pt")


if __name__ == "__main__":
    main()
