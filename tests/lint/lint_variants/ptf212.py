"""PTF212 (num-workers-same-numpy-seed): a Dataset's own generator, copied into every worker."""

PITFALL = {
    "default_rng_noise": """
import numpy as np
from torch.utils.data import DataLoader, Dataset
class Noisy(Dataset):
    def __init__(self, x, seed=0):
        self.x = x
        self.rng = np.random.default_rng(seed)
    def __len__(self):
        return len(self.x)
    def __getitem__(self, i):
        return self.x[i] + self.rng.normal(0, 0.1, self.x[i].shape)
loader = DataLoader(Noisy(np.zeros((100, 3))), batch_size=8, num_workers=4)
""",
    "random_state_crops": """
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset
class Crops(Dataset):
    def __init__(self, images, size):
        self.images, self.size = images, size
        self.random_state = np.random.RandomState(1234)
    def __len__(self):
        return len(self.images)
    def __getitem__(self, i):
        img = self.images[i]
        top = self.random_state.randint(0, img.shape[0] - self.size)
        return torch.from_numpy(img[top : top + self.size].copy())
def make_loader(images, args):
    return DataLoader(Crops(images, 64), batch_size=args.batch_size, shuffle=True, num_workers=args.workers)
""",
    "python_random_in_iterable": """
import random
from torch.utils.data import DataLoader, IterableDataset
class Stream(IterableDataset):
    def __init__(self, paths, seed=42):
        self.paths = paths
        self.rand = random.Random(seed)
    def __iter__(self):
        paths = list(self.paths)
        self.rand.shuffle(paths)
        yield from paths
loader = DataLoader(Stream(["a", "b", "c"]), batch_size=None, num_workers=2)
""",
    "torch_generator": """
import torch
from torch.utils.data import DataLoader, Dataset
class Masked(Dataset):
    def __init__(self, tokens, seed=0):
        self.tokens = tokens
        self.gen = torch.Generator().manual_seed(seed)
    def __len__(self):
        return len(self.tokens)
    def __getitem__(self, i):
        mask = torch.rand(self.tokens[i].shape, generator=self.gen) < 0.15
        return self.tokens[i].masked_fill(mask, 0)
train_loader = DataLoader(Masked(torch.arange(100).view(10, 10)), batch_size=2, num_workers=8, pin_memory=True)
""",
    "generator_handed_to_transforms": """
import numpy as np
from torch.utils.data import DataLoader, Dataset
class Flip:
    def __init__(self, rng):
        self.rng = rng
    def __call__(self, a):
        return a[:, ::-1] if self.rng.random() < 0.5 else a
class Tiles(Dataset):
    def __init__(self, tiles, seed=0):
        self.tiles = tiles
        self.rng = np.random.default_rng(seed)
        self.flip = Flip(self.rng)
    def __len__(self):
        return len(self.tiles)
    def __getitem__(self, i):
        return self.flip(self.tiles[i]).copy()
loader = DataLoader(Tiles(np.zeros((10, 4, 4))), batch_size=2, num_workers=4, persistent_workers=True)
""",
    "subclass_of_own_base": """
import numpy as np
import torch.utils.data as data
class Base(data.Dataset):
    def __len__(self):
        return 10
class Jitter(Base):
    def __init__(self):
        self.rng = np.random.default_rng()
    def __getitem__(self, i):
        return self.rng.uniform()
loader = data.DataLoader(Jitter(), num_workers=3)
""",
}

NEAR_MISS = {
    "worker_init_fn_reseeds": """
import numpy as np
from torch.utils.data import DataLoader, Dataset, get_worker_info
class Noisy(Dataset):
    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
    def __len__(self):
        return 8
    def __getitem__(self, i):
        return self.rng.normal()
def seed_worker(worker_id):
    info = get_worker_info()
    info.dataset.rng = np.random.default_rng(info.seed)
loader = DataLoader(Noisy(), batch_size=2, num_workers=2, worker_init_fn=seed_worker)
""",
    "no_workers": """
import numpy as np
from torch.utils.data import DataLoader, Dataset
class Noisy(Dataset):
    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
    def __len__(self):
        return 8
    def __getitem__(self, i):
        return self.rng.normal()
loader = DataLoader(Noisy(), batch_size=2, num_workers=0)
eval_loader = DataLoader(Noisy(1), batch_size=2)
""",
    "seeded_per_sample": """
import numpy as np
from torch.utils.data import DataLoader, Dataset
class Augmented(Dataset):
    def __init__(self, n, seed=0):
        self.n, self.seed = n, seed
        self.rng = np.random.default_rng(seed)
    def __len__(self):
        return self.n
    def __getitem__(self, i):
        self.rng = np.random.default_rng((self.seed, i))  # reproducible per sample, whatever the worker
        return self.rng.normal()
loader = DataLoader(Augmented(100), num_workers=4)
""",
    "not_a_dataset": """
import numpy as np
from torch.utils.data import DataLoader
class Sampler:
    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
    def draw(self, n):
        return self.rng.integers(0, 10, n)
loader = DataLoader(list(range(10)), num_workers=2)
""",
}

# a Dataset of a library, loaded elsewhere: the harm depends on how, so reported only with --preview
PREVIEW = {
    "no_loader_in_the_file": """
import numpy as np
from torch.utils.data import Dataset
class Noisy(Dataset):
    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
    def __len__(self):
        return 8
    def __getitem__(self, i):
        return self.rng.normal()
""",
}

SEEN = {
    "generator_handed_to_transforms": "https://github.com/Project-MONAI/MONAI/issues/398 (random transforms keeping their own random state gave every worker the same augmentation; fixed with a worker_init_fn reseeding them)",
    "default_rng_noise": "not found by search; NumPy's recommended default_rng kept on the dataset, as this corpus's case shows (cases/data/num_workers_same_numpy_seed.py)",
    "worker_init_fn_reseeds": "the fix the PyTorch FAQ points to ('My data loader workers return identical random numbers': worker_init_fn)",
}
