"""Knowledge distillation: a ResNet-18 teacher into a small CNN student on CIFAR-10."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, models, transforms

CIFAR_MEAN, CIFAR_STD = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)


def conv_bn(cin, cout, stride=1):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
    )


class Student(nn.Module):
    def __init__(self, n_classes=10, width=32):
        super().__init__()
        self.features = nn.Sequential(
            conv_bn(3, width), conv_bn(width, 2 * width, 2),
            conv_bn(2 * width, 4 * width, 2), conv_bn(4 * width, 4 * width),
        )
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(4 * width, n_classes)

    def forward(self, x):
        return self.head(self.pool(self.features(x)).flatten(1))


def kd_objective(student_logits, teacher_logits, labels, temperature, alpha):
    soft_teacher = F.softmax(teacher_logits / temperature, dim=-1)
    log_student = F.log_softmax(student_logits / temperature, dim=-1)
    kd = F.kl_div(log_student, soft_teacher, reduction="batchmean") * temperature**2
    hard = F.cross_entropy(student_logits, labels)
    return alpha * kd + (1.0 - alpha) * hard


def split_decay(model, weight_decay):
    decay = [p for p in model.parameters() if p.ndim > 1]
    no_decay = [p for p in model.parameters() if p.ndim <= 1]
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


@torch.no_grad()
def accuracy(model, loader, device):
    model.eval()
    correct = total = 0
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        correct += (model(images).argmax(dim=1) == labels).sum().item()
        total += labels.numel()
    return correct / total


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--teacher", required=True)
    p.add_argument("--epochs", type=int, default=60)
    p.add_argument("--temperature", type=float, default=4.0)
    p.add_argument("--alpha", type=float, default=0.9)
    args = p.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    train_tf = transforms.Compose([
        transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip(),
        transforms.ToTensor(), transforms.Normalize(CIFAR_MEAN, CIFAR_STD),
    ])
    test_tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize(CIFAR_MEAN, CIFAR_STD)])
    train_set = datasets.CIFAR10("data", train=True, download=True, transform=train_tf)
    test_set = datasets.CIFAR10("data", train=False, download=True, transform=test_tf)
    train_loader = DataLoader(train_set, batch_size=128, shuffle=True, num_workers=4, drop_last=True)
    test_loader = DataLoader(test_set, batch_size=512, num_workers=4)

    teacher = models.resnet18(num_classes=10)
    teacher.load_state_dict(torch.load(args.teacher, map_location="cpu", weights_only=True))
    teacher = teacher.to(device).eval()
    teacher.requires_grad_(False)

    student = Student().to(device)
    optimizer = torch.optim.SGD(split_decay(student, 5e-4), lr=0.05, momentum=0.9, nesterov=True)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)

    for epoch in range(args.epochs):
        student.train()
        seen, loss_sum, agree = 0, 0.0, 0
        for images, labels in train_loader:
            images, labels = images.to(device), labels.to(device)
            with torch.no_grad():
                t_logits = teacher(images)
            s_logits = student(images)
            loss = kd_objective(s_logits, t_logits, labels, args.temperature, args.alpha)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            seen += labels.size(0)
            loss_sum += loss.item() * labels.size(0)
            agree += (s_logits.argmax(1) == t_logits.argmax(1)).sum().item()
        scheduler.step()
        teacher_conf = F.softmax(t_logits, dim=1).max(dim=1).values.mean().item()
        print(f"epoch {epoch}: loss {loss_sum / seen:.4f} agreement {agree / seen:.3f} "
              f"teacher conf {teacher_conf:.3f} test acc {accuracy(student, test_loader, device):.4f}")
    torch.save(student.state_dict(), "student.pt")


if __name__ == "__main__":
    main()
