"""PTF204 (bool-of-multielement-tensor): a loss class called with the tensors (the constructor, not the loss)."""

PITFALL = {
    "lightning_training_step": """
import torch.nn as nn
import pytorch_lightning as pl
class Model(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        x, y = batch
        y_hat = self(x)
        loss = nn.CrossEntropyLoss(y_hat, y)
        return {"loss": loss}
""",
    "bare_name_from_import": """
from torch.nn import CrossEntropyLoss
def train(model, train_loader):
    for data, labels in train_loader:
        output = model(data)
        loss = CrossEntropyLoss(output, labels)
        loss.backward()
""",
    "mse_then_backward": """
import torch.nn as nn
def fit(pred, target):
    loss = nn.MSELoss(pred, target)
    loss.backward()
""",
    "tensors_built_here": """
import torch
import torch.nn as nn
outputs = torch.randn(4, 3)
labels = torch.tensor([0, 1, 2, 1])
loss = nn.CrossEntropyLoss(outputs, labels)
""",
    "bce_in_sum": """
import torch.nn as nn
def total_loss(m_pred, m, d_pred, d):
    return nn.BCELoss(m_pred, m) + nn.L1Loss()(d_pred, d)
""",
    "item_on_it": """
import torch.nn as nn
def evaluate(model, loader):
    total = 0.0
    for x, y in loader:
        total += nn.SmoothL1Loss(model(x), y).item()
    return total
""",
}

NEAR_MISS = {
    "built_then_called": """
import torch.nn as nn
def step(outputs, labels):
    criterion = nn.CrossEntropyLoss()
    return criterion(outputs, labels)
""",
    "class_weights": """
import torch
import torch.nn as nn
weights = torch.tensor([1.0, 2.0, 0.5])
criterion = nn.CrossEntropyLoss(weights)
""",
    "old_positional_size_average": """
import torch.nn as nn
class CrossEntropyLoss2d(nn.Module):
    def __init__(self, weight=None, size_average=True):
        super().__init__()
        self.nll_loss = nn.NLLLoss2d(weight, size_average)
    def forward(self, inputs, targets):
        return self.nll_loss(inputs, targets)
""",
    "weight_and_flag_literal": """
import torch
import torch.nn as nn
w = torch.ones(10)
criterion = nn.NLLLoss(w, False)
""",
    "functional": """
import torch.nn.functional as F
def step(y_hat, y):
    return F.cross_entropy(y_hat, y)
""",
}

SEEN = {
    "lightning_training_step": "https://github.com/Lightning-AI/pytorch-lightning/issues/501 (loss = nn.CrossEntropyLoss(y_hat, y): 'That's a class')",
    "bare_name_from_import": "https://github.com/imranparuk/speaker-recognition-3d-cnn/issues/2 (loss = CrossEntropyLoss(output, labels) in train.py)",
    "bce_in_sum": "https://github.com/nikhilroxtomar/DDANet/issues/1 (the loss class given m_pred, m; fixed as nn.BCEWithLogitsLoss()(m_pred, m))",
    "old_positional_size_average": "find_string 'F.nll_loss(F.softmax(': FocalLoss2d's self.nll_loss = nn.NLLLoss2d(weight, size_average) (the pre-0.4 signature)",
}
