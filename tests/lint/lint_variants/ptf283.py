"""PTF283 (inplace-on-saved-tensor): an in-place write to the output of an op that saves it for backward."""

PITFALL = {
    "padding_weight_zeroed_after_softmax": """
import torch
import torch.nn as nn
class AttentionPool(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.score = nn.Linear(dim, 1)
    def forward(self, h, pad):
        w = torch.softmax(self.score(h).squeeze(-1), dim=-1)
        w[pad] = 0.0
        return (w.unsqueeze(-1) * h).sum(1)
""",
    "residual_added_into_relu_output": """
import torch.nn as nn
import torch.nn.functional as F
class BasicBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
    def forward(self, x):
        out = F.relu(self.conv(x))
        out += x
        return out
""",
    "gate_masked_in_place": """
import torch.nn as nn
class Gate(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.act = nn.Sigmoid()
    def forward(self, x, mask):
        g = self.act(self.proj(x))
        g.masked_fill_(mask, 0.0)
        return x * g
""",
    "exp_normalised_in_place": """
import torch
def train_step(logits, target, optimizer):
    w = torch.exp(logits)
    w /= w.sum(dim=1, keepdim=True)
    loss = -(w.gather(1, target[:, None]) + 1e-8).log().mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
    "tanh_method_clamped": """
import torch.nn as nn
class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.mu = nn.Linear(8, 2)
    def forward(self, s):
        a = self.mu(s).tanh()
        a.clamp_(-0.99, 0.99)
        return a
""",
}

PREVIEW = {
    "helper_whose_caller_is_not_read": """
import torch
def probabilities(logits, banned):
    p = torch.softmax(logits, dim=-1)
    p[:, banned] = 0
    return p
""",
}

NEAR_MISS = {
    "cloned_before_the_write": """
import torch
import torch.nn as nn
class AttentionPool(nn.Module):
    def forward(self, scores, pad):
        w = torch.softmax(scores, dim=-1).clone()
        w[pad] = 0.0
        return w
""",
    "out_of_place_mask": """
import torch.nn as nn
class Gate(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.proj = nn.Linear(d, d)
    def forward(self, x, mask):
        g = self.proj(x).sigmoid()
        g = g.masked_fill(mask, 0.0)
        return x * g
""",
    "write_into_an_op_that_saves_its_input": """
import torch.nn as nn
import torch.nn.functional as F
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
    def forward(self, x):
        out = F.gelu(self.conv(x))
        out += x
        out = self.conv(out)
        out[:, 0] = 0
        return out
""",
    "postprocessing_without_grad": """
import torch
@torch.no_grad()
def predict(model, x, pad):
    model.eval()
    p = torch.softmax(model(x), dim=-1)
    p[pad] = 0
    return p.argmax(-1)
""",
    "teacher_targets_under_no_grad": """
import torch
import torch.nn.functional as F
def distill_step(student, teacher, x, optimizer, pad_id):
    with torch.no_grad():
        target = torch.softmax(teacher(x), dim=-1)
        target[:, pad_id] = 0.0
    loss = F.kl_div(F.log_softmax(student(x), dim=-1), target, reduction="batchmean")
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
    "ema_teacher_forward_without_grad": """
import torch
import torch.nn as nn
class Teacher(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
    @torch.no_grad()
    def forward(self, x):
        p = torch.softmax(self.net(x), dim=-1)
        p.clamp_(min=1e-6)
        return p
""",
    "converted_model_with_nothing_to_train": """
import numpy as np
import torch
class LinearModel(torch.nn.Module):
    def __init__(self, coefficients, intercepts):
        super().__init__()
        self.coefficients = torch.nn.Parameter(torch.from_numpy(coefficients), requires_grad=False)
        self.intercepts = torch.nn.Parameter(torch.from_numpy(intercepts), requires_grad=False)
    def forward(self, x):
        output = torch.sigmoid(torch.addmm(self.intercepts, x, self.coefficients))
        output /= torch.sum(output, dim=1, keepdim=True)
        return output
""",
    "target_weighted_outside_the_closure_that_runs_backward": """
import torch
def invert(unembed, logits, h0, weight, steps=10):
    h = torch.nn.Parameter(h0)
    opt = torch.optim.LBFGS([h])
    p = torch.exp(logits.log_softmax(dim=-1))
    p *= weight
    def closure():
        opt.zero_grad()
        loss = -(p * unembed(h).log_softmax(-1)).sum()
        loss.backward()
        return loss
    for _ in range(steps):
        opt.step(closure)
    return h.data
""",
    "rebound_before_the_write": """
import torch
def loss_fn(logits, y):
    p = torch.sigmoid(logits)
    p = p * 0.98 + 0.01
    p[y < 0] = 0.5
    loss = -(y * p.log()).mean()
    loss.backward()
""",
}

SEEN = {
    "padding_weight_zeroed_after_softmax": "the corpus case inplace-on-saved-tensor (a padding position's softmax weight zeroed in place); https://github.com/yashbonde/dall-e-baby/issues/1 (Error detected in SoftmaxBackward)",
    "residual_added_into_relu_output": "https://github.com/iMED-Lab/ER-Net/pull/3 and https://github.com/argusswift/YOLOv4-pytorch/issues/247 (out += residual after a ReLU: output 0 of ReluBackward0 modified by an inplace operation)",
    "gate_masked_in_place": "https://github.com/pytorch/pytorch/issues/148835 (relu saves its result; mutating it in place afterwards fails in backward), here a sigmoid's result",
    "converted_model_with_nothing_to_train": "microsoft/hummingbird hummingbird/ml/operator_converters/_linear_implementations.py (inference-only converted model: frozen parameters, sigmoid output normalised in place)",
    "target_weighted_outside_the_closure_that_runs_backward": "AlignmentResearch/tuned-lens tuned_lens/nn/unembed.py (Unembed.invert: target probabilities weighted in place; backward only in the optimizer's closure)",
    "postprocessing_without_grad": "common in inference code: a softmax edited in place under no_grad, where nothing was saved",
}
