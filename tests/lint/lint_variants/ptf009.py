"""PTF009: a linear-mode resize at the default align_corners beside one with align_corners=True."""

PITFALL = {
    "two_interpolates": """
import torch.nn.functional as F
def resize(x, y):
    a = F.interpolate(x, size=(64, 64), mode="bilinear", align_corners=True)
    b = F.interpolate(y, size=(64, 64), mode="bilinear")
    return a, b
""",
    "positional_mode": """
import torch.nn.functional as F
def up(x, feat):
    x = F.interpolate(x, None, 2, "bilinear")
    feat = F.interpolate(feat, scale_factor=2, mode="bilinear", align_corners=True)
    return x + feat
""",
    "upsample_module": """
import torch.nn as nn
import torch.nn.functional as F
def build(x):
    up = nn.Upsample(scale_factor=2, mode="bilinear")
    return up(x), F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True)
""",
    "from_import_in_loop": """
from torch.nn.functional import interpolate
def pyramid(feats):
    out = []
    for f in feats:
        out.append(interpolate(f, scale_factor=2, mode="bicubic"))
    out.append(interpolate(feats[0], scale_factor=2, mode="bicubic", align_corners=True))
    return out
""",
}

NEAR_MISS = {
    "all_default": """
import torch.nn.functional as F
def resize(x, y):
    return F.interpolate(x, scale_factor=2, mode="bilinear"), F.interpolate(y, scale_factor=2, mode="bilinear")
""",
    "all_explicit": """
import torch.nn.functional as F
def resize(x, y):
    a = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True)
    b = F.interpolate(y, scale_factor=2, mode="bilinear", align_corners=False)
    return a, b
""",
    "nearest_beside_true": """
import torch.nn.functional as F
def resize(x, m):
    return F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True), F.interpolate(m, scale_factor=2, mode="nearest")
""",
}

SEEN = {
    "two_interpolates": "https://github.com/microsoft/ProDA/issues/43 (teacher resized with align_corners=True)",
    "all_default": "timm/models/hiera.py (position-embedding resize at the default; benchmarks/lint_review.md)",
}

# round 2: the same input resize, align_corners=True when training and the default when predicting
PITFALL["train_and_predict_functions"] = """
import torch.nn.functional as F
def training_step(model, batch):
    x = F.interpolate(batch, size=(512, 512), mode="bilinear", align_corners=True)
    return model(x)
def infer(model, image):
    return model(F.interpolate(image, size=(512, 512), mode="bilinear"))
"""
NEAR_MISS["different_resizes_in_one_file"] = """
import torch.nn.functional as F
def decode(feat):
    return F.interpolate(feat, scale_factor=2, mode="bilinear", align_corners=True)
def preprocess(image):
    return F.interpolate(image, size=(224, 224), mode="bilinear")
"""
SEEN["train_and_predict_functions"] = "https://github.com/microsoft/ProDA/issues/43 (teacher output resized with align_corners=True in training code)"

# round 21 (held-out, after its reading): two different resizes in one function, each done alike in training
# and inference (a decoder's skip resize with align_corners=True, its logits upsampled x4 at the default; LapIRN's
# input downsampled at the default and its flow upsampled back with True) are not one resize done two ways
NEAR_MISS["in_forward"] = """
import torch.nn as nn
import torch.nn.functional as F
class Decoder(nn.Module):
    def forward(self, x, skip):
        x = F.interpolate(x, size=skip.shape[2:], mode="bilinear", align_corners=True)
        logits = F.interpolate(x, scale_factor=4, mode="bilinear")
        return logits
"""
NEAR_MISS["input_down_flow_up"] = """
import torch.nn.functional as F
def train_step(model, X, Y, imgshape, ori_imgshape):
    X = F.interpolate(X, size=imgshape, mode="trilinear")
    Y = F.interpolate(Y, size=imgshape, mode="trilinear")
    flow = model(X, Y)
    return F.interpolate(flow, size=ori_imgshape, mode="trilinear", align_corners=True)
"""
PITFALL["same_size_two_ways_in_one_function"] = """
import torch.nn.functional as F
def compare(feat, size):
    train = F.interpolate(feat, size=size, mode="bilinear", align_corners=True)
    infer = F.interpolate(feat, size=size, mode="bilinear")
    return train, infer
"""
