"""PTF140 (autocast-gpu-dtype-deprecated): torch.get_autocast_gpu_dtype(), deprecated since torch 2.4."""
PITFALL = {
    "flash_attention_cast": "import torch\n\ndef cast(q, weight):\n    if q.dtype == torch.float32:\n        if torch.is_autocast_enabled():\n            target_dtype = torch.get_autocast_gpu_dtype()\n        else:\n            target_dtype = weight.dtype\n        q = q.to(target_dtype)\n    return q\n",
    "conditional_expression": "import torch\n\ndef out_dtype(y):\n    return torch.get_autocast_gpu_dtype() if torch.is_autocast_enabled() else y.dtype\n",
    "custom_fwd_wrapper": "import torch\n\nclass Scan(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, u, delta):\n        if torch.is_autocast_enabled():\n            delta = delta.to(dtype=torch.get_autocast_gpu_dtype())\n        return u * delta\n",
    "aliased": "import torch as th\n\ndtype = th.get_autocast_gpu_dtype()\n",
    "from_import": "from torch import get_autocast_gpu_dtype\n\ndef dt():\n    return get_autocast_gpu_dtype()\n",
}
NEAR_MISS = {
    "device_agnostic": "import torch\n\ndtype = torch.get_autocast_dtype('cuda')\n",
    "hasattr_branch": "import torch\n\ndef dt():\n    if hasattr(torch, 'get_autocast_dtype'):\n        return torch.get_autocast_dtype('cuda')\n    return torch.get_autocast_gpu_dtype()\n",
    "version_flag": "import torch\nfrom packaging import version\n\nTORCH_GE_2_4 = version.parse(torch.__version__) >= version.parse('2.4')\n\ndef dt():\n    return torch.get_autocast_dtype('cuda') if TORCH_GE_2_4 else torch.get_autocast_gpu_dtype()\n",
    "autocast_context": "import torch\n\nwith torch.autocast('cuda', dtype=torch.bfloat16):\n    pass\n",
}
SEEN = {
    "flash_attention_cast": "huggingface/transformers flash-attention path (target_dtype = torch.get_autocast_gpu_dtype() under torch.is_autocast_enabled(); replaced in huggingface/transformers#42055)",
    "custom_fwd_wrapper": "mamba_ssm ops/selective_scan_interface.py (listed in huggingface/kernels-community#1052)",
    "conditional_expression": "mamba_ssm ops/triton/layernorm_gated.py (dtype = torch.get_autocast_gpu_dtype() if torch.is_autocast_enabled() else y.dtype)",
}
