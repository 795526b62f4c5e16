"""PTF110 (set-default-tensor-type): torch.set_default_tensor_type, deprecated since 2.1."""
PITFALL = {
    "string_cuda": "import torch\nif torch.cuda.is_available():\n    torch.set_default_tensor_type('torch.cuda.FloatTensor')\n",
    "type_object": "import torch\ntorch.set_default_tensor_type(torch.FloatTensor)\nt = torch.randn(1)\n",
    "double_in_function": "import torch\n\ndef set_precision(kind):\n    if kind == 'double':\n        torch.set_default_tensor_type(torch.cuda.DoubleTensor)\n",
    "context_manager_restore": "import torch\nfrom contextlib import contextmanager\n\n@contextmanager\ndef default_tensor_type(tensor_type):\n    torch.set_default_tensor_type(tensor_type)\n    yield\n    torch.set_default_tensor_type(torch.FloatTensor)\n",
    "aliased": "import torch as t\nt.set_default_tensor_type('torch.DoubleTensor')\n",
}
NEAR_MISS = {
    "set_default_dtype": "import torch\ntorch.set_default_dtype(torch.float64)\ntorch.set_default_device('cuda')\n",
    "version_guarded": "import torch\nif hasattr(torch, 'set_default_device'):\n    torch.set_default_device('cuda')\nelse:\n    torch.set_default_tensor_type('torch.cuda.FloatTensor')\n",
    "commented_out_and_other_api": "import torch\n\ndef set_device(cuda=True):\n    # torch.set_default_tensor_type('torch.FloatTensor')\n    return torch.device('cuda' if cuda else 'cpu')\n",
}
SEEN = {
    "string_cuda": "marcelroed/deep-optimal-control src/settings.py (torch.set_default_tensor_type('torch.cuda.FloatTensor'))",
    "type_object": "code search rank 6 of 'torch.set_default_tensor_type(...)': torch.set_default_tensor_type(torch.FloatTensor) tutorial (Zhou Chen)",
    "double_in_function": "code search rank 11: set_precision() switching torch.cuda.FloatTensor / DoubleTensor",
    "context_manager_restore": "code search rank 5: default_tensor_type() contextmanager (from discuss.pytorch.org/t/27949)",
    "aliased": "not found by search; alias spelling of the above",
}
