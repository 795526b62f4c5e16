"""Speaker embeddings on VoxCeleb1 log-mels with a batch-hard triplet loss; EER on the test trials.

Batches hold P speakers x K utterances (PKSampler). The trainer exposes small hooks so that
logging and schedules can be swapped without touching the loop.
"""
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.metrics import roc_curve
from torch.utils.data import DataLoader, Dataset, Sampler


@dataclass
class Config:
    root: Path = Path("data/voxceleb1_logmel")
    speakers_per_batch: int = 32
    utts_per_speaker: int = 4
    frames: int = 200
    embed_dim: int = 192
    margin: float = 0.3
    epochs: int = 50
    lr: float = 0.05
    milestones: tuple = (20, 35)
    steps_per_epoch: int = 500


class Utterances(Dataset):
    def __init__(self, root, frames):
        self.files = sorted(root.glob("id1*/*/*.npy"))
        speakers = sorted({f.parts[-3] for f in self.files})
        self.label_of = {s: i for i, s in enumerate(speakers)}
        self.labels = [self.label_of[f.parts[-3]] for f in self.files]
        self.frames = frames

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        mel = np.load(self.files[i], mmap_mode="r")
        start = random.randint(0, max(0, mel.shape[1] - self.frames))
        seg = torch.tensor(mel[:, start:start + self.frames], dtype=torch.float32)
        seg = seg - seg.mean(dim=1, keepdim=True)
        return F.pad(seg, (0, self.frames - seg.shape[1])), self.labels[i]


class PKSampler(Sampler):
    def __init__(self, labels, p, k, steps):
        self.by_speaker = {}
        for idx, lab in enumerate(labels):
            self.by_speaker.setdefault(lab, []).append(idx)
        self.p, self.k, self.steps = p, k, steps

    def __len__(self):
        return self.steps

    def __iter__(self):
        speakers = list(self.by_speaker)
        for _ in range(self.steps):
            batch = []
            for s in random.sample(speakers, self.p):
                batch += random.choices(self.by_speaker[s], k=self.k)
            yield batch


class TDNN(nn.Module):
    def __init__(self, n_mels=80, dim=192):
        super().__init__()
        specs = [(n_mels, 512, 5, 1), (512, 512, 3, 2), (512, 512, 3, 3), (512, 512, 1, 1), (512, 1500, 1, 1)]
        self.frames = nn.Sequential(*[nn.Sequential(nn.Conv1d(i, o, k, dilation=d, bias=False),
                                                    nn.BatchNorm1d(o), nn.ReLU(True)) for i, o, k, d in specs])
        self.embed = nn.Linear(3000, dim)

    def forward(self, x):
        h = self.frames(x)
        stats = torch.cat([h.mean(dim=2), h.std(dim=2)], dim=1)
        return self.embed(stats)


def pairwise_distances(emb):
    diff = emb.unsqueeze(1) - emb.unsqueeze(0)
    return diff.pow(2).sum(-1).sqrt()


def batch_hard_triplet(emb, labels, margin):
    dist = pairwise_distances(F.normalize(emb, dim=1))
    same = labels.unsqueeze(0) == labels.unsqueeze(1)
    eye = torch.eye(len(labels), dtype=torch.bool, device=emb.device)
    hardest_pos = dist.masked_fill(~same | eye, 0.0).amax(dim=1)
    hardest_neg = dist.masked_fill(same, float("inf")).amin(dim=1)
    return F.relu(hardest_pos - hardest_neg + margin).mean()


class Trainer:
    def __init__(self, cfg, model, device):
        self.cfg, self.model, self.device = cfg, model.to(device), device
        self.optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=0.9, nesterov=True)
        self.scheduler = torch.optim.lr_scheduler.MultiStepLR(self.optimizer, list(cfg.milestones), gamma=0.1)
        self.losses = []

    def on_epoch_start(self, epoch):
        self.model.train()
        self.losses.clear()

    def on_step_end(self, loss):
        self.losses.append(loss)
        self.scheduler.step()

    def on_epoch_end(self, epoch):
        lr = self.optimizer.param_groups[0]["lr"]
        print(f"epoch {epoch:3d} triplet {np.mean(self.losses):.4f} lr {lr:.2e}")

    def fit(self, loader):
        for epoch in range(self.cfg.epochs):
            self.on_epoch_start(epoch)
            for x, y in loader:
                x, y = x.to(self.device), y.to(self.device)
                loss = batch_hard_triplet(self.model(x), y, self.cfg.margin)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                self.on_step_end(loss.item())
            self.on_epoch_end(epoch)


@torch.no_grad()
def equal_error_rate(model, trials, root, device):
    model.eval()
    cache, scores, labels = {}, [], []

    def embed(path):
        if path not in cache:
            mel = torch.tensor(np.load(root / Path(path).with_suffix(".npy")), dtype=torch.float32)
            mel = mel - mel.mean(dim=1, keepdim=True)
            cache[path] = F.normalize(model(mel[None].to(device)), dim=1)[0].cpu()
        return cache[path]

    for target, a, b in trials:
        scores.append(float(embed(a) @ embed(b)))
        labels.append(target)
    fpr, tpr, _ = roc_curve(labels, scores)
    i = np.nanargmin(np.abs(fpr - (1 - tpr)))
    return (fpr[i] + 1 - tpr[i]) / 2


def main(cfg=Config()):
    random.seed(0)
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    ds = Utterances(cfg.root / "dev", cfg.frames)
    sampler = PKSampler(ds.labels, cfg.speakers_per_batch, cfg.utts_per_speaker, cfg.steps_per_epoch)
    loader = DataLoader(ds, batch_sampler=sampler, num_workers=8)
    trainer = Trainer(cfg, TDNN(dim=cfg.embed_dim), device)
    trainer.fit(loader)
    trials = [(int(t), a, b) for t, a, b in (line.split() for line in open(cfg.root / "veri_test2.txt"))]
    print(f"EER {100 * equal_error_rate(trainer.model, trials, cfg.root / 'test', device):.2f}%")
    torch.save(trainer.model.state_dict(), "tdnn_triplet.pt")


if __name__ == "__main__":
    main()
