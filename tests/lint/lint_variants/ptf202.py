"""PTF202 (sigmoid-before-bce-with-logits): a sigmoid's output fed to BCEWithLogitsLoss (squashed twice)."""

PITFALL = {
    "inline_module_call": """
import torch
import torch.nn as nn
def step(model, x, y):
    return nn.BCEWithLogitsLoss()(torch.sigmoid(model(x)), y)
""",
    "functional": """
import torch
import torch.nn.functional as F
def loss_fn(logits, target):
    return F.binary_cross_entropy_with_logits(torch.sigmoid(logits), target)
""",
    "criterion_and_local_name": """
import torch
import torch.nn as nn
criterion = nn.BCEWithLogitsLoss()
def train(model, loader, opt):
    for x, y in loader:
        probs = torch.sigmoid(model(x))
        loss = criterion(probs, y)
        loss.backward()
""",
    "validation_loop": """
import torch
import torch.nn as nn
from tqdm import tqdm
class Trainer:
    def validate(self, device):
        for wafer_map, pattern_mask in tqdm(self.val_loader):
            wafer_map, pattern_mask = wafer_map.to(device), pattern_mask.to(device)
            with torch.set_grad_enabled(False):
                outputs = self.model(wafer_map)
                loss = nn.BCEWithLogitsLoss()(torch.sigmoid(outputs), pattern_mask)
""",
    "sequential_ends_in_sigmoid": """
import torch.nn as nn
model = nn.Sequential(nn.Linear(16, 1), nn.Sigmoid())
loss_fn = nn.BCEWithLogitsLoss()
def step(x, y):
    return loss_fn(model(x), y)
""",
    "self_loss_fn_method_sigmoid": """
import torch.nn as nn
class Head(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, 1)
        self.loss_fn = nn.BCEWithLogitsLoss(reduction="none")
    def loss(self, feats, labels):
        scores = self.fc(feats).sigmoid().squeeze(-1)
        return self.loss_fn(scores, labels.float())
""",
    "model_class_returns_sigmoid": """
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 1)
    def forward(self, x):
        return torch.sigmoid(self.fc(x))
net = Net()
criterion = nn.BCEWithLogitsLoss()
def step(x, y):
    return criterion(net(x), y)
""",
    "sigmoid_module_attribute": """
import torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)
        self.act = nn.Sigmoid()
        self.crit = nn.BCEWithLogitsLoss()
    def training_step(self, x, y):
        out = self.act(self.fc(x))
        return self.crit(out, y)
""",
}

NEAR_MISS = {
    "logits": """
import torch.nn as nn
model = nn.Linear(10, 1)
criterion = nn.BCEWithLogitsLoss()
def step(x, y):
    out = model(x).squeeze(-1)
    return criterion(out, y)
""",
    "sigmoid_with_bce": """
import torch
import torch.nn as nn
def step(model, x, y):
    return nn.BCELoss()(torch.sigmoid(model(x)), y)
""",
    "sigmoid_of_soft_target": """
import torch
import torch.nn.functional as F
def distill(student_logits, teacher_logits):
    return F.binary_cross_entropy_with_logits(student_logits, torch.sigmoid(teacher_logits))
""",
    "first_layer_of_sigmoid_head": """
import torch.nn as nn
class TokenConfidence(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.token = nn.Sequential(nn.Linear(dim, 1), nn.Sigmoid())
        self.loss_fn = nn.BCEWithLogitsLoss(reduction="none")
    def loss(self, desc0, correct0):
        logit0 = self.token[0](desc0.detach()).squeeze(-1)
        return self.loss_fn(logit0, correct0.float())
""",
    "sigmoid_for_metrics_only": """
import torch
import torch.nn as nn
criterion = nn.BCEWithLogitsLoss()
def step(model, x, y):
    logits = model(x)
    loss = criterion(logits, y)
    preds = (torch.sigmoid(logits) > 0.5).float()
    return loss, preds
""",
    "sigmoid_only_when_flag_set": """
import torch.nn as nn
def train(x, y, with_sigmoid):
    linear = nn.Linear(1, 1)
    model = nn.Sequential(linear, nn.Sigmoid()) if with_sigmoid else linear
    return nn.BCEWithLogitsLoss()(model(x), y)
def main(x, y):
    return train(x, y, with_sigmoid=False)
""",
}

SEEN = {
    "validation_loop": "find_string 'BCEWithLogitsLoss()(torch.sigmoid(': a wafer-map trainer's validation loop, with a TODO doubting it",
    "self_loss_fn_method_sigmoid": "https://github.com/cvg/glue-factory/issues/89 (nn.Sequential(nn.Linear(dim, 1), nn.Sigmoid()) beside nn.BCEWithLogitsLoss)",
    "first_layer_of_sigmoid_head": "https://github.com/cvg/glue-factory/issues/89 (the loss calls self.token[0], the Linear alone: logits after all)",
    "model_class_returns_sigmoid": "https://github.com/yudi-mars/daisyRec/pull/15 (a model's sigmoid removed: BCEWithLogitsLoss applies it)",
    "functional": "https://github.com/itakurah/focal-loss-pytorch/pull/5 (F.binary_cross_entropy_with_logits after a sigmoid)",
    "sequential_ends_in_sigmoid": "https://github.com/NVIDIA-Merlin/models/pull/1175 (a sigmoid output layer with BCEWithLogitsLoss as the default loss)",
    "criterion_and_local_name": "https://github.com/lopuhin/kaggle-imet-2019/issues/3 (a sigmoid before BCEWithLogitsLoss)",
    "sigmoid_with_bce": "https://github.com/polimi-ispl/icpr2020dfdc/issues/16 (BCELoss takes sigmoid(out), BCEWithLogitsLoss takes out)",
    "sigmoid_of_soft_target": "https://github.com/CoinCheung/pytorch-loss/issues/10 (torch.sigmoid of the logits used beside the loss, not fed to it)",
}
PITFALL["sequential_built_from_a_layer_list"] = """
import torch
from torch import nn
def make_model(n_features, hidden=(256, 128), p=0.2):
    layers, width = [], n_features
    for h in hidden:
        layers += [nn.Linear(width, h), nn.BatchNorm1d(h), nn.ReLU(), nn.Dropout(p)]
        width = h
    layers += [nn.Linear(width, 1), nn.Sigmoid()]
    return nn.Sequential(*layers)
def train(loader, n_features, device):
    model = make_model(n_features).to(device)
    criterion = nn.BCEWithLogitsLoss()
    optimizer = torch.optim.Adam(model.parameters())
    for xb, yb in loader:
        loss = criterion(model(xb).squeeze(1), yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""
NEAR_MISS["layer_list_ends_in_a_linear"] = """
import torch
from torch import nn
def make_model(n_features):
    layers = [nn.Linear(n_features, 64), nn.Sigmoid()]
    layers.append(nn.Linear(64, 1))
    return nn.Sequential(*layers)
def step(x, y):
    model = make_model(8)
    return nn.BCEWithLogitsLoss()(model(x).squeeze(1), y)
"""
SEEN["sequential_built_from_a_layer_list"] = (
    "benchmarks/fresh/lint3/u04_credit_default_mlp.py (a read held-out script: layers += [nn.Linear(width, 1), "
    "nn.Sigmoid()], nn.Sequential(*layers) returned by make_model, then BCEWithLogitsLoss)"
)

PITFALL["lightning_step_calls_self"] = """
import torch
from torch import nn
import lightning as L
class Tagger(L.LightningModule):
    def __init__(self, n_tags):
        super().__init__()
        self.head = nn.Linear(512, n_tags)
        self.criterion = nn.BCEWithLogitsLoss()
    def forward(self, features):
        return torch.sigmoid(self.head(features))
    def training_step(self, batch, batch_idx):
        features, tags = batch
        probs = self(features)
        loss = self.criterion(probs, tags.float())
        return loss
"""
SEEN["lightning_step_calls_self"] = (
    "benchmarks/fresh/lint5/w18_multilabel_tagging.py (fresh set 5's tuning half: forward returns sigmoid "
    "probabilities, training_step feeds self(images) to BCEWithLogitsLoss)"
)
