"""SimCLR-style contrastive pre-training of a small encoder on unlabeled product photos."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision.transforms.v2 as T
from torchvision.datasets import ImageFolder
from torchvision.models import resnet18


class TwoViews:
    def __init__(self, size=96):
        self.tf = T.Compose([
            T.RandomResizedCrop(size, scale=(0.2, 1.0)),
            T.RandomHorizontalFlip(),
            T.RandomApply([T.ColorJitter(0.4, 0.4, 0.4, 0.1)], p=0.8),
            T.RandomGrayscale(p=0.2),
            T.ToImage(),
            T.ToDtype(torch.float32, scale=True),
        ])

    def __call__(self, img):
        return self.tf(img), self.tf(img)


class ContrastiveModel(nn.Module):
    def __init__(self, dim=128):
        super().__init__()
        backbone = resnet18(weights=None)
        backbone.fc = nn.Identity()
        self.backbone = backbone
        self.projector = nn.Sequential(nn.Linear(512, 512), nn.ReLU(inplace=True), nn.Linear(512, dim))

    def embed(self, x):
        z = self.projector(self.backbone(x))
        return z / torch.linalg.vector_norm(z)


def nt_xent(z1, z2, temperature=0.2):
    n = z1.size(0)
    z = torch.cat([z1, z2], dim=0)
    sim = z @ z.t() / temperature
    sim.fill_diagonal_(float("-inf"))
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)]).to(z.device)
    log_prob = F.softmax(sim, dim=1).log()
    return -log_prob[torch.arange(2 * n, device=z.device), targets].mean()


def main():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    data = ImageFolder("products/unlabeled", transform=TwoViews())
    loader = torch.utils.data.DataLoader(data, batch_size=256, shuffle=True, num_workers=8, drop_last=True)
    model = ContrastiveModel().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)

    for epoch in range(100):
        model.train()
        epoch_loss = 0.0
        for (v1, v2), _ in loader:
            v1, v2 = v1.to(device, non_blocking=True), v2.to(device, non_blocking=True)
            loss = nt_xent(model.embed(v1), model.embed(v2))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            epoch_loss += loss.item()
        print(f"epoch {epoch} contrastive loss {epoch_loss / len(loader):.4f}")
        if epoch % 10 == 9:
            torch.save(model.backbone.state_dict(), f"encoder_ep{epoch + 1}.pt")


if __name__ == "__main__":
    main()
