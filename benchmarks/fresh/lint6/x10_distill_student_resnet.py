"""Knowledge distillation on CIFAR-100: a ResNet-18 student learns from a frozen, already
fine-tuned ResNet-50 teacher (Hinton et al. soft targets plus the hard-label loss)."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision.transforms as T
from torch.utils.data import DataLoader
from torchvision.datasets import CIFAR100
from torchvision.models import resnet18, resnet50

TEMPERATURE, ALPHA, EPOCHS = 4.0, 0.7, 120
CIFAR_MEAN, CIFAR_STD = (0.507, 0.487, 0.441), (0.267, 0.256, 0.276)


def cifar_resnet(ctor, num_classes=100):
    net = ctor(num_classes=num_classes)
    net.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
    net.maxpool = nn.Identity()
    return net


def distillation_loss(student_logits, teacher_logits, labels):
    soft_student = F.softmax(student_logits / TEMPERATURE, dim=1)
    soft_teacher = F.softmax(teacher_logits / TEMPERATURE, dim=1)
    kd = F.kl_div(soft_student, soft_teacher, reduction="batchmean") * TEMPERATURE ** 2
    ce = F.cross_entropy(student_logits, labels)
    return ALPHA * kd + (1.0 - ALPHA) * ce


@torch.no_grad()
def top1(model, loader, device):
    model.eval()
    hits = total = 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        hits += (model(x).argmax(1) == y).sum().item()
        total += y.numel()
    return hits / total


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_tf = T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(), T.ToTensor(),
                          T.Normalize(CIFAR_MEAN, CIFAR_STD)])
    test_tf = T.Compose([T.ToTensor(), T.Normalize(CIFAR_MEAN, CIFAR_STD)])
    train_dl = DataLoader(CIFAR100("data", train=True, transform=train_tf, download=False),
                          batch_size=128, shuffle=True, num_workers=8, pin_memory=True)
    test_dl = DataLoader(CIFAR100("data", train=False, transform=test_tf, download=False),
                         batch_size=512, num_workers=8)

    teacher = cifar_resnet(resnet50)
    teacher.load_state_dict(torch.load("checkpoints/teacher_r50_cifar100.pt", map_location="cpu",
                                       weights_only=True))
    teacher = teacher.to(device).eval()
    for p in teacher.parameters():
        p.requires_grad_(False)
    print(f"teacher top-1: {top1(teacher, test_dl, device):.4f}")

    student = cifar_resnet(resnet18).to(device)
    decay = [p for p in student.parameters() if p.ndim > 1]
    no_decay = [p for p in student.parameters() if p.ndim <= 1]  # BatchNorm weights and biases
    optimizer = torch.optim.SGD([{"params": decay, "weight_decay": 5e-4}, {"params": no_decay, "weight_decay": 0.0}],
                                lr=0.1, momentum=0.9, nesterov=True)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=EPOCHS)

    for epoch in range(EPOCHS):
        student.train()
        running, seen = 0.0, 0
        for x, y in train_dl:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            with torch.no_grad():
                t_logits = teacher(x)
            loss = distillation_loss(student(x), t_logits, y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            running += loss.item() * y.size(0)
            seen += y.size(0)
        scheduler.step()
        if epoch % 5 == 4:
            print(f"epoch {epoch + 1}: loss {running / seen:.4f}  student top-1 {top1(student, test_dl, device):.4f}")

    torch.save(student.state_dict(), "checkpoints/student_r18_kd.pt")


if __name__ == "__main__":
    main()
