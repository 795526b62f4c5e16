"""PTF126 (torch-load-weights-only-default): torch.load without weights_only (warns in 2.4-2.5;
weights_only=True by default since 2.6)."""
PITFALL = {
    "map_location_cpu": "import torch\n\ndef load_checkpoint(load_path, model):\n    state_dict = torch.load(load_path, map_location='cpu')\n    model.load_state_dict(state_dict['model_state_dict'])\n",
    "bare_path": "import torch\n\ncheckpoint = torch.load(PATH)\nmodel.load_state_dict(checkpoint['model_state_dict'])\n",
    "lambda_map_location": "import torch\n\ndef torch_load_cpu(load_path):\n    return torch.load(load_path, map_location=lambda storage, loc: storage)\n",
    "nested_in_load_state_dict": "import torch\n\nmodel.load_state_dict(torch.load(PATH, map_location=device))\n",
    "branches_by_device": "import torch\n\ndef load(path, use_cuda):\n    if use_cuda:\n        ckpt = torch.load(path)\n    else:\n        ckpt = torch.load(path, map_location='cpu')\n    return ckpt\n",
    "newer_branch_of_a_version_flag": "import torch\nfrom lightning_utilities.core.imports import RequirementCache\n_TORCH_GREATER_EQUAL_2_3 = RequirementCache('torch>=2.3')\n\ndef load(path):\n    return torch.load(path, mmap=True, map_location='cpu') if _TORCH_GREATER_EQUAL_2_3 else _lazy_load(path)\n",
    "after_a_raise_for_old_torch": "import torch\nfrom packaging.version import Version\n\ndef load_extra(path):\n    if Version(torch.__version__) < Version('2.3'):\n        raise ImportError('needs torch >= 2.3')\n    return torch.load(path, map_location='cpu')\n",
}
NEAR_MISS = {
    "weights_only_true": "import torch\n\nstate = torch.load('m.pt', map_location='cpu', weights_only=True)\n",
    "weights_only_false_trusted": "import torch\n\nckpt = torch.load('trusted.ckpt', weights_only=False)\n",
    "type_error_fallback": "import torch\n\ndef load(path):\n    try:\n        return torch.load(path, weights_only=True)\n    except TypeError:\n        return torch.load(path)\n",
    "version_flag": "import torch\nfrom packaging import version\n_TORCH_GE_1_13 = version.parse(torch.__version__) >= version.parse('1.13')\n\ndef load(path):\n    if _TORCH_GE_1_13:\n        return torch.load(path, weights_only=True)\n    return torch.load(path)\n",
    "safetensors_load": "from safetensors.torch import load_file\n\nstate = load_file('model.safetensors')\n",
    "own_pickle_module": "import dill\nimport torch\n\ndef load_checkpoint(path):\n    payload = torch.load(open(path, 'rb'), pickle_module=dill)\n    return payload['cfg']\n",
}
SEEN = {
    "map_location_cpu": "Vibha111094/alpas-assignment utils.py (torch.load(load_path, map_location='cpu'))",
    "bare_path": "nmeripo/chrisimos pytorch.md (checkpoint = torch.load(PATH))",
    "lambda_map_location": "code search 'torch.load(checkpoint_path, map_location=\"cpu\")' rank 10 (torch_load_cpu with map_location=lambda storage, loc: storage)",
    "nested_in_load_state_dict": "nmeripo/chrisimos pytorch.md (model.load_state_dict(torch.load(PATH, map_location=device)))",
    "newer_branch_of_a_version_flag": "lightning/fabric/strategies/model_parallel.py:540 (torch.load(path, mmap=True, ...) if _TORCH_GREATER_EQUAL_2_3 else _lazy_load(path), in build/realcode/src)",
    "after_a_raise_for_old_torch": "lightning/fabric/utilities/load.py:263 (after 'if not _TORCH_GREATER_EQUAL_2_3: raise ImportError', in build/realcode/src)",
    "own_pickle_module": "diffusion_policy workspace/base_workspace.py:108 and eval.py:31 (torch.load(open(path, 'rb'), pickle_module=dill); round 9's read held-out half: torch 2.4.1 and 2.5.1 warn only when pickle_module is None, 2.6+ defaults weights_only to False when one is given)",
    "branches_by_device": "code search rank 8: load_checkpoint(model, checkpoint_path, use_cuda) with two torch.load spellings",
}
