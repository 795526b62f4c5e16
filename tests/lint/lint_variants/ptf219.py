"""PTF219 (l2-normalize-all-dims): a batch divided by one L2 norm over the whole tensor."""

PITFALL = {
    "speaker_embedder": """
import torch
from torch import nn
class SpeechEmbedder(nn.Module):
    def __init__(self, n_mels, hidden, proj):
        super().__init__()
        self.lstm = nn.LSTM(n_mels, hidden, num_layers=3, batch_first=True)
        self.projection = nn.Linear(hidden, proj)
    def forward(self, x):
        x, _ = self.lstm(x.float())
        x = x[:, x.size(1) - 1]
        x = self.projection(x.float())
        x = x / torch.norm(x)
        return x
""",
    "helper_on_feature_maps": """
import torch
def l2_normalize(x):
    return x / x.norm()
def head_inputs(device):
    maps = torch.randn(8, 256, 38, 38, device=device)
    return l2_normalize(maps)
""",
    "loader_features_in_place": """
import torch
import torchvision
from torch.utils.data import DataLoader
backbone = torchvision.models.resnet18()
def gallery(dataset):
    loader = DataLoader(dataset, batch_size=64)
    out = []
    with torch.no_grad():
        for images, labels in loader:
            feats = backbone(images)
            feats /= feats.norm()
            out.append(feats)
    return torch.cat(out)
""",
    "div_by_linalg_norm": """
import torch
from torch import nn
class Encoder(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, 512), nn.ReLU(), nn.Linear(512, d_out))
    def forward(self, x):
        emb = self.net(x)
        return emb.div(torch.linalg.norm(emb))
""",
    "sqrt_of_sum_of_squares": """
import torch
from torch import nn
class Projector(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.proj = nn.Linear(d, 128)
    def forward(self, h):
        z = self.proj(h)
        return z / torch.sqrt(torch.sum(z ** 2) + 1e-8)
""",
    "ported_l2_normalize_clamped": """
import torch
from torch import nn
def l2_normalize(x, eps=1e-12):
    return x / x.norm(p=2).clamp(min=eps)
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU())
    def forward(self, images):
        return l2_normalize(self.backbone(images))
""",
    "inputs_from_the_loader": """
def train_epoch(model, train_loader, optimizer):
    for x, y in train_loader:
        x = x / x.norm(2)
        loss = model(x, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
}

NEAR_MISS = {
    "power_iteration": """
import torch
def spectral_norm(W, iters=5):
    u = torch.randn(W.shape[0])
    for _ in range(iters):
        v = torch.mv(W.t(), u)
        v = v / v.norm()
        u = torch.mv(W, v)
        u = u / u.norm()
    return torch.dot(u, torch.mv(W, v))
""",
    "per_vector_norm": """
from torch import nn
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(512, 128)
    def forward(self, x):
        z = self.fc(x)
        return z / z.norm(dim=-1, keepdim=True)
""",
    "functional_normalize": """
import torch
import torch.nn.functional as F
def normalize_maps(device):
    maps = torch.randn(8, 256, 38, 38, device=device)
    return F.normalize(maps, dim=1)
""",
    "gradient_direction": """
def normalize_grads(model):
    for p in model.parameters():
        if p.grad is not None:
            g = p.grad
            p.grad = g / g.norm()
""",
    "one_image_embedding": """
import torch
import torchvision
model = torchvision.models.resnet50()
def embed(transform, image):
    x = transform(image).unsqueeze(0)
    with torch.no_grad():
        feat = model(x)
    feat = feat / feat.norm()
    return feat
""",
    "mean_of_prompt_features": """
import torch
from torch import nn
encoder = nn.Linear(300, 512)
def prompt_feature(tokens):
    feats = encoder(tokens)
    feats = feats / feats.norm(dim=-1, keepdim=True)
    feat = feats.mean(dim=0)
    return feat / feat.norm()
""",
    "weight_parametrization": """
from torch import nn
class UnitFrobenius(nn.Module):
    def forward(self, W):
        return W / W.norm()
layer = nn.Linear(16, 16)
nn.utils.parametrize.register_parametrization(layer, "weight", UnitFrobenius())
""",
    "kernel_built_in_init": """
import torch
from torch import nn
class FixedBlur(nn.Module):
    def __init__(self):
        super().__init__()
        w = torch.randn(8, 3, 3, 3)
        self.weight = nn.Parameter(w / w.norm())
    def forward(self, x):
        return nn.functional.conv2d(x, self.weight)
""",
}

SEEN = {
    "speaker_embedder": "https://github.com/HarryVolek/PyTorch_Speaker_Verification/issues/27 (and #16): x = x/torch.norm(x) after the projection in SpeechEmbedder.forward normalises the whole batch, not each embedding; fixed to x / torch.norm(x, dim=1).unsqueeze(1)",
    "helper_on_feature_maps": "S3 (the corpus's source post, section 2.3.2): tf.nn.l2_normalize(feature) with the default axis=None on each feature level, ported as x / x.norm()",
    "ported_l2_normalize_clamped": "https://github.com/google-ai-edge/LiteRT/issues/9212 (tf.math.l2_normalize's default normalises over the whole tensor in eager TensorFlow: the spelling a port copies)",
    "one_image_embedding": "find_string 'feat = feat / feat.norm()': feature extractors that embed one image (unsqueeze(0), [0], squeeze()) and normalise it whole, which is right for one vector",
    "power_iteration": "https://github.com/pytorch/pytorch/blob/main/torch/nn/utils/spectral_norm.py (power iteration: v = normalize(mv(W.t(), u)): one vector, one norm)",
}
