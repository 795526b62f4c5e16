"""PTF253 (bn-running-stats-in-eval-with-frozen): a part frozen with requires_grad=False, holding BatchNorm,
trained in train() mode with nothing putting it back in eval()."""

PITFALL = {
    "resnet_all_but_fc": """
import torch
import torch.nn.functional as F
from torch import nn
from torchvision import models
def build(num_classes):
    net = models.resnet50(weights="IMAGENET1K_V2")
    net.fc = nn.Linear(net.fc.in_features, num_classes)
    for name, p in net.named_parameters():
        if not name.startswith("fc."):
            p.requires_grad_(False)
    return net
def main(loader, epochs):
    model = build(10).cuda()
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.01)
    for epoch in range(epochs):
        model.train()
        for x, y in loader:
            opt.zero_grad()
            F.cross_entropy(model(x.cuda()), y.cuda()).backward()
            opt.step()
""",
    "backbone_attribute_of_own_class": """
import torch
from torch import nn
import torchvision
class Classifier(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.backbone = torchvision.models.resnet18(pretrained=True)
        self.backbone.fc = nn.Identity()
        for p in self.backbone.parameters():
            p.requires_grad = False
        self.head = nn.Linear(512, n)
    def forward(self, x):
        return self.head(self.backbone(x))
def fit(model, loader, opt, crit):
    model.train()
    for x, y in loader:
        opt.zero_grad()
        crit(model(x), y).backward()
        opt.step()
model = Classifier(5)
fit(model, [], torch.optim.Adam(model.head.parameters()), nn.CrossEntropyLoss())
""",
    "sequential_of_frozen_backbone": """
import torch
from torch import nn
backbone = nn.Sequential(nn.Conv2d(3, 16, 3), nn.BatchNorm2d(16), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
backbone.load_state_dict(torch.load("pretrained.pt"))
backbone.requires_grad_(False)
model = nn.Sequential(backbone, nn.Linear(16, 2))
opt = torch.optim.Adam(model[1].parameters())
def epoch(loader):
    model.train()
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
    "children_but_last": """
import torch
import torchvision.models as models
from torch import nn
model = models.mobilenet_v2(pretrained=True)
for child in list(model.children())[:-1]:
    for param in child.parameters():
        param.requires_grad = False
model.classifier[1] = nn.Linear(1280, 3)
optimizer = torch.optim.SGD(model.classifier.parameters(), lr=1e-3)
for epoch in range(10):
    model.train()
    for images, labels in train_loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(images), labels).backward()
        optimizer.step()
""",
    "freeze_helper_then_trainer": """
import torch
import torch.nn as nn
import timm
def freeze_encoder(net):
    for p in net.encoder.parameters():
        p.requires_grad = False
class SegNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = timm.create_model("resnet34", pretrained=True, features_only=True)
        self.decoder = nn.Conv2d(512, 2, 1)
    def forward(self, x):
        return self.decoder(self.encoder(x)[-1])
class Trainer:
    def __init__(self, model, opt):
        self.model, self.opt = model, opt
    def run_epoch(self, loader):
        self.model.train()
        for x, y in loader:
            self.opt.zero_grad()
            nn.functional.cross_entropy(self.model(x), y).backward()
            self.opt.step()
net = SegNet()
freeze_encoder(net)
trainer = Trainer(net, torch.optim.AdamW(net.decoder.parameters()))
""",
    "freeze_bn_once_in_init": """
import torch
from torch import nn
class Matting(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(4, 32, 3), nn.BatchNorm2d(32), nn.ReLU())
        self.dec = nn.Conv2d(32, 1, 1)
        self.freeze_bn()
    def freeze_bn(self):
        for m in self.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.eval()
                m.weight.requires_grad = False
                m.bias.requires_grad = False
    def forward(self, x):
        return self.dec(self.enc(x))
net = Matting()
def train(loader, opt):
    for epoch in range(5):
        net.train()
        for x, y in loader:
            opt.zero_grad()
            nn.functional.l1_loss(net(x), y).backward()
            opt.step()
""",
}

NEAR_MISS = {
    "backbone_eval_after_train": """
import torch
from torch import nn
from torchvision import models
model = models.resnet50(pretrained=True)
for p in model.parameters():
    p.requires_grad = False
model.fc = nn.Linear(2048, 10)
opt = torch.optim.SGD(model.fc.parameters(), lr=0.1)
for epoch in range(3):
    model.train()
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.eval()
    for x, y in loader:
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
""",
    "train_override_keeps_bn_eval": """
import torch
from torch import nn
import torchvision
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = torchvision.models.resnet18(pretrained=True)
        self.features.requires_grad_(False)
        self.fc = nn.Linear(1000, 2)
    def train(self, mode=True):
        super().train(mode)
        self.features.eval()
        return self
    def forward(self, x):
        return self.fc(self.features(x))
net = Net()
net.train()
""",
    "apply_set_bn_eval": """
import torch
from torchvision import models
def set_batchnorm_eval(m):
    if m.__class__.__name__.find("BatchNorm") != -1:
        m.eval()
model = models.resnet101(pretrained=True)
for p in model.layer1.parameters():
    p.requires_grad = False
for epoch in range(10):
    model.train()
    model.apply(set_batchnorm_eval)
""",
    "frozen_head_only_no_bn": """
import torch
from torch import nn
from torchvision import models
model = models.resnet18(pretrained=True)
for p in model.fc.parameters():
    p.requires_grad = False
model.train()
""",
    "frozen_teacher_not_trained": """
import torch
from torch import nn
from torchvision import models
teacher = models.resnet50(pretrained=True)
for p in teacher.parameters():
    p.requires_grad = False
teacher.eval()
student = models.resnet18()
def epoch(loader, opt):
    student.train()
    for x, _ in loader:
        with torch.no_grad():
            t = teacher(x)
        loss = nn.functional.mse_loss(student(x), t)
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
    "momentum_encoder": """
import torch
from torch import nn
import torchvision
class MoCo(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder_q = torchvision.models.resnet50(num_classes=128)
        self.encoder_k = torchvision.models.resnet50(num_classes=128)
        for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            param_k.data.copy_(param_q.data)
            param_k.requires_grad = False
    @torch.no_grad()
    def momentum_update(self, m=0.999):
        for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            param_k.data = param_k.data * m + param_q.data * (1.0 - m)
model = MoCo()
model.train()
""",
    "byol_target_network": """
import copy
import torch
from torch import nn
from torchvision.models import resnet50
class BYOL(nn.Module):
    def __init__(self):
        super().__init__()
        self.online = resnet50()
        self.target = copy.deepcopy(self.online)
        for p in self.target.parameters():
            p.requires_grad = False
    @torch.no_grad()
    def update_target(self, tau):
        for po, pt in zip(self.online.parameters(), self.target.parameters()):
            pt.mul_(tau).add_(po, alpha=1 - tau)
model = BYOL()
model.train()
""",
    "frozen_vgg_without_bn": """
import torch
from torch import nn
from torchvision import models
class Perceptual(nn.Module):
    def __init__(self):
        super().__init__()
        self.vgg = models.vgg16(pretrained=True).features[:16]
        for p in self.vgg.parameters():
            p.requires_grad = False
    def forward(self, x, y):
        return nn.functional.l1_loss(self.vgg(x), self.vgg(y))
loss_net = Perceptual()
loss_net.train()
""",
    "track_running_stats_off": """
import torch
from torch import nn
backbone = nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8, track_running_stats=False))
for p in backbone.parameters():
    p.requires_grad = False
model = nn.Sequential(backbone, nn.Linear(8, 1))
model.train()
""",
}

SEEN = {
    "resnet_all_but_fc": "https://github.com/pytorch/pytorch/issues/86590 (for param in net.parameters(): param.requires_grad = False on a resnet50, alternating model.train()/eval(): every BatchNorm statistic changed)",
    "freeze_bn_once_in_init": "https://github.com/poppinace/indexnet_matting/issues/35 (freeze_bn() puts BN in eval once; net.train() every epoch undoes it) and https://github.com/pgniewko/gt-pyg/issues/112 (freeze() eval mode reset by the next model.train())",
    "apply_set_bn_eval": "https://github.com/filipradenovic/cnnimageretrieval-pytorch/issues/19 (model.train(); model.apply(set_batchnorm_eval))",
    "train_override_keeps_bn_eval": "https://github.com/nbei/Deep-Flow-Guided-Video-Inpainting/issues/18 (ResNet.train(mode) overridden to put every BatchNorm2d back in eval)",
    "momentum_encoder": "https://github.com/lightly-ai/lightly/issues/1438 (maintainers: MoCo, DINO, MSN leave a momentum encoder's BatchNorm in train mode on purpose)",
    "backbone_eval_after_train": "https://github.com/isht7/pytorch-deeplab-resnet/issues/39 (running statistics kept constant by eval mode during training)",
    "children_but_last": "transfer-learning tutorials: for child in list(model.children())[:-1]: freeze; model.train() each epoch",
}

NEAR_MISS["frozen_only_in_the_other_mode"] = """
import torch
from torch import nn
from torchvision import models
def main(args, loader):
    model = models.resnet50()
    if args.weights == "freeze":
        model.requires_grad_(False)
        model.fc.requires_grad_(True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for images, target in loader:
        if args.weights == "finetune":
            model.train()
        elif args.weights == "freeze":
            model.eval()
        loss = nn.functional.cross_entropy(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""
SEEN["frozen_only_in_the_other_mode"] = (
    "facebookresearch/barlowtwins evaluate.py (round 5's tuning half): the backbone is frozen only when "
    "--weights freeze, and model.train() runs only when --weights finetune"
)
