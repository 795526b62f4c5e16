"""PTF124 (non-tuple-sequence-indexing): a list of slices as an index, a warning since torch 2.8."""

PITFALL = {
    "list_comprehension_of_slices": "import torch\ndef crop(result: torch.Tensor, sizes):\n    slice_param = [slice(s) for s in sizes]\n    return result[slice_param]\n",
    "list_literal": "import torch\ndef first(x: torch.Tensor, i):\n    idx = [slice(None), i]\n    return x[idx]\n",
    "list_times_n": "import torch\ndef along(x: torch.Tensor, dim, i):\n    idx = [slice(None)] * x.dim()\n    idx[dim] = i\n    return x[idx]\n",
    "with_none": "import torch\ndef expand(n):\n    x = torch.randn(n, 3)\n    index = [Ellipsis, None]\n    return x[index]\n",
    "list_plus_list": "import torch\ndef tail(x: torch.Tensor, n):\n    sl = [slice(None)] * (x.dim() - 1) + [slice(-n, None)]\n    return x[sl]\n",
}
# the same on an object whose type the file does not show (a parameter): an array from h5py, a sample dict's
# entry, where torch's warning is not the harm: reported only with --preview
PREVIEW = {
    "unannotated_parameter": "def first(x, i):\n    idx = [slice(None), i]\n    return x[idx]\n",
    "sample_entry_of_unknown_type": "def select(sample, axis, i):\n    data = sample['images']\n    sl = [slice(None) for _ in range(data.ndim)]\n    sl[axis] = i\n    return data[sl]\n",
}
NEAR_MISS = {
    "tuple_of_list": "def along(x, dim, i):\n    idx = [slice(None)] * x.dim()\n    idx[dim] = i\n    return x[tuple(idx)]\n",
    "tuple_concatenation": "def along(x, n, i):\n    idx = (slice(None),) * n + (i,)\n    return x[idx]\n",
    "list_of_ints": "def pick(x):\n    rows = [0, 2, 3]\n    return x[rows]\n",
    "list_of_indices_by_none_filter": "def missing(cost, feats):\n    missing_t = [i for i, f in enumerate(feats) if f is None]\n    cost[missing_t] = 2.0\n    return cost\n",
}
SEEN = {
    "sample_entry_of_unknown_type": "rundherum/pymia pymia/data/extraction/selection.py (image_data[slicing] on a NumPy array from an h5py reader; round 16's held-out reading: wrong by default)",
    "list_comprehension_of_slices": "lightning/fabric/utilities/distributed.py (slice_param = [slice(dim_size) for dim_size in item_size]; gathered_result[idx][slice_param], in build/realcode/src)",
    "list_literal": "transformers/models/gpt_neo/configuration_gpt_neo.py (sliced = input[s], in build/realcode/src)",
    "list_times_n": "not found by search; common 'index along dim' helper",
    "with_none": "not found by search",
    "list_plus_list": "not found by search",
}

# round 13: a NumPy array is not a tensor: torch's warning is not its business
NEAR_MISS["numpy_array_by_isinstance"] = """
import numpy as np
class Split:
    def __init__(self, slices, axis=-1):
        self.slices, self.axis = slices, axis
    def __call__(self, image):
        if isinstance(image, np.ndarray):
            ret = []
            for s in self.slices:
                sl = [slice(None)] * image.ndim
                sl[self.axis] = s
                ret.append(image[sl])
            return ret
        raise TypeError("not an array")
"""
NEAR_MISS["numpy_array_made_here"] = """
import numpy as np
def crop(n):
    a = np.zeros((n, n))
    idx = [slice(1, None), slice(None, -1)]
    return a[idx]
"""
PREVIEW["tensor_or_array_by_isinstance"] = """
import numpy as np
import torch
def take(x, dim):
    if isinstance(x, (np.ndarray, torch.Tensor)):
        idx = [slice(None)] * x.ndim
        idx[dim] = 0
        return x[idx]
"""
SEEN["numpy_array_by_isinstance"] = (
    "lint round 13 tuning half: Attention-Gated-Networks dataio/transformation/myImageTransformations.py (wrong at the first reading)"
)
