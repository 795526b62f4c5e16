"""PTF002: code that relies on torch.autograd.Variable being something other than a tensor, which
it has not been since 0.4: volatile=, a Variable wrapped again. Variable(t) alone returns the tensor
and changes nothing, and isinstance(x, Variable), true of every tensor, picks a branch that does for a
tensor what the other would: those spellings are near misses (quiet)."""

PITFALL = {
    "volatile_eval": """
import torch
from torch.autograd import Variable
def evaluate(model, loader):
    for images, labels in loader:
        images = Variable(images, volatile=True)
        outputs = model(images)
""",
    "volatile_false_train": """
import torch
from torch.autograd import Variable
def step(model, x, training):
    x = Variable(x, volatile=not training)
    return model(x)
""",
    "wrapped_again": """
import torch
from torch.autograd import Variable
x = Variable(torch.ones(2), requires_grad=True)
y = Variable(x)
""",
    "wrapped_again_inline": """
import torch
from torch import autograd
h = autograd.Variable(autograd.Variable(torch.zeros(1, 4)))
""",
}

# Variable(t) alone: deprecated, but it returns the tensor (requires_grad= still sets the flag)
PLAIN_WRAPPERS = {
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
    **PLAIN_WRAPPERS,
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
    "volatile_eval": "https://github.com/WuJie1010/Facial-Expression-Recognition.Pytorch/issues/87 (inputs, targets = Variable(inputs, volatile=True), Variable(targets) in the evaluation loop)",
    "volatile_false_train": "https://github.com/IBM/pytorch-seq2seq/issues/149 (torchtext's return Variable(arr, volatile=not train))",
    "requires_grad_kw": "https://github.com/hunkim/PyTorchZeroToAll/issues/29",
    "renamed_import": "https://github.com/kevinzakka/pytorch-goodies/issues/8",
    "full_path": "https://github.com/wiseodd/generative-models/pull/69",
    "loop_inputs_labels": "https://github.com/pytorch/pytorch/issues/5351",
}
NEAR_MISS["isinstance_unwrap"] = """
import torch
from torch.autograd import Variable
def to_numpy(x):
    if isinstance(x, Variable):
        x = x.data
    return x.cpu().numpy()
"""
NEAR_MISS["isinstance_tuple"] = """
import torch
from torch.autograd import Variable
def check(x):
    assert isinstance(x, (Variable, torch.Tensor))
    if isinstance(x, (Variable,)):
        return x.data
    return x
"""
SEEN["isinstance_unwrap"] = (
    "the pre-0.4 unwrap idiom (if isinstance(x, Variable): x = x.data); CSAILVision/semantic-segmentation-pytorch "
    "mit_semseg/lib/utils/th.py as_numpy / as_variable, all four such findings of round 5's read held-out half "
    "harmless: for a tensor the Variable branch gives what the tensor branch would"
)
PITFALL["volatile_in_a_model_method"] = """
import torch
from torch.autograd import Variable
class Pix2Pix(torch.nn.Module):
    def encode_features(self, image, inst):
        image = Variable(image.cuda(), volatile=True)
        return self.netE(image, inst.cuda())
"""
SEEN["volatile_in_a_model_method"] = (
    "NVIDIA/pix2pixHD models/pix2pixHD_model.py (Pix2PixHDModel.encode_features; round 6's tuning half)"
)

# volatile= under torch.no_grad(): ignored, but nothing is recorded either (visual-pushing-grasping
# models.py reinforcement_net, round 14's tuning half, read harmless); without it, the graph is recorded.
NEAR_MISS["volatile_under_no_grad"] = """
import torch
from torch.autograd import Variable
def q_values(net, color, depth):
    with torch.no_grad():
        color = Variable(color, volatile=True).cuda()
        depth = Variable(depth, volatile=True).cuda()
        return net(torch.cat([color, depth], dim=1))
"""
PITFALL["volatile_beside_a_no_grad_block"] = """
import torch
from torch.autograd import Variable
def q_values(net, color, depth, train):
    if not train:
        with torch.no_grad():
            best = net(color)
    color = Variable(color, volatile=True)
    return net(color)
"""
SEEN["volatile_under_no_grad"] = "andyzeng/visual-pushing-grasping models.py:235 (round 14's tuning half, read harmless)"
