"""PTF243 (non-leaf-grad-is-none): .grad read from a tensor computed from one that requires grad."""

PITFALL = {
    "scaled_init": """
import torch
w = torch.randn(784, 10, requires_grad=True) * 0.01
b = torch.zeros(10, requires_grad=True)
def step(x, y, lr=0.1):
    loss = torch.nn.functional.cross_entropy(x @ w + b, y)
    loss.backward()
    with torch.no_grad():
        w.sub_(lr * w.grad)
        b.sub_(lr * b.grad)
""",
    "moved_with_cuda": """
import torch
x = torch.randn(2, 2, requires_grad=True).cuda()
y = (x ** 2).sum()
y.backward()
print(x.grad)
""",
    "flag_then_moved_to_device": """
import torch
def saliency(model, image, device):
    inputs = torch.tensor(image, dtype=torch.float32)
    inputs.requires_grad = True
    inputs = inputs.to(device)
    score = model(inputs).max()
    score.backward()
    return inputs.grad.abs()
""",
    "intermediate_result": """
import torch
def check():
    a = torch.ones(3, requires_grad=True)
    h = torch.sin(a) * 2
    h.sum().backward()
    return h.grad
""",
    "parameter_moved": """
import torch
from torch import nn
def fit(x, y, steps=10):
    scale = nn.Parameter(torch.ones(1)).cuda()
    for _ in range(steps):
        loss = ((scale * x - y) ** 2).mean()
        loss.backward()
        scale.data -= 0.1 * scale.grad
""",
    "cast_to_double": """
import torch
def grads(values):
    t = torch.tensor(values, requires_grad=True).double()
    (t * t).sum().backward()
    return t.grad
""",
}

NEAR_MISS = {
    "leaf_made_on_the_device": """
import torch
def check(device):
    x = torch.randn(2, 2, device=device, requires_grad=True)
    (x ** 2).sum().backward()
    return x.grad
""",
    "flag_set_after_the_op": """
import torch
w = (torch.randn(784, 10) * 0.01).requires_grad_()
def step(x, y):
    loss = torch.nn.functional.cross_entropy(x @ w, y)
    loss.backward()
    return w.grad
""",
    "retain_grad_called": """
import torch
def check():
    a = torch.ones(3, requires_grad=True)
    h = a * 2
    h.retain_grad()
    h.sum().backward()
    return h.grad, a.grad
""",
    "moved_then_flagged": """
import torch
def saliency(model, image, device):
    inputs = torch.tensor(image, dtype=torch.float32).to(device)
    inputs.requires_grad = True
    model(inputs).max().backward()
    return inputs.grad
""",
    "parameter_leaf": """
import torch
from torch import nn
def fit(x, y):
    scale = nn.Parameter(torch.ones(1))
    loss = ((scale * x - y) ** 2).mean()
    loss.backward()
    return scale.grad
""",
    "detached_copy": """
import torch
def check():
    a = torch.ones(3, requires_grad=True)
    b = (a * 2).detach().requires_grad_()
    (b ** 2).sum().backward()
    return b.grad
""",
}

SEEN = {
    "moved_with_cuda": "https://github.com/pytorch/pytorch/issues/8287 (x = torch.randn(2, 2, requires_grad=True).cuda(0); x.grad is None) and https://github.com/pytorch/pytorch/issues/2730",
    "flag_then_moved_to_device": "https://github.com/pytorch/pytorch/issues/12627 (inputs.requires_grad = True; inputs = inputs.cuda(); inputs.grad None) and https://github.com/Maghoumi/pytorch-softdtw-cuda/issues/25 (x = x.to(device) after requires_grad=True)",
    "cast_to_double": "https://github.com/pytorch/pytorch/issues/10065 (w1 = w.type(torch.float): w1.grad is None)",
    "moved_then_flagged": "https://github.com/pytorch/pytorch/issues/13113 (moving first, then requires_grad = True: the gradient is there)",
    "scaled_init": "the case's own spelling (torch.randn(..., requires_grad=True) * 0.01), as in from-scratch MLP notebooks",
}
