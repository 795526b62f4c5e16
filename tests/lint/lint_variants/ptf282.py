"""PTF282 (seed-every-rng): torch seeded, while the file draws from random or NumPy's global generator unseeded."""

PITFALL = {
    "numpy_sampling_in_the_training_script": """
import numpy as np
import torch
def main(opt, X_train):
    torch.manual_seed(opt.set_seed)
    idx = np.random.choice(X_train.shape[0], opt.ssl_samples)
    return X_train[idx]
""",
    "python_random_augmentation": """
import random
import torch
from torch.utils.data import Dataset
class Crops(Dataset):
    def __init__(self, images, size):
        self.images, self.size = images, size
    def __getitem__(self, i):
        img = self.images[i]
        top = random.randint(0, img.shape[-2] - self.size)
        left = random.randint(0, img.shape[-1] - self.size)
        return img[..., top:top + self.size, left:left + self.size]
def setup(seed):
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
""",
    "shuffled_file_list": """
import random
import torch
torch.manual_seed(42)
files = sorted(open("train.txt").read().split())
random.shuffle(files)
""",
    "from_import_of_numpy_functions": """
import torch
from numpy.random import permutation, normal
def split(n, seed=0):
    torch.manual_seed(seed)
    order = permutation(n)
    noise = normal(0.0, 0.1, size=n)
    return order, noise
""",
    "numpy_seeded_python_random_not": """
import random
import numpy as np
import torch
torch.manual_seed(0)
torch.cuda.manual_seed(0)
np.random.seed(0)
def jitter(x):
    return x + random.gauss(0.0, 0.01)
""",
}

NEAR_MISS = {
    "every_generator_seeded": """
import random
import numpy as np
import torch
def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
def augment(x):
    return x[::-1] if random.random() < 0.5 else x + np.random.normal(size=x.shape)
""",
    "seeding_helper_of_a_library": """
import numpy as np
import torch
from transformers import set_seed
set_seed(0)
torch.manual_seed(0)
noise = np.random.rand(10)
""",
    "private_generators": """
import random
import numpy as np
import torch
def run(seed):
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    py = random.Random(seed)
    return rng.permutation(10), py.random()
""",
    "torch_seeds_drawn_from_numpy": """
import numpy as np
import torch
def ensemble(n, make_net):
    seeds = np.random.randint(0, 100000, n)
    nets = []
    for i in range(n):
        torch.manual_seed(seeds[i])
        nets.append(make_net())
    return nets
""",
    "no_other_generator": """
import torch
torch.manual_seed(0)
x = torch.randn(4, 3)
perm = torch.randperm(4)
""",
}

SEEN = {
    "numpy_sampling_in_the_training_script": "somepago/saint train_robust.py (torch.manual_seed(opt.set_seed); np.random.choice for the semi-supervised samples)",
    "python_random_augmentation": "https://github.com/pytorch/pytorch/issues/7068 (torch seeded; random crops and flips drawn from a generator that was not)",
    "shuffled_file_list": "https://github.com/MichiganCOG/ViP/issues/25 (Seed NumPy in addition to Torch)",
    "numpy_seeded_python_random_not": "https://github.com/Novartis/scar/issues/97 (torch.manual_seed alone, or numpy.random.seed alone, does not make training repeatable)",
    "every_generator_seeded": "https://github.com/pytorch/pytorch/issues/18119 (np.random.seed, random.seed and torch.manual_seed together)",
    "torch_seeds_drawn_from_numpy": "xuhongzuo/DeepOD deepod/models/tabular/dif.py (ensemble members seeded from np.random.randint)",
}
