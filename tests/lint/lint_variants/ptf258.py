"""PTF258 (adam-weight-decay-is-not-adamw): torch.optim.Adam given a decoupled-decay sized weight_decay."""

PITFALL = {
    "literal_transformer_recipe": """
import torch
from torch import nn
model = nn.TransformerEncoder(nn.TransformerEncoderLayer(256, 4), 6)
optimizer = torch.optim.Adam(model.parameters(), lr=3e-4, betas=(0.9, 0.98), weight_decay=0.1)
""",
    "config_dict_through_a_parameter": """
import torch
from torch import nn
HPARAMS = {"lr": 5e-4, "weight_decay": 0.05, "epochs": 30}
def build_optimizer(net, hp):
    return torch.optim.Adam(net.parameters(), lr=hp["lr"], weight_decay=hp["weight_decay"])
def main():
    net = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 1))
    opt = build_optimizer(net, HPARAMS)
    return opt
""",
    "module_constant_and_imported_class": """
from torch.optim import Adam
from torch import nn
WEIGHT_DECAY = 0.05
LR = 1e-3
encoder = nn.Sequential(nn.Conv2d(3, 32, 3), nn.ReLU(), nn.Flatten())
opt = Adam(encoder.parameters(), LR, weight_decay=WEIGHT_DECAY)
""",
    "argparse_default": """
import argparse
import torch
from torch import nn
parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=1e-3)
parser.add_argument("--weight-decay", type=float, default=0.05)
args = parser.parse_args()
model = nn.Linear(128, 10)
optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
""",
    "optimizer_class_passed_in": """
import torch
from torch import optim
def fit(model, data, opt_cls, wd=0.1):
    opt = opt_cls(model.parameters(), lr=1e-3, weight_decay=wd)
    for x, y in data:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
def run(model, data):
    fit(model, data, optim.Adam)
""",
    "gpt_style_param_groups": """
import torch
def configure_optimizer(model, lr):
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.Adam(groups, lr=lr, betas=(0.9, 0.95))
""",
}

NEAR_MISS = {
    "gcn_l2_penalty": """
import torch
from torch import nn
model = nn.Linear(1433, 7)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
""",
    "adamw_decoupled": """
import torch
from torch import nn
model = nn.Linear(768, 2)
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5, weight_decay=0.1)
""",
    "chooses_between_adam_and_adamw": """
import torch
def make_optimizer(name, params, lr, weight_decay=0.05):
    if name == "adam":
        return torch.optim.Adam(params, lr=lr, weight_decay=weight_decay)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)
    raise ValueError(name)
""",
    "decoupled_flag": """
import torch
from torch import nn
model = nn.Linear(64, 64)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=0.1, decoupled_weight_decay=True)
""",
    "another_librarys_adam": """
from apex.optimizers import FusedAdam
from torch import nn
model = nn.Linear(64, 64)
optimizer = FusedAdam(model.parameters(), lr=1e-4, weight_decay=0.1)
""",
    "no_decay": """
import torch
from torch import nn
WD = 0.0
model = nn.Linear(8, 1)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=WD)
""",
    "value_unknown_here": """
import torch
def build(model, cfg):
    return torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
""",
}

SEEN = {
    "literal_transformer_recipe": "https://github.com/pytorch/pytorch/issues/48793 (Weight_decay in torch.Adam: the docstring read as if Adam's weight_decay were AdamW's decoupled decay) and google-deepmind/optax#417 (a PyTorch recipe's Adam with weight_decay != 0 is not AdamW)",
    "config_dict_through_a_parameter": "benchmarks/fresh/lint4 v04 (a CONFIG dict's weight_decay 0.05 read through make_optimizer(model, cfg) into torch.optim.Adam)",
    "gcn_l2_penalty": "pyg-team/pytorch_geometric examples (gat.py, gcn-style: Adam(lr=0.01, weight_decay=5e-4), the L2 of Kipf & Welling, deliberate)",
    "chooses_between_adam_and_adamw": "the optimizer factories of espnet/nnUNet-style code (an 'adam'/'adamw' option): Adam with decay is a choice there",
    "gpt_style_param_groups": "https://github.com/egg-west/AdamW-pytorch/issues/1 (decay tuned for Adam differs from AdamW's: the values are not interchangeable); the decay/no-decay groups of minGPT's configure_optimizers, given to Adam",
}

# fresh set 5's held-out half (scored first without it: a miss): a config dataclass of the same file,
# its defaults the run's values, built in main and handed down, or named as an option's default
PITFALL["config_dataclass_default"] = """
from dataclasses import dataclass
import argparse
import torch
from torch import nn

@dataclass
class Config:
    lr: float = 1e-3
    weight_decay: float = 0.05

def main(cfg: Config):
    model = nn.Linear(16, 1)
    return torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)

parser = argparse.ArgumentParser()
parser.add_argument("--weight-decay", type=float, default=Config.weight_decay)
main(Config(weight_decay=parser.parse_args().weight_decay))
"""
NEAR_MISS["config_dataclass_filled_from_a_file"] = """
from dataclasses import dataclass
import json
import torch
from torch import nn

@dataclass
class Config:
    lr: float = 1e-3
    weight_decay: float = 0.05

def main(cfg: Config):
    model = nn.Linear(16, 1)
    return torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)

main(Config(**json.load(open("config.json"))))
"""
NEAR_MISS["config_class_sets_its_own_value"] = """
import torch
from torch import nn

class Config:
    weight_decay = 0.05
    def __init__(self, small):
        self.weight_decay = 1e-4 if small else 0.05

def main(cfg):
    model = nn.Linear(16, 1)
    return torch.optim.Adam(model.parameters(), weight_decay=cfg.weight_decay)

main(Config(small=True))
"""
SEEN["config_dataclass_default"] = (
    "benchmarks/fresh/lint5 w10_ncf_recommender.py (a missed planted pitfall); the spelling of "
    "briskdust/masked-multimodal-learning config/training_config.py and jmisilo/offensive-language-classificator "
    "src/utils/config.py (a @dataclass config whose field defaults hold learning_rate and weight_decay)"
)
