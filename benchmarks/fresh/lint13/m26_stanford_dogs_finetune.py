"""Fine-tune an ImageNet ResNet-50 on Stanford Dogs (120 breeds) on a multi-GPU workstation.

Adapted from the classic PyTorch ImageNet example: AverageMeter bookkeeping, a top-k accuracy
helper, and a smaller learning rate for the pretrained layers than for the new classifier.
python m26_stanford_dogs_finetune.py data/stanford_dogs --epochs 30 -b 128
"""
import argparse
import os
import shutil
import time

import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader
from torchvision import datasets, models, transforms

parser = argparse.ArgumentParser(description="Stanford Dogs fine-tuning")
parser.add_argument("data", metavar="DIR")
parser.add_argument("--epochs", default=30, type=int)
parser.add_argument("-b", "--batch-size", default=128, type=int)
parser.add_argument("--lr", default=0.01, type=float, help="learning rate of the new classifier")
parser.add_argument("--backbone-lr-mult", default=0.1, type=float)
parser.add_argument("--momentum", default=0.9, type=float)
parser.add_argument("-j", "--workers", default=8, type=int)
parser.add_argument("--print-freq", default=20, type=int)


class AverageMeter(object):
    def __init__(self, name):
        self.name = name
        self.reset()

    def reset(self):
        self.val = self.avg = self.sum = self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def accuracy(output, target, topk=(1,)):
    with torch.no_grad():
        maxk = max(topk)
        _, pred = output.topk(maxk, 1, True, True)
        correct = pred.t().eq(target.view(1, -1).expand_as(pred.t()))
        return [correct[:k].reshape(-1).float().sum().item() * 100.0 / target.size(0) for k in topk]


def make_optimizer(model, args):
    head_params = list(model.fc.parameters())
    head_ids = {id(p) for p in head_params}
    backbone_params = [p for p in model.parameters() if id(p) not in head_ids]
    return optim.SGD([
        {"params": backbone_params, "lr": args.lr * args.backbone_lr_mult},
        {"params": head_params, "lr": args.lr},
    ], momentum=args.momentum)


def train(loader, model, criterion, optimizer, epoch, device, args):
    batch_time, losses, top1 = AverageMeter("Time"), AverageMeter("Loss"), AverageMeter("Acc@1")
    model.train()
    end = time.time()
    for i, (images, target) in enumerate(loader):
        images, target = images.to(device, non_blocking=True), target.to(device, non_blocking=True)
        output = model(images)
        loss = criterion(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        acc1, = accuracy(output, target, topk=(1,))
        losses.update(loss.data[0], images.size(0))
        top1.update(acc1, images.size(0))
        batch_time.update(time.time() - end)
        end = time.time()
        if i % args.print_freq == 0:
            print(f"Epoch [{epoch}][{i}/{len(loader)}]  Time {batch_time.avg:.3f}  "
                  f"Loss {losses.avg:.4f}  Acc@1 {top1.avg:.2f}")


def validate(loader, model, device):
    top1, top5 = AverageMeter("Acc@1"), AverageMeter("Acc@5")
    model.eval()
    with torch.no_grad():
        for images, target in loader:
            output = model(images.to(device, non_blocking=True))
            acc1, acc5 = accuracy(output, target.to(device, non_blocking=True), topk=(1, 5))
            top1.update(acc1, images.size(0))
            top5.update(acc5, images.size(0))
    print(f" * Acc@1 {top1.avg:.3f}  Acc@5 {top5.avg:.3f}")
    return top1.avg


def main():
    args = parser.parse_args()
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    train_set = datasets.ImageFolder(os.path.join(args.data, "train"), transforms.Compose([
        transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(), transforms.ToTensor(), normalize]))
    val_set = datasets.ImageFolder(os.path.join(args.data, "val"), transforms.Compose([
        transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(), normalize]))
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, num_workers=args.workers,
                              pin_memory=True, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=args.batch_size, num_workers=args.workers, pin_memory=True)

    model = models.resnet50(weights="IMAGENET1K_V2")
    model.fc = nn.Linear(model.fc.in_features, len(train_set.classes))
    model = model.to(device)
    if torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)
    criterion = nn.CrossEntropyLoss().to(device)
    optimizer = make_optimizer(model, args)
    scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)

    best_acc1 = 0.0
    for epoch in range(args.epochs):
        train(train_loader, model, criterion, optimizer, epoch, device, args)
        acc1 = validate(val_loader, model, device)
        scheduler.step()
        state = model.module.state_dict() if isinstance(model, nn.DataParallel) else model.state_dict()
        torch.save({"epoch": epoch + 1, "state_dict": state, "best_acc1": max(acc1, best_acc1)}, "checkpoint.pth.tar")
        if acc1 > best_acc1:
            best_acc1 = acc1
            shutil.copyfile("checkpoint.pth.tar", "model_best.pth.tar")


if __name__ == "__main__":
    main()
