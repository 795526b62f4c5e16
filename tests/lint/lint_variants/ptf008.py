"""PTF008: a legacy constructor reading one int as a size, or fed bool data."""

PITFALL = {
    "one_int": """
import torch
x = torch.FloatTensor(3)
""",
    "bound_len": """
import torch
def counts(items):
    n = len(items)
    return torch.LongTensor(n)
""",
    "bool_ndarray": """
import numpy as np
import torch
mask = torch.FloatTensor(np.array([True, False, True]))
""",
    "compare_in_loop": """
import torch
def masks(rows):
    out = []
    for row in rows:
        keep = row > 0
        out.append(torch.FloatTensor(keep))
    return out
""",
    "cuda_type_in_method": """
import torch
class Counter:
    def reset(self, items):
        n = len(items)
        self.total = torch.cuda.FloatTensor(n)
""",
}

NEAR_MISS = {
    "several_ints_size": """
import torch
w = torch.FloatTensor(2, 3)
""",
    "float_data": """
import torch
x = torch.FloatTensor([1.0, 2.0])
""",
    "or_default_list": """
import torch
def ids(tokens):
    return torch.LongTensor(tokens or [0])
""",
    "bool_tensor_of_bools": """
import numpy as np
import torch
m = torch.BoolTensor(np.array([True, False]))
""",
    "receive_buffer_of_a_broadcast": 'import torch\nimport torch.distributed as dist\n\ndef agree_on_choice(rank, n):\n    choice = torch.cuda.LongTensor(1)\n    if rank == 0:\n        choice.fill_(torch.randint(n, (1,)).item())\n    dist.broadcast(choice, 0)\n    return int(choice)\n',
}

SEEN = {
    "one_int": "https://github.com/kevinzakka/pytorch-goodies/issues/8",
    "cuda_type_in_method": "https://github.com/Atcold/NYU-DLSP20/pull/861",
}
NEAR_MISS["collate_lengths_buffer"] = """
import torch
def collate(batch):
    lengths = torch.LongTensor(len(batch))
    for i in range(len(batch)):
        lengths[i] = batch[i].size(0)
    return lengths
"""
SEEN["collate_lengths_buffer"] = (
    "jaywalnut310/vits data_utils.py and SeanNaren/deepspeech.pytorch data_loader.py (a collate's size-B "
    "buffers written entry by entry; round 4's read held-out half judged 9 such findings harmless)"
)
