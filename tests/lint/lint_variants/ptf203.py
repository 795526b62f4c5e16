"""PTF203 (nll-loss-without-log-softmax): nll_loss / NLLLoss given softmax probabilities."""

PITFALL = {
    "functional_inline": """
import torch.nn.functional as F
def train(model, loader, opt):
    for i, x, y in loader:
        logits = model(x)
        loss = F.nll_loss(F.softmax(logits), y)
        loss.backward()
        opt.step()
""",
    "softmax_module_output": """
import torch.nn as nn
class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 10)
        self.softmax = nn.Softmax(dim=1)
    def forward(self, x):
        return self.softmax(self.fc(x))
model = Classifier()
criterion = nn.NLLLoss()
def step(x, y):
    return criterion(model(x), y)
""",
    "tensor_method_softmax": """
import torch.nn.functional as F
def loss_fn(scores, target):
    probs = scores.softmax(dim=-1)
    return F.nll_loss(probs, target)
""",
    "torch_softmax_in_return": """
import torch
import torch.nn.functional as F
class BNN:
    def _build_likelihood(self, logits):
        return F.nll_loss(torch.softmax(logits, dim=1), self.Y)
""",
    "criterion_attribute": """
import torch.nn as nn
import torch.nn.functional as F
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.aux = nn.Linear(128, 10)
        self.criterion = nn.NLLLoss()
    def loss(self, feats, labels):
        aux = F.softmax(self.aux(feats), dim=1)
        return self.criterion(aux, labels)
""",
    "inline_softmax_module": """
import torch.nn as nn
def step(logits, y):
    return nn.NLLLoss()(nn.Softmax(dim=1)(logits), y)
""",
    "reduction_none_then_mean": """
import torch.nn.functional as F
def step(logits, y, w):
    per = F.nll_loss(F.softmax(logits, dim=1), y, reduction="none")
    loss = (per * w).mean()
    per.mean().backward()
    return loss
""",
}

NEAR_MISS = {
    "log_softmax": """
import torch.nn.functional as F
def step(logits, y):
    return F.nll_loss(F.log_softmax(logits, dim=1), y)
""",
    "log_softmax_given": """
import torch.nn.functional as F
def step(pred, target):
    return F.nll_loss(F.log_softmax(pred, dim=1), target)
""",
    "cross_entropy_on_logits": """
import torch.nn as nn
def step(model, x, y):
    return nn.CrossEntropyLoss()(model(x), y)
""",
    "gather_for_focal_weight": """
import torch
import torch.nn.functional as F
def focal_frequency(input, target, c):
    focal = F.nll_loss(F.softmax(input, dim=1), target, reduction="none")
    focal += 1.0
    focal = torch.pow(focal, 2)
    return focal.repeat(c, 1)
""",
    "log_softmax_layer": """
import torch.nn as nn
model = nn.Sequential(nn.Linear(10, 3), nn.LogSoftmax(dim=1))
criterion = nn.NLLLoss()
def step(x, y):
    return criterion(model(x), y)
""",
}

PITFALL["masked_rows_of_a_softmax_head"] = """
import torch
import torch.nn as nn
class NodeClassifier(nn.Module):
    def __init__(self, d, k):
        super().__init__()
        self.head = nn.Sequential(nn.Linear(d, k), nn.Softmax(dim=1))
    def forward(self, x):
        return self.head(x)
def train(x, y, mask, epochs):
    model = NodeClassifier(x.shape[1], 2)
    criterion = nn.NLLLoss()
    opt = torch.optim.Adam(model.parameters())
    for _ in range(epochs):
        out = model(x)
        loss = criterion(out[mask], y[mask])
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
NEAR_MISS["masked_rows_of_a_log_softmax_head"] = """
import torch
import torch.nn as nn
class NodeClassifier(nn.Module):
    def __init__(self, d, k):
        super().__init__()
        self.head = nn.Sequential(nn.Linear(d, k), nn.LogSoftmax(dim=1))
    def forward(self, x):
        return self.head(x)
def train(x, y, mask, epochs):
    model = NodeClassifier(x.shape[1], 2)
    criterion = nn.NLLLoss()
    opt = torch.optim.Adam(model.parameters())
    for _ in range(epochs):
        out = model(x)
        loss = criterion(out[mask], y[mask])
        opt.zero_grad()
        loss.backward()
        opt.step()
"""

SEEN = {
    "masked_rows_of_a_softmax_head": "benchmarks/fresh/lint15 j10_transaction_graph_gcn.py (tuning half, missed at its first run: criterion(out[train_mask], y[train_mask]) on a head ending in nn.Softmax)",
    "functional_inline": "find_string 'F.nll_loss(F.softmax(': a training loop 'loss = F.nll_loss(F.softmax(logits), y)'",
    "torch_softmax_in_return": "find_string 'F.nll_loss(F.softmax(': 'return F.nll_loss(F.softmax(logits), self.Y)' in a BNN likelihood",
    "softmax_module_output": "https://github.com/AnubhavGupta3377/Text-Classification-Models-Pytorch/issues/9 (a model returning softmax into NLLLoss: the loss is always negative)",
    "criterion_attribute": "https://github.com/clvrai/ACGAN-PyTorch/pull/4 (the auxiliary classifier's Softmax changed to LogSoftmax for NLLLoss)",
    "tensor_method_softmax": "https://github.com/midas-research/man-sf-emnlp/issues/2 (F.softmax where F.log_softmax belongs before nll_loss)",
    "gather_for_focal_weight": "find_string 'F.nll_loss(F.softmax(': focal_frequency = F.nll_loss(F.softmax(input, dim=1), target, reduction='none'); focal_frequency += 1.0 (1 - p as a weight)",
}
PITFALL["raw_scores_of_a_model_class"] = """
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(40, 64), nn.ReLU())
        self.head = nn.Linear(64, 12)
    def forward(self, x):
        return self.head(self.body(x))
net = Net()
criterion = nn.NLLLoss()
def step(x, y):
    loss = criterion(net(x), y)
    loss.backward()
"""
NEAR_MISS["log_softmax_after_the_model"] = """
import torch
import torch.nn as nn
import torch.nn.functional as F
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(64, 12)
    def forward(self, x):
        return self.head(x)
net = Net()
def step(x, y):
    loss = F.nll_loss(F.log_softmax(net(x), dim=1), y)
    loss.backward()
"""
SEEN["raw_scores_of_a_model_class"] = "https://runebook.dev/en/docs/pytorch/generated/torch.nn.nllloss/torch.nn.NLLLoss (NLLLoss given a final layer's raw logits, its first gotcha); fresh set 1 s12 (a model class ending in a Linear head)"
