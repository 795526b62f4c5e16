"""PTF266 (bias-before-batchnorm): a convolution with its bias on, straight into a BatchNorm."""

PITFALL = {
    "double_conv_with_bias_true": """
from torch import nn
class DoubleConv(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.block = nn.Sequential(
            nn.Conv2d(cin, cout, kernel_size=3, padding=1, bias=True),
            nn.BatchNorm2d(cout),
            nn.ReLU(inplace=True),
            nn.Conv2d(cout, cout, kernel_size=3, padding=1, bias=True),
            nn.BatchNorm2d(cout),
            nn.ReLU(inplace=True),
        )
    def forward(self, x):
        return self.block(x)
""",
    "attributes_nested_in_forward": """
import torch.nn as nn
import torch.nn.functional as F
class Stem(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, 3, stride=2, padding=1, bias=True)
        self.bn1 = nn.BatchNorm2d(32)
    def forward(self, x):
        return F.relu(self.bn1(self.conv1(x)))
""",
    "conv1d_then_bn_rebinding": """
import torch
from torch import nn
class DownConv(nn.Module):
    def __init__(self, c_in, bias=True):
        super().__init__()
        self.down = nn.Conv1d(c_in, c_in, kernel_size=3, padding=1, bias=bias)
        self.norm = nn.BatchNorm1d(c_in)
        self.act = nn.ELU()
    def forward(self, x):
        x = self.down(x.permute(0, 2, 1))
        x = self.norm(x)
        return self.act(x).transpose(1, 2)
block = DownConv(512)
""",
    "layer_list_unpacked_into_sequential": """
from torch import nn
def point_mlp(widths):
    layers = []
    for a, b in zip(widths[:-1], widths[1:]):
        layers += [nn.Conv1d(a, b, 1, bias=True), nn.BatchNorm1d(b), nn.ReLU()]
    return nn.Sequential(*layers)
encoder = point_mlp([3, 64, 128, 1024])
""",
    "transposed_conv_bias_true_in_generator": """
import torch.nn as nn
generator = nn.Sequential(
    nn.ConvTranspose2d(100, 256, 4, 1, 0, bias=True),
    nn.BatchNorm2d(256),
    nn.ReLU(True),
    nn.ConvTranspose2d(256, 3, 4, 2, 1, bias=False),
    nn.Tanh(),
)
""",
    "bias_flag_from_the_call_site": """
from torch import nn
def conv_bn(cin, cout, stride=1, bias=True):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=bias), nn.BatchNorm2d(cout), nn.ReLU6(inplace=True))
features = nn.Sequential(conv_bn(3, 16, 2), conv_bn(16, 32))
""",
    "positional_bias_and_sync_bn": """
import torch
head = torch.nn.Sequential(
    torch.nn.Conv2d(256, 128, 3, 1, 1, 1, 1, True),
    torch.nn.SyncBatchNorm(128),
    torch.nn.ReLU(),
)
""",
    "named_layer_then_listed": """
from torch import nn
def make_stem(c_in, width):
    conv = nn.Conv2d(c_in, width, kernel_size=7, stride=2, padding=3, bias=True)
    layers = [conv, nn.BatchNorm2d(width), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    return nn.Sequential(*layers)
""",
}

PREVIEW = {
    "double_conv_in_a_sequential": """
from torch import nn
class DoubleConv(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.block = nn.Sequential(
            nn.Conv2d(cin, cout, kernel_size=3, padding=1),
            nn.BatchNorm2d(cout),
            nn.ReLU(inplace=True),
            nn.Conv2d(cout, cout, kernel_size=3, padding=1),
            nn.BatchNorm2d(cout),
            nn.ReLU(inplace=True),
        )
    def forward(self, x):
        return self.block(x)
""",
    "layer_list_default_bias": """
from torch import nn
def point_mlp(widths):
    layers = []
    for a, b in zip(widths[:-1], widths[1:]):
        layers += [nn.Conv1d(a, b, 1), nn.BatchNorm1d(b), nn.ReLU()]
    return nn.Sequential(*layers)
encoder = point_mlp([3, 64, 128, 1024])
""",
}

NEAR_MISS = {
    "bias_off_before_bn": """
from torch import nn
block = nn.Sequential(
    nn.Conv2d(3, 16, kernel_size=3, padding=1, bias=False),
    nn.BatchNorm2d(16),
    nn.ReLU(inplace=True),
)
""",
    "relu_between_conv_and_bn": """
from torch import nn
block = nn.Sequential(
    nn.Conv2d(3, 16, kernel_size=3, padding=1),
    nn.ReLU(inplace=True),
    nn.BatchNorm2d(16),
)
""",
    "layer_norm_after_linear": """
from torch import nn
mlp = nn.Sequential(nn.Linear(64, 128), nn.LayerNorm(128), nn.GELU(), nn.Linear(128, 10))
""",
    "group_norm_after_conv": """
from torch import nn
block = nn.Sequential(nn.Conv2d(64, 64, 3, padding=1), nn.GroupNorm(8, 64), nn.SiLU())
""",
    "bias_only_without_bn": """
from torch import nn
class ConvBlock(nn.Module):
    def __init__(self, cin, cout, use_bn):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1, bias=not use_bn)
        self.bn = nn.BatchNorm2d(cout) if use_bn else nn.Identity()
    def forward(self, x):
        return self.bn(self.conv(x)).relu()
""",
    "conv_output_also_used_raw": """
from torch import nn
class Branch(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.bn = nn.BatchNorm2d(c)
    def forward(self, x):
        y = self.conv(x)
        return self.bn(y) + y
""",
    "conv_used_twice_once_without_bn": """
from torch import nn
class Shared(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(8, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
    def forward(self, x, skip):
        return self.bn(self.conv(x)) + self.conv(skip)
""",
    "module_list_applied_in_another_order": """
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.parts = nn.ModuleList([nn.Linear(8, 8), nn.BatchNorm1d(8)])
    def forward(self, x):
        return self.parts[0](x.relu())
""",
}

NEAR_MISS["bias_before_a_batchnorm_kept_in_eval"] = """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, bias=True)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 2)
    def forward(self, x):
        return self.fc(self.bn(self.conv(x)).mean((2, 3)))
def train(loader):
    net = Net()
    net.train()
    net.bn.eval()  # frozen statistics: the bias before it shifts the output
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    for x, y in loader:
        opt.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
"""

SEEN = {
    "double_conv_in_a_sequential": "4uiiurz1/pytorch-nested-unet#39 (Conv2D layers used with the default bias=True before BatchNorm)",
    "double_conv_with_bias_true": "milesial/Pytorch-UNet#325 (delete convolution bias before BN); 4uiiurz1/pytorch-nested-unet#39",
    "attributes_nested_in_forward": "huawei-noah/VanillaNet#32 (bias defaults to True for nn.Conv2d before BatchNorm)",
    "conv1d_then_bn_rebinding": "Informer2020 ConvLayer style (x = self.downConv(x); x = self.norm(x)); d-li14/face-attribute-prediction#8",
    "transposed_conv_bias_true_in_generator": "LAION-AI/phenaki#3 (Consider using bias=False when using batchnorm); sahilkhose/StackGAN-BERT#2",
    "bias_flag_from_the_call_site": "suragnair/alpha-zero-general#73 (w/o bias before batch normalization)",
    "relu_between_conv_and_bn": "cases/training/bias_before_batchnorm.py near_miss: conv, ReLU, then BatchNorm",
}

NEAR_MISS["batchnorm_only_when_configured"] = """
import torch.nn as nn
class ResidualConvUnit(nn.Module):
    def __init__(self, features, activation, bn):
        super().__init__()
        self.bn = bn
        self.conv1 = nn.Conv2d(features, features, kernel_size=3, stride=1, padding=1, bias=True)
        if self.bn == True:
            self.bn1 = nn.BatchNorm2d(features)
        self.activation = activation
    def forward(self, x):
        out = self.activation(x)
        out = self.conv1(out)
        if self.bn == True:
            out = self.bn1(out)
        out = self.activation(out)
        return out + x
"""
SEEN["batchnorm_only_when_configured"] = (
    "DepthAnything/Depth-Anything-V2 depth_anything_v2/util/blocks.py (ResidualConvUnit, DPT's: the "
    "BatchNorm only with bn=True, which no caller passes; round 6's read held-out half)"
)
