"""Self-distillation pre-training (DINO-style, two global views) on unlabelled H&E tiles."""
import copy
import math
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms as T


@dataclass
class DinoConfig:
    tiles: Path = Path("data/he_tiles")
    epochs: int = 100
    batch_size: int = 128
    lr: float = 5e-4
    weight_decay: float = 0.04
    out_dim: int = 4096
    student_temp: float = 0.1
    teacher_temp: float = 0.04
    center_momentum: float = 0.9
    ema_start: float = 0.996
    clip_grad: float = 3.0
    checkpoint: Path = Path("runs/dino_he.pt")


class TwoViews(Dataset):
    def __init__(self, root: Path):
        self.files = sorted(root.glob("*.png"))
        self.view = T.Compose([
            T.RandomResizedCrop(96, scale=(0.4, 1.0)), T.RandomHorizontalFlip(), T.RandomVerticalFlip(),
            T.ColorJitter(0.3, 0.3, 0.2, 0.05), T.RandomGrayscale(0.2), T.ToTensor(),
            T.Normalize([0.70, 0.53, 0.69], [0.16, 0.20, 0.15]),
        ])

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        tile = Image.open(self.files[i]).convert("RGB")
        return self.view(tile), self.view(tile)


def conv_gn(cin, cout, stride):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.GroupNorm(16, cout), nn.GELU())


class Encoder(nn.Module):
    def __init__(self, width=64):
        super().__init__()
        self.features = nn.Sequential(conv_gn(3, width, 1), conv_gn(width, width, 2), conv_gn(width, 2 * width, 2),
                                      conv_gn(2 * width, 4 * width, 2), conv_gn(4 * width, 8 * width, 2))
        self.dim = 8 * width

    def forward(self, x):
        return self.features(x).mean(dim=(2, 3))


class ProjectionHead(nn.Module):
    def __init__(self, dim, out_dim, hidden=1024, bottleneck=256):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, bottleneck))
        self.last = nn.utils.parametrizations.weight_norm(nn.Linear(bottleneck, out_dim, bias=False))

    def forward(self, x):
        return self.last(F.normalize(self.mlp(x), dim=-1))


def sharpen(logits, temperature):
    return F.softmax(logits / temperature, dim=-1)


class DinoObjective(nn.Module):
    def __init__(self, cfg: DinoConfig):
        super().__init__()
        self.cfg = cfg
        self.register_buffer("center", torch.zeros(1, cfg.out_dim))

    def forward(self, student_out, teacher_out):
        student = [sharpen(s, self.cfg.student_temp) for s in student_out.chunk(2)]
        teacher = [sharpen(t - self.center, self.cfg.teacher_temp) for t in teacher_out.chunk(2)]
        total = 0.0
        for i, t in enumerate(teacher):
            s = student[1 - i]
            total = total + F.kl_div(s, t, reduction="batchmean")
        with torch.no_grad():
            batch_center = teacher_out.mean(dim=0, keepdim=True)
            self.center.mul_(self.cfg.center_momentum).add_(batch_center, alpha=1 - self.cfg.center_momentum)
        return total / 2


class SelfDistiller:
    def __init__(self, cfg: DinoConfig, device):
        self.cfg, self.device = cfg, device
        encoder = Encoder()
        self.student = nn.Sequential(encoder, ProjectionHead(encoder.dim, cfg.out_dim)).to(device)
        self.teacher = copy.deepcopy(self.student).requires_grad_(False)
        self.objective = DinoObjective(cfg).to(device)
        decay = [p for n, p in self.student.named_parameters() if p.ndim > 1]
        no_decay = [p for n, p in self.student.named_parameters() if p.ndim <= 1]
        self.optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                                            {"params": no_decay, "weight_decay": 0.0}], lr=cfg.lr)

    def momentum(self, step, total):
        return 1 - (1 - self.cfg.ema_start) * (math.cos(math.pi * step / total) + 1) / 2

    @torch.no_grad()
    def update_teacher(self, m):
        for ps, pt in zip(self.student.parameters(), self.teacher.parameters()):
            pt.mul_(m).add_(ps.detach(), alpha=1 - m)

    def train_step(self, views, step, total):
        batch = torch.cat([v.to(self.device, non_blocking=True) for v in views])
        student_out = self.student(batch)
        with torch.no_grad():
            teacher_out = self.teacher(batch)
        loss = self.objective(student_out, teacher_out)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        grad_norm = nn.utils.clip_grad_norm_(self.student.parameters(), self.cfg.clip_grad)
        self.update_teacher(self.momentum(step, total))
        return loss.item(), grad_norm.item()

    def fit(self, loader):
        total, step = self.cfg.epochs * len(loader), 0
        for epoch in range(self.cfg.epochs):
            self.student.train()
            for views in loader:
                loss, gnorm = self.train_step(views, step, total)
                step += 1
            print(f"epoch {epoch:03d} loss {loss:.4f} grad-norm {gnorm:.2f}")
            torch.save({"teacher": self.teacher.state_dict(), "epoch": epoch}, self.cfg.checkpoint)


if __name__ == "__main__":
    torch.manual_seed(0)
    cfg = DinoConfig()
    cfg.checkpoint.parent.mkdir(parents=True, exist_ok=True)
    loader = DataLoader(TwoViews(cfg.tiles), batch_size=cfg.batch_size, shuffle=True, num_workers=8,
                        drop_last=True, pin_memory=True)
    SelfDistiller(cfg, torch.device("cuda" if torch.cuda.is_available() else "cpu")).fit(loader)
