"""PTF013: a tensor's .to()/.cuda() result thrown away (a module's .to() is in place)."""

PITFALL = {
    "factory": """
import torch
ids = torch.tensor([1, 2, 3])
ids.to("cuda")
""",
    "loader_batch": """
import torch
def train(model, train_loader, device):
    model.to(device)
    for data, target in train_loader:
        data.to(device)
        target.to(device)
        out = model(data)
""",
    "next_iter_batch": """
import torch
from torch.utils.data import DataLoader
def peek(dataset):
    loader = DataLoader(dataset, batch_size=4)
    images, labels = next(iter(loader))
    images.cuda()
    return images
""",
    "annotated_param_in_method": """
import torch
class Runner:
    def prepare(self, x: torch.Tensor, device):
        x.to(device)
        return x
""",
    "model_output": """
import torch
import torch.nn as nn
model = nn.Linear(4, 2)
def predict(x):
    out = model(x)
    out.cpu()
    return out
""",
    "from_numpy_float": """
import numpy as np
import torch
arr = np.zeros(3)
t = torch.from_numpy(arr)
t.float()
""",
}

NEAR_MISS = {
    "module_to": """
import torch.nn as nn
model = nn.Sequential(nn.Linear(4, 2))
model.to("cuda")
""",
    "own_module_and_attribute": """
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 4)
    def place(self, device):
        self.body.cuda()
net = Net()
net.to("cuda")
""",
    "assigned": """
def train(model, loader, device):
    for data, target in loader:
        data, target = data.to(device), target.to(device)
        model(data)
""",
    "unknown_receiver": """
def place(thing, device):
    thing.to(device)
""",
}

SEEN = {
    "loader_batch": "https://github.com/RaoFoundation/bittensor/pull/187",
    "next_iter_batch": "https://github.com/pytorch/pytorch/pull/40746",
    "module_to": "https://github.com/onyx-dot-app/onyx/pull/2134",
    "factory": "https://github.com/meta-pytorch/torchcodec/pull/1347",
}

# round 2: a loader's whole element may be a dict-like batch whose .to() is in place
NEAR_MISS["batch_encoding_to"] = """
import torch
def evaluate(model, eval_dataloader, device):
    for batch in eval_dataloader:
        batch.to(device)
        with torch.no_grad():
            outputs = model(**batch)
"""
SEEN["batch_encoding_to"] = "accelerate/test_utils/scripts/external_deps/test_metrics.py (for batch in dataloader: batch.to(device), in build/realcode/untuned)"
