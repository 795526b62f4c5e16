"""PTF244 (inplace-on-leaf-requires-grad): an in-place write into a leaf tensor that requires grad, with gradients on."""

PITFALL = {
    "sgd_step_by_hand": """
import torch
def fit(x, y, lr=0.01, steps=100):
    w = torch.randn(3, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    for _ in range(steps):
        loss = ((x @ w + b - y) ** 2).mean()
        loss.backward()
        w -= lr * w.grad
        b -= lr * b.grad
        w.grad.zero_()
        b.grad.zero_()
    return w, b
""",
    "add_underscore_on_parameters": """
import torch
from torch import nn
model = nn.Linear(10, 1)
def sgd(lr):
    for p in model.parameters():
        p.add_(p.grad, alpha=-lr)
sgd(0.1)
""",
    "flag_set_then_sub": """
import torch
def attack(model, image, label, eps=0.03, steps=10):
    delta = torch.zeros_like(image)
    delta.requires_grad = True
    for _ in range(steps):
        loss = torch.nn.functional.cross_entropy(model(image + delta), label)
        loss.backward()
        delta += eps * delta.grad.sign()
        delta.grad.zero_()
    return delta
""",
    "parameter_indexed_write": """
import torch
from torch import nn
class Fuse(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(2))
        self.weight[0] = 0.5
""",
    "zero_a_leaf": """
import torch
def run():
    h = torch.randn(4, 8, requires_grad=True)
    h.zero_()
    return h
""",
    "layer_weight_copy": """
import torch
from torch import nn
layer = nn.Linear(4, 4)
layer.weight.copy_(torch.eye(4))
""",
}

NEAR_MISS = {
    "step_under_no_grad": """
import torch
def fit(x, y, lr=0.01, steps=100):
    w = torch.randn(3, requires_grad=True)
    for _ in range(steps):
        loss = ((x @ w - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
        w.grad.zero_()
    return w
""",
    "through_data": """
import torch
from torch import nn
model = nn.Linear(10, 1)
def sgd(lr):
    for p in model.parameters():
        p.data.add_(p.grad.data, alpha=-lr)
""",
    "decorated_no_grad": """
import torch
from torch import nn
model = nn.Linear(10, 1)
@torch.no_grad()
def sgd(lr):
    for p in model.parameters():
        p -= lr * p.grad
""",
    "non_leaf_update": """
import torch
def run(x):
    w = torch.randn(3, requires_grad=True)
    h = w * 2
    h += x
    return h.sum()
""",
    "no_requires_grad": """
import torch
def run():
    buf = torch.zeros(3)
    buf += 1
    buf.add_(2)
    return buf
""",
    "frozen_parameters": """
import torch
from torch import nn
ema = nn.Linear(4, 4)
model = nn.Linear(4, 4)
for p in ema.parameters():
    p.requires_grad_(False)
for e, p in zip(ema.parameters(), model.parameters()):
    e.mul_(0.99).add_(p.detach(), alpha=0.01)
""",
    "grad_buffer_zeroed": """
import torch
w = torch.randn(3, requires_grad=True)
(w * 2).sum().backward()
w.grad.zero_()
w.grad -= 1
""",
}

PREVIEW = {
    "method_over_module_parameters": """
import torch
from torch import nn
class Trainer:
    def __init__(self):
        self.model = nn.Linear(4, 1)
    def update(self, lr):
        for p in self.model.parameters():
            p -= lr * p.grad
""",
}

PITFALL["weights_clipped_by_a_callback"] = """
import torch
class Clip:
    def __init__(self, c):
        self.c = c
    def after_critic_update(self, gan):
        for w in gan.disc.parameters():
            w.clamp_(-self.c, self.c)
class GAN:
    def __init__(self, disc, hooks):
        self.disc, self.hooks = disc, hooks
        self.opt = torch.optim.RMSprop(disc.parameters(), lr=5e-5)
    def critic_update(self, real, fake):
        loss = self.disc(fake).mean() - self.disc(real).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        for hook in self.hooks:
            hook.after_critic_update(self)
"""
NEAR_MISS["callback_called_under_no_grad"] = """
import torch
class Clip:
    def __init__(self, c):
        self.c = c
    def after_critic_update(self, gan):
        for w in gan.disc.parameters():
            w.clamp_(-self.c, self.c)
class GAN:
    def __init__(self, disc, hooks):
        self.disc, self.hooks = disc, hooks
    def critic_update(self):
        with torch.no_grad():
            for hook in self.hooks:
                hook.after_critic_update(self)
"""
NEAR_MISS["hook_no_code_here_calls"] = """
class Clip:
    def __init__(self, c):
        self.c = c
    def on_train_batch_end(self, trainer, module):
        for w in module.parameters():
            w.clamp_(-self.c, self.c)
"""

SEEN = {
    "weights_clipped_by_a_callback": "benchmarks/fresh/lint14 n05_pump_sensor_wgan.py (tuning half, missed at its first run: a WGAN weight-clipping callback clamping trainer.critic.parameters() in place)",
    "sgd_step_by_hand": "https://github.com/BaiTheBest/SparseLLM/issues/13 (s_batch -= s_learning_rate * s_batch.grad raises the leaf in-place error)",
    "add_underscore_on_parameters": "https://github.com/pytorch/examples/pull/779 (word_language_model: p.add_(-lr, p.grad) raises; fixed with p.data.add_)",
    "parameter_indexed_write": "https://github.com/PingoLH/FCHarDNet/issues/61 (cconv.weight[:,:,:,:] = W[...] raises on a view of a leaf)",
    "layer_weight_copy": "https://github.com/Hunter-DDM/knowledge-neurons/issues/14 (model...dense.weight[:, pos] -= ...: a leaf parameter written in place)",
    "step_under_no_grad": "https://github.com/source-separation/tutorial/issues/18 (the fix: the update inside torch.no_grad())",
    "through_data": "https://github.com/pytorch/examples/pull/779 (the fix: p.data.add_)",
}
