"""PTF022: a parameter replaced by a new nn.Parameter after the optimizer was built."""

PITFALL = {
    "batchnorm_weight": """
import torch
import torch.nn as nn
bn = nn.BatchNorm1d(1)
opt = torch.optim.SGD(bn.parameters(), lr=0.5)
bn.weight = nn.Parameter(torch.full((1,), 2.0))
""",
    "pretrained_embedding": """
import torch
import torch.nn as nn
def setup(vectors):
    model = nn.Sequential(nn.Embedding(100, 8), nn.Linear(8, 2))
    optimizer = torch.optim.Adam(model.parameters())
    model[0].weight = nn.Parameter(torch.from_numpy(vectors))
    return model, optimizer
""",
    "nested_attribute": """
import torch
from torch import nn
def prune(net, mask):
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    net.fc.weight = nn.Parameter(net.fc.weight * mask)
    return opt
""",
    "param_group_list": """
import torch
import torch.nn as nn
layer = nn.Linear(3, 1)
optim = torch.optim.AdamW([{"params": layer.parameters()}], lr=1e-3)
layer.bias = nn.Parameter(torch.zeros(1))
""",
    "in_loop_after_optimizer": """
import torch
import torch.nn as nn
def fit(model, data):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step, x in enumerate(data):
        if step == 10:
            model.scale = nn.Parameter(torch.ones(1))
        model(x).sum().backward()
        opt.step()
        opt.zero_grad()
""",
}

NEAR_MISS = {
    "copy_under_no_grad": """
import torch
import torch.nn as nn
bn = nn.BatchNorm1d(1)
opt = torch.optim.SGD(bn.parameters(), lr=0.5)
with torch.no_grad():
    bn.weight.copy_(torch.full((1,), 2.0))
""",
    "optimizer_built_after": """
import torch
import torch.nn as nn
model = nn.Linear(3, 1)
model.weight = nn.Parameter(torch.zeros(1, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
""",
    "init_of_own_module": """
import torch
import torch.nn as nn
class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(1))
""",
}

PITFALL["optimizer_built_by_a_helper_then_vectors_attached"] = """
import torch
import torch.nn as nn
def make_opt(net, lr):
    return torch.optim.SGD(net.parameters(), lr=lr, momentum=0.9)
def load_vectors(net, table):
    net.emb.weight = nn.Parameter(torch.as_tensor(table))
def main(net, table):
    opt = make_opt(net, 0.1)
    load_vectors(net, table)
    return opt
"""
NEAR_MISS["vectors_attached_before_the_helper_builds_the_optimizer"] = """
import torch
import torch.nn as nn
def make_opt(net, lr):
    return torch.optim.SGD(net.parameters(), lr=lr, momentum=0.9)
def load_vectors(net, table):
    net.emb.weight = nn.Parameter(torch.as_tensor(table))
def main(net, table):
    load_vectors(net, table)
    return make_opt(net, 0.1)
"""
NEAR_MISS["helper_that_builds_no_optimizer"] = """
import torch
import torch.nn as nn
def describe(net):
    return sum(p.numel() for p in net.parameters())
def load_vectors(net, table):
    net.emb.weight = nn.Parameter(torch.as_tensor(table))
def main(net, table):
    n = describe(net)
    load_vectors(net, table)
    return n
"""

SEEN = {
    "optimizer_built_by_a_helper_then_vectors_attached": "benchmarks/fresh/lint14 n20_ticket_routing_gru.py (held-out half, missed at its first score: build_optimizer(model, cfg) before attach_pretrained replaces the embedding weight)",
    "pretrained_embedding": "https://github.com/pytorch/pytorch/issues/14467",
    "nested_attribute": "https://github.com/openvinotoolkit/nncf/pull/327",
    "optimizer_built_after": "https://github.com/microsoft/nni/issues/4521",
    "batchnorm_weight": "https://github.com/pytorch/pytorch/issues/54765",
}

# round 2: the parameter replaced through a name for a part of the model
PITFALL["through_a_part_alias"] = """
import torch
import torch.nn as nn
def setup(net):
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    head = net.classifier[-1]
    head.bias = nn.Parameter(torch.zeros(head.out_features))
    return optimizer
"""

# round 5: the part replaced is reached through a local alias of ``self.model`` (a conditional one
# included), in a method of a class whose __init__ built the optimizer over that model
PITFALL["alias_of_self_model_in_method"] = """
import torch
from torch import nn
class Finetuner:
    def __init__(self, net, lr):
        net = net.cuda()
        self.opt = torch.optim.SGD(net.parameters(), lr=lr, momentum=0.9)
        self.net = nn.DataParallel(net)
    def reset_last_layer(self, n_out):
        last = self.net.module.classifier[-1] if isinstance(self.net, nn.DataParallel) else self.net.classifier[-1]
        last.weight = nn.Parameter(torch.zeros(n_out, last.in_features))
"""
PITFALL["self_model_optimizer_direct"] = """
import torch
import torch.nn as nn
class Agent:
    def __init__(self, policy):
        self.policy = policy
        self.optim = torch.optim.Adam(self.policy.parameters(), lr=1e-3)
    def widen(self, init):
        layer = self.policy.out
        layer.bias = nn.Parameter(init.clone())
"""
NEAR_MISS["optimizer_rebuilt_after_alias"] = """
import torch
from torch import nn
class Finetuner:
    def __init__(self, net):
        self.net = net
    def reset_last_layer(self, n_out):
        last = self.net.classifier[-1]
        last.weight = nn.Parameter(torch.zeros(n_out, last.in_features))
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.01)
"""
NEAR_MISS["optimizer_over_other_model"] = """
import torch
from torch import nn
class GanTrainer:
    def __init__(self, gen, disc):
        self.gen, self.disc = gen, disc
        self.opt_d = torch.optim.Adam(disc.parameters())
        self.head = nn.Linear(8, 1)
    def reset_head(self):
        h = self.head
        h.bias = nn.Parameter(torch.zeros(1))
"""
SEEN["alias_of_self_model_in_method"] = (
    "https://github.com/rdcolema/pytorch-image-classification/issues/2 (a DataParallel model's classifier replaced after the optimizer was built)"
)

# fresh set 7's held-out half (a miss at its first score; tuning material since): a helper replaces the
# head's bias, called after the optimizer was built over the model
PITFALL["prior_bias_replaced_by_a_helper_after_the_optimizer"] = """
import math
import torch
from torch import nn

def set_prior_bias(linear, prior):
    linear.bias = nn.Parameter(torch.full_like(linear.bias, -math.log((1 - prior) / prior)))

def build(model, lr):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    set_prior_bias(model.head, 0.01)
    return optimizer
"""
NEAR_MISS["prior_bias_replaced_by_a_helper_before_the_optimizer"] = """
import math
import torch
from torch import nn

def set_prior_bias(linear, prior):
    linear.bias = nn.Parameter(torch.full_like(linear.bias, -math.log((1 - prior) / prior)))

def build(model, lr):
    set_prior_bias(model.head, 0.01)
    return torch.optim.Adam(model.parameters(), lr=lr)
"""
SEEN["prior_bias_replaced_by_a_helper_after_the_optimizer"] = (
    "benchmarks/fresh/lint7 y24_pcb_defect_focal.py; the focal-loss prior of pytorch/vision "
    "torchvision/models/detection/retinanet.py (RetinaNetClassificationHead sets cls_logits.bias in place with "
    "torch.nn.init.constant_, the form that keeps the optimizer's tensor)"
)
