"""PTF101 (zero-grad-set-to-none): writing into ``.grad`` after a ``zero_grad()`` that, since torch
2.0, leaves it None."""
PITFALL = {
    "augassign_after_optimizer_zero_grad": '''
import torch
def step(model, opt, noise):
    opt.zero_grad()
    for p in model.parameters():
        p.grad += noise * torch.randn_like(p)
''',
    "data_add_in_accumulation_loop": '''
import torch
def accumulate(model, optimizer, grads):
    optimizer.zero_grad()
    for p, g in zip(model.parameters(), grads):
        p.grad.data.add_(g)
    optimizer.step()
''',
    "module_zero_grad_then_copy": '''
import torch.nn as nn
class Worker:
    def load_grads(self, net: nn.Module, flat):
        net.zero_grad()
        for p, g in zip(net.parameters(), flat):
            p.grad.copy_(g)
''',
    "self_optimizer_in_method": '''
class Trainer:
    def apply(self, shared):
        self.optimizer.zero_grad()
        for p, s in zip(self.model.parameters(), shared):
            p.grad.mul_(0).add_(s)
        self.optimizer.step()
''',
    "explicit_set_to_none_true": '''
def federated_update(model, opt, avg):
    opt.zero_grad(set_to_none=True)
    for name, p in model.named_parameters():
        p.grad += avg[name]
''',
}
NEAR_MISS = {
    "set_to_none_false": '''
def step(model, opt, noise):
    opt.zero_grad(set_to_none=False)
    for p in model.parameters():
        p.grad += noise
''',
    "none_checked_before_writing": '''
def step(model, opt, noise):
    opt.zero_grad()
    for p in model.parameters():
        if p.grad is not None:
            p.grad.add_(noise)
''',
    "backward_fills_grad": '''
def step(model, opt, loss):
    opt.zero_grad()
    loss.backward()
    opt.step()
''',
    "assigns_a_fresh_grad": '''
import torch
def step(model, opt):
    opt.zero_grad()
    for p in model.parameters():
        p.grad = torch.zeros_like(p)
''',
}
SEEN = {
    "augassign_after_optimizer_zero_grad": "https://github.com/pytorch/pytorch/issues/92656 (set_to_none default in 2.0 breaks p.grad +=)",
    "data_add_in_accumulation_loop": "code search 'optimizer.zero_grad() p.grad.add_ manual gradient accumulation': wlyfish/Pytorch-Tutorial 基础实验/梯度清零.py (w.grad.zero_ after zero_grad)",
    "module_zero_grad_then_copy": "A3C-style shared gradients (ikostrikov/pytorch-a3c train.py: ensure_shared_grads writes shared_param._grad)",
    "self_optimizer_in_method": "code search: GradAccumOptimizer wrappers (zero_grad then manual grad writes)",
    "explicit_set_to_none_true": "darttusin/Knowledge-base-RAG data/dataset/optim/torch.optim.Optimizer.zero_grad.md (set_to_none=True semantics)",
}
