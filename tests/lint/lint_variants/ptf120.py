"""PTF120 (cuda-amp-custom-fwd-deprecated): torch.cuda.amp.custom_fwd/custom_bwd, deprecated since 2.4."""
PITFALL = {
    "decorators_full_path": "import torch\n\nclass SomeFunc(torch.autograd.Function):\n    @staticmethod\n    @torch.cuda.amp.custom_fwd\n    def forward(ctx, x):\n        return x\n\n    @staticmethod\n    @torch.cuda.amp.custom_bwd\n    def backward(ctx, g):\n        return g\n",
    "from_import_cast_inputs": "import torch\nfrom torch.cuda.amp import custom_fwd, custom_bwd\n\nclass F(torch.autograd.Function):\n    @staticmethod\n    @custom_fwd(cast_inputs=torch.float32)\n    def forward(ctx, x):\n        return x\n",
    "module_aliases": "import torch\n\nautocast = torch.cuda.amp.autocast\ncustom_fwd = torch.cuda.amp.custom_fwd\ncustom_bwd = torch.cuda.amp.custom_bwd\n",
    "amp_alias": "import torch\nfrom torch.cuda import amp\n\nclass F(torch.autograd.Function):\n    @staticmethod\n    @amp.custom_fwd\n    def forward(ctx, x):\n        return x * 2\n",
    "import_as": "import torch.cuda.amp as amp\n\n@amp.custom_bwd\ndef backward(ctx, grad):\n    return grad\n",
}
NEAR_MISS = {
    "torch_amp": "import torch\n\nclass F(torch.autograd.Function):\n    @staticmethod\n    @torch.amp.custom_fwd(device_type='cuda')\n    def forward(ctx, x):\n        return x\n",
    "hasattr_import": "import torch\n\nif hasattr(torch.amp, 'custom_fwd'):\n    from torch.amp import custom_fwd, custom_bwd\nelse:\n    from torch.cuda.amp import custom_fwd, custom_bwd\n",
    "own_custom_fwd": "import torch\nfrom functools import wraps\n\ndef custom_fwd(fn):\n    @wraps(fn)\n    def wrapper(*args, **kwargs):\n        return fn(*args, **kwargs)\n    return wrapper\n",
}
SEEN = {
    "decorators_full_path": "code search '@custom_fwd(cast_inputs=torch.float32) from torch.cuda.amp import custom_fwd, custom_bwd' rank 7 (SomeFunc with @torch.cuda.amp.custom_fwd/custom_bwd)",
    "from_import_cast_inputs": "vasqu/mamba2-torch src/mamba2_torch/ops/custom_fwd_bwd.py; splatwizard/splatwizard splatwizard/polyfills.py (from torch.cuda.amp import custom_fwd, custom_bwd)",
    "module_aliases": "code search rank 5 (Amazon-licensed: autocast = torch.cuda.amp.autocast; custom_fwd = torch.cuda.amp.custom_fwd)",
    "amp_alias": "code search 'from torch.cuda import amp' (build_all_scaler, rank 8 of the GradScaler search)",
    "import_as": "lyuwenyu/RT-DETR rtdetr_pytorch/src/optim/amp.py ('import torch.cuda.amp as amp')",
}
