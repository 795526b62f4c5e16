"""PTF236 (train-eval-mode): an evaluation under no_grad() of a Dropout/BatchNorm model never put in eval mode."""

PITFALL = {
    "evaluate_function_called_from_main": """
import torch
from torch import nn
class TextClassifier(nn.Module):
    def __init__(self, vocab, classes=4):
        super().__init__()
        self.emb = nn.EmbeddingBag(vocab, 64)
        self.drop = nn.Dropout(0.5)
        self.fc = nn.Linear(64, classes)
    def forward(self, tokens, offsets):
        return self.fc(self.drop(self.emb(tokens, offsets)))
def evaluate(model, loader):
    hits = seen = 0
    with torch.no_grad():
        for tokens, offsets, labels in loader:
            hits += (model(tokens, offsets).argmax(1) == labels).sum().item()
            seen += labels.numel()
    return hits / seen
def main(train_loader, valid_loader, vocab):
    model = TextClassifier(vocab)
    opt = torch.optim.SGD(model.parameters(), lr=5.0)
    for epoch in range(10):
        model.train()
        for tokens, offsets, labels in train_loader:
            opt.zero_grad()
            nn.functional.cross_entropy(model(tokens, offsets), labels).backward()
            opt.step()
        print(epoch, evaluate(model, valid_loader))
""",
    "decorated_test_of_a_module_level_model": """
import torch
import torch.nn.functional as F
class Net(torch.nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.lin1 = torch.nn.Linear(16, hidden)
        self.norm = torch.nn.BatchNorm1d(hidden)
        self.lin2 = torch.nn.Linear(hidden, 2)
    def forward(self, x):
        return self.lin2(F.relu(self.norm(self.lin1(x))))
model = Net()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
def train(loader):
    for x, y in loader:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
@torch.no_grad()
def test(loader):
    correct = 0
    for x, y in loader:
        pred = model(x).argmax(dim=-1)
        correct += int((pred == y).sum())
    return correct / len(loader.dataset)
""",
    "inline_validation_in_the_epoch_loop": """
import torch
import torchvision
def fit(train_loader, val_loader, epochs=5):
    net = torchvision.models.resnet18(num_classes=10)
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    for epoch in range(epochs):
        net.train()
        for images, targets in train_loader:
            opt.zero_grad()
            loss_fn(net(images), targets).backward()
            opt.step()
        val_loss = 0.0
        with torch.no_grad():
            for images, targets in val_loader:
                val_loss += loss_fn(net(images), targets).item()
        print(epoch, val_loss / len(val_loader))
""",
    "inference_script_under_inference_mode": """
import torch
from torchvision import models
model = models.efficientnet_b0(num_classes=5)
model.load_state_dict(torch.load("flowers.pt", weights_only=True))
@torch.inference_mode()
def predict(batch):
    return model(batch).softmax(dim=1).argmax(dim=1)
""",
    "sequential_built_by_a_helper": """
import torch
from torch import nn
def build_mlp(n_in, n_out):
    return nn.Sequential(nn.Linear(n_in, 128), nn.BatchNorm1d(128), nn.ReLU(), nn.Dropout(0.2), nn.Linear(128, n_out))
def predict_proba(features):
    mlp = build_mlp(features.shape[1], 3)
    mlp.load_state_dict(torch.load("mlp.pt", weights_only=True))
    with torch.no_grad():
        probs = torch.sigmoid(mlp(features))
    return probs
""",
    "trainer_class_validate": """
import torch
from torch import nn
class UNetish(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.up = nn.Conv2d(16, 1, 1)
    def forward(self, x):
        return self.up(self.down(x))
class Trainer:
    def __init__(self, loader, val_loader):
        self.model = UNetish()
        self.loader, self.val_loader = loader, val_loader
    def validate(self):
        total = 0.0
        with torch.no_grad():
            for x, mask in self.val_loader:
                total += nn.functional.binary_cross_entropy_with_logits(self.model(x), mask).item()
        return total / len(self.val_loader)
""",
    "transformer_layer_default_dropout": """
import torch
from torch import nn
class Encoder(nn.Module):
    def __init__(self, d=64):
        super().__init__()
        self.layers = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, 4, batch_first=True), num_layers=2)
        self.head = nn.Linear(d, 2)
    def forward(self, x):
        return self.head(self.layers(x).mean(1))
def score(encoder, batches):
    with torch.set_grad_enabled(False):
        return [encoder(x).argmax(-1) for x in batches]
enc = Encoder()
print(score(enc, [torch.randn(2, 5, 64)]))
""",
}

NEAR_MISS = {
    "no_dropout_no_batchnorm": """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.LayerNorm(32), nn.Linear(32, 1))
    def forward(self, x):
        return self.body(x)
def validate(model, loader):
    with torch.no_grad():
        return sum(nn.functional.mse_loss(model(x), y).item() for x, y in loader)
def run(train_loader, val_loader):
    model = Net()
    opt = torch.optim.Adam(model.parameters())
    for x, y in train_loader:
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    return validate(model, val_loader)
""",
    "the_caller_calls_eval": """
import torch
from torch import nn
def evaluate(model, loader):
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
    return correct
def main(train_loader, val_loader):
    model = nn.Sequential(nn.Linear(10, 10), nn.Dropout(0.5), nn.Linear(10, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        model.train()
        for x, y in train_loader:
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
        model.eval()
        print(evaluate(model, val_loader))
""",
    "mean_teacher_targets_in_the_training_step": """
import torch
import torch.nn.functional as F
from torch import nn
student = nn.Sequential(nn.Linear(20, 64), nn.Dropout(0.3), nn.Linear(64, 5))
teacher = nn.Sequential(nn.Linear(20, 64), nn.Dropout(0.3), nn.Linear(64, 5))
opt = torch.optim.Adam(student.parameters())
def train(loader):
    for x, noisy in loader:
        with torch.no_grad():
            target = F.softmax(teacher(noisy), dim=1)
        loss = F.mse_loss(F.softmax(student(x), dim=1), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
    "monte_carlo_dropout_samples": """
import torch
from torch import nn
net = nn.Sequential(nn.Linear(4, 50), nn.ReLU(), nn.Dropout(0.2), nn.Linear(50, 1))
def predictive(x, samples=30):
    with torch.no_grad():
        draws = torch.stack([net(x) for _ in range(samples)])
    return draws.mean(0), draws.std(0)
""",
    "batchnorm_recalibration_pass": """
import torch
from torch import nn
def recalibrate(model, loader):
    model.train()
    with torch.no_grad():
        for x, _ in loader:
            model(x)
    return model
net = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU())
recalibrate(net, [])
""",
    "gan_samples_in_the_training_loop": """
import torch
from torch import nn
G = nn.Sequential(nn.ConvTranspose2d(100, 64, 4), nn.BatchNorm2d(64), nn.ReLU(), nn.ConvTranspose2d(64, 3, 4), nn.Tanh())
D = nn.Sequential(nn.Conv2d(3, 64, 4), nn.LeakyReLU(0.2), nn.Flatten(), nn.LazyLinear(1))
opt_g = torch.optim.Adam(G.parameters(), lr=2e-4)
fixed_noise = torch.randn(16, 100, 1, 1)
def train(loader, criterion):
    samples = []
    for real, _ in loader:
        opt_g.zero_grad()
        fake = G(torch.randn(real.size(0), 100, 1, 1))
        loss = criterion(D(fake).view(-1), torch.ones(real.size(0)))
        loss.backward()
        opt_g.step()
        with torch.no_grad():
            samples.append(G(fixed_noise).cpu())
    return samples
""",
    "train_false_spelling": """
import torch
from torch import nn
model = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))
model.train(False)
with torch.no_grad():
    out = model(torch.randn(4, 3))
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
    "evaluate_function_called_from_main": "as791/ZOO_Attack_PyTorch#7 'Use eval mode during validation' (a validation "
    "of models with Dropout layers under no eval()); benchmarks/fresh/lint/s08_imdb_lstm.py (a tuning script)",
    "decorated_test_of_a_module_level_model": "pyg-team/pytorch_geometric examples/lcm_aggr_2nd_min.py (an "
    "@torch.no_grad() test() of a model with Dropout, no eval() in the file; found by this rule in the tuning half)",
    "inference_script_under_inference_mode": "ipolharvard/ethos-ares#20 'Dropout active during inference and "
    "evaluation?' (@torch.inference_mode()/@torch.no_grad() decorators, no model.eval() in the repository)",
    "trainer_class_validate": "wolny/pytorch-3dunet#53 'Need to set the model to eval mode when assessing the "
    "validation data' (a trainer's validate under no_grad, self.model never put in eval mode)",
    "no_dropout_no_batchnorm": "ugent-korea/pytorch-unet-segmentation#18 'In validate_model, only with "
    "torch.no_grad()': the maintainers answer that the model has no Dropout nor BatchNorm, so eval() changes nothing",
}
PITFALL["second_model_scored_beside_an_eval"] = """
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(10, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, 3))
    def forward(self, x):
        return self.body(x)
model = Net()
model.eval()
with torch.no_grad():
    print(model(torch.randn(4, 10)).argmax(1))
scorer = Net()
scorer.load_state_dict(model.state_dict())
with torch.no_grad():
    scores = scorer(torch.randn(8, 10)).softmax(dim=1)
"""
NEAR_MISS["second_model_handed_to_a_helper_that_evals"] = """
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(10, 32), nn.Dropout(0.3), nn.Linear(32, 3))
    def forward(self, x):
        return self.body(x)
def prepare(m):
    m.eval()
    return m
scorer = Net()
prepare(scorer)
with torch.no_grad():
    scores = scorer(torch.randn(8, 10)).softmax(dim=1)
"""

# Ensemble members loaded by a helper into a list and run by another helper that every caller calls
# under inference_mode: an evaluation in training mode. Put in eval mode where loaded, or the helper
# also called with gradients on (a fine-tuning step): quiet.
_ENSEMBLE = """
import torch
import torchvision

def build():
    return torchvision.models.efficientnet_b3(weights=None)

def load_member(path):
    net = build()
    net.load_state_dict(torch.load(path, weights_only=True))
    {mode}
    return net

def predict(members, images):
    probs = 0.0
    for net in members:
        probs = probs + net(images).softmax(dim=1)
    return probs / len(members)

def main(paths, loader):
    members = [load_member(p) for p in paths]
    with torch.inference_mode():
        for images, labels in loader:
            out = predict(members, images)
    {more}
"""
PITFALL["ensemble_members_run_by_a_helper_under_inference_mode"] = _ENSEMBLE.format(mode="", more="")
NEAR_MISS["ensemble_members_put_in_eval_mode_where_loaded"] = _ENSEMBLE.format(mode="net.eval()", more="")
NEAR_MISS["ensemble_helper_also_called_with_gradients_on"] = _ENSEMBLE.format(
    mode="", more="predict(members, images).sum().backward()"
)
SEEN["ensemble_members_run_by_a_helper_under_inference_mode"] = (
    "benchmarks/fresh/lint10 r21_dermoscopy_ensemble_eval.py (held-out half, after its first score)"
)
