"""PTF267 (batchnorm-batch-of-one): a BatchNorm1d model trained on a loader whose batches can hold one sample."""

PITFALL = {
    "batch_size_option_defaults_to_one": """
import argparse
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader
from torchvision.datasets import MNIST
from torchvision.transforms import ToTensor
parser = argparse.ArgumentParser()
parser.add_argument("--batch_size", default=1, type=int, help="training batch size")
args = parser.parse_args()
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.BatchNorm1d(512), nn.ReLU(), nn.Linear(512, 10))
    def forward(self, x):
        return self.mlp(x)
model = Head()
opt = torch.optim.Adam(model.parameters())
loader = DataLoader(MNIST(".", download=True, transform=ToTensor()), batch_size=args.batch_size, shuffle=True)
for x, y in loader:
    opt.zero_grad()
    F.cross_entropy(model(x), y).backward()
    opt.step()
""",
    "last_batch_of_one": """
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
N_SAMPLES = 1025
X = torch.randn(N_SAMPLES, 20)
y = torch.randn(N_SAMPLES, 1)
net = nn.Sequential(nn.Linear(20, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 1))
opt = torch.optim.SGD(net.parameters(), lr=0.01)
loss_fn = nn.MSELoss()
dl = DataLoader(TensorDataset(X, y), batch_size=64, shuffle=True)
for epoch in range(10):
    for xb, yb in dl:
        opt.zero_grad()
        loss_fn(net(xb), yb).backward()
        opt.step()
""",
    "no_batch_size_given": """
import torch
import torch.nn as nn
from torch.utils.data import DataLoader
class FcBlock(nn.Module):
    def __init__(self, inplanes, planes):
        super().__init__()
        self.fc = nn.Linear(inplanes, planes)
        self.bn = nn.BatchNorm1d(planes)
    def forward(self, x):
        x = self.fc(x)
        x = self.bn(x)
        return torch.relu(x)
def fit(dataset):
    model = FcBlock(40, 8)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = DataLoader(dataset, shuffle=True)
    for feats, target in loader:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(feats), target)
        loss.backward()
        optimizer.step()
    return model
""",
    "loader_handed_to_the_epoch_function": """
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader
def train_epoch(model, batches, opt):
    model.train()
    for points, label in batches:
        opt.zero_grad()
        F.cross_entropy(model(points), label).backward()
        opt.step()
def main(train_set):
    model = nn.Sequential(nn.Linear(1024, 256), nn.BatchNorm1d(256), nn.ReLU(), nn.Linear(256, 40))
    opt = torch.optim.Adam(model.parameters())
    loader = DataLoader(train_set, batch_size=1, shuffle=True, num_workers=2)
    for epoch in range(20):
        train_epoch(model, loader, opt)
""",
    "nested_bn_of_fc_with_enumerate": """
import torch
from torch import nn
from torch.utils.data import DataLoader
class Classifier(nn.Module):
    def __init__(self, d_in, n_cls):
        super().__init__()
        self.fc1 = nn.Linear(d_in, 128)
        self.bn1 = nn.BatchNorm1d(128)
        self.out = nn.Linear(128, n_cls)
    def forward(self, x):
        return self.out(torch.relu(self.bn1(self.fc1(x))))
def run(ds, epochs=5):
    clf = Classifier(32, 4)
    opt = torch.optim.SGD(clf.parameters(), lr=0.1, momentum=0.9)
    train_loader = DataLoader(ds, batch_size=1, shuffle=True)
    for epoch in range(epochs):
        for step, (x, y) in enumerate(train_loader):
            loss = nn.functional.cross_entropy(clf(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
""",
}

NEAR_MISS = {
    "drop_last_on_the_remainder": """
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
X = torch.randn(1025, 20)
y = torch.randn(1025, 1)
net = nn.Sequential(nn.Linear(20, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 1))
opt = torch.optim.SGD(net.parameters(), lr=0.01)
dl = DataLoader(TensorDataset(X, y), batch_size=64, shuffle=True, drop_last=True)
for epoch in range(10):
    for xb, yb in dl:
        opt.zero_grad()
        nn.functional.mse_loss(net(xb), yb).backward()
        opt.step()
""",
    "remainder_of_two": """
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
X = torch.randn(1026, 20)
y = torch.randn(1026, 1)
net = nn.Sequential(nn.Linear(20, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 1))
opt = torch.optim.SGD(net.parameters(), lr=0.01)
dl = DataLoader(TensorDataset(X, y), batch_size=64, shuffle=True)
for epoch in range(10):
    for xb, yb in dl:
        opt.zero_grad()
        nn.functional.mse_loss(net(xb), yb).backward()
        opt.step()
""",
    "batch_of_one_image_with_batchnorm2d": """
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader
def train(dataset):
    model = nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
        nn.Conv2d(16, 2, 1),
    )
    opt = torch.optim.Adam(model.parameters())
    loader = DataLoader(dataset, batch_size=1, shuffle=True)
    for img, mask in loader:
        opt.zero_grad()
        F.cross_entropy(model(img), mask).backward()
        opt.step()
""",
    "batch_of_one_for_evaluation": """
import torch
from torch import nn
from torch.utils.data import DataLoader
def evaluate(model_path, test_set):
    model = nn.Sequential(nn.Linear(16, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 3))
    model.load_state_dict(torch.load(model_path, weights_only=True))
    model.eval()
    loader = DataLoader(test_set, batch_size=1)
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            correct += int(model(x).argmax(1).item() == y.item())
    return correct / len(test_set)
""",
    "batch_of_one_sequence_with_conv1d_bn": """
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader
def train(clips):
    model = nn.Sequential(nn.Conv1d(40, 64, 5, bias=False), nn.BatchNorm1d(64), nn.ReLU(), nn.Conv1d(64, 10, 1))
    opt = torch.optim.Adam(model.parameters())
    loader = DataLoader(clips, batch_size=1, shuffle=True)
    for feats, labels in loader:
        opt.zero_grad()
        F.cross_entropy(model(feats), labels).backward()
        opt.step()
""",
    "batch_of_one_with_layer_norm": """
import torch
from torch import nn
from torch.utils.data import DataLoader
def fit(ds):
    net = nn.Sequential(nn.Linear(20, 64), nn.LayerNorm(64), nn.ReLU(), nn.Linear(64, 1))
    opt = torch.optim.Adam(net.parameters())
    for xb, yb in DataLoader(ds, batch_size=1, shuffle=True):
        opt.zero_grad()
        nn.functional.mse_loss(net(xb), yb).backward()
        opt.step()
""",
}

SEEN = {
    "batch_size_option_defaults_to_one": "nikitakaraevv/pointnet#18 (--batch_size default=1: Expected more than 1 value per channel, [1, 512])",
    "last_batch_of_one": "pytorch/pytorch#7716 (dataset size leaving a last batch of 1); fastai/fastai#1352 (fixed by drop_last=True)",
    "no_batch_size_given": "d-li14/face-attribute-prediction#8 (fc_block: nn.Linear then nn.BatchNorm1d, batch of one)",
    "loader_handed_to_the_epoch_function": "DylanWusee/pointconv_pytorch#6 (How to train model in batch size = 1)",
    "nested_bn_of_fc_with_enumerate": "pytorch/pytorch#13223 (BatchNorm1d with input batch_size=1 fails in training)",
    "batch_of_one_for_evaluation": "MCG-NKU/SCNet#8 (batch of one works once the model is put in eval mode)",
}
