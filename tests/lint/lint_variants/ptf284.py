"""PTF284 (transforms-expect-pil): a pipeline holding ToTensor() given an image that is already a tensor."""

PITFALL = {
    "tutorial_dataset_with_read_image": """
import os
from torch.utils.data import Dataset
from torchvision.io import read_image
from torchvision.transforms import ToTensor
class CustomImageDataset(Dataset):
    def __init__(self, labels, img_dir, transform=None):
        self.labels, self.img_dir, self.transform = labels, img_dir, transform
    def __getitem__(self, idx):
        image = read_image(os.path.join(self.img_dir, self.labels[idx][0]))
        if self.transform:
            image = self.transform(image)
        return image, self.labels[idx][1]
train = CustomImageDataset([("a.png", 0)], "imgs", transform=ToTensor())
""",
    "compose_applied_to_a_decoded_image": """
import torchvision
from torchvision import transforms as T
preprocess = T.Compose([T.Resize(256), T.CenterCrop(224), T.ToTensor(), T.Normalize([0.5] * 3, [0.5] * 3)])
def embed(model, path):
    img = torchvision.io.decode_image(torchvision.io.read_file(path))
    return model(preprocess(img).unsqueeze(0))
""",
    "array_turned_into_a_tensor_first": """
import numpy as np
import torch
from torchvision import transforms
normalize = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.5,), (0.5,))])
def prepare(frame: np.ndarray):
    chw = torch.from_numpy(frame).permute(2, 0, 1)
    return normalize(chw)
""",
    "pipeline_from_a_builder_kept_on_the_dataset": """
from torch.utils.data import Dataset
from torchvision import transforms
from torchvision.io import read_image
def build_eval_transform(size):
    return transforms.Compose([transforms.Resize(size), transforms.ToTensor()])
class Frames(Dataset):
    def __init__(self, paths, size):
        self.paths = paths
        self.tf = build_eval_transform(size)
    def __getitem__(self, i):
        return self.tf(read_image(self.paths[i]))
""",
    "label_map_and_image_both_tensors": """
from torchvision import transforms
from torchvision.io import read_image
transform_img = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))])
def load_pair(image_path, uv_path):
    origin, gt_uv_map = read_image(image_path), read_image(uv_path)
    return transform_img(origin), transform_img(gt_uv_map)
""",
}

NEAR_MISS = {
    "pil_image": """
from PIL import Image
from torchvision import transforms
tf = transforms.Compose([transforms.Resize(224), transforms.ToTensor()])
def load(path):
    img = Image.open(path).convert("RGB")
    return tf(img)
""",
    "tensor_pipeline_without_to_tensor": """
import torch
from torchvision import transforms
from torchvision.io import read_image
from PIL import Image
pil_tf = transforms.Compose([transforms.Resize(224), transforms.ToTensor()])
tensor_tf = transforms.Compose([transforms.Resize(224), transforms.ConvertImageDtype(torch.float)])
def load(path, as_pil):
    return pil_tf(Image.open(path)) if as_pil else tensor_tf(read_image(path))
""",
    "array_from_opencv": """
import cv2
from torchvision import transforms
tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.5,), (0.5,))])
def load(path):
    bgr = cv2.imread(path)
    return tf(bgr[:, :, ::-1].copy())
""",
    "datasets_built_with_different_pipelines": """
import torch
from torch.utils.data import Dataset
from torchvision import transforms
from torchvision.io import read_image
class Images(Dataset):
    def __init__(self, paths, transform):
        self.paths, self.transform = paths, transform
    def __getitem__(self, i):
        return self.transform(read_image(self.paths[i]))
train = Images(["a.png"], transforms.Compose([transforms.ConvertImageDtype(torch.float)]))
legacy = Images(["b.png"], transforms.ToTensor())
""",
}

SEEN = {
    "tutorial_dataset_with_read_image": "https://github.com/pytorch/tutorials/pull/1577 (the data tutorial's CustomImageDataset reads with read_image while the quickstart passes transform=ToTensor())",
    "label_map_and_image_both_tensors": "https://github.com/tomguluson92/PRNet_PyTorch/issues/11 (transform_img = Compose([ToTensor(), Normalize(...)]) applied to tensors: pic should be PIL Image or ndarray)",
    "compose_applied_to_a_decoded_image": "https://github.com/pytorch/pytorch/issues/65324 (a custom dataset handing a tensor to a ToTensor pipeline)",
    "pipeline_from_a_builder_kept_on_the_dataset": "benchmarks/fresh/lint14 n10_herbarium_eval.py (tuning half, missed at its first run: read_image output through an eval_pipeline() holding ToTensor)",
    "tensor_pipeline_without_to_tensor": "https://github.com/pytorch/vision/pull/4494 (ToTensor replaced by PILToTensor + ConvertImageDtype in the examples)",
}
