"""CIFAR-10 with a ResNet-18 adapted to 32x32 inputs: the classic 200-epoch SGD schedule
(lr 0.1, divided by 10 at epochs 100 and 150), mixed precision on the GPU."""

import argparse
import os

import torch
import torch.nn.functional as F
import torchvision
import torchvision.transforms as T
from torch import nn

CIFAR_MEAN, CIFAR_STD = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)


def get_loaders(root, batch_size):
    train_tf = T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(), T.ToTensor(),
                          T.Normalize(CIFAR_MEAN, CIFAR_STD)])
    test_tf = T.Compose([T.ToTensor(), T.Normalize(CIFAR_MEAN, CIFAR_STD)])
    train = torchvision.datasets.CIFAR10(root, train=True, download=True, transform=train_tf)
    test = torchvision.datasets.CIFAR10(root, train=False, download=True, transform=test_tf)
    return (torch.utils.data.DataLoader(train, batch_size, shuffle=True, num_workers=6, drop_last=True),
            torch.utils.data.DataLoader(test, 1000, num_workers=6))


def cifar_resnet18():
    net = torchvision.models.resnet18(num_classes=10)
    net.conv1 = nn.Conv2d(3, 64, kernel_size=3, stride=1, padding=1, bias=False)
    net.maxpool = nn.Identity()
    return net


def test(net, loader, device):
    net.eval()
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            correct += (net(x).argmax(1) == y).sum().item()
    return correct / len(loader.dataset)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default=os.path.expanduser("~/data/cifar10"))
    p.add_argument("--epochs", type=int, default=200)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--lr", type=float, default=0.1)
    args = p.parse_args()

    device = "cuda" if torch.cuda.is_available() else "cpu"
    train_loader, test_loader = get_loaders(args.data, args.batch_size)
    net = cifar_resnet18().to(device).to(memory_format=torch.channels_last)

    decay, no_decay = [], []
    for name, param in net.named_parameters():
        (no_decay if param.ndim <= 1 else decay).append(param)
    optimizer = torch.optim.SGD([{"params": decay, "weight_decay": 5e-4},
                                 {"params": no_decay, "weight_decay": 0.0}],
                                lr=args.lr, momentum=0.9, nesterov=True)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[100, 150], gamma=0.1)
    scaler = torch.amp.GradScaler("cuda", enabled=device == "cuda")

    for epoch in range(args.epochs):
        net.train()
        total, correct, loss_sum = 0, 0, 0.0
        for x, y in train_loader:
            x = x.to(device, non_blocking=True).to(memory_format=torch.channels_last)
            y = y.to(device, non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast(device_type=device, dtype=torch.float16, enabled=device == "cuda"):
                logits = net(x)
                loss = F.cross_entropy(logits, y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            loss_sum += loss.item() * y.size(0)
            correct += (logits.argmax(1) == y).sum().item()
            total += y.size(0)
        acc = test(net, test_loader, device)
        print(f"[{epoch + 1:3d}/{args.epochs}] lr {optimizer.param_groups[0]['lr']:.4f} "
              f"loss {loss_sum / total:.3f} train {correct / total:.3f} test {acc:.3f}")

    torch.save(net.state_dict(), "cifar_resnet18.pt")


if __name__ == "__main__":
    main()
