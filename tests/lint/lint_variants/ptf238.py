"""PTF238 (frozen-params-keep-moving): parameters frozen mid-training while gradients are zeroed in place."""

PITFALL = {
    "second_stage_after_a_warmup": """
import torch
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(4, 8), nn.Tanh())
        self.head = nn.Linear(8, 1)
    def forward(self, x):
        return self.head(self.backbone(x))
def step(model, opt, x, y):
    opt.zero_grad(set_to_none=False)
    F.mse_loss(model(x), y).backward()
    opt.step()
def two_stage(x, y, warmup=100, steps=100):
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for _ in range(warmup):
        step(model, opt, x, y)
    model.backbone.requires_grad_(False)
    for _ in range(steps):
        step(model, opt, x, y)
""",
    "freezing_schedule_in_the_epoch_loop": """
import timm
import torch
import torch.nn.functional as F
def main(loader, epochs=10, freeze_at=(3, 6)):
    model = timm.create_model("vit_small_patch16_224", num_classes=10)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.05)
    for epoch in range(epochs):
        n = sum(epoch >= e for e in freeze_at) * 4
        for i, block in enumerate(model.blocks):
            if i < n:
                block.requires_grad_(False)
        for x, y in loader:
            model.zero_grad(set_to_none=False)
            F.cross_entropy(model(x), y).backward()
            opt.step()
""",
    "named_parameters_frozen_after_n_epochs": """
import torch
from torch import nn
def train(model: nn.Module, loader, criterion, epochs=20, freeze_after=10):
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
    for epoch in range(epochs):
        if epoch == freeze_after:
            for name, param in model.named_parameters():
                if "fc1" in name or "fc2" in name:
                    param.requires_grad = False
        for src, tgt in loader:
            for p in model.parameters():
                if p.grad is not None:
                    p.grad.zero_()
            criterion(model(src), tgt).backward()
            optimizer.step()
""",
    "previous_tasks_prompt_frozen": """
import torch
from torch import nn
class PromptLearner(nn.Module):
    def __init__(self, tasks, length=10, dim=768):
        super().__init__()
        self.prompts = nn.ParameterList(nn.Parameter(torch.zeros(length, dim)) for _ in range(tasks))
        self.classifier = nn.Linear(dim, 100)
    def forward(self, feats, task):
        return self.classifier(feats + self.prompts[task].mean(0))
def continual(learner, task_loaders):
    opt = torch.optim.SGD(learner.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    for task, loader in enumerate(task_loaders):
        if task > 0:
            learner.prompts[task - 1].requires_grad = False
        for feats, y in loader:
            opt.zero_grad(set_to_none=False)
            nn.functional.cross_entropy(learner(feats, task), y).backward()
            opt.step()
learner = PromptLearner(5)
""",
    "positional_momentum_layer_loop": """
import torch.optim as optim
from torch import nn
net = nn.Sequential(nn.Linear(10, 10), nn.ReLU(), nn.Linear(10, 10), nn.ReLU(), nn.Linear(10, 2))
def run(loader, epochs=8):
    optimizer = optim.SGD(net.parameters(), 0.01, 0.9)
    for epoch in range(epochs):
        if epoch == 4:
            for layer in net[:2]:
                for p in layer.parameters():
                    p.requires_grad = False
        for x, y in loader:
            optimizer.zero_grad(set_to_none=False)
            nn.functional.cross_entropy(net(x), y).backward()
            optimizer.step()
""",
}

NEAR_MISS = {
    "gradients_dropped_at_the_freeze": """
import torch
import torch.nn.functional as F
from torch import nn
def two_stage(model: nn.Module, x, y, warmup=100, steps=100):
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for _ in range(warmup):
        opt.zero_grad(set_to_none=False)
        F.mse_loss(model(x), y).backward()
        opt.step()
    model.backbone.requires_grad_(False)
    for p in model.backbone.parameters():
        p.grad = None
    for _ in range(steps):
        opt.zero_grad(set_to_none=False)
        F.mse_loss(model(x), y).backward()
        opt.step()
""",
    "frozen_before_the_optimizer": """
import torch
from torch import nn
net = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))
for p in net[0].parameters():
    p.requires_grad = False
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
def train(loader):
    for x, y in loader:
        opt.zero_grad(set_to_none=False)
        nn.functional.mse_loss(net(x), y).backward()
        opt.step()
""",
    "default_zero_grad_sets_none": """
import torch
from torch import nn
def train(model: nn.Module, loader, epochs=10):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for epoch in range(epochs):
        if epoch == 5:
            model.encoder.requires_grad_(False)
        for x, y in loader:
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
""",
    "plain_sgd_moves_nothing_on_a_zero_gradient": """
import torch
from torch import nn
def train(model: nn.Module, loader, epochs=10):
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(epochs):
        if epoch == 5:
            model.encoder.requires_grad_(False)
        for x, y in loader:
            opt.zero_grad(set_to_none=False)
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
""",
    "a_new_optimizer_for_the_second_stage": """
import torch
from torch import nn
def train(model: nn.Module, loader, stages=(0, 1)):
    opt = torch.optim.Adam(model.parameters())
    for stage in stages:
        if stage == 1:
            model.backbone.requires_grad_(False)
            opt = torch.optim.Adam((p for p in model.parameters() if p.requires_grad), lr=1e-4)
        for x, y in loader:
            opt.zero_grad(set_to_none=False)
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
""",
    "unfrozen_mid_training": """
import torch
from torch import nn
def train(model: nn.Module, loader, epochs=10):
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    for epoch in range(epochs):
        if epoch == 3:
            model.backbone.requires_grad_(True)
        for x, y in loader:
            opt.zero_grad(set_to_none=False)
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
""",
}

SEEN = {
    "second_stage_after_a_warmup": "PyTorch Forums 'Why there is still a small change in frozen layer parameters?' "
    "(frozen after training with requires_grad = False, weights still moved; the fix sets param.grad = None)",
    "freezing_schedule_in_the_epoch_loop": "benchmarks/fresh/lint3/u07_food_vit_finetune.py (a tuning script: "
    "FreezeOut-style block freezing with AdamW and model.zero_grad(set_to_none=False))",
    "named_parameters_frozen_after_n_epochs": "facebookresearch/fairseq#4702 'Why parameters are still updated even "
    "if I set their requires_grads equal to False?' (a freezing function over named_parameters during training)",
    "previous_tasks_prompt_frozen": "iamwangyabin/S-Prompts#2 'Fix typo & bugs about weight decay' (frozen prompts "
    "of earlier tasks still decayed by the optimizer built over every parameter)",
    "plain_sgd_moves_nothing_on_a_zero_gradient": "facebookresearch/moco#14 (SGD applies momentum and weight decay "
    "only where there is a gradient tensor: without momentum or decay a zero gradient moves nothing)",
}
