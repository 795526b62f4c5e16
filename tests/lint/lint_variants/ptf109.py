"""PTF109 (scatter-reduce-argument): scatter(..., reduce=) with a tensor src, deprecated in 2.0."""
PITFALL = {
    "method_inplace": "import torch\n\ndef pool(out, index, src):\n    return out.scatter_(0, index, src, reduce='add')\n",
    "method_keywords": "def pool(x, idx, vals):\n    return x.scatter(dim=1, index=idx, src=vals, reduce='multiply')\n",
    "torch_function": "import torch\n\ny = torch.scatter(torch.zeros(3, 4), 1, torch.tensor([[0], [1], [2]]), torch.ones(3, 1), reduce='add')\n",
    "chained": "import torch\n\ndef seg_sum(n, index, src):\n    return torch.zeros(n, src.size(1)).scatter_(0, index.unsqueeze(-1).expand_as(src), src, reduce='add')\n",
    "in_loop": "def accumulate(buf, batches):\n    for idx, v in batches:\n        buf.scatter_(0, idx, v, reduce='add')\n    return buf\n",
    "on_a_new_buffer": "import torch\n\ndef segment_sum(index, src, n):\n    out = torch.zeros(n, src.size(1))\n    out.scatter_(0, index, src, reduce='add')\n    return out\n",
    "annotated_parameter": "import torch\n\ndef pool(out: torch.Tensor, index: torch.Tensor, src: torch.Tensor) -> torch.Tensor:\n    return out.scatter(0, index, src, reduce='multiply')\n",
    "parameter_passed_a_tensor": "import torch\n\ndef accumulate(buf, idx, v):\n    buf.scatter_(0, idx, v, reduce='add')\n    return buf\n\ntotal = accumulate(torch.zeros(5), torch.tensor([0, 1]), torch.ones(2))\n",
}
NEAR_MISS = {
    "scatter_add": "def pool(out, index, src):\n    return out.scatter_add_(0, index, src)\n",
    "scatter_reduce": "def pool(out, index, src):\n    return out.scatter_reduce_(0, index, src, reduce='sum')\n",
    "torch_scatter_library": "import torch_scatter\n\ndef pool(src, index):\n    return torch_scatter.scatter(src, index, dim=0, reduce='mean')\n",
    "torch_scatter_from_import": "from torch_scatter import scatter\n\ndef pool(src, index):\n    return scatter(src, index, dim=0, reduce='sum')\n",
}
SEEN = {
    "method_inplace": "not found by search; Tensor.scatter_ docs' reduce= example (index_add-style pooling)",
    "method_keywords": "not found by search; keyword spelling of the same call",
    "torch_function": "not found by search; functional spelling",
    "chained": "not found by search; segment-sum idiom (scatter_add_ in PyG docs)",
    "in_loop": "not found by search",
}

# the pitfall on an object whose type the file does not show: reported only with --preview
PREVIEW = {name: PITFALL.pop(name) for name in ("method_inplace", "method_keywords", "in_loop")}
