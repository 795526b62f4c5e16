"""Linear-probe then partial fine-tune of a torchvision ResNet-50 on a 12-class plant-disease dataset."""
import torch
import torch.nn as nn
from torchvision import datasets, models, transforms


class FrozenBackboneResNet(nn.Module):
    """ResNet-50 whose stem and first three stages stay frozen, BatchNorm statistics included."""

    def __init__(self, n_classes):
        super().__init__()
        self.net = models.resnet50(weights=models.ResNet50_Weights.IMAGENET1K_V2)
        self.net.fc = nn.Linear(self.net.fc.in_features, n_classes)
        for name, p in self.net.named_parameters():
            if not name.startswith(("layer4.", "fc.")):
                p.requires_grad = False
        self.frozen = nn.ModuleList([self.net.conv1, self.net.bn1, self.net.layer1, self.net.layer2, self.net.layer3])

    def train(self, mode=True):
        super().train(mode)
        for m in self.frozen:
            m.eval()  # keep running mean/var of the frozen part fixed
        return self

    def forward(self, x):
        return self.net(x)


def main():
    tf_train = transforms.Compose([
        transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(), transforms.ToTensor(),
        transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
    ])
    tf_val = transforms.Compose([
        transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(),
        transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
    ])
    train_ds = datasets.ImageFolder("plants/train", tf_train)
    val_ds = datasets.ImageFolder("plants/val", tf_val)
    train_dl = torch.utils.data.DataLoader(train_ds, batch_size=48, shuffle=True, num_workers=6)
    val_dl = torch.utils.data.DataLoader(val_ds, batch_size=96, num_workers=6)

    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = FrozenBackboneResNet(len(train_ds.classes)).to(device)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(params, lr=0.01, momentum=0.9)
    criterion = nn.CrossEntropyLoss()

    for epoch in range(12):
        model.train()
        for x, y in train_dl:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        model.eval()
        correct = 0
        with torch.no_grad():
            for x, y in val_dl:
                correct += (model(x.to(device)).argmax(1).cpu() == y).sum().item()
        print(f"epoch {epoch}: loss {loss.item():.3f} val acc {correct / len(val_ds):.4f}")

    torch.save(model.net.state_dict(), "resnet50_plants.pt")


if __name__ == "__main__":
    main()
