# %% [markdown]
# # SimCLR on Quick, Draw! sketches
# Contrastive pre-training of a small CNN on 28x28 sketch bitmaps of 20 categories, then a
# logistic-regression probe on the frozen features. Notebook exported as a script.

# %%
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.linear_model import LogisticRegression
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms

torch.manual_seed(0)
np.random.seed(0)
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
CFG = {"npz": "data/quickdraw20.npz", "batch": 512, "epochs": 50, "lr": 1e-3, "weight_decay": 1e-4,
       "temperature": 0.2, "feat_dim": 256, "proj_dim": 64}

# %%
data = np.load(CFG["npz"])          # x_train (N, 784) uint8, y_train (N,), x_test, y_test
def to_images(flat):
    return torch.from_numpy(flat.astype(np.float32) / 255.0).reshape(-1, 1, 28, 28)


x_train, x_test = to_images(data["x_train"]), to_images(data["x_test"])
y_train, y_test = data["y_train"].astype(np.int64), data["y_test"].astype(np.int64)
MEAN, STD = x_train.mean().item(), x_train.std().item()
augment = transforms.Compose([
    transforms.RandomResizedCrop(28, scale=(0.5, 1.0), antialias=True),
    transforms.RandomHorizontalFlip(),
    transforms.RandomAffine(degrees=15, translate=(0.1, 0.1)),
])


class PairViews(Dataset):
    def __init__(self, images):
        self.images = images

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        img = self.images[i]
        return (augment(img) - MEAN) / STD, (augment(img) - MEAN) / STD


loader = DataLoader(PairViews(x_train), batch_size=CFG["batch"], shuffle=True, drop_last=True, num_workers=4)


# %%
class SketchEncoder(nn.Module):
    def __init__(self, feat_dim):
        super().__init__()
        def block(i, o):
            return nn.Sequential(nn.Conv2d(i, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True))
        self.net = nn.Sequential(block(1, 64), block(64, 64), nn.MaxPool2d(2), block(64, 128), block(128, 128),
                                 nn.MaxPool2d(2), block(128, feat_dim), nn.AdaptiveAvgPool2d(1), nn.Flatten())

    def forward(self, x):
        return self.net(x)


encoder = SketchEncoder(CFG["feat_dim"]).to(DEVICE)
projector = nn.Sequential(nn.Linear(CFG["feat_dim"], CFG["feat_dim"]), nn.ReLU(inplace=True),
                          nn.Linear(CFG["feat_dim"], CFG["proj_dim"])).to(DEVICE)


def nt_xent(z1, z2, temperature):
    z = F.normalize(torch.cat([z1, z2]), dim=1)
    sim = (z @ z.t()) / temperature
    n = z1.size(0)
    sim = sim.masked_fill(torch.eye(2 * n, dtype=torch.bool, device=z.device), float("-inf"))
    targets = (torch.arange(2 * n, device=z.device) + n) % (2 * n)
    return F.cross_entropy(sim, targets)


# %%
params = list(encoder.named_parameters()) + list(projector.named_parameters())
decay = [p for n, p in params if p.ndim > 1]
no_decay = [p for n, p in params if p.ndim <= 1]
optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": CFG["weight_decay"]},
                               {"params": no_decay, "weight_decay": 0.0}], lr=CFG["lr"])
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=CFG["epochs"] * len(loader))

for epoch in range(CFG["epochs"]):
    encoder.train()
    projector.train()
    running = 0.0
    for v1, v2 in loader:
        v1, v2 = v1.to(DEVICE), v2.to(DEVICE)
        loss = nt_xent(projector(encoder(v1)), projector(encoder(v2)), CFG["temperature"])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        running += loss.item()
    print(f"epoch {epoch + 1:02d} nt-xent {running / len(loader):.4f}")

torch.save(encoder.state_dict(), "simclr_sketch_encoder.pt")


# %% [markdown]
# ## Linear probe on frozen features

# %%
@torch.no_grad()
def features(images):
    encoder.eval()
    out = [encoder(((images[i:i + 1024]) - MEAN).div(STD).to(DEVICE)).cpu() for i in range(0, len(images), 1024)]
    return torch.cat(out).numpy()


f_train, f_test = features(x_train), features(x_test)
probe = LogisticRegression(max_iter=2000, C=1.0).fit(f_train, y_train)
print(f"linear probe accuracy: {probe.score(f_test, y_test):.4f}")
