"""Long-tailed plankton classification (WHOI-style image folders), decoupled training:
stage 1 learns the representation with instance-balanced sampling, stage 2 re-trains the
classifier on top of the fixed features with class-balanced sampling."""
import copy
from collections import Counter
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torch.utils.data import DataLoader, WeightedRandomSampler
from torchvision import transforms as T


@dataclass
class Stage:
    name: str
    epochs: int
    lr: float
    balanced: bool
    freeze_backbone: bool


STAGES = [Stage("representation", 30, 0.05, False, False), Stage("classifier", 10, 0.02, True, True)]
BATCH = 96
NORM = T.Normalize([0.5] * 3, [0.25] * 3)


class PlanktonNet(nn.Module):
    def __init__(self, n_classes, drop=0.3):
        super().__init__()
        net = torchvision.models.resnet18(weights=None)
        net.fc = nn.Identity()
        self.backbone = net
        self.head = nn.Linear(512, n_classes)
        self.drop = drop

    def forward(self, x):
        feats = self.backbone(x)
        return self.head(F.dropout(feats, self.drop, training=self.training))


class StagedTrainer:
    def __init__(self, model, device):
        self.model = model.to(device)
        self.device = device
        self.optimizer = None
        self.stage = None

    # hooks -------------------------------------------------------------
    def on_stage_start(self, stage: Stage):
        self.stage = stage
        if stage.freeze_backbone:
            self.model.backbone.requires_grad_(False)
            nn.init.normal_(self.model.head.weight, std=0.01)
            nn.init.zeros_(self.model.head.bias)
        trainable = [(n, p) for n, p in self.model.named_parameters() if p.requires_grad]
        groups = [{"params": [p for n, p in trainable if p.ndim > 1], "weight_decay": 5e-4},
                  {"params": [p for n, p in trainable if p.ndim <= 1], "weight_decay": 0.0}]
        self.optimizer = torch.optim.SGD(groups, lr=stage.lr, momentum=0.9)
        self.scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(self.optimizer, T_max=stage.epochs)
        print(f"stage {stage.name}: {sum(p.numel() for _, p in trainable)} trainable values")

    def on_epoch_start(self):
        self.model.train()
        if self.stage.freeze_backbone:
            self.model.backbone.eval()

    def on_epoch_end(self, epoch, acc):
        self.scheduler.step()
        print(f"  [{self.stage.name}] epoch {epoch:02d} balanced acc {acc:.4f}")

    # loops -------------------------------------------------------------
    def train_epoch(self, loader):
        for images, labels in loader:
            images, labels = images.to(self.device), labels.to(self.device)
            self.optimizer.zero_grad()
            loss = F.cross_entropy(self.model(images), labels)
            loss.backward()
            self.optimizer.step()

    @torch.no_grad()
    def balanced_accuracy(self, loader, n_classes):
        self.model.eval()
        hits = torch.zeros(n_classes)
        counts = torch.zeros(n_classes)
        for images, labels in loader:
            pred = self.model(images.to(self.device)).argmax(dim=1).cpu()
            counts += torch.bincount(labels, minlength=n_classes).float()
            hits += torch.bincount(labels[pred == labels], minlength=n_classes).float()
        return (hits / counts.clamp(min=1)).mean().item()

    def run(self, stages, make_loader, valid_loader, n_classes):
        best, best_state = -1.0, None
        for stage in stages:
            self.on_stage_start(stage)
            loader = make_loader(stage.balanced)
            for epoch in range(stage.epochs):
                self.on_epoch_start()
                self.train_epoch(loader)
                acc = self.balanced_accuracy(valid_loader, n_classes)
                self.on_epoch_end(epoch, acc)
                if acc > best:
                    best, best_state = acc, copy.deepcopy(self.model.state_dict())
        return best, best_state


def main():
    torch.manual_seed(11)
    train_tf = T.Compose([T.Grayscale(3), T.RandomResizedCrop(128, scale=(0.6, 1.0)), T.RandomHorizontalFlip(),
                          T.RandomRotation(180), T.ToTensor(), NORM])
    eval_tf = T.Compose([T.Grayscale(3), T.Resize((128, 128)), T.ToTensor(), NORM])
    train_set = torchvision.datasets.ImageFolder("data/whoi/train", train_tf)
    valid_set = torchvision.datasets.ImageFolder("data/whoi/valid", eval_tf)
    n_classes = len(train_set.classes)

    counts = Counter(train_set.targets)
    sample_weights = torch.tensor([1.0 / counts[t] for t in train_set.targets], dtype=torch.double)

    def make_loader(balanced):
        if balanced:
            sampler = WeightedRandomSampler(sample_weights, num_samples=len(train_set), replacement=True)
            return DataLoader(train_set, BATCH, sampler=sampler, num_workers=6, drop_last=True)
        return DataLoader(train_set, BATCH, shuffle=True, num_workers=6, drop_last=True)

    valid_loader = DataLoader(valid_set, BATCH, num_workers=6)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    trainer = StagedTrainer(PlanktonNet(n_classes), device)
    best, state = trainer.run(STAGES, make_loader, valid_loader, n_classes)
    torch.save({"model": state, "classes": train_set.classes, "balanced_acc": best}, "plankton_crt.pt")
    print(f"best balanced accuracy {best:.4f}")


if __name__ == "__main__":
    main()
