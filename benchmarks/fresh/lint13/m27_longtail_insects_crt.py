"""Long-tailed insect species classification (iNaturalist subset, ~1,000 species) with
decoupled training (Kang et al., 2020): joint training with instance-balanced sampling first,
then classifier re-training (cRT) on a class-balanced sampler with the representation fixed.
Trainer with callbacks for the stage switch; gradient buffers are kept to log per-group norms.
"""
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, WeightedRandomSampler
from torchvision import datasets, models, transforms


@dataclass
class Config:
    root: str = "data/inat_insecta"
    epochs: int = 90
    crt_start: int = 80
    batch_size: int = 128
    lr: float = 0.1
    momentum: float = 0.9
    keep_grad_buffers: bool = True
    workers: int = 8


class Net(nn.Module):
    def __init__(self, n_classes):
        super().__init__()
        resnet = models.resnet50(weights=None)
        resnet.fc = nn.Identity()
        self.backbone = resnet
        self.classifier = nn.Linear(2048, n_classes)

    def forward(self, x):
        return self.classifier(self.backbone(x))


class StageSwitch:
    def on_epoch_start(self, trainer, epoch):
        if epoch == trainer.cfg.crt_start:
            trainer.model.backbone.requires_grad_(False)
            trainer.model.classifier.reset_parameters()
            trainer.loader = trainer.balanced_loader
            print(f"epoch {epoch}: classifier re-training on class-balanced batches")
        if epoch >= trainer.cfg.crt_start:
            trainer.model.backbone.eval()


class Trainer:
    def __init__(self, model, cfg, loaders, device, callbacks):
        self.model, self.cfg, self.device, self.callbacks = model, cfg, device, callbacks
        self.loader, self.balanced_loader, self.val_loader = loaders
        self.optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=cfg.momentum, nesterov=True)
        self.scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(self.optimizer, T_max=cfg.epochs)

    def grad_norms(self):
        norms = {}
        for name, module in (("backbone", self.model.backbone), ("classifier", self.model.classifier)):
            grads = [p.grad.norm() for p in module.parameters() if p.grad is not None]
            norms[name] = torch.stack(grads).norm().item() if grads else 0.0
        return norms

    def training_step(self, x, y):
        self.optimizer.zero_grad(set_to_none=not self.cfg.keep_grad_buffers)
        loss = F.cross_entropy(self.model(x), y)
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def fit(self):
        for epoch in range(self.cfg.epochs):
            self.model.train()
            for cb in self.callbacks:
                cb.on_epoch_start(self, epoch)
            for step, (x, y) in enumerate(self.loader):
                loss = self.training_step(x.to(self.device, non_blocking=True), y.to(self.device, non_blocking=True))
                if step % 200 == 0:
                    print(f"epoch {epoch:2d} step {step:5d} loss {loss:.4f} grad norms {self.grad_norms()}")
            self.scheduler.step()
            print(f"epoch {epoch:2d}  val top-1 {self.evaluate():.4f}")

    @torch.no_grad()
    def evaluate(self):
        self.model.eval()
        correct = total = 0
        for x, y in self.val_loader:
            correct += (self.model(x.to(self.device)).argmax(1).cpu() == y).sum().item()
            total += y.numel()
        return correct / total


def build_loaders(cfg):
    norm = transforms.Normalize([0.466, 0.471, 0.380], [0.195, 0.194, 0.192])
    train_tf = transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(),
                                   transforms.ColorJitter(0.4, 0.4, 0.4), transforms.ToTensor(), norm])
    val_tf = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(), norm])
    train_set = datasets.ImageFolder(f"{cfg.root}/train", train_tf)
    val_set = datasets.ImageFolder(f"{cfg.root}/val", val_tf)
    targets = torch.tensor(train_set.targets)
    counts = torch.bincount(targets).float()
    sampler = WeightedRandomSampler((1.0 / counts)[targets], num_samples=len(targets), replacement=True)
    kw = dict(batch_size=cfg.batch_size, num_workers=cfg.workers, pin_memory=True)
    return (DataLoader(train_set, shuffle=True, drop_last=True, **kw),
            DataLoader(train_set, sampler=sampler, drop_last=True, **kw),
            DataLoader(val_set, **kw)), len(train_set.classes)


def main(cfg=Config()):
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    loaders, n_classes = build_loaders(cfg)
    model = Net(n_classes).to(device)
    trainer = Trainer(model, cfg, loaders, device, callbacks=[StageSwitch()])
    trainer.fit()
    torch.save(model.state_dict(), "inat_insecta_crt.pt")


if __name__ == "__main__":
    main()
