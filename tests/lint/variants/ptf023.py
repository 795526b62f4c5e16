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
