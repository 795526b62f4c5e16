"""PTF119 (cpu-amp-autocast-deprecated): torch.cpu.amp.autocast, deprecated since 2.4."""
PITFALL = {
    "with_full_path": "import torch\n\ndef infer(model, x):\n    with torch.cpu.amp.autocast():\n        return model(x)\n",
    "from_import": "from torch.cpu.amp import autocast\n\ndef infer(model, x):\n    with autocast(dtype=torch.bfloat16):\n        return model(x)\n",
    "module_alias": "import torch.cpu.amp as cpu_amp\n\ndef infer(model, x):\n    with cpu_amp.autocast(enabled=True):\n        return model(x)\n",
    "as_decorator": "import torch\n\n@torch.cpu.amp.autocast()\ndef forward(model, x):\n    return model(x)\n",
    "in_loop": "import torch\n\nfor x in loader:\n    with torch.cpu.amp.autocast(dtype=torch.bfloat16):\n        out = model(x)\n",
}
NEAR_MISS = {
    "torch_autocast": "import torch\n\nwith torch.autocast('cpu', dtype=torch.bfloat16):\n    pass\n",
    "amp_autocast": "import torch\n\nwith torch.amp.autocast(device_type='cpu'):\n    pass\n",
    "version_flag": "import torch\nTORCH_GE_2_4 = tuple(int(p) for p in torch.__version__.split('.')[:2]) >= (2, 4)\n\ndef ctx():\n    if TORCH_GE_2_4:\n        return torch.autocast('cpu')\n    return torch.cpu.amp.autocast()\n",
}
SEEN = {
    "with_full_path": "pytorch/pytorch torch/cpu/amp/autocast_mode.py (code search 'custom_fwd ... from torch.cuda.amp import' rank 3: what torch.cpu.amp.autocast wraps)",
    "from_import": "not found by search; the from-import spelling used for torch.cuda.amp (HFtion/Env_set pytorch/autocast.py)",
    "module_alias": "not found by search; cf. 'import torch.cuda.amp as amp' in lyuwenyu/RT-DETR rtdetr_pytorch/src/optim/amp.py",
    "as_decorator": "not found by search",
    "in_loop": "not found by search",
}
