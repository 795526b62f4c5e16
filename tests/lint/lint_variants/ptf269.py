"""PTF269 (channels-last-image-into-conv): an H×W×C image array fed to a convolution without moving its channels."""

PITFALL = {
    "cv2_image_into_torchvision_model": """
import cv2
import torch
import torchvision
model = torchvision.models.resnet18(weights="IMAGENET1K_V1")
model.eval()
def classify(path):
    img = cv2.imread(path)
    img = cv2.cvtColor(img, cv2.COLOR_BGR2RGB)
    x = torch.from_numpy(img).float().unsqueeze(0) / 255.0
    with torch.no_grad():
        return model(x).argmax(1).item()
""",
    "pil_array_into_conv2d": """
import numpy as np
import torch
from PIL import Image
from torch import nn
conv = nn.Conv2d(3, 16, kernel_size=3, padding=1)
img = np.array(Image.open("cat.jpg").convert("RGB"))
x = torch.tensor(img, dtype=torch.float32)[None]
features = conv(x)
""",
    "imageio_frames_stacked_into_a_batch": """
import imageio
import numpy as np
import torch
import torch.nn as nn
encoder = nn.Sequential(nn.Conv2d(3, 32, 3, stride=2), nn.ReLU(), nn.Conv2d(32, 64, 3, stride=2))
def encode(files):
    frames = np.stack([imageio.imread(f) for f in files])
    batch = torch.from_numpy(frames).float().div(255)
    return encoder(batch)
""",
    "raw_bytes_reshaped_channels_last": """
import numpy as np
import torch
from torch import nn
raw = np.fromfile("images.bin", dtype=np.uint8)
images = raw.reshape(-1, 32, 32, 3)
stem = nn.Conv2d(3, 64, kernel_size=3, padding=1)
x = torch.from_numpy(images[:128]).float() / 255
y = stem(x)
""",
    "plt_image_through_functional_conv": """
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
kernel = torch.ones(3, 3, 3, 3) / 27
img = plt.imread("photo.png")
blurred = F.conv2d(torch.as_tensor(img)[None], kernel, padding=1)
""",
    "image_passed_to_a_helper": """
import cv2
import torch
import torchvision
def predict(model, image):
    x = torch.from_numpy(image).float()[None]
    with torch.no_grad():
        return model(x).softmax(1)
net = torchvision.models.mobilenet_v3_small(weights="DEFAULT").eval()
probs = predict(net, cv2.imread("dog.png"))
""",
}

NEAR_MISS = {
    "permuted_after_from_numpy": """
import cv2
import torch
from torch import nn
conv = nn.Conv2d(3, 8, 3)
img = cv2.cvtColor(cv2.imread("a.png"), cv2.COLOR_BGR2RGB)
x = torch.from_numpy(img).permute(2, 0, 1).float().unsqueeze(0) / 255
y = conv(x)
""",
    "numpy_transpose_first": """
import numpy as np
import torch
from PIL import Image
from torch import nn
conv = nn.Conv2d(3, 8, 3)
img = np.asarray(Image.open("a.jpg").convert("RGB"), dtype=np.float32) / 255
img = img.transpose(2, 0, 1)
y = conv(torch.from_numpy(img)[None])
""",
    "to_tensor_transform": """
import torch
import torchvision
from PIL import Image
from torchvision import transforms
model = torchvision.models.resnet18(weights="DEFAULT").eval()
x = transforms.ToTensor()(Image.open("a.jpg").convert("RGB")).unsqueeze(0)
with torch.no_grad():
    out = model(x)
""",
    "grayscale_read_with_channel_added": """
import cv2
import torch
from torch import nn
conv = nn.Conv2d(1, 4, 3)
img = cv2.imread("scan.png", cv2.IMREAD_GRAYSCALE)
y = conv(torch.from_numpy(img).float()[None, None])
""",
    "einops_rearrange_batch": """
import numpy as np
import torch
from einops import rearrange
from torch import nn
stem = nn.Conv2d(3, 16, 3)
batch = np.random.rand(8, 32, 32, 3).astype(np.float32)
y = stem(rearrange(torch.from_numpy(batch), "b h w c -> b c h w"))
""",
    "channels_last_into_layer_norm": """
import numpy as np
import torch
from torch import nn
norm = nn.LayerNorm(3)
pixels = torch.from_numpy(np.random.rand(4, 16, 16, 3).astype(np.float32))
out = norm(pixels)
""",
    "channels_first_reshape": """
import numpy as np
import torch
from torch import nn
raw = np.fromfile("data_batch_1.bin", dtype=np.uint8)
images = raw.reshape(-1, 3, 32, 32)
conv = nn.Conv2d(3, 64, 3, padding=1)
y = conv(torch.from_numpy(images).float() / 255)
""",
}

SEEN = {
    "cv2_image_into_torchvision_model": "LeeJunHyun/Image_Segmentation#29 (expected input[1, 512, 512, 3] to have 3 channels, but got 512)",
    "pil_array_into_conv2d": "sjmoran/deeplpf-image-enhancement#16 (np.array(Image.open(...)) fed to a Conv2d)",
    "raw_bytes_reshaped_channels_last": "aladdinpersson/Machine-Learning-Collection#59 (expected input[30, 416, 416, 3] to have 3 channels)",
    "image_passed_to_a_helper": "2833844911/Gesture_recognition_captcha#1 (cv2.imread image, permute fixes input[1, 280, 3, 176])",
    "permuted_after_from_numpy": "pytorch/pytorch#23019 (solved with permute(0, 3, 1, 2))",
}
