"""PTF005: cross-entropy fed softmax probabilities instead of logits."""

PITFALL = {
    "bound_criterion_bound_probs": """
import torch.nn as nn
import torch.nn.functional as F
def train(model, loader, optimizer):
    criterion = nn.CrossEntropyLoss()
    for x, y in loader:
        logits = model(x)
        probs = F.softmax(logits, 1)
        loss = criterion(probs, y)
""",
    "functional_inline": """
import torch.nn.functional as F
def loss_fn(model, x, y):
    return F.cross_entropy(F.softmax(model(x), dim=1), y)
""",
    "self_criterion_self_softmax": """
import torch
from torch import nn
class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 4)
        self.softmax = nn.Softmax(dim=1)
        self.criterion = torch.nn.CrossEntropyLoss()
    def forward(self, x):
        return self.fc(x)
    def training_step(self, x, y):
        out = self.softmax(self.forward(x))
        return self.criterion(out, y)
""",
    "method_softmax_constructed_inline": """
import torch.nn as nn
def step(logits, y):
    return nn.CrossEntropyLoss()(logits.softmax(dim=-1), y)
""",
    "keyword_input": """
import torch
import torch.nn.functional as F
def loss(z, y):
    return F.cross_entropy(input=torch.softmax(z, -1), target=y)
""",
    "sequential_ends_in_softmax": """
import torch.nn as nn
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3), nn.Softmax(dim=1))
criterion = nn.CrossEntropyLoss()
def step(x, y):
    return criterion(model(x), y)
""",
    "own_module_returns_softmax": """
import torch.nn as nn
import torch.nn.functional as F
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
    def forward(self, x):
        return F.softmax(self.fc(x), dim=1)
net = Net()
loss_fn = nn.CrossEntropyLoss()
def step(x, y):
    output = net(x)
    return loss_fn(output, y)
""",
}

NEAR_MISS = {
    "logits": """
import torch.nn as nn
criterion = nn.CrossEntropyLoss()
def step(model, x, y):
    return criterion(model(x), y)
""",
    "softmax_for_accuracy_only": """
import torch.nn.functional as F
def step(logits, y):
    probs = F.softmax(logits, 1)
    acc = (probs.argmax(1) == y).float().mean()
    return F.cross_entropy(logits, y), acc
""",
    "soft_targets_are_probabilities": """
import torch.nn.functional as F
def distill(student_logits, teacher_logits):
    return F.cross_entropy(student_logits, F.softmax(teacher_logits, dim=1))
""",
    "log_softmax_with_nll": """
import torch.nn.functional as F
def step(logits, y):
    return F.nll_loss(F.log_softmax(logits, 1), y)
""",
}

SEEN = {
    "self_criterion_self_softmax": "code: SoftmaxLoss(nn.Module) with self.criterion = torch.nn.CrossEntropyLoss() (search corpus 'code', 'softmax_loss.py')",
    "bound_criterion_bound_probs": "code: loss_fn(criterion, outputs, targets) calling criterion(F.softmax(outputs, dim=1)...) (search corpus 'code')",
    "soft_targets_are_probabilities": "code: pacanada/chess-ai chess_ai/rlagent/muzero/test_torch_policy.py (CE with target=...softmax(dim=1))",
    "logits": "code: FloHofstetter/wcid-pytorch test.py",
}

# round 13: a model handed to an epoch function, built elsewhere as a Sequential that ends in Softmax
PITFALL["sequential_handed_to_an_epoch_function"] = """
import torch
import torch.nn as nn
def build_classifier(channels, n_classes):
    layers, prev = [], 1
    for c in channels:
        layers += [nn.Conv2d(prev, c, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2)]
        prev = c
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(prev, n_classes), nn.Softmax(dim=1)]
    return nn.Sequential(*layers)
def run_epoch(model, loader, criterion, optimizer=None):
    for mel, label in loader:
        probs = model(mel)
        loss = criterion(probs, label)
def main(loader):
    model = build_classifier((16, 32), 11).to("cpu")
    run_epoch(model, loader, nn.CrossEntropyLoss())
"""
SEEN["sequential_handed_to_an_epoch_function"] = "benchmarks/fresh/lint11 s27_instrument_family_classifier.py (tuning half, missed at its first run)"
NEAR_MISS["two_models_handed_one_with_softmax"] = """
import torch.nn as nn
def run_epoch(model, loader, criterion):
    for x, y in loader:
        loss = criterion(model(x), y)
def main(loader):
    run_epoch(nn.Sequential(nn.Linear(4, 3)), loader, nn.CrossEntropyLoss())
    run_epoch(nn.Sequential(nn.Linear(4, 3), nn.Softmax(dim=1)), loader, nn.MSELoss())
"""
NEAR_MISS["logits_sequential_handed_on"] = """
import torch
import torch.nn as nn
def build(n):
    layers = [nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, n)]
    return nn.Sequential(*layers)
@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    ce = nn.CrossEntropyLoss()
    return sum(ce(model(x), y).item() for x, y in loader)
def main(loader):
    evaluate(build(3), loader)
"""

# The softmax is the last layer of a Sequential the model's __init__ builds from a list (a tuple assignment
# starts it, a loop adds the hidden layers, the head comes last) and keeps on self; forward calls it.
_MLP = """
import torch
from torch import nn
class RouteClassifier(nn.Module):
    def __init__(self, n_in, hidden=(128, 64), n_out=6):
        super().__init__()
        layers, width = [], n_in
        for h in hidden:
            layers += [nn.Linear(width, h), nn.ReLU()]
            width = h
        layers += [nn.Linear(width, n_out){head}]
        self.mlp = nn.Sequential(*layers)
    def forward(self, x):
        return self.mlp(x)
def train(model, loader, epochs):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(epochs):
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
def main(loader):
    train(RouteClassifier(12), loader, 15)
"""
PITFALL["softmax_last_of_a_layer_list_kept_on_self"] = _MLP.format(head=", nn.Softmax(dim=-1)")
NEAR_MISS["linear_last_of_a_layer_list_kept_on_self"] = _MLP.format(head="")
SEEN["softmax_last_of_a_layer_list_kept_on_self"] = (
    "fresh set 16's h07 (held-out half, scored): RouteClassifier building layers in __init__ (layers, width = [], "
    "n; a loop; layers += [nn.Linear(...), nn.Softmax(dim=-1)]), self.mlp = nn.Sequential(*layers), trained with "
    "nn.CrossEntropyLoss"
)
SEEN["linear_last_of_a_layer_list_kept_on_self"] = "the same classifier ending in its Linear layer, the fix"
