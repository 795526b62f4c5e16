"""PTF271 (hook-returns-wrong-tensor): a gradient hook returns a tensor made without the gradient's
dtype and device, or of another size."""

PITFALL = {
    "zero_every_bias_grad": """
import torch
from torch import nn
model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2)).cuda()
for name, p in model.named_parameters():
    if name.endswith("bias"):
        p.register_hook(lambda grad: torch.zeros(grad.shape))
""",
    "named_hook_on_an_activation": """
import torch
from torch import nn
def block_gradient(grad):
    return torch.zeros(grad.size())
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 4)
        self.dec = nn.Linear(4, 1)
    def forward(self, x):
        h = self.enc(x)
        if self.training:
            h.register_hook(block_gradient)
        return self.dec(h)
""",
    "module_hook_returns_cpu_zeros": """
import torch
from torch import nn
def instrument(model):
    def zero_inputs(module, grad_input, grad_output):
        return tuple(torch.zeros(g.size()) for g in grad_input)
    for layer in model.modules():
        if isinstance(layer, nn.Conv2d):
            layer.register_full_backward_hook(zero_inputs)
""",
    "dtype_kept_device_lost": """
import torch
def freeze_rows(weight, rows):
    def hook(grad):
        out = torch.zeros(grad.shape, dtype=grad.dtype)
        return out
    return weight.register_hook(hook)
""",
    "method_hook_in_a_module": """
import torch
from torch import nn
class Frozen(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 16)
        self.proj.weight.register_hook(self._no_grad)
    def _no_grad(self, grad):
        return torch.zeros(grad.shape[0], grad.shape[1])
    def forward(self, x):
        return self.proj(x)
""",
    "conditional_zeroing": """
import torch
def attach(param, frozen: bool):
    param.register_hook(lambda g: torch.zeros(g.shape) if frozen else g)
""",
    "gradient_reduced_to_a_number": """
import torch
x = torch.randn(8, 3, requires_grad=True)
x.register_hook(lambda g: g.mean())
(x ** 2).sum().backward()
""",
}

NEAR_MISS = {
    "zeros_like_the_gradient": """
import torch
from torch import nn
layer = nn.Linear(3, 2).cuda()
layer.bias.register_hook(lambda grad: torch.zeros_like(grad))
""",
    "factory_given_dtype_and_device": """
import torch
def hook(grad):
    return torch.zeros(grad.shape, dtype=grad.dtype, device=grad.device)
w = torch.randn(4, 4, requires_grad=True)
w.register_hook(hook)
""",
    "arithmetic_on_the_gradient": """
import torch
w = torch.randn(4, 4, requires_grad=True)
w.register_hook(lambda g: g * 0)
w.register_hook(lambda g: g.new_zeros(g.shape))
w.register_hook(lambda g: g.clamp(-1.0, 1.0))
""",
    "moved_after_building": """
import torch
w = torch.randn(4, 4, requires_grad=True)
w.register_hook(lambda g: torch.zeros(g.shape).to(g))
""",
    "logs_and_returns_nothing": """
import torch
norms = []
def record(grad):
    norms.append(torch.tensor(grad.norm().item()))
w = torch.randn(4, 4, requires_grad=True)
w.register_hook(record)
""",
    "runner_hook_object": """
class CheckpointHook:
    def __init__(self, interval):
        self.interval = interval
class Runner:
    def __init__(self):
        self.hooks = []
    def register_hook(self, hook, priority=50):
        self.hooks.append((priority, hook))
runner = Runner()
runner.register_hook(CheckpointHook(interval=1))
""",
    "module_hook_scales_its_input_grads": """
import torch
from torch import nn
layer = nn.Linear(8, 8)
layer.register_full_backward_hook(lambda m, gin, gout: tuple(g * 0.5 if g is not None else None for g in gin))
""",
}

SEEN = {
    "zero_every_bias_grad": "the corpus' S1 notes, section 'Hook' (`lambda grad: torch.zeros(grad.shape)` on every fc bias)",
    "module_hook_returns_cpu_zeros": "pytorch/pytorch#5022 (hookFunc returns tuple([torch.zeros(g.size()) for g in ...]) from register_backward_hook)",
    "arithmetic_on_the_gradient": "dotnet/TorchSharp#1483 (a MuZero port: states.register_hook(lambda grad: grad * 0.5))",
    "runner_hook_object": "mmcv/mmengine Runner.register_hook(hook, priority): a hook object, not a gradient hook",
}
