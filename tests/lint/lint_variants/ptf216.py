"""PTF216 (model-not-moved-with-new-layer): a layer assigned into a model after the model was moved
or converted, with no move after it."""

PITFALL = {
    "resnet_head_after_to": """
import torch
import torchvision
from torch import nn
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = torchvision.models.resnet18(weights="IMAGENET1K_V1")
model = model.to(device)
model.fc = nn.Linear(model.fc.in_features, 10)
def predict(x):
    return model(x.to(device))
""",
    "moved_at_construction": """
import torch.nn as nn
from torchvision import models
def build(num_classes, device):
    net = models.vgg16(weights=None).cuda()
    net.classifier[6] = nn.Linear(4096, num_classes)
    net.eval()
    return net
""",
    "sequential_slot_from_a_function": """
import torch
from torch import nn
def make_head(width):
    return nn.Sequential(nn.Linear(width, 64), nn.ReLU(), nn.Linear(64, 2))
def run(x):
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    model.double()
    model[2] = make_head(32)
    return model(x.double())
""",
    "nested_block_user_class": """
import torch
from torch import nn
class Adapter(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.down = nn.Linear(dim, dim // 4)
        self.up = nn.Linear(dim // 4, dim)
    def forward(self, x):
        return x + self.up(torch.relu(self.down(x)))
class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3)
        self.head = nn.Sequential(nn.Flatten(), nn.LazyLinear(32))
    def forward(self, x):
        return self.head(self.stem(x))
def adapt(device):
    model = Backbone()
    model.to(device, dtype=torch.bfloat16)
    model.head.proj = Adapter(32)
    return model
""",
    "setattr_after_half": """
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(8, 8)
        self.fc = nn.Linear(8, 3)
    def forward(self, x):
        return self.fc(self.body(x))
def finetune(x, classes):
    net = Net()
    net.half()
    setattr(net, "fc", nn.Linear(8, len(classes)))
    return net(x.half())
""",
    "policy_loader_rebuilds_head": """
import torch
from torch import nn
class ActionHead(nn.Module):
    def __init__(self, horizon):
        super().__init__()
        self.proj = nn.Linear(64, horizon * 7)
    def forward(self, x):
        return self.proj(x)
class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(32, 64)
        self.action_head = ActionHead(16)
    def forward(self, x):
        return self.action_head(self.backbone(x))
class Runner:
    def __init__(self, device, horizon):
        self.device = device
        self.horizon = horizon
    def load(self, path):
        model = Policy()
        model.load_state_dict(torch.load(path))
        model.eval()
        model.to(device=self.device)
        if self.horizon != 16:
            new_head = ActionHead(self.horizon)
            new_head.load_state_dict(model.action_head.state_dict(), strict=False)
            model.action_head = new_head
        return model
""",
}

NEAR_MISS = {
    "replaced_then_moved": """
import torch
import torchvision
from torch import nn
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = torchvision.models.resnet18(weights=None)
model.fc = nn.Linear(model.fc.in_features, 10)
model = model.to(device)
""",
    "moved_again_after": """
import torch
from torch import nn
def run(x, device):
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    model.to(device)
    model[2] = nn.Linear(32, 2)
    model.to(device)
    return model(x)
""",
    "built_on_the_device": """
import torch
from torch import nn
def run(x, device):
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).to(device)
    model[2] = nn.Linear(32, 2, device=device)
    model.head = nn.Linear(2, 2).to(device)
    return model(x)
""",
    "identity_head_has_no_parameters": """
import torch
import torchvision
from torch import nn
model = torchvision.models.resnet50(weights=None).cuda()
model.fc = nn.Identity()
model.dropout = nn.Dropout(0.2)
""",
    "moved_to_cpu_only": """
import torch
from torch import nn
def run(x):
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    model.to("cpu")
    model[2] = nn.Linear(32, 2)
    return model(x)
""",
    "new_layer_moved_itself": """
import torch
from torch import nn
def run(x, device):
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    model.cuda()
    head = nn.Linear(32, 2)
    head.cuda()
    model[2] = head
    model.fc.cuda()
    return model(x)
""",
    "handed_to_a_trainer": """
import torch
from torch import nn
import lightning as L
def fit(loader):
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    model.to("cuda")
    model[2] = nn.Linear(32, 2)
    trainer = L.Trainer(accelerator="gpu")
    trainer.fit(model, loader)
""",
    "other_branch": """
import torch
from torch import nn
def build(pretrained, device):
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    if pretrained:
        model.to(device)
    else:
        model[2] = nn.Linear(32, 2)
    return model
""",
    "submodule_of_self_in_init": """
import torch
import torchvision
from torch import nn
class Classifier(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.backbone = torchvision.models.resnet18(weights=None)
        self.backbone.to(memory_format=torch.channels_last)
        self.backbone.fc = nn.Linear(512, n)
    def forward(self, x):
        return self.backbone(x)
""",
    "name_rebound_after_the_move": """
import torch
from torch import nn
def run(x, device):
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    model.to(device)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    model[2] = nn.Linear(32, 2)
    return model(x)
""",
}

PREVIEW = {
    "imported_head_class": """
import torch
from mylib.heads import FlowHead
def load(model, device, horizon):
    model.to(device=device)
    model.action_head = FlowHead(horizon)
    return model
""",
}

SEEN = {
    "policy_loader_rebuilds_head": "https://github.com/NVIDIA/Isaac-GR00T/issues/280 (the policy loader calls model.to(device=self.device), then builds a new FlowmatchingActionHead and assigns it; fixed in NVIDIA/Isaac-GR00T#294 by moving after)",
    "nested_block_user_class": "https://github.com/open-mmlab/mmdetection/issues/638 (a block added to the FPN neck after the model was on the GPU: 'Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same')",
    "resnet_head_after_to": "search code 'model.fc = nn.Linear(num_ftrs' (transfer-learning scripts replacing resnet's fc; the correct ones move after, as in near miss replaced_then_moved)",
    "sequential_slot_from_a_function": "the spelling of this corpus's case (model.to(device, dtype), then model[2] = new_head())",
}

# The head replaced after the move, the model then handed only to helpers of the file that move nothing
# (a freezing loop, an evaluation that moves its batches): fresh set 2's t07, missed since its first score.
_HELPERS = """
import torch
from torch import nn
from torchvision import models
def freeze_backbone(model):
    for name, param in model.named_parameters():
        if "classifier" not in name:
            param.requires_grad = False
def evaluate(model, loader, device):
    model.eval()
    with torch.no_grad():
        return sum((model(x.to(device)).argmax(1) == y.to(device)).sum().item() for x, y in loader)
def place(model, device):
    model.to(device)
def main(loader, device, classes):
    model = models.mobilenet_v3_large(weights="DEFAULT")
    model.to(device)
    model.classifier[3] = nn.Linear(model.classifier[3].in_features, classes)
    freeze_backbone(model){place}
    return evaluate(model, loader, device)
"""
PITFALL["handed_only_to_helpers_that_move_nothing"] = _HELPERS.format(place="")
NEAR_MISS["handed_to_a_helper_that_moves_it"] = _HELPERS.format(place="\n    place(model, device)")
SEEN["handed_only_to_helpers_that_move_nothing"] = "benchmarks/fresh/lint2 t07_leaf_disease_finetune.py (tuning material)"

# The move and the new layer in two helpers: one returns the model moved, the other is handed it and
# replaces a layer (fresh set 12's k01, tuning half, missed at its first run). Quiet where the caller moves
# what it gets back, or where the model handed over was never moved.
_TWO_HELPERS = """
import torch
from torch import nn
import torchvision
def pretrained(device):
    net = torchvision.models.resnet18(weights="DEFAULT")
    return net{move}
def new_head(net, classes):
    net.fc = nn.Linear(net.fc.in_features, classes)
    return net
def main(device):
    model = new_head(pretrained(device), 5){after}
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    return model, opt
"""
PITFALL["head_replaced_in_a_helper_handed_a_moved_model"] = _TWO_HELPERS.format(move=".to(device)", after="")
NEAR_MISS["helper_result_moved_by_the_caller"] = _TWO_HELPERS.format(
    move=".to(device)", after="\n    model = model.to(device)"
)
NEAR_MISS["helper_handed_a_model_never_moved"] = _TWO_HELPERS.format(
    move="", after='\n    batch = torch.load("probe.pt", weights_only=True).to(device)'
)
SEEN["head_replaced_in_a_helper_handed_a_moved_model"] = (
    "benchmarks/fresh/lint12 k01_pcam_patch_classifier.py (tuning half, missed at its first run)"
)

# The function returns the model with its new head, and its caller hands it to a trainer that moves it
# (torchcp examples/classification_ua_trainer_cifar10.py:75, round 15's tuning half, read harmless): quiet.
_RETURNED = """
import torch
from torch import nn
import torchvision
from trainers import Trainer
def setup(device):
    model = torchvision.models.resnet18(weights=None).to(device)
    model.fc = nn.Linear(model.fc.in_features, 10)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return model, opt
if __name__ == "__main__":
    model, opt = setup("cuda")
    {after}
"""
NEAR_MISS["returned_then_handed_to_a_trainer"] = _RETURNED.format(after="Trainer(model=model, device='cuda').fit()")
PITFALL["returned_then_trained_here"] = _RETURNED.format(after="print(model(torch.zeros(1, 3, 32, 32, device='cuda')))")
SEEN["returned_then_handed_to_a_trainer"] = (
    "ml-stat-Sustech/TorchCP examples/classification_ua_trainer_cifar10.py:75 (round 15's tuning half, read harmless)"
)
