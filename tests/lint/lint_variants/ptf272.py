"""PTF272 (inference-mode-tensor-in-autograd): a tensor made under torch.inference_mode() used later
where autograd records (a trainable layer, a loss's target, an in-place update)."""

PITFALL = {
    "linear_probe_on_cached_features": """
import torch
from torch import nn
backbone = nn.Sequential(nn.Conv2d(3, 16, 3), nn.AdaptiveAvgPool2d(1), nn.Flatten()).eval()
probe = nn.Linear(16, 10)
opt = torch.optim.SGD(probe.parameters(), lr=0.1)
def fit(loader, epochs=5):
    for images, labels in loader:
        with torch.inference_mode():
            feats = backbone(images)
        logits = probe(feats)
        loss = nn.functional.cross_entropy(logits, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
    "teacher_targets_for_distillation": """
import torch
import torch.nn.functional as F
from torch import nn
teacher = nn.Linear(32, 10).eval()
student = nn.Linear(32, 10)
opt = torch.optim.Adam(student.parameters())
def step(x):
    with torch.inference_mode():
        soft = F.softmax(teacher(x) / 4.0, dim=-1)
    loss = F.kl_div(F.log_softmax(student(x) / 4.0, dim=-1), soft, reduction="batchmean")
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
    "decorated_pseudo_labels_as_targets": """
import torch
import torch.nn.functional as F
from torch import nn
model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 5))
@torch.inference_mode()
def pseudo_label(x):
    return model(x).argmax(-1)
def self_train_step(x_unlabeled, opt):
    targets = pseudo_label(x_unlabeled)
    loss = F.cross_entropy(model(x_unlabeled), targets)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
    "in_place_update_outside": """
import torch
from torch import nn
encoder = nn.Linear(8, 4)
def running_center(batches, momentum=0.9):
    with torch.inference_mode():
        center = encoder(batches[0]).mean(0)
    for b in batches[1:]:
        center.mul_(momentum).add_(encoder(b).mean(0).detach(), alpha=1 - momentum)
    return center
""",
    "input_made_trainable_after": """
import torch
from torch import nn
model = nn.Sequential(nn.Linear(10, 10), nn.Tanh(), nn.Linear(10, 2))
def attack(x, eps=0.1):
    with torch.inference_mode():
        x_adv = x + eps * torch.randn_like(x)
    x_adv.requires_grad_()
    loss = model(x_adv).sum()
    loss.backward()
    return x_adv.grad
""",
    "cache_passed_to_the_training_function": """
import torch
from torch import nn
def train_head(head, features, targets):
    opt = torch.optim.SGD(head.parameters(), lr=0.01)
    loss = nn.functional.mse_loss(head(features), targets)
    loss.backward()
    opt.step()
def main(encoder, x, y):
    head = nn.Linear(3, 1)
    with torch.inference_mode():
        cached = encoder(x)
    train_head(head, cached, y)
""",
    "accumulated_in_place": """
import torch
def total_logits(model, batches):
    with torch.inference_mode():
        acc = torch.zeros(10)
    for b in batches:
        acc += model(b).sum(0).detach()
    return acc
""",
}

NEAR_MISS = {
    "no_grad_cache": """
import torch
from torch import nn
backbone = nn.Linear(16, 16).eval()
probe = nn.Linear(16, 10)
def fit(loader):
    for images, labels in loader:
        with torch.no_grad():
            feats = backbone(images)
        loss = nn.functional.cross_entropy(probe(feats), labels)
        loss.backward()
""",
    "cloned_outside_inference_mode": """
import torch
from torch import nn
backbone = nn.Linear(16, 16).eval()
probe = nn.Linear(16, 10)
def fit(images, labels):
    with torch.inference_mode():
        feats = backbone(images)
    feats = feats.clone()
    loss = nn.functional.cross_entropy(probe(feats), labels)
    loss.backward()
""",
    "evaluation_only": """
import torch
from torch import nn
def evaluate(model, loader, criterion):
    total = 0.0
    for x, y in loader:
        with torch.inference_mode():
            out = model(x)
        total += criterion(out, y).item()
    return total
""",
    "used_inside_the_block": """
import torch
from torch import nn
model = nn.Linear(4, 2)
criterion = nn.CrossEntropyLoss()
def train(x, y, opt):
    loss = criterion(model(x), y)
    loss.backward()
    opt.step()
    with torch.inference_mode():
        preds = model(x)
        val = criterion(preds, y)
    return val.item()
""",
    "mode_off_while_training": """
import torch
from torch import nn
model = nn.Linear(4, 2)
def run(x, y, training):
    with torch.inference_mode(mode=not training):
        out = model(x)
    loss = nn.functional.mse_loss(model(out), y)
    if training:
        loss.backward()
""",
    "scalar_from_inference_block": """
import torch
from torch import nn
model = nn.Linear(4, 1)
def step(x, y, opt, ema):
    with torch.inference_mode():
        scale = model(x).abs().mean().item()
    loss = nn.functional.mse_loss(model(x) / (scale + 1.0), y)
    loss.backward()
    opt.step()
""",
    "head_also_frozen": """
import torch
from torch import nn
encoder, head = nn.Linear(4, 4), nn.Linear(4, 1)
def score(x, extra):
    with torch.inference_mode():
        z = encoder(x)
    with torch.no_grad():
        s = head(z)
    extra.sum().backward()
    return s
""",
}

PREVIEW = {
    "decorated_rollout_reused_in_training": """
import torch
from torch import nn
class Trainer:
    def __init__(self, policy):
        self.policy = policy
        self.opt = torch.optim.Adam(policy.parameters())
    @torch.inference_mode()
    def generate(self, prompts):
        return self.policy(prompts).argmax(-1)
    def train_step(self, prompts, rewards):
        completions = self.generate(prompts)
        logits = self.policy(completions)
        loss = -(logits.log_softmax(-1).amax(-1) * rewards).mean()
        loss.backward()
        self.opt.step()
""",
}

SEEN = {
    "linear_probe_on_cached_features": "facebookresearch/dinov2#472 (features from a model set up under inference mode, then trained: 'Inference tensors cannot be saved for backward')",
    "decorated_rollout_reused_in_training": "huggingface/trl#2983 and unslothai/unsloth#2670 (GRPO: generations made under inference_mode fed to the policy's training forward)",
    "teacher_targets_for_distillation": "facebookresearch/deit losses.py (teacher outputs computed under no_grad for the KD loss; inference_mode there raises)",
    "no_grad_cache": "pytorch/pytorch#161164 (the error message now points to torch.no_grad for tensors that meet autograd again)",
    "in_place_update_outside": "sgl-project/sglang#33470 (inference_mode buffers updated in place after leaving the context: not supported)",
}
