"""PTF268 (batchnorm-updates-in-forward): a "harmless" no_grad forward on a BatchNorm model left in training mode."""

PITFALL = {
    "validation_after_train_in_one_function": """
import torch
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 16, 3, bias=False), nn.BatchNorm2d(16), nn.ReLU())
        self.head = nn.Linear(16, 10)
    def forward(self, x):
        return self.head(self.body(x).mean((2, 3)))
def run_epoch(model, train_loader, val_loader, opt):
    model.train()
    for x, y in train_loader:
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    val_loss = 0.0
    with torch.no_grad():
        for x, y in val_loader:
            val_loss += F.cross_entropy(model(x), y).item()
    return val_loss / len(val_loader)
def test(model, loader):
    model.eval()
    with torch.no_grad():
        return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)
def main(train_dl, val_dl, test_dl):
    net = Net()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    for epoch in range(10):
        print(epoch, run_epoch(net, train_dl, val_dl, optimizer))
    print(test(net, test_dl))
""",
    "sanity_check_before_saving": """
import torch
from torch import nn
class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 1))
    def forward(self, x):
        return self.net(x)
def export(weights, out_path):
    model = Regressor()
    model.load_state_dict(torch.load(weights, weights_only=True))
    with torch.no_grad():
        probe = model(torch.randn(16, 8))
    print("output range", probe.min().item(), probe.max().item())
    torch.save(model.state_dict(), out_path)
""",
    "pretrained_backbone_features": """
import torch
import torchvision
from torch import nn
def embed(images):
    backbone = torchvision.models.resnet50(weights="IMAGENET1K_V2")
    backbone.fc = nn.Identity()
    with torch.no_grad():
        feats = backbone(images)
    return feats.cpu().numpy()
""",
    "statistics_in_a_decorated_helper": """
import torch
from torch import nn
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(40, 64, 5, bias=False)
        self.bn = nn.BatchNorm1d(64)
    def forward(self, x):
        return torch.relu(self.bn(self.conv(x))).mean(-1)
@torch.no_grad()
def feature_stats(ckpt, loader):
    enc = Encoder()
    enc.load_state_dict(torch.load(ckpt, weights_only=True))
    feats = torch.cat([enc(x) for x, _ in loader])
    return feats.mean(0), feats.std(0)
""",
    "predictions_after_fit_under_inference_mode": """
import torch
from torch import nn
def fit_predict(X, y, X_test, epochs=100):
    model = nn.Sequential(nn.Linear(X.shape[1], 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    for _ in range(epochs):
        opt.zero_grad()
        nn.functional.mse_loss(model(X), y).backward()
        opt.step()
    with torch.inference_mode():
        preds = model(X_test)
    return preds
def score(model, X):
    model.eval()
    with torch.no_grad():
        return model(X)
""",
}

NEAR_MISS = {
    "eval_before_the_check": """
import torch
from torch import nn
def export(weights, out_path):
    model = nn.Sequential(nn.Linear(8, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 1))
    model.load_state_dict(torch.load(weights, weights_only=True))
    model.eval()
    with torch.no_grad():
        probe = model(torch.randn(16, 8))
    print(probe.mean().item())
    torch.save(model.state_dict(), out_path)
""",
    "batchnorm_recalibration_output_unused": """
import itertools
import torch
from torch import nn
def recalibrate_bn(model, loader, steps=50):
    model.train()
    with torch.no_grad():
        for x, _ in itertools.islice(loader, steps):
            model(x)
    model.eval()
net = nn.Sequential(nn.Conv2d(3, 8, 3, bias=False), nn.BatchNorm2d(8), nn.ReLU())
""",
    "model_without_batchnorm": """
import torch
from torch import nn
def export(weights):
    model = nn.Sequential(nn.Linear(8, 32), nn.LayerNorm(32), nn.ReLU(), nn.Linear(32, 1))
    model.load_state_dict(torch.load(weights, weights_only=True))
    with torch.no_grad():
        probe = model(torch.randn(16, 8))
    return probe
""",
    "handed_to_a_loader_that_sets_the_mode": """
import torch
from torch import nn
def load_for_inference(model, path):
    model.load_state_dict(torch.load(path, weights_only=True))
    model.eval()
def predict(path, x):
    model = nn.Sequential(nn.Linear(8, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 1))
    load_for_inference(model, path)
    with torch.no_grad():
        out = model(x)
    return out
""",
    "train_false_before_the_forward": """
import torch
import torchvision
def embed(images):
    backbone = torchvision.models.resnet18(weights="DEFAULT")
    backbone.train(False)
    with torch.no_grad():
        feats = backbone(images)
    return feats
""",
}

NEAR_MISS["extractor_puts_itself_in_eval_mode"] = """
import torch
import torch.nn as nn
import torchvision
class Extractor(nn.Module):
    def __init__(self):
        super().__init__()
        net = torchvision.models.resnet18(weights="DEFAULT")
        self.body = nn.Sequential(net.conv1, net.bn1, net.relu, net.layer1)
        self.eval().requires_grad_(False)
    def forward(self, x):
        return self.body(x).mean(dim=(2, 3))
def embed(batches):
    extractor = Extractor()
    out = []
    with torch.no_grad():
        for x in batches:
            out.append(extractor(x))
    return torch.cat(out)
"""

SEEN = {
    "extractor_puts_itself_in_eval_mode": "benchmarks/fresh/lint15 j20_casting_defect_gaussian.py (held-out half: a feature extractor whose __init__ calls self.eval().requires_grad_(False); read as left in training mode at its first score)",
    "validation_after_train_in_one_function": "princeton-vl/pytorch_stacked_hourglass#44 (model.train() used in both train and valid phases)",
    "sanity_check_before_saving": "cases/training/batchnorm_updates_in_forward.py source (CSDN: BN quietly updates itself)",
    "pretrained_backbone_features": "Haichao-Zhang/FeatureScatter#5 (batch norm statistics during evaluation without net.eval())",
    "predictions_after_fit_under_inference_mode": "ugent-korea/pytorch-unet-segmentation#18 (only 'with torch.no_grad()' in validate_model)",
    "batchnorm_recalibration_output_unused": "facebookresearch/schedule_free#60 (model.train(); no_grad forward over 50 batches to refresh BN stats)",
}

NEAR_MISS["eval_chained_after_to"] = """
import torch
from torch import nn
def predict(weights, x, device):
    model = nn.Sequential(nn.Linear(8, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 1))
    model.load_state_dict(torch.load(weights, map_location="cpu", weights_only=True))
    model.to(device).eval()
    with torch.inference_mode():
        out = model(x.to(device))
    return out
"""

# round 13: a helper handed the model straight after training, while it is still in training mode
PITFALL["calibration_helper_after_the_training_loop"] = """
import torch
import torch.nn as nn
import torch.nn.functional as F
def down(c_in, c_out):
    return nn.Sequential(nn.Conv1d(c_in, c_out, 9, stride=2, padding=4), nn.BatchNorm1d(c_out), nn.ReLU())
class AE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(down(1, 16), down(16, 32))
        self.decoder = nn.Sequential(nn.ConvTranspose1d(32, 16, 8, 2, 3), nn.ConvTranspose1d(16, 1, 8, 2, 3))
    def forward(self, x):
        return self.decoder(self.encoder(x))
def window_errors(model, loader):
    errors = []
    with torch.no_grad():
        for (x,) in loader:
            errors.append(F.mse_loss(model(x), x, reduction="none").mean(dim=(1, 2)))
    return torch.cat(errors)
def save_checkpoint(path, model, optimizer):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, path)
def main(train_loader, calib_loader, test_loader, epochs):
    model = AE()
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(epochs):
        model.train()
        for (x,) in train_loader:
            loss = F.mse_loss(model(x), x)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        save_checkpoint("last.pt", model, optimizer)
    threshold = window_errors(model, calib_loader).quantile(0.995)
    model.eval()
    return window_errors(model, test_loader) > threshold
"""
SEEN["calibration_helper_after_the_training_loop"] = (
    "benchmarks/fresh/lint11 s08_bearing_anomaly_autoencoder.py (held-out half, missed at its first score)"
)
NEAR_MISS["helper_handed_the_model_after_eval"] = """
import torch
import torch.nn as nn
import torch.nn.functional as F
def block(c_in, c_out):
    return nn.Sequential(nn.Linear(c_in, c_out), nn.BatchNorm1d(c_out), nn.ReLU())
def errors(model, loader):
    with torch.no_grad():
        return torch.cat([F.mse_loss(model(x), x, reduction="none").mean(1) for (x,) in loader])
def main(train_loader, val_loader, epochs):
    model = nn.Sequential(block(8, 4), nn.Linear(4, 8))
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(epochs):
        model.train()
        for (x,) in train_loader:
            loss = F.mse_loss(model(x), x)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    model.eval()
    return errors(model, val_loader)
"""
NEAR_MISS["helper_handed_the_model_after_an_evaluation_that_switches_it"] = """
import torch
import torch.nn as nn
import torch.nn.functional as F
def block(c_in, c_out):
    return nn.Sequential(nn.Linear(c_in, c_out), nn.BatchNorm1d(c_out), nn.ReLU())
def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        return sum(F.mse_loss(model(x), x).item() for (x,) in loader)
def errors(model, loader):
    with torch.no_grad():
        return torch.cat([F.mse_loss(model(x), x, reduction="none").mean(1) for (x,) in loader])
def main(train_loader, val_loader, epochs):
    model = nn.Sequential(block(8, 4), nn.Linear(4, 8))
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(epochs):
        model.train()
        for (x,) in train_loader:
            loss = F.mse_loss(model(x), x)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(evaluate(model, val_loader))
    return errors(model, val_loader)
"""
