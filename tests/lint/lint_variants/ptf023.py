"""PTF023: an in-place float op on an integer tensor."""

PITFALL = {
    "label_smoothing": """
import torch
labels = torch.tensor([0, 1, 1])
labels *= 0.9
labels += 0.05
""",
    "arange_divide": """
import torch
def positions(seq):
    pos = torch.arange(len(seq))
    pos /= len(seq)
    return pos
""",
    "long_method": """
import torch
def scale(idx, factor=0.5):
    t = idx.long()
    t *= 0.5
    return t
""",
    "randint_in_loop": """
import torch
def jitter(steps):
    out = []
    for _ in range(steps):
        offsets = torch.randint(0, 10, (4,))
        offsets -= 0.5
        out.append(offsets)
    return out
""",
    "explicit_long_dtype": """
import torch
counts = torch.zeros(10, dtype=torch.long)
counts /= 2
""",
}

NEAR_MISS = {
    "convert_first": """
import torch
labels = torch.tensor([0, 1, 1])
smoothed = labels.float()
smoothed *= 0.9
""",
    "out_of_place": """
import torch
labels = torch.tensor([0, 1, 1])
smoothed = labels * 0.9
""",
    "float_tensor": """
import torch
x = torch.tensor([0.0, 1.0])
x *= 0.9
""",
    "int_increment": """
import torch
steps = torch.tensor([0, 1])
steps += 1
""",
}

SEEN = {
    "label_smoothing": "https://github.com/AI-secure/DBA/issues/1",
    "randint_in_loop": "https://github.com/lrjconan/GRAN/issues/4",
    "long_method": "https://github.com/cv516Buaa/tph-yolov5/issues/48",
}

# round 3: the integer dtype comes from NumPy (from_numpy keeps the array's dtype)
PITFALL["from_numpy_astype_int64"] = """
import numpy as np
import torch
def soft_targets(labels):
    t = torch.from_numpy(labels.astype(np.int64))
    t *= 0.9
    return t
"""
PITFALL["from_numpy_arange"] = """
import numpy as np
import torch
def positions(tokens):
    pos = torch.from_numpy(np.arange(len(tokens)))
    pos /= len(tokens)
    return pos
"""
PITFALL["from_numpy_int_dtype_keyword"] = """
import numpy as np
import torch
def counts(k):
    c = torch.as_tensor(np.zeros(k, dtype=np.int32))
    c += 0.5
    return c
"""
NEAR_MISS["from_numpy_float_array"] = """
import numpy as np
import torch
def normalise(a):
    t = torch.from_numpy(a.astype(np.float32))
    u = torch.from_numpy(np.linspace(0, 1, 10))
    t *= 0.5
    u /= 2
    return t, u
"""
NEAR_MISS["from_numpy_int_converted_first"] = """
import numpy as np
import torch
def smooth(labels):
    t = torch.from_numpy(labels.astype(np.int64)).float()
    t *= 0.9
    return t
"""
SEEN["from_numpy_astype_int64"] = "https://github.com/yhygao/CBIM-Medical-Image-Segmentation/issues/2 (label arrays through torch.from_numpy keep their integer dtype)"
SEEN["from_numpy_arange"] = "https://github.com/pytorch/pytorch/issues/4363 (torch.from_numpy(np.arange(...)) is int64)"

# Counts from torch.bincount are int64: raised in place to a float power read from a command-line option (fresh
# set 13's m19, tuning half, missed at its first run). Quiet with an integer power, or once the counts are floats.
_SAMPLER = """
import argparse
import torch
class NegativeSampler:
    def __init__(self, items, n_items, power):
        freq = torch.bincount(items, minlength=n_items){cast}
        freq **= power
        self.probs = freq / freq.sum()
if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--neg-power", type={kind}, default={default})
    args = ap.parse_args()
    NegativeSampler(torch.randint(0, 100, (1000,)), 100, args.neg_power)
"""
PITFALL["counts_raised_in_place_to_a_float_option"] = _SAMPLER.format(cast="", kind="float", default="0.75")
NEAR_MISS["counts_raised_in_place_to_an_integer_option"] = _SAMPLER.format(cast="", kind="int", default="2")
NEAR_MISS["float_counts_raised_in_place"] = _SAMPLER.format(cast=".float()", kind="float", default="0.75")
SEEN["counts_raised_in_place_to_a_float_option"] = (
    "benchmarks/fresh/lint13 m19_bpr_popularity_negatives.py (tuning half, missed at its first run)"
)
