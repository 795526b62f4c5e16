"""PTF136 (cuda-amp-autocast-deprecated): torch.cuda.amp.autocast, deprecated since torch 2.4."""
PITFALL = {
    "from_import_with": "from torch.cuda.amp import autocast, GradScaler\n\nfor x, y in loader:\n    with autocast():\n        loss = model(x)\n",
    "full_path_enabled": "import torch\n\ndef step(model, x, enabled):\n    with torch.cuda.amp.autocast(enabled=enabled):\n        return model(x)\n",
    "autocast_as_alias": "from torch.cuda.amp import autocast as autocast\n\nwith autocast():\n    out = model(inp)\n",
    "returned_context": "import torch\n\ndef autocast(enabled, device='cuda'):\n    return torch.cuda.amp.autocast(enabled and device == 'cuda')\n",
    "module_alias_dtype": "import torch\nimport torch.cuda.amp as amp\n\nwith amp.autocast(dtype=torch.bfloat16):\n    y = net(x)\n",
}
NEAR_MISS = {
    "torch_autocast": "import torch\n\nwith torch.autocast('cuda', dtype=torch.float16):\n    pass\n",
    "torch_amp_autocast": "import torch\n\nwith torch.amp.autocast(device_type='cuda', enabled=True):\n    pass\n",
    "version_flag_else": "import torch\nfrom ultralytics.utils.torch_utils import TORCH_1_13\n\ndef autocast(enabled):\n    if TORCH_1_13:\n        return torch.amp.autocast('cuda', enabled=enabled)\n    else:\n        return torch.cuda.amp.autocast(enabled)\n",
    "try_new_then_old": "import torch\n\ndef ctx(enabled):\n    try:\n        return torch.amp.autocast(device_type='cuda', enabled=enabled)\n    except (AttributeError, TypeError):\n        return torch.cuda.amp.autocast(enabled=enabled)\n",
}
SEEN = {
    "from_import_with": "HFtion/Env_set pytorch/autocast.py (from torch.cuda.amp import GradScaler, autocast; with autocast():)",
    "full_path_enabled": "mmengine/runner/amp.py (with torch.cuda.amp.autocast(enabled=enabled), in build/realcode/untuned)",
    "autocast_as_alias": "renyuehe/python-Lesson python_人工智能/pytorch库的学习/pytorch_之混合精度/01_auto_cast.py (from torch.cuda.amp import autocast as autocast)",
    "returned_context": "ultralytics/utils/torch_utils.py (return torch.cuda.amp.autocast(enabled and device == 'cuda'), in build/realcode/untuned)",
    "module_alias_dtype": "lyuwenyu/RT-DETR rtdetr_pytorch/src/optim/amp.py ('import torch.cuda.amp as amp')",
}
