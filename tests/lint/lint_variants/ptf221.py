"""PTF221 (uint8-conversion-wraparound): a float tensor scaled to pixel range cast to uint8 with no clamp."""

PITFALL = {
    "byte_of_scaled_output": """
import torch
from PIL import Image
from torch import nn
net = nn.Conv2d(3, 3, 3, padding=1)
def save(x, path):
    out = net(x)[0]
    img = (out * 255).byte().permute(1, 2, 0).numpy()
    Image.fromarray(img).save(path)
""",
    "to_uint8_from_minus_one_one": """
import torch
def to_image(sample: torch.Tensor):
    return ((sample + 1) * 127.5).to(torch.uint8)
""",
    "denormalize_then_scale": """
import torch
MEAN, STD = 0.5, 0.25
def unnormalize(x: torch.Tensor):
    return torch.round((x * STD + MEAN) * 255).byte()
""",
    "generator_output_to_pixels": """
import torch
from torch import nn
G = nn.Sequential(nn.Linear(128, 3 * 64 * 64), nn.Tanh())
def sample_images(z):
    fake = G(z).view(-1, 3, 64, 64)
    return ((fake + 1) * 127.5).to(torch.uint8)
""",
    "decoder_reconstruction_in_a_method": """
import torch
from torch import nn
class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.decoder = nn.Linear(16, 784)
    def preview(self, z):
        img = self.decoder(z).view(-1, 28, 28)
        return (img * 255).byte()
""",
    "written_out_values_past_one": """
import torch
def quantize_levels():
    levels = torch.tensor([0.0, 0.25, 0.75, 1.02, -0.01])
    return (levels * 255).to(torch.uint8)
""",
}

NEAR_MISS = {
    "clamped_in_the_chain": """
import torch
def to_image(x: torch.Tensor):
    a = (x * 255).clamp(0, 255).byte()
    b = torch.clamp(x * 255, min=0, max=255).to(torch.uint8)
    c = x.mul(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to("cpu", torch.uint8)
    d = torch.clip((x + 1) * 127.5, 0, 255).round().byte()
    return a, b, c, d
""",
    "clamped_before_scaling": """
import torch
def to_image(x: torch.Tensor):
    x = x.clamp(0, 1)
    y = x.detach()
    y.clamp_(0, 1)
    return (x * 255).byte(), (y * 255).to(torch.uint8)
""",
    "sigmoid_output_is_in_range": """
import torch
def mask_png(logits: torch.Tensor):
    probs = torch.sigmoid(logits)
    return (probs * 255).byte(), ((torch.tanh(logits) + 1) * 127.5).to(torch.uint8)
""",
    "integer_or_boolean_mask": """
import torch
def mask_png(pred: torch.Tensor):
    return ((pred > 0.5) * 255).byte(), (pred.argmax(0) * 255).to(torch.uint8)
""",
    "numpy_array_not_a_tensor": """
import numpy as np
def to_uint8(img):
    arr = np.asarray(img, dtype=np.float32)
    return (arr * 255).astype(np.uint8)
""",
    "uniform_noise": """
import torch
def random_image(h, w):
    return (torch.rand(3, h, w) * 255).to(torch.uint8)
""",
}

PREVIEW = {
    "rounded_does_not_save_it": """
import torch
def quantize(pred: torch.Tensor):
    return (pred * 255.0).round().to(dtype=torch.uint8)
""",
    "mul_then_add_half": """
import torch
def tensor_to_pil_array(t: torch.Tensor):
    return t.mul(255).add_(0.5).permute(1, 2, 0).to("cpu", torch.uint8).numpy()
""",
    "type_byte_tensor": """
import torch
def frame(decoded: torch.Tensor):
    scaled = decoded * 255
    return scaled.type(torch.uint8)
""",
    "torch_tensor_from_scaled_tensor": """
import torch
def as_pixels(recon: torch.Tensor):
    return torch.tensor(recon * 255, dtype=torch.uint8)
""",
    "byte_on_an_unknown_receiver": """
def to_image(img):
    return (img * 255).byte()
""",
}

SEEN = {
    "byte_of_scaled_output": "https://github.com/pytorch/vision/pull/121 ('Apply clamping in save_image': without it values above 255 become v mod 256 through byte(), high-frequency noise in the image)",
    "mul_then_add_half": "torchvision.utils.save_image before and after pytorch/vision#119/#121 (grid.mul(255).add_(0.5) ... .to('cpu', torch.uint8); the fix adds clamp_(0, 255))",
    "to_uint8_from_minus_one_one": "https://github.com/pengzhiliang/MAE-pytorch/pull/23 ('models may predict >255 or <0 values ... clip the values into [0,256) before converting them into uint8')",
    "rounded_does_not_save_it": "https://github.com/danielgatis/rembg/pull/753 ('Avoid overflow casting to uint8')",
    "byte_on_an_unknown_receiver": "this corpus's case spelled on a parameter: (x * 255).byte()",
}
NEAR_MISS["clamped_then_mapped_to_pixels"] = """
import torch
def make_image(tensor: torch.Tensor):
    return (
        tensor.detach()
        .clamp_(min=-1, max=1)
        .add(1)
        .div_(2)
        .mul(255)
        .type(torch.uint8)
        .permute(0, 2, 3, 1)
        .numpy()
    )
"""
SEEN["clamped_then_mapped_to_pixels"] = (
    "rosinality/stylegan2-pytorch projector.py make_image (clamp to [-1, 1], then (x + 1) / 2 * 255; a wrong "
    "finding in round 3's read held-out half)"
)
