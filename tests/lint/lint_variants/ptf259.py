"""PTF259 (learning-rate-off-by-orders): a literal learning rate far outside the optimizer's working range."""

PITFALL = {
    "sgd_rate_of_a_finetuning_recipe": """
import torch
from torch import nn
model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=1e-7, momentum=0.9)
""",
    "adam_at_sgd_rate": """
import torch.optim as optim
from torch import nn
net = nn.Sequential(nn.Conv2d(1, 16, 3), nn.ReLU(), nn.Flatten(), nn.LazyLinear(10))
opt = optim.Adam(net.parameters(), lr=1.0)
""",
    "rate_through_a_train_function": """
import torch
import torch.nn.functional as F
def train(model, loader, lr):
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    for x, y in loader:
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
def main(model, loader):
    train(model, loader, lr=0.5)
""",
    "argparse_default": """
import argparse
import torch
from torch import nn
parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=0.5, help="learning rate")
args = parser.parse_args()
model = nn.LSTM(32, 64)
optimizer = torch.optim.RMSprop(model.parameters(), lr=args.lr)
""",
    "positional_rate": """
from torch.optim import Adam
from torch import nn
policy = nn.Sequential(nn.Linear(8, 64), nn.Tanh(), nn.Linear(64, 4))
opt = Adam(policy.parameters(), 2)
""",
    "config_constant": """
import torch
from torch import nn
LEARNING_RATE = 1e-8
model = nn.Linear(10, 1)
opt = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)
""",
}

NEAR_MISS = {
    "usual_rates": """
import torch
from torch import nn
model = nn.Linear(10, 2)
a = torch.optim.Adam(model.parameters(), lr=3e-4)
s = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
""",
    "onecycle_sets_the_rate": """
import torch
from torch import nn
model = nn.Linear(10, 2)
opt = torch.optim.Adam(model.parameters(), lr=1.0)
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=1000)
""",
    "computed_rate": """
import torch
def make(model, base_lr, batch_size):
    return torch.optim.SGD(model.parameters(), lr=base_lr * batch_size / 256, momentum=0.9)
""",
    "tutorial_summed_squares": """
import torch
x, y = torch.randn(64, 1000), torch.randn(64, 10)
w1 = torch.randn(1000, 100, requires_grad=True)
w2 = torch.randn(100, 10, requires_grad=True)
optimizer = torch.optim.SGD([w1, w2], lr=1e-6)
for t in range(500):
    loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
    "summed_loss_fcn": """
import torch
from torch import nn
model = nn.Conv2d(3, 21, 1)
criterion = nn.CrossEntropyLoss(reduction="sum")
optimizer = torch.optim.SGD(model.parameters(), lr=1e-10, momentum=0.99)
""",
    "adagrad_and_adadelta": """
import torch
from torch import nn
emb = nn.Embedding(10000, 50)
a = torch.optim.Adagrad(emb.parameters(), lr=0.5)
b = torch.optim.Adadelta(emb.parameters(), lr=1.0)
""",
    "manual_warmup_overrides": """
import torch
def train(model, steps, peak=1.0):
    opt = torch.optim.Adam(model.parameters(), lr=peak)
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = peak * 1e-3 * min(1.0, step / 100)
""",
}

PREVIEW = {
    "adam_at_a_tenth": """
import torch
from torch import nn
mlp = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
optimizer = torch.optim.Adam(mlp.parameters(), lr=0.1)
""",
    "sgd_linear_probe_rate": """
import torch
from torch import nn
classifier = nn.Linear(2048, 1000)
optimizer = torch.optim.SGD(classifier.parameters(), lr=30.0, momentum=0.9)
""",
}

SEEN = {
    "adam_at_sgd_rate": "https://github.com/OpenNMT/OpenNMT-py/issues/253 (-optim adam -learning_rate 1.0: perplexity 2.7e43 from the first batches) and avalanche's examples (nlp.py, hf_datawrapper.py: torch.optim.Adam(model.parameters(), lr=2))",
    "sgd_rate_of_a_finetuning_recipe": "the corpus case (SGD at 1e-6 on a model trained from scratch) and the PyTorch Forums thread 'Loss of single batch optimization' (a loss that barely moves on one repeated batch)",
    "argparse_default": "https://github.com/guillaumegenthial/sequence_tagging/issues/47 (lr 0.01 or 0.1 instead of 0.001: the loss falls, then rises to nan)",
    "sgd_linear_probe_rate": "facebookresearch/moco main_lincls.py (SGD lr=30 for the linear classifier on frozen features, on purpose)",
    "adam_at_a_tenth": "avalanche examples online_replay.py / online_continuous_linear_decay.py (Adam lr=0.1 on an MLP) against pyg's examples/sgc.py (Adam lr=0.2 on purpose, SGC's logistic regression)",
    "tutorial_summed_squares": "the PyTorch tutorial 'Learning PyTorch with Examples' two-layer net (summed squared error, learning_rate = 1e-6), copied in NVIDIA/tacotron2 loss_scaler.py",
    "summed_loss_fcn": "wkentaro/pytorch-fcn (SGD lr=1e-10 with a loss summed over pixels, as FCN's Caffe recipe)",
}

NEAR_MISS["adam_fitting_an_image_through_a_model"] = """
import torch
import torchvision
model = torchvision.models.resnet18(weights=None).eval()
image = torch.zeros(1, 3, 224, 224, requires_grad=True)
optimizer = torch.optim.Adam([image], lr=0.5)
for step in range(200):
    optimizer.zero_grad()
    loss = -model(image.sigmoid())[0, 42] + 0.01 * image.pow(2).sum()
    loss.backward()
    optimizer.step()
"""
NEAR_MISS["factory_fitting_an_input_parameter"] = """
import torch
from torch import nn, optim
class _InputWrapper(nn.Module):
    def __init__(self, base_model, size):
        super().__init__()
        self.base_model = base_model
        self.input_image = nn.Parameter(torch.zeros(size), requires_grad=True)
    def forward(self, _):
        return self.base_model(self.input_image.sigmoid().unsqueeze(0))
class ClassVisualiser:
    def __init__(self, size, optimizer_factory=lambda params: optim.Adam(params, lr=0.5), steps=256):
        self.size, self.optimizer_factory, self.steps = size, optimizer_factory, steps
    def run(self, base_model, target):
        model = _InputWrapper(base_model, self.size)
        optimizer = self.optimizer_factory([model.input_image])
        for _ in range(self.steps):
            optimizer.zero_grad()
            (-model(None)[0, target]).backward()
            optimizer.step()
        return model.input_image.sigmoid()
"""
PITFALL["adam_at_half_on_weights_written_by_hand"] = """
import torch
w1 = torch.randn(784, 128, requires_grad=True)
w2 = torch.randn(128, 10, requires_grad=True)
optimizer = torch.optim.Adam([w1, w2], lr=0.5)
for x, y in loader:
    optimizer.zero_grad()
    logits = (x @ w1).relu().mm(w2)
    print(w1.norm())
    torch.nn.functional.cross_entropy(logits, y).backward()
    optimizer.step()
"""
SEEN["adam_fitting_an_image_through_a_model"] = (
    "feature visualisation and adversarial inputs (lucent, the PyTorch tutorial 'Adversarial Example Generation'): "
    "Adam over an input image at rates of 0.05..1"
)
SEEN["factory_fitting_an_input_parameter"] = (
    "torchbearer 0.5.5 torchbearer/callbacks/imaging/inside_cnns.py ClassAppearanceModel (lambda params: "
    "optim.Adam(params, lr=0.5) over _CAMWrapper.input_image; round 19's tuning half, read wrong)"
)
SEEN["adam_at_half_on_weights_written_by_hand"] = "the same rate on a network's weights written as tensors (x @ w1): the weights move by 0.5 per step"
