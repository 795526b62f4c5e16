"""PTF137 (sdp-kernel-deprecated): torch.backends.cuda.sdp_kernel, deprecated since torch 2.3."""
PITFALL = {
    "with_flags": "import torch\nimport torch.nn.functional as F\n\ndef fused_attention(q, k, v):\n    with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_mem_efficient=True, enable_math=False):\n        return F.scaled_dot_product_attention(q, k, v)\n",
    "returned_context": "import torch\n\ndef sdp_kernel_context(dropout_p, use_flash, old_gpu):\n    return torch.backends.cuda.sdp_kernel(enable_flash=use_flash, enable_math=old_gpu and dropout_p > 0.0, enable_mem_efficient=old_gpu)\n",
    "from_import": "from torch.backends.cuda import sdp_kernel\n\nwith sdp_kernel(enable_math=False):\n    out = attn(q, k, v)\n",
    "module_alias": "import torch.backends.cuda as cuda_backends\n\nwith cuda_backends.sdp_kernel(enable_flash=False):\n    pass\n",
    "in_benchmark_loop": "import torch\n\nfor cfg in configs:\n    with torch.backends.cuda.sdp_kernel(**cfg):\n        run()\n",
}
NEAR_MISS = {
    "sdpa_kernel": "from torch.nn.attention import SDPBackend, sdpa_kernel\n\nwith sdpa_kernel([SDPBackend.FLASH_ATTENTION]):\n    pass\n",
    "import_fallback": "try:\n    from torch.nn.attention import sdpa_kernel, SDPBackend\n    ctx = sdpa_kernel([SDPBackend.MATH])\nexcept ImportError:\n    import torch\n    ctx = torch.backends.cuda.sdp_kernel(enable_flash=False, enable_mem_efficient=False)\n",
    "enable_flags": "import torch\n\ntorch.backends.cuda.enable_mem_efficient_sdp(False)\ntorch.backends.cuda.enable_flash_sdp(False)\n",
}
SEEN = {
    "with_flags": "martenlienen/generative-turbulence turbdiff/models/attention.py (with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_mem_efficient=True, enable_math=False))",
    "returned_context": "torchao/_models/sam2/modeling/sam/transformer.py (sdp_kernel_context, in build/realcode/untuned)",
    "from_import": "not found by search",
    "module_alias": "not found by search",
    "in_benchmark_loop": "torchao/prototype/quantization/mixed_precision/scripts/BO_acc_throughput.py (with torch.backends.cuda.sdp_kernel(...), in build/realcode/untuned)",
}
