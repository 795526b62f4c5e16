"""PTF273 (random-crop-larger-than-image): RandomCrop larger than the images of a dataset whose image
size is fixed, or of an image made at a known size."""

PITFALL = {
    "imagenet_crop_on_cifar": """
import torch
import torchvision
import torchvision.transforms as transforms
transform_train = transforms.Compose([
    transforms.RandomCrop(224),
    transforms.RandomHorizontalFlip(),
    transforms.ToTensor(),
    transforms.Normalize((0.4914, 0.4822, 0.4465), (0.2023, 0.1994, 0.2010)),
])
trainset = torchvision.datasets.CIFAR10(root="./data", train=True, download=True, transform=transform_train)
loader = torch.utils.data.DataLoader(trainset, batch_size=128, shuffle=True)
""",
    "cifar_crop_copied_to_mnist": """
from torchvision import datasets, transforms
train_set = datasets.MNIST(
    "data", True,
    transforms.Compose([transforms.RandomCrop(32), transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))]),
    download=True,
)
""",
    "resized_too_small_first": """
from torchvision import datasets, transforms as T
aug = T.Compose([T.Resize(112), T.RandomCrop(128), T.ToTensor()])
stl = datasets.STL10("data", split="train", transform=aug, download=True)
""",
    "dict_of_pipelines": """
import torchvision
from torchvision import transforms
data_transforms = {
    "train": transforms.Compose([transforms.RandomCrop(224), transforms.ToTensor()]),
    "val": transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor()]),
}
train_ds = torchvision.datasets.CIFAR100("./data", train=True, transform=data_transforms["train"], download=True)
""",
    "pipeline_from_a_builder": """
from torchvision import datasets, transforms
def build_transform(train):
    if train:
        return transforms.Compose([transforms.RandomCrop(64, padding=4), transforms.ToTensor()])
    return transforms.ToTensor()
ds = datasets.CIFAR10("./data", train=True, transform=build_transform(True))
""",
    "v2_crop_on_svhn": """
import torch
from torchvision import datasets
from torchvision.transforms import v2
pipeline = v2.Compose([v2.ToImage(), v2.RandomCrop(size=(40, 40)), v2.ToDtype(torch.float32, scale=True)])
svhn = datasets.SVHN("./data", split="train", transform=pipeline, download=True)
""",
    "made_image_through_the_crop": """
from PIL import Image
from torchvision import transforms as T
def thumbnail():
    return Image.new("RGB", (100, 80), (255, 0, 0))
crop = T.Compose([T.RandomCrop(96), T.PILToTensor()])
out = crop(thumbnail())
""",
}

NEAR_MISS = {
    "padded_cifar_crop": """
import torchvision
import torchvision.transforms as transforms
transform_train = transforms.Compose([
    transforms.RandomCrop(32, padding=4),
    transforms.RandomHorizontalFlip(),
    transforms.ToTensor(),
])
trainset = torchvision.datasets.CIFAR10(root="./data", train=True, download=True, transform=transform_train)
""",
    "resize_before_the_crop": """
from torchvision import datasets, transforms
t = transforms.Compose([transforms.Resize(256), transforms.RandomCrop(224), transforms.ToTensor()])
ds = datasets.CIFAR10("./data", train=True, transform=t, download=True)
""",
    "pad_if_needed": """
from torchvision import datasets, transforms
t = transforms.Compose([transforms.RandomCrop(224, pad_if_needed=True), transforms.ToTensor()])
ds = datasets.FashionMNIST("./data", train=True, transform=t, download=True)
""",
    "random_resized_crop": """
from torchvision import datasets, transforms
t = transforms.Compose([transforms.RandomResizedCrop(224), transforms.ToTensor()])
ds = datasets.CIFAR10("./data", train=True, transform=t, download=True)
""",
    "folder_of_unknown_sizes": """
from torchvision import datasets, transforms
t = transforms.Compose([transforms.RandomCrop(224), transforms.ToTensor()])
ds = datasets.ImageFolder("./train", transform=t)
""",
    "size_from_the_command_line": """
import argparse
from torchvision import datasets, transforms
parser = argparse.ArgumentParser()
parser.add_argument("--crop", type=int, default=32)
args = parser.parse_args()
t = transforms.Compose([transforms.RandomCrop(args.crop, padding=4), transforms.ToTensor()])
ds = datasets.CIFAR10("./data", train=True, transform=t, download=True)
""",
    "upsampled_by_a_lambda": """
import torch.nn.functional as F
from torchvision import datasets, transforms
t = transforms.Compose([
    transforms.ToTensor(),
    transforms.Lambda(lambda x: F.interpolate(x[None], size=256)[0]),
    transforms.RandomCrop(224),
])
ds = datasets.MNIST("./data", train=True, transform=t, download=True)
""",
    "builder_that_picks_by_dataset": """
from torchvision import datasets, transforms
def get_transform(dataset):
    if dataset == "imagenet":
        return transforms.Compose([transforms.RandomCrop(224), transforms.ToTensor()])
    return transforms.Compose([transforms.RandomCrop(32, padding=4), transforms.ToTensor()])
ds = datasets.CIFAR10("./data", train=True, transform=get_transform("cifar10"), download=True)
""",
}

SEEN = {
    "imagenet_crop_on_cifar": "pytorch/vision#2809 (RandomCrop(224) on a 3x32x32 image: 'random_ expects from to be less than to'; led to the size check of vision#2816)",
    "resized_too_small_first": "PaddlePaddle/PaddleX#661 (CenterCrop(200) then RandomCrop(224): the crop fails on the 200x200 result)",
    "made_image_through_the_crop": "the corpus' S1 notes, 2019-10-24 (RandomCrop(224) typed for RandomSizedCrop on 200-pixel images: 'empty range for randrange()')",
    "resize_before_the_crop": "camillegontier/DELAUNAY_dataset#4 (Resize((256, 256)) then RandomCrop(size, padding=8))",
}

# Images of any size, resized so that their shorter side is s, then cropped larger than s on both sides: no image
# fits, whatever the files hold. The sizes are settings: a dataclass's fields, an option's default.
_RESIZED = """
import argparse
from dataclasses import dataclass
from torchvision import transforms
@dataclass
class Settings:
    short_side: int = {short}
    crop: int = 224
def build(cfg=Settings()):
    return transforms.Compose([
        transforms.Resize(cfg.short_side),
        transforms.RandomCrop({crop}),
        transforms.ToTensor(),
    ])
train_tf = build()
"""
PITFALL["shorter_side_resized_below_the_crop"] = _RESIZED.format(short=192, crop="cfg.crop")
NEAR_MISS["shorter_side_resized_above_the_crop"] = _RESIZED.format(short=256, crop="cfg.crop")
# (180, 260): a landscape image resized to a shorter side of 200 is wide enough; only portrait ones fail
NEAR_MISS["crop_wider_than_the_shorter_side_only"] = _RESIZED.format(short=200, crop="(180, 260)")
NEAR_MISS["crop_padded_if_needed"] = _RESIZED.format(short=192, crop="cfg.crop, pad_if_needed=True")
PITFALL["option_defaults_resize_below_the_crop"] = """
import argparse
import torchvision.transforms as T
p = argparse.ArgumentParser()
p.add_argument("--resize", type=int, default=128)
p.add_argument("--crop", type=int, default=160)
args = p.parse_args()
train_tf = T.Compose([T.RandomHorizontalFlip(), T.Resize(args.resize), T.RandomCrop(args.crop), T.ToTensor()])
"""
SEEN["shorter_side_resized_below_the_crop"] = (
    "fresh set 15's j01 (held-out half, scored): Resize(cfg.short_side = 200) then RandomCrop(cfg.crop = 224) "
    "with the sizes in a dataclass; the Resize-then-RandomCrop pipeline of public fine-tuning scripts "
    "(find_string 'transforms.Resize(args.' with RandomCrop after it)"
)
SEEN["option_defaults_resize_below_the_crop"] = SEEN["shorter_side_resized_below_the_crop"]
SEEN["shorter_side_resized_above_the_crop"] = "the usual Resize(256) then RandomCrop(224) of ImageNet fine-tuning"
SEEN["crop_wider_than_the_shorter_side_only"] = "written for the both-sides guard"
SEEN["crop_padded_if_needed"] = "RandomCrop(size, pad_if_needed=True) in public code (the rule's own fix)"
