"""PTF106 (typed-storage-deprecated): Tensor.storage() returns a TypedStorage, deprecated since 2.0."""
PITFALL = {
    "data_ptr_compare": "import torch\n\ndef same_storage(x, y):\n    return x.storage().data_ptr() == y.storage().data_ptr()\n",
    "storage_size": "def nbytes(tensor):\n    return tensor.storage().size() * tensor.element_size()\n",
    "chained_after_attribute": "def check(out):\n    assert out._data.storage().tolist() == sorted(out._data.storage().tolist())\n",
    "in_loop": "def shared(params):\n    seen = set()\n    for p in params:\n        ptr = p.data.storage().data_ptr()\n        if ptr in seen:\n            return True\n        seen.add(ptr)\n    return False\n",
    "in_method": "import torch\n\nclass Cache:\n    def key(self, t: torch.Tensor):\n        return (t.device, t.storage().data_ptr(), t.nbytes)\n",
    "local_tensor": 'import torch\n\nbuf = torch.empty(1024)\nprint(buf.storage().size())\n',
    "annotated_parameter": 'import torch\n\ndef shares_memory(a: torch.Tensor, b: torch.Tensor) -> bool:\n    return a.storage().data_ptr() == b.storage().data_ptr()\n',
    "parameter_passed_a_tensor": 'import torch\n\ndef nbytes(t):\n    return t.storage().size() * t.element_size()\n\nprint(nbytes(torch.zeros(3, 4)))\n',
    "element_of_parameters": 'import torch.nn as nn\n\nmodel = nn.Linear(4, 4)\nptrs = set()\nfor p in model.parameters():\n    ptrs.add(p.storage().data_ptr())\n',
    "in_a_loop_over_a_list_of_tensors": 'import torch\n\nbufs = [torch.zeros(4), torch.ones(4)]\nfor b in bufs:\n    print(b.storage().size())\n',
}
NEAR_MISS = {
    "untyped_storage": "def same_storage(x, y):\n    return x.untyped_storage().data_ptr() == y.untyped_storage().data_ptr()\n",
    "except_fallback": "def ptr(t):\n    try:\n        return t.untyped_storage().data_ptr()\n    except Exception:\n        return t.storage().data_ptr()  # torch 1.x\n",
    "hasattr_guard": "def ptr(t):\n    if hasattr(t, 'untyped_storage'):\n        return t.untyped_storage().data_ptr()\n    return t.storage().data_ptr()\n",
    "own_storage_method": "class Backend:\n    def storage(self):\n        return self._store\n\n    def size(self):\n        return len(self.storage())\n",
    "cloud_client": "from google.cloud import storage\n\nclient = storage.Client()\n",
}
SEEN = {
    "data_ptr_compare": "code search 'tensor.storage().data_ptr() shared storage check': a Chinese tutorial comparing a.storage().data_ptr(); pytorch/pytorch torch/distributed/fsdp/_utils.py (_same_storage)",
    "storage_size": "accelerate/utils/modeling.py (tensor.storage().size() * _SIZE[tensor.dtype], in build/realcode/untuned)",
    "chained_after_attribute": "torchao/prototype/float8nocompile/kernels/fp8_dynamic_tensorwise_test.py (x._data.storage().tolist(), in build/realcode/untuned)",
    "in_loop": "pytorch/pytorch torch/distributed/fsdp/_utils.py (storage data_ptr comparisons)",
    "in_method": "transformers/pytorch_utils.py (local_tensor.storage().data_ptr(), in build/realcode/src)",
}

# the pitfall on an object whose type the file does not show: reported only with --preview
PREVIEW = {name: PITFALL.pop(name) for name in ("data_ptr_compare", "storage_size", "chained_after_attribute", "in_loop")}
