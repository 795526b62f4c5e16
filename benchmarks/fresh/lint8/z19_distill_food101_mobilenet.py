"""Distil a fine-tuned ResNet-50 (Food-101) into MobileNetV3-Large for on-device use.

The student batch that fits on one 16 GB card is 64; gradients are accumulated to an effective 256.
"""
import argparse
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, models, transforms


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="data/food-101")
    p.add_argument("--teacher", default="checkpoints/food101_resnet50.pt")
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--accum-steps", type=int, default=4)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--temperature", type=float, default=4.0)
    p.add_argument("--alpha", type=float, default=0.7, help="weight of the soft-target term")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def loaders(root, batch_size):
    norm = transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
    train_tf = transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(),
                                   transforms.TrivialAugmentWide(), transforms.ToTensor(), norm])
    test_tf = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(), norm])
    train = datasets.Food101(root, split="train", transform=train_tf)
    test = datasets.Food101(root, split="test", transform=test_tf)
    return (DataLoader(train, batch_size=batch_size, shuffle=True, num_workers=8, pin_memory=True, drop_last=True),
            DataLoader(test, batch_size=256, num_workers=8, pin_memory=True))


def build_teacher(path, device):
    teacher = models.resnet50(weights=None, num_classes=101)
    teacher.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
    teacher.requires_grad_(False)
    return teacher.to(device).eval()


def build_student():
    student = models.mobilenet_v3_large(weights=models.MobileNet_V3_Large_Weights.IMAGENET1K_V2)
    student.classifier[-1] = nn.Linear(student.classifier[-1].in_features, 101)
    return student


def distillation_loss(student_logits, teacher_logits, labels, T, alpha):
    soft_student = F.softmax(student_logits / T, dim=1)
    soft_teacher = F.softmax(teacher_logits / T, dim=1)
    soft = F.kl_div(soft_student, soft_teacher, reduction="batchmean") * (T * T)
    hard = F.cross_entropy(student_logits, labels)
    return alpha * soft + (1.0 - alpha) * hard


@torch.no_grad()
def top1(model, loader, device):
    model.eval()
    correct = total = 0
    for x, y in loader:
        correct += (model(x.to(device)).argmax(dim=1).cpu() == y).sum().item()
        total += y.numel()
    return correct / total


def main():
    args = parse_args()
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_dl, test_dl = loaders(args.data, args.batch_size)
    teacher = build_teacher(args.teacher, device)
    student = build_student().to(device)

    opt = torch.optim.SGD(student.parameters(), lr=args.lr, momentum=0.9, nesterov=True)
    updates_per_epoch = len(train_dl) // args.accum_steps
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs * updates_per_epoch)
    print(f"teacher top-1: {top1(teacher, test_dl, device):.4f}")
    for epoch in range(args.epochs):
        student.train()
        opt.zero_grad(set_to_none=True)
        running, seen = 0.0, 0
        for step, (x, y) in enumerate(train_dl):
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            with torch.no_grad():
                t_logits = teacher(x)
            loss = distillation_loss(student(x), t_logits, y, args.temperature, args.alpha)
            loss.backward()
            running += loss.item() * y.size(0)
            seen += y.size(0)
            if (step + 1) % args.accum_steps == 0:
                opt.step()
                opt.zero_grad(set_to_none=True)
                sched.step()
        print(f"epoch {epoch:2d}  loss {running / seen:.4f}  student top-1 {top1(student, test_dl, device):.4f}")
        torch.save(student.state_dict(), "food101_mbv3_student.pt")


if __name__ == "__main__":
    main()
