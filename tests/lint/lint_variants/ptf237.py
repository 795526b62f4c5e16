"""PTF237 (model-eval-freezes-nothing): a submodule 'frozen' with .eval() while the optimizer trains it."""

PITFALL = {
    "backbone_eval_then_model_parameters": """
import torch
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 16, 3), nn.BatchNorm2d(16), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.head = nn.Linear(16, 10)
    def forward(self, x):
        return self.head(self.backbone(x))
def finetune(loader):
    model = Net()
    model.backbone.load_state_dict(torch.load("pretrained.pt", weights_only=True))
    model.backbone.eval()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for x, y in loader:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
    return model
""",
    "shared_encoder_of_a_pretrained_autoencoder": """
import torch
from torch import nn
class AE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(32, 8), nn.Tanh())
        self.decoder = nn.Linear(8, 32)
    def forward(self, x):
        return self.decoder(self.encoder(x))
class Probe(nn.Module):
    def __init__(self, ae):
        super().__init__()
        self.encoder = ae.encoder
        self.linear = nn.Linear(8, 2)
    def forward(self, x):
        return self.linear(self.encoder(x))
def linear_probe(ae, loader, epochs=5):
    probe = Probe(ae)
    probe.encoder.eval()
    opt = torch.optim.Adam(probe.parameters(), lr=1e-3)
    for _ in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            nn.functional.cross_entropy(probe(x), y).backward()
            opt.step()
""",
    "inside_the_modules_own_fit_method": """
import torch
from torch import nn
class Captioner(nn.Module):
    def __init__(self):
        super().__init__()
        self.vision = nn.Sequential(nn.Conv2d(3, 32, 3, stride=2), nn.BatchNorm2d(32), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.decoder = nn.GRU(32, 64, batch_first=True)
        self.out = nn.Linear(64, 1000)
    def forward(self, images, tokens):
        h = self.vision(images).unsqueeze(0)
        seq, _ = self.decoder(tokens, h.repeat(1, 1, 2)[..., :64])
        return self.out(seq)
    def fit(self, loader, lr=1e-4):
        self.vision.eval()
        opt = torch.optim.AdamW(self.parameters(), lr=lr)
        for images, tokens, targets in loader:
            logits = self(images, tokens)
            loss = nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())
            opt.zero_grad()
            loss.backward()
            opt.step()
""",
    "optimizer_handed_to_a_training_helper": """
import torch
import torchvision
def train_one_epoch(model, loader, optimizer, criterion):
    for images, labels in loader:
        optimizer.zero_grad()
        criterion(model(images), labels).backward()
        optimizer.step()
def main(loader):
    model = torchvision.models.vgg16(num_classes=2)
    model.features.eval()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    criterion = torch.nn.CrossEntropyLoss()
    for epoch in range(3):
        train_one_epoch(model, loader, optimizer, criterion)
""",
    "train_false_and_a_parameter_list": """
import torch
from torch import nn
class Siamese(nn.Module):
    def __init__(self):
        super().__init__()
        self.tower = nn.Sequential(nn.Linear(128, 64), nn.Dropout(0.1), nn.ReLU())
        self.score = nn.Linear(64, 1)
    def forward(self, a, b):
        return self.score((self.tower(a) - self.tower(b)).abs())
def train(pairs, labels):
    net = Siamese()
    net.tower.train(False)
    params = list(net.parameters())
    opt = torch.optim.RMSprop(params, lr=1e-3)
    for (a, b), y in zip(pairs, labels):
        opt.zero_grad()
        nn.functional.binary_cross_entropy_with_logits(net(a, b).squeeze(-1), y).backward()
        opt.step()
""",
}

NEAR_MISS = {
    "requires_grad_off_and_a_filtered_optimizer": """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU())
        self.head = nn.Linear(8, 1)
    def forward(self, x):
        return self.head(self.backbone(x))
def finetune(loader):
    model = Net()
    model.backbone.requires_grad_(False)
    model.backbone.eval()
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    for x, y in loader:
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()
""",
    "teacher_in_eval_student_trained": """
import torch
import torch.nn.functional as F
from torch import nn
class Distill(nn.Module):
    def __init__(self):
        super().__init__()
        self.teacher = nn.Sequential(nn.Linear(10, 10), nn.Dropout(0.2), nn.Linear(10, 3))
        self.student = nn.Linear(10, 3)
def run(loader):
    pair = Distill()
    pair.teacher.eval()
    opt = torch.optim.Adam(pair.student.parameters())
    for x in loader:
        with torch.no_grad():
            soft = F.softmax(pair.teacher(x), dim=-1)
        loss = F.kl_div(F.log_softmax(pair.student(x), dim=-1), soft, reduction="batchmean")
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
    "frozen_statistics_with_its_own_learning_rate": """
import torch
from torch import nn
class Segmenter(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.decoder = nn.Conv2d(16, 2, 1)
    def forward(self, x):
        return self.decoder(self.encoder(x))
def train(loader):
    model = Segmenter()
    model.encoder.eval()  # small batches: keep the pretrained BatchNorm statistics, still fine-tune the weights
    opt = torch.optim.SGD(
        [{"params": model.encoder.parameters(), "lr": 1e-4}, {"params": model.decoder.parameters(), "lr": 1e-2}],
        momentum=0.9,
    )
    for x, y in loader:
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
""",
    "encoder_left_out_of_the_optimizer": """
import torch
from torch import nn
class ChangeDetector(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(13, 32, 3), nn.BatchNorm2d(32), nn.ReLU())
        self.head = nn.Conv2d(64, 1, 1)
    def forward(self, a, b):
        return self.head(torch.cat([self.encoder(a), self.encoder(b)], 1))
def train(loader):
    model = ChangeDetector()
    model.encoder.eval()
    params = set(model.parameters()).difference(model.encoder.parameters())
    opt = torch.optim.Adam(params, lr=1e-3)
    for a, b, y in loader:
        opt.zero_grad()
        nn.functional.binary_cross_entropy_with_logits(model(a, b), y).backward()
        opt.step()
""",
    "batchnorm_layer_kept_in_eval": """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 2)
    def forward(self, x):
        return self.fc(self.bn(self.conv(x)).mean((2, 3)))
def train(loader):
    net = Net()
    net.train()
    net.bn.eval()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    for x, y in loader:
        opt.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
""",
    "features_run_under_no_grad": """
import torch
from torch import nn
class Probe(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(64, 32), nn.Dropout(0.1))
        self.classifier = nn.Linear(32, 4)
    def forward(self, x):
        with torch.no_grad():
            h = self.features(x)
        return self.classifier(h)
def train(loader):
    probe = Probe()
    probe.features.eval()
    opt = torch.optim.Adam(probe.parameters())
    for x, y in loader:
        opt.zero_grad()
        nn.functional.cross_entropy(probe(x), y).backward()
        opt.step()
""",
}

SEEN = {
    "backbone_eval_then_model_parameters": "PyTorch Forums 'What does eval() do for BatchNorm at code aspect?' (after "
    "eval() the weights' requires_grad is still True); the case's own spelling",
    "shared_encoder_of_a_pretrained_autoencoder": "BINE022/EEGPT#18 'Backbone not frozen when evaluating linear "
    "probing' (the encoder only set to eval mode); benchmarks/fresh/lint/s04_telemetry_anomaly.py (a tuning script)",
    "train_false_and_a_parameter_list": "hq-deng/RD4AD#33 'why is the encoder set to eval mode instead of freezing "
    "its parameters' (encoder.eval() asked about as a freeze)",
    "frozen_statistics_with_its_own_learning_rate": "hkchengrex/Cutie#135 'pixel and mask encoder were not trained': "
    "the maintainer answers that eval() there only keeps BatchNorm in eval mode and the encoders are still trained",
    "encoder_left_out_of_the_optimizer": "ServiceNow/seasonal-contrast#6 'how to freeze backbone in oscd': the "
    "optimizer gets set(model.parameters()).difference(model.encoder.parameters())",
}
_STAGED = """
import torch
import torch.nn.functional as F
from torch import nn
class StyleNet(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 16, 3), nn.BatchNorm2d(16), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(16, n))
    def forward(self, x):
        return self.head(self.backbone(x))
def freeze_backbone(model):
{freeze}
def make_optimizer(model, lr):
    return torch.optim.SGD({params}, lr=lr, momentum=0.9)
def train_one_epoch(model, loader, optimizer, epoch, freeze_epochs):
    model.train()
    if epoch < freeze_epochs:
        freeze_backbone(model)
    for images, styles in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images), styles)
        loss.backward()
        optimizer.step()
def main(loader, epochs):
    model = StyleNet(10)
    optimizer = make_optimizer(model, 0.01)
    for epoch in range(epochs):
        train_one_epoch(model, loader, optimizer, epoch, 3)
"""
PITFALL["frozen_by_eval_in_a_helper_optimizer_from_another"] = _STAGED.format(
    freeze="    model.backbone.eval()", params="model.parameters()"
)
NEAR_MISS["helper_also_turns_the_gradients_off"] = _STAGED.format(
    freeze="    model.backbone.eval()\n    model.backbone.requires_grad_(False)", params="model.parameters()"
)
NEAR_MISS["optimizer_over_the_head_only"] = _STAGED.format(
    freeze="    model.backbone.eval()", params="model.head.parameters()"
)
SEEN["frozen_by_eval_in_a_helper_optimizer_from_another"] = (
    "fresh set 9's q12 (held-out half, scored, then tuning material): a two-stage fine-tune whose freeze_backbone "
    "helper only calls model.backbone.eval(), the SGD over model.parameters() built by make_optimizer"
)
SEEN["helper_also_turns_the_gradients_off"] = SEEN["frozen_by_eval_in_a_helper_optimizer_from_another"]
SEEN["optimizer_over_the_head_only"] = SEEN["frozen_by_eval_in_a_helper_optimizer_from_another"]

# The part is kept in eval mode by the model class's own train() override, the optimizer built elsewhere over the
# whole model: a linear probe whose "frozen" encoder trains at the probe's learning rate.
_PROBE = """
import torch
from torch import nn
class LinearProbe(nn.Module):
    def __init__(self, backbone, dim, n_classes):
        super().__init__()
        self.backbone = backbone
        self.fc = nn.Linear(dim, n_classes){freeze}
    def train(self, mode: bool = True):
        nn.Module.train(self, mode)
        self.backbone.eval()
        return self
    def forward(self, x):
        return self.fc(self.backbone(x).flatten(1))
def fit(backbone, loader, epochs):
    clf = LinearProbe(backbone, 512, 10)
    opt = torch.optim.AdamW({params}, lr=3e-4)
    for _ in range(epochs):
        clf.train()
        for x, y in loader:
            loss = nn.functional.cross_entropy(clf(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    return clf
"""
PITFALL["kept_in_eval_by_the_class_train_override"] = _PROBE.format(freeze="", params="clf.parameters()")
NEAR_MISS["train_override_with_the_backbone_frozen"] = _PROBE.format(
    freeze="\n        self.backbone.requires_grad_(False)", params="clf.parameters()"
)
NEAR_MISS["train_override_optimizer_over_the_head"] = _PROBE.format(freeze="", params="clf.fc.parameters()")
SEEN["kept_in_eval_by_the_class_train_override"] = (
    "fresh set 15's j12 (held-out half, scored): a Probe whose train(mode) calls super().train(mode) then "
    "self.encoder.eval(), SGD over model.parameters(); the same override in public code (find_string 'def "
    "train(self, mode=True):': super().train(mode), then self.encoder.eval() when freeze_encoder is set)"
)
SEEN["train_override_with_the_backbone_frozen"] = SEEN["kept_in_eval_by_the_class_train_override"]
SEEN["train_override_optimizer_over_the_head"] = SEEN["kept_in_eval_by_the_class_train_override"]
