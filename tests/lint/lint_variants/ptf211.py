"""PTF211 (log-of-softmax-underflow): the log taken of softmax or sigmoid probabilities."""

PITFALL = {
    "functional_nested": """
import torch
import torch.nn.functional as F
def smoothed_nll(logits, target, eps=0.1):
    log_probs = torch.log(F.softmax(logits, dim=-1))
    return -(target * log_probs).sum(-1).mean()
""",
    "bound_name": """
import torch
def loss_of(label_logits, labels):
    label_probs = torch.nn.functional.softmax(label_logits, dim=-1)
    log_label_probs = -torch.log(label_probs)
    return (log_label_probs * labels.float()).sum()
""",
    "softmax_module": """
import torch
from torch import nn
sm = nn.Softmax(dim=1)
crit = nn.NLLLoss()
model = nn.Linear(3, 3)
def step(data, target):
    return crit(torch.log(sm(model(data))), target)
""",
    "method_chain": """
import torch
def entropy(logits):
    p = logits.softmax(-1)
    return -(p * logits.softmax(-1).log()).sum(-1)
""",
    "sigmoid_by_hand": """
import torch
def bce(z, y):
    return -(y * torch.log(torch.sigmoid(z)) + (1 - y) * torch.log(1 - torch.sigmoid(z))).mean()
""",
    "model_with_a_softmax_head": """
import torch
import torch.nn.functional as F
from torch import nn
class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(784, 10)
    def forward(self, x):
        return F.softmax(self.fc(x), dim=-1)
net = Classifier()
def get_loss(x, y):
    y_pred = net(x)
    return F.nll_loss(torch.log(y_pred), y)
""",
    "nll_of_softmax_log": """
import torch.nn.functional as F
def step(pred, target):
    return F.nll_loss(F.softmax(pred).log(), target)
""",
}

NEAR_MISS = {
    "glow_scale_shifted_toward_one": """
import torch
def couple(z2, h):
    shift, raw = h[:, 0::2], h[:, 1::2]
    scale = torch.sigmoid(raw + 2.0)
    return (z2 + shift) * scale, torch.log(scale).sum(dim=1)
""",
    "log_softmax": """
import torch.nn.functional as F
def nll(logits, y):
    return F.nll_loss(F.log_softmax(logits, dim=-1), y)
""",
    "epsilon_added": """
import torch
def loss_of(logits, y):
    probs = torch.softmax(logits, dim=1)
    return -(y * torch.log(probs + 1e-8)).sum(1).mean()
""",
    "clamped_first": """
import torch
def entropy(logits):
    p = logits.softmax(-1)
    return -(p * p.clamp(min=1e-12).log()).sum(-1)
""",
    "log_of_a_variance": """
import torch
def gaussian_nll(mu, var, x):
    return 0.5 * (torch.log(var) + (x - mu) ** 2 / var).mean()
""",
}

SEEN = {
    "glow_scale_shifted_toward_one": "openai/glow model.py and normflows flows/affine/coupling.py (scale = sigmoid(h + 2.), its log the log-determinant; round 2's read held-out half judged four such findings harmless)",
    "softmax_module": "https://github.com/pytorch/pytorch/issues/1620 (crit(torch.log(sm(model(data))), target) gives nan gradients where nn.LogSoftmax does not)",
    "bound_name": "https://github.com/allenai/allennlp/issues/2797 (label_probs = softmax(...); -torch.log(label_probs): a probability of exactly 0 and a nan loss)",
    "model_with_a_softmax_head": "https://github.com/skorch-dev/skorch/issues/481 (torch.log(y_pred) of a softmax output yields -inf; PyTorch recommends log_softmax)",
    "nll_of_softmax_log": "find_string 'F.nll_loss(F.softmax(': classif_loss += F.nll_loss(F.softmax(pred_exits[i]).log(), target) (once PTF203's near miss: the log is taken, of probabilities that underflow)",
    "functional_nested": "not found by search; the spelling of this corpus's case, with F.",
}
_ENCRYPTED = """
import torch
class CrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, pred, target):
        softmax = pred.softmax(1)
        ctx.save_for_backward(softmax, target)
        return softmax.log({kwargs}).mul_(target).neg_().sum().div_(target.size(0))
"""
NEAR_MISS["log_of_another_librarys_tensor"] = _ENCRYPTED.format(kwargs="input_in_01=True")
PITFALL["log_of_softmax_in_an_autograd_function"] = _ENCRYPTED.format(kwargs="")
SEEN["log_of_another_librarys_tensor"] = (
    "crypten 0.4.1 crypten/gradients.py:2029 (softmax.log(input_in_01=True), CrypTen's encrypted tensor's "
    "approximate log: a keyword torch's Tensor.log does not take; round 19's held-out half, read wrong)"
)
SEEN["log_of_softmax_in_an_autograd_function"] = "the same forward with torch's Tensor.log"
