"""PTF112 (checkpoint-use-reentrant): torch.utils.checkpoint without use_reentrant, a warning since 2.1."""
PITFALL = {
    "full_path": "import torch\n\ndef forward(self, x):\n    return torch.utils.checkpoint.checkpoint(self.block, x)\n",
    "from_import": "from torch.utils.checkpoint import checkpoint\n\ndef wrap_forward(forward):\n    def wrapper(*args):\n        return checkpoint(forward, *args)\n    return wrapper\n",
    "module_as_checkpoint": "import torch.utils.checkpoint as checkpoint\n\nclass Stack:\n    def forward(self, x):\n        for blk in self.blocks:\n            x = checkpoint.checkpoint(blk, x) if self.use_checkpoint else blk(x)\n        return x\n",
    "from_utils_import_module": "from torch.utils import checkpoint\n\ndef run(blk, x):\n    return checkpoint.checkpoint(blk, x)\n",
    "sequential": "from torch.utils.checkpoint import checkpoint_sequential\n\ndef run(model, x):\n    return checkpoint_sequential(model, 4, x)\n",
}
NEAR_MISS = {
    "use_reentrant_false": "from torch.utils.checkpoint import checkpoint\n\ndef run(blk, x):\n    return checkpoint(blk, x, use_reentrant=False)\n",
    "kwargs_passed_through": "import torch\n\ndef checkpoint(func):\n    def wrapper(*args, **kwargs):\n        return torch.utils.checkpoint.checkpoint(func, *args, **kwargs)\n    return wrapper\n",
    "deepspeed_checkpointing": "import deepspeed\n\ndef run(blk, x):\n    return deepspeed.checkpointing.checkpoint(blk, x)\n",
    "own_checkpoint_function": "from src.ops.checkpoint import checkpoint\n\ndef run(f, x):\n    return checkpoint(f, x)\n",
}
SEEN = {
    "full_path": "transformers/models/clvp/modeling_clvp.py (torch.utils.checkpoint.checkpoint(self.mel_conv, input_features), in build/realcode/src)",
    "from_import": "mmengine/runner/activation_checkpointing.py (wrap_forward: checkpoint(forward, *args), in build/realcode/untuned)",
    "module_as_checkpoint": "kornia/models/tiny_vit.py (checkpoint.checkpoint(blk, x) if self.use_checkpoint), code search: CheckpointLayerStack 'import torch.utils.checkpoint as checkpoint'",
    "from_utils_import_module": "kornia/models/tiny_vit.py ('from torch.utils import checkpoint')",
    "sequential": "not found by search; checkpoint_sequential from the torch docs",
}
