"""PTF139 (torch-typing-names-removed): typing's names read from torch, gone from torch 2.5."""
PITFALL = {
    "ctx_annotation": "import torch\n\nclass Quant(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx: torch.Any, x: torch.Tensor) -> torch.Tensor:\n        return x\n",
    "from_import": "from torch import Tuple, Tensor\n\ndef split(x: Tensor) -> Tuple[Tensor, Tensor]:\n    return x.chunk(2)\n",
    "return_annotation": "import torch\n\ndef pair(x) -> torch.Tuple[int, int]:\n    return x.shape[0], x.shape[1]\n",
    "alias_at_module_level": "import torch\n\nOptTensor = torch.Optional[torch.Tensor]\n",
    "from_import_optional": "from torch import nn, Optional\n\nclass Head(nn.Module):\n    pass\n",
}
NEAR_MISS = {
    "typing_import": "from typing import Any, Tuple\nimport torch\n\ndef forward(ctx: Any, x: torch.Tensor) -> Tuple[torch.Tensor]:\n    return (x,)\n",
    "deferred_annotations": "from __future__ import annotations\nimport torch\n\ndef forward(ctx: torch.Any, x):\n    return x\n",
    "torch_type_is_torchscript": "import torch\n\nx = torch.Type\n",
    "tensor_and_generator": "import torch\nfrom torch import Generator, Tensor\n\ndef draw(g: Generator) -> Tensor:\n    return torch.rand(2, generator=g)\n",
}
SEEN = {
    "ctx_annotation": "Vahe1994/AQLM#136 (autograd contexts annotated 'ctx: torch.Any': module 'torch' has no attribute 'Any' on 2.5)",
    "from_import": "hpcaitech/Open-Sora#839 (Tuple imported from torch, fixed to typing)",
}
