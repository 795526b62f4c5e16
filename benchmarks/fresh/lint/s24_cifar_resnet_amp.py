"""Train a small ResNet-style classifier on CIFAR-10 with mixed precision."""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
import torchvision.transforms as T
from torch.cuda import amp


class BasicBlock(nn.Module):
    def __init__(self, c_in, c_out, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c_out)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c_out)
        self.shortcut = nn.Sequential()
        if stride != 1 or c_in != c_out:
            self.shortcut = nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride, bias=False), nn.BatchNorm2d(c_out))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class SmallResNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, 1, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU())
        self.layer1 = BasicBlock(32, 64, stride=2)
        self.layer2 = BasicBlock(64, 128, stride=2)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(128, num_classes)
        self.softmax = nn.Softmax(dim=1)

    def forward(self, x):
        x = self.layer2(self.layer1(self.stem(x)))
        x = torch.flatten(self.pool(x), 1)
        return self.softmax(self.fc(x))


class Trainer:
    def __init__(self, model, lr, device, use_amp):
        self.model = model.to(device)
        self.device = device
        self.opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)
        self.loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)
        self.scaler = amp.GradScaler(enabled=use_amp)
        self.use_amp = use_amp

    def train_epoch(self, loader):
        self.model.train()
        seen, total = 0, 0.0
        for images, targets in loader:
            images, targets = images.to(self.device, non_blocking=True), targets.to(self.device, non_blocking=True)
            self.opt.zero_grad(set_to_none=True)
            with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=self.use_amp):
                scores = self.model(images)
                loss = self.loss_fn(scores, targets)
            self.scaler.scale(loss).backward()
            self.scaler.step(self.opt)
            self.scaler.update()
            seen += images.size(0)
            total += loss.item() * images.size(0)
        return total / seen

    @torch.no_grad()
    def evaluate(self, loader):
        self.model.eval()
        correct = 0
        for images, targets in loader:
            scores = self.model(images.to(self.device))
            correct += (scores.argmax(1).cpu() == targets).sum().item()
        return correct / len(loader.dataset)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--data", default="./data")
    args = parser.parse_args()

    mean, std = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)
    train_tf = T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(), T.ToTensor(), T.Normalize(mean, std)])
    test_tf = T.Compose([T.ToTensor(), T.Normalize(mean, std)])
    train_set = torchvision.datasets.CIFAR10(args.data, train=True, download=True, transform=train_tf)
    test_set = torchvision.datasets.CIFAR10(args.data, train=False, download=True, transform=test_tf)
    train_loader = torch.utils.data.DataLoader(train_set, args.batch_size, shuffle=True, num_workers=4, pin_memory=True)
    test_loader = torch.utils.data.DataLoader(test_set, 256, num_workers=4)

    device = "cuda" if torch.cuda.is_available() else "cpu"
    trainer = Trainer(SmallResNet(), args.lr, device, use_amp=device == "cuda")
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(trainer.opt, T_max=args.epochs)
    for epoch in range(args.epochs):
        t0 = time.time()
        train_loss = trainer.train_epoch(train_loader)
        sched.step()
        acc = trainer.evaluate(test_loader)
        print(f"epoch {epoch:3d} loss {train_loss:.3f} test acc {acc:.4f} ({time.time() - t0:.0f}s)")
    torch.save(trainer.model.state_dict(), "small_resnet_cifar10.pt")


if __name__ == "__main__":
    main()
