"""PTF028: an in-place write to a tensor made by torch.from_numpy (the array changes too)."""

PITFALL = {
    "normalise_in_place": """
import torch
def load(images, i, mean, std):
    x = torch.from_numpy(images[i])
    x -= mean
    x /= std
    return x
""",
    "in_place_method": """
import numpy as np
import torch
arr = np.ones(7)
t = torch.from_numpy(arr)
t.add_(10)
""",
    "item_assignment_in_getitem": """
import torch
class Frames(torch.utils.data.Dataset):
    def __init__(self, frames):
        self.frames = frames
    def __getitem__(self, i):
        x = torch.from_numpy(self.frames[i])
        x[x < 0] = 0
        return x
""",
    "clamp_in_loop": """
import torch
def clip_all(arrays):
    for a in arrays:
        t = torch.from_numpy(a)
        t.clamp_(0, 1)
""",
    "scale_augassign": """
import numpy as np
import torch
audio = np.zeros(16000, dtype=np.float32)
signal = torch.from_numpy(audio)
signal *= 0.95
""",
    "helper_normalises_in_place": """
import numpy as np
import torch
def normalize(tensor, mean, std):
    tensor.sub_(mean).div_(std)
    return tensor
class Clips(torch.utils.data.Dataset):
    def __init__(self, arrays):
        self.arrays = arrays
    def __getitem__(self, i):
        clip = torch.from_numpy(self.arrays[i])
        return normalize(clip, 0.5, 0.25)
""",
    "helper_loops_over_channels": """
import torch
def denormalize(t, mean, std):
    for channel, m, s in zip(t, mean, std):
        channel.mul_(s).add_(m)
    return t
def show(batch_np, mean, std):
    img = torch.from_numpy(batch_np[0])
    return denormalize(img, mean, std)
""",
    "helper_assigns_channels": """
import torch
MEAN = (0.49, 0.48, 0.45)
def standardize(t, mean=MEAN):
    t[0] = t[0] - mean[0]
    return t
def prepare(frame):
    x = torch.from_numpy(frame)
    standardize(x)
    return x
""",
}

NEAR_MISS = {
    "out_of_place": """
import torch
def load(images, i, mean, std):
    x = torch.from_numpy(images[i])
    x = (x - mean) / std
    return x
""",
    "copied_with_tensor": """
import numpy as np
import torch
images = np.ones((2, 3), dtype=np.float32)
copied = torch.tensor(images)
copied -= 50.0
""",
    "clone_first": """
import torch
def load(arr):
    x = torch.from_numpy(arr).clone()
    x -= 1
    return x
""",
    "helper_clones_first": """
import torch
def normalize(tensor, mean, std):
    tensor = tensor.clone()
    tensor.sub_(mean).div_(std)
    return tensor
def load(arr):
    x = torch.from_numpy(arr)
    return normalize(x, 0.5, 0.25)
""",
    "helper_out_of_place_on_a_copy": """
import torch
def normalize(tensor, mean, std):
    tensor.sub_(mean).div_(std)
    return tensor
def load(arr):
    x = torch.from_numpy(arr.copy())
    return normalize(x, 0.5, 0.25)
""",
    "float_conversion_copies": """
import numpy as np
import torch
arr = np.arange(3)
x = torch.from_numpy(arr).float()
x /= 2
""",
    "sample_of_any_generator": "import torch\n\ndef random_assign(rng, n, p):\n    inds = torch.from_numpy(rng.randint(0, 10, size=n))\n    inds[inds > 5] = -1\n    return inds\n",
    "another_modules_function": "import torch\nfrom mmdet.structures.bbox import bbox_overlaps\n\ndef match(a, b):\n    iou = torch.from_numpy(bbox_overlaps(a, b))\n    iou[0, :] = 0.0\n    return iou\n",
}

SEEN = {
    # in-place normalize/denormalize helpers as they are written in public code
    "helper_normalises_in_place": "https://github.com/MathGaron/pytorch_toolbox (transformations/normalize.py: t.sub_(m).div_(s))",
    "helper_loops_over_channels": "https://github.com/MLPA-DKU/GazeEstimation (utils/transforms/functional.py: denormalize)",
    "helper_assigns_channels": "https://github.com/peustr/A2SNN (utils.py: normalize_cifar10 writes t[:, c] = ...)",
    "in_place_method": "https://github.com/mrdbourke/pytorch-deep-learning/issues/83",
    "scale_augassign": "https://github.com/fgnt/padertorch/pull/16",
    "normalise_in_place": "https://github.com/mrdbourke/pytorch-deep-learning/issues/1279",
    "out_of_place": "https://github.com/mrdbourke/pytorch-deep-learning/issues/926",
}

# round 3: a fresh array (astype without copy=False, .copy(), np.ascontiguousarray of a copy, a NumPy
# maker) belongs to no one else: writing through the tensor changes nothing the caller holds
NEAR_MISS["from_numpy_of_astype"] = """
import numpy as np
import torch
def to_tensor(img):
    t = torch.from_numpy(img.astype(np.float32))
    t -= t.mean()
    t /= 255.0
    return t
"""
NEAR_MISS["from_numpy_of_copies"] = """
import numpy as np
import torch
def to_tensor(a):
    u = torch.from_numpy(a.copy())
    u[0] = 1
    v = torch.from_numpy(np.ascontiguousarray(a[:, ::-1].copy()))
    v.mul_(2)
    return u, v
"""
PITFALL["astype_copy_false"] = """
import numpy as np
import torch
def scale(a):
    t = torch.from_numpy(a.astype(np.float32, copy=False))
    t *= 2
    return t
"""
PITFALL["ascontiguousarray_of_caller_array"] = """
import numpy as np
import torch
def centre(points):
    t = torch.from_numpy(np.ascontiguousarray(points))
    t.sub_(t.mean(0))
    return t
"""
SEEN["from_numpy_of_astype"] = (
    "https://github.com/mrdbourke/pytorch-deep-learning/issues/926 (copies made before the in-place write)"
)
NEAR_MISS["from_numpy_of_another_librarys_result"] = """
import torch
from librosa import filters
from torch import nn
class MelBands(nn.Module):
    def __init__(self, sample_rate, n_fft, num_bands):
        super().__init__()
        mel_filter_bank_numpy = filters.mel(sr=sample_rate, n_fft=n_fft, n_mels=num_bands)
        mel_filter_bank = torch.from_numpy(mel_filter_bank_numpy)
        mel_filter_bank[0, 0] = mel_filter_bank[0, 1] * 0.25
        self.register_buffer("bands", mel_filter_bank > 0)
"""
SEEN["from_numpy_of_another_librarys_result"] = (
    "ZFTurbo/Music-Source-Separation-Training models/bs_roformer/mel_band_roformer.py:464-471 (librosa's "
    "filters.mel array, never read again; round 9's tuning half, read harmless)"
)
