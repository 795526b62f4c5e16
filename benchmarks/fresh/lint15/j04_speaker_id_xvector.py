import argparse
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset, Sampler


class MfccUtterances(Dataset):
    def __init__(self, list_file, feat_root, max_frames=400):
        self.items, speakers = [], {}
        for line in Path(list_file).read_text().splitlines():
            spk, rel = line.split()
            speakers.setdefault(spk, len(speakers))
            self.items.append((Path(feat_root, rel), speakers[spk]))
        self.speakers = speakers
        self.max_frames = max_frames
        self.frames = [min(np.load(p, mmap_mode="r").shape[0], max_frames) for p, _ in self.items]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        path, spk = self.items[idx]
        feats = np.load(path)[: self.max_frames]
        feats = (feats - feats.mean(0)) / (feats.std(0) + 1e-5)
        return torch.from_numpy(feats.astype(np.float32)), spk


class SimilarLengthSampler(Sampler):
    def __init__(self, dataset, batch_size, seed=0):
        super().__init__(dataset)
        self.lengths = dataset.frames
        self.batch_size = batch_size
        self.rng = random.Random(seed)

    def __iter__(self):
        order = sorted(range(len(self.lengths)), key=lambda i: self.lengths[i])
        chunks = [order[i:i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        self.rng.shuffle(chunks)
        for chunk in chunks:
            yield from chunk

    def __len__(self):
        return len(self.lengths)


def collate(batch):
    feats, spk = zip(*batch)
    lengths = torch.tensor([f.shape[0] for f in feats])
    padded = torch.zeros(len(feats), int(lengths.max()), feats[0].shape[1])
    for i, f in enumerate(feats):
        padded[i, : f.shape[0]] = f
    return padded, lengths, torch.tensor(spk)


class XVector(nn.Module):
    def __init__(self, n_mfcc, n_speakers, emb=256):
        super().__init__()
        spec = [(n_mfcc, 512, 5, 1), (512, 512, 3, 2), (512, 512, 3, 3), (512, 512, 1, 1), (512, 1500, 1, 1)]
        self.frames = nn.ModuleList(
            nn.Sequential(nn.Conv1d(i, o, k, dilation=d, padding=d * (k - 1) // 2), nn.ReLU(), nn.BatchNorm1d(o))
            for i, o, k, d in spec
        )
        self.segment = nn.Sequential(nn.Linear(3000, emb), nn.ReLU(), nn.BatchNorm1d(emb))
        self.classifier = nn.Linear(emb, n_speakers)

    def embed(self, feats, lengths):
        x = feats.transpose(1, 2)
        for layer in self.frames:
            x = layer(x)
        mask = (torch.arange(x.shape[2], device=x.device)[None, :] < lengths.to(x.device)[:, None]).float()
        n = mask.sum(1, keepdim=True)
        mean = (x * mask[:, None]).sum(2) / n
        var = ((x - mean[:, :, None]) ** 2 * mask[:, None]).sum(2) / n
        return self.segment(torch.cat([mean, var.clamp_min(1e-6).sqrt()], dim=1))

    def forward(self, feats, lengths):
        return self.classifier(self.embed(feats, lengths))


class Trainer:
    def __init__(self, model, optimizer, device, log_every=50):
        self.model = model
        self.optimizer = optimizer
        self.device = device
        self.log_every = log_every
        self.step = 0

    def _prepare(self, batch):
        feats, lengths, speakers = batch
        feats.to(self.device, non_blocking=True)
        speakers.to(self.device, non_blocking=True)
        return feats, lengths, speakers

    def train_epoch(self, loader):
        self.model.train()
        for batch in loader:
            feats, lengths, speakers = self._prepare(batch)
            logits = self.model(feats, lengths)
            loss = F.cross_entropy(logits, speakers)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            self.step += 1
            if self.step % self.log_every == 0:
                acc = (logits.argmax(1) == speakers).float().mean().item()
                print(f"step {self.step} loss {loss.item():.3f} acc {acc:.3f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train-list", default="lists/vox_train.txt")
    parser.add_argument("--feat-root", default="features/mfcc30")
    parser.add_argument("--n-mfcc", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--out", default="xvector.pt")
    args = parser.parse_args()

    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    dataset = MfccUtterances(args.train_list, args.feat_root)
    sampler = SimilarLengthSampler(dataset, args.batch_size)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, collate_fn=collate,
                        num_workers=4, pin_memory=True, drop_last=True)
    model = XVector(args.n_mfcc, len(dataset.speakers)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    trainer = Trainer(model, optimizer, device)
    for epoch in range(args.epochs):
        trainer.train_epoch(loader)
        torch.save({"model": model.state_dict(), "speakers": dataset.speakers, "epoch": epoch}, args.out)


if __name__ == "__main__":
    main()
