"""Speech Commands (35 words) with a residual CNN, DDP and mixed precision.

Launch: torchrun --standalone --nproc_per_node=8 z18_ddp_speech_commands.py
"""
import os
import wave
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

ROOT = Path("data/speech_commands_v2")
EPOCHS, BATCH, LR, CLIP = 40, 96, 3e-3, 2.0


class Commands(Dataset):
    def __init__(self, files, words, train):
        self.files, self.train = files, train
        self.labels = [words.index(f.parent.name) for f in files]

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        with wave.open(str(self.files[i]), "rb") as f:
            pcm = np.frombuffer(f.readframes(f.getnframes()), dtype=np.int16).astype(np.float32) / 32768.0
        audio = F.pad(torch.from_numpy(pcm), (0, max(0, 16000 - len(pcm))))[:16000]
        if self.train:
            audio = torch.roll(audio, int(torch.randint(-1600, 1601, ())))
        return audio, self.labels[i]


class ResBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU(),
                                  nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c))

    def forward(self, x):
        return F.relu(x + self.body(x))


class ResKWS(nn.Module):
    def __init__(self, n_classes, c=64):
        super().__init__()
        self.register_buffer("window", torch.hann_window(400))
        self.stem = nn.Sequential(nn.BatchNorm2d(1), nn.Conv2d(1, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU())
        self.blocks = nn.Sequential(*[ResBlock(c) for _ in range(4)])
        self.head = nn.Linear(c, n_classes)

    def forward(self, audio):
        spec = torch.stft(audio, 400, 160, window=self.window, return_complex=True).abs().pow(2)
        x = self.stem(torch.log(spec + 1e-6).unsqueeze(1))
        return self.head(self.blocks(x).mean(dim=(2, 3)))


def splits():
    val = set((ROOT / "validation_list.txt").read_text().split())
    test = set((ROOT / "testing_list.txt").read_text().split())
    files = sorted(p for p in ROOT.glob("*/*.wav") if p.parent.name != "_background_noise_")
    rel = lambda p: f"{p.parent.name}/{p.name}"
    words = sorted({p.parent.name for p in files})
    train = [p for p in files if rel(p) not in val and rel(p) not in test]
    return train, [p for p in files if rel(p) in val], words


@torch.no_grad()
def accuracy(net, loader, device):
    net.eval()
    correct = total = 0
    for audio, y in loader:
        with torch.autocast(device_type="cuda", dtype=torch.float16):
            pred = net(audio.to(device)).argmax(dim=1)
        correct += (pred.cpu() == y).sum().item()
        total += y.numel()
    return correct / total


def main():
    dist.init_process_group("nccl")
    rank, local_rank = dist.get_rank(), int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    torch.manual_seed(0)
    train_files, val_files, words = splits()
    train_ds = Commands(train_files, words, train=True)
    sampler = DistributedSampler(train_ds, shuffle=True, seed=0)
    train_dl = DataLoader(train_ds, batch_size=BATCH, sampler=sampler, num_workers=4, pin_memory=True, drop_last=True)
    val_dl = DataLoader(Commands(val_files, words, train=False), batch_size=512, num_workers=4)

    model = DDP(ResKWS(len(words)).to(device), device_ids=[local_rank])
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.0)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=LR, total_steps=EPOCHS * len(train_dl))
    scaler = torch.amp.GradScaler("cuda")
    for epoch in range(EPOCHS):
        sampler.set_epoch(epoch)
        model.train()
        stats = torch.zeros(2, device=device)
        for audio, y in train_dl:
            audio, y = audio.to(device, non_blocking=True), y.to(device, non_blocking=True)
            opt.zero_grad(set_to_none=True)
            with torch.autocast(device_type="cuda", dtype=torch.float16):
                loss = F.cross_entropy(model(audio), y)
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            nn.utils.clip_grad_norm_(model.parameters(), CLIP)
            scaler.step(opt)
            scaler.update()
            sched.step()
            stats[0] += loss.detach().float() * y.numel()
            stats[1] += y.numel()
        dist.all_reduce(stats)
        if rank == 0:
            acc = accuracy(model.module, val_dl, device)
            print(f"epoch {epoch:2d}  loss {(stats[0] / stats[1]).item():.4f}  val acc {acc:.4f}")
            torch.save({"model": model.module.state_dict(), "words": words, "epoch": epoch}, "reskws_last.pt")
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
