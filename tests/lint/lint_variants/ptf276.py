"""PTF276 (frozen-by-name-filter): a freezing loop over named_parameters() whose test on the name is false
for every parameter of the model's head."""

PITFALL = {
    "fc_filter_on_mobilenet": """
import torch
from torch import nn
from torchvision import models
def build(num_classes):
    model = models.mobilenet_v3_large(weights="DEFAULT")
    model.classifier[3] = nn.Linear(model.classifier[3].in_features, num_classes)
    for name, param in model.named_parameters():
        if "fc" not in name:
            param.requires_grad = False
    return model
""",
    "bn_only_on_mobilenet_v2": """
import torch
import torchvision.models as models
mnet = models.mobilenet_v2(pretrained=True)
for name, param in mnet.named_parameters():
    if("bn" not in name):
        param.requires_grad_(False)
optimizer = torch.optim.Adam(filter(lambda p: p.requires_grad, mnet.parameters()), lr=1e-3)
""",
    "keep_list_from_option": """
import argparse
import torch
from torch import nn
import torchvision
def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--unfreeze", nargs="*", default=["fc", "layer4"])
    return parser.parse_args()
def make_model(n):
    net = torchvision.models.efficientnet_b3(weights="IMAGENET1K_V1")
    net.classifier[1] = nn.Linear(1536, n)
    return net
def unfreeze_only(net, patterns):
    for name, p in net.named_parameters():
        p.requires_grad = any(pat in name for pat in patterns)
def main():
    args = get_args()
    net = make_model(5)
    unfreeze_only(net, args.unfreeze)
    return torch.optim.SGD([p for p in net.parameters() if p.requires_grad], lr=0.01)
""",
    "own_class_head_named_classifier": """
import torch
from torch import nn
class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3)
        self.fc1 = nn.Linear(16, 16)
    def forward(self, x):
        return self.fc1(self.conv(x).mean((2, 3)))
class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.backbone = Backbone()
        self.classifier = nn.Linear(16, n)
    def forward(self, x):
        return self.classifier(self.backbone(x))
model = Model(10)
for n, p in model.named_parameters():
    if not n.startswith(("fc", "head")):
        p.requires_grad = False
""",
    "skip_with_continue": """
import torch
from torchvision.models import vit_b_16
TRAIN_KEYS = ("head.", "norm")
def freeze(model):
    for name, param in model.named_parameters():
        if name.startswith(TRAIN_KEYS):
            continue
        param.requires_grad = False
model = vit_b_16(weights="DEFAULT")
freeze(model)
""",
    "unfreeze_loop_after_full_freeze_list": """
import torch
from torch import nn
import torchvision
model = torchvision.models.densenet121(weights="DEFAULT")
model.classifier = nn.Linear(1024, 3)
KEEP = ["denseblock4", "fc"]
for name, param in model.named_parameters():
    if any(k in name for k in KEEP):
        param.requires_grad = True
    else:
        param.requires_grad = False
""",
}

PITFALL["layer4_only_on_resnet"] = """
import torch
from torch import nn
import torchvision
model = torchvision.models.resnet50(weights="IMAGENET1K_V2")
model.fc = nn.Linear(model.fc.in_features, 12)
for name, param in model.named_parameters():
    param.requires_grad = name.startswith("layer4")
optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.01)
"""

NEAR_MISS = {
    "fc_filter_on_resnet": """
import torch
from torch import nn
from torchvision import models
def build(num_classes):
    model = models.resnet50(weights="DEFAULT")
    model.fc = nn.Linear(model.fc.in_features, num_classes)
    for name, param in model.named_parameters():
        if "fc" not in name:
            param.requires_grad = False
    return model
""",
    "classifier_filter_on_efficientnet": """
import torch
from torchvision import models
model = models.efficientnet_b0(weights="DEFAULT")
for name, param in model.named_parameters():
    param.requires_grad = "classifier" in name
""",
    "head_replaced_after_freezing": """
import torch
from torch import nn
from torchvision.models import mobilenet_v2
def get_model(classes):
    model = mobilenet_v2(weights="IMAGENET1K_V2")
    for name, param in model.named_parameters():
        if "fc" not in name:
            param.requires_grad = False
    model.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(1280, classes))
    return model
""",
    "backbone_only_loop": """
import torch
from torch import nn
import torchvision
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = torchvision.models.efficientnet_b0()
        self.head = nn.Linear(1000, 4)
    def forward(self, x):
        return self.head(self.backbone(x))
net = Net()
for name, p in net.backbone.named_parameters():
    if "fc" not in name:
        p.requires_grad = False
""",
    "norm_layers_frozen_only": """
import torch
from torchvision import models
model = models.convnext_tiny(weights="DEFAULT")
for name, param in model.named_parameters():
    if "norm" in name:
        param.requires_grad = False
""",
    "unknown_model": """
import timm
def freeze(model):
    for name, p in model.named_parameters():
        if "fc" not in name:
            p.requires_grad = False
freeze(timm.create_model("efficientnet_b0", pretrained=True))
""",
}

SEEN = {
    "bn_only_on_mobilenet_v2": "https://discuss.pytorch.org/t/why-if-bn-not-in-name-param-requires-grad-false/114098 "
    "(torchvision's mobilenet_v2 names no parameter 'bn': the filter freezes the whole model, its classifier too)",
    "fc_filter_on_mobilenet": "benchmarks/fresh/lint2 t07 and lint7 y01 (written outside the project: a ResNet "
    "tutorial's 'fc' filter on MobileNetV3 / EfficientNet, whose head is 'classifier')",
    "backbone_only_loop": "stored public code (an EfficientNet_Base wrapper freezing model.backbone.named_parameters() "
    "by 'classifier')",
}

# The substrings kept trainable come from a config dict's key, the dict handed to main() as its default: read
# through the key. The head is named intent_head; "classifier" matches nothing.
_CONFIG = """
import torch
from torch import nn
CFG = {{"train_modules": {modules}, "lr": 5e-4}}
class IntentModel(nn.Module):
    def __init__(self, encoder, dim, n):
        super().__init__()
        self.backbone = encoder
        self.intent_head = nn.Linear(dim, n)
    def forward(self, ids):
        return self.intent_head(self.backbone(ids))
def configure_trainable(model, patterns):
    for name, param in model.named_parameters():
        param.requires_grad = any(p in name for p in patterns)
    return [p for p in model.parameters() if p.requires_grad]
def main(encoder, cfg=CFG):
    model = IntentModel(encoder, 192, 77)
    params = configure_trainable(model, cfg["train_modules"])
    return torch.optim.AdamW(params, lr=cfg["lr"])
if __name__ == "__main__":
    main(torch.load("encoder.pt", weights_only=False))
"""
PITFALL["kept_substrings_from_a_config_key"] = _CONFIG.format(modules='["pooler", "classifier"]')
NEAR_MISS["kept_substrings_from_a_config_key_naming_the_head"] = _CONFIG.format(modules='["pooler", "intent_head"]')
SEEN["kept_substrings_from_a_config_key"] = (
    "fresh set 16's h13 (tuning half): configure_trainable(model, cfg['train_modules']) with CFG['train_modules'] = "
    "['pooler', 'classifier'] and a head named intent_head"
)
SEEN["kept_substrings_from_a_config_key_naming_the_head"] = "the same configuration naming the head, the fix"
