"""PTF002: torch.autograd.Variable, a deprecated spelling since 0.4."""

PITFALL = {
    "requires_grad_kw": """
import torch
from torch.autograd import Variable
w = Variable(torch.randn(3, 1), requires_grad=True)
""",
    "loop_inputs_labels": """
import torch
from torch.autograd import Variable
def train(model, loader, criterion):
    for inputs, labels in loader:
        inputs, labels = Variable(inputs), Variable(labels)
        loss = criterion(model(inputs), labels)
""",
    "full_path": """
import torch
x = torch.autograd.Variable(torch.ones(2, 2))
""",
    "autograd_module_alias": """
import torch
from torch import autograd
class Model(torch.nn.Module):
    def forward(self, x):
        h = autograd.Variable(torch.zeros(1, x.size(0), 8))
        return x + h
""",
    "renamed_import": """
import torch
from torch.autograd import Variable as V
orth_loss = V(torch.FloatTensor(1).zero_(), requires_grad=True)
""",
}

NEAR_MISS = {
    "tensor_requires_grad": """
import torch
w = torch.randn(3, 1, requires_grad=True)
""",
    "requires_grad_method": """
import torch
x = torch.ones(2, 2)
x.requires_grad_()
""",
    "own_variable_class": """
class Variable:
    def __init__(self, name):
        self.name = name
v = Variable("x")
""",
}

SEEN = {
    "requires_grad_kw": "https://github.com/hunkim/PyTorchZeroToAll/issues/29",
    "renamed_import": "https://github.com/kevinzakka/pytorch-goodies/issues/8",
    "full_path": "https://github.com/wiseodd/generative-models/pull/69",
    "loop_inputs_labels": "https://github.com/pytorch/pytorch/issues/5351",
}
