"""PTF121 (cuda-amp-gradscaler-deprecated): torch.cuda.amp.GradScaler, deprecated since 2.4."""
PITFALL = {
    "from_import": "from torch.cuda.amp import GradScaler, autocast\n\nscaler = GradScaler()\n",
    "full_path_in_method": "import torch\n\nclass Trainer:\n    def fit(self):\n        scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp)\n        return scaler\n",
    "from_cuda_import_amp": "from torch.cuda import amp\n\ndef build_all_scaler():\n    return amp.GradScaler(), amp.GradScaler()\n",
    "import_as_amp_grad_scaler_module": "import torch.cuda.amp as amp\n\nGradScaler = amp.grad_scaler.GradScaler\n",
    "keyword_args": "import torch\n\nscaler = torch.cuda.amp.GradScaler(init_scale=2.**16, growth_interval=2000)\n",
}
NEAR_MISS = {
    "torch_amp": "import torch\n\nscaler = torch.amp.GradScaler('cuda', enabled=True)\n",
    "helper_version_check": "import torch\nfrom accelerate.utils import is_torch_version\n\ndef get_grad_scaler(**kwargs):\n    if is_torch_version('>=', '2.3'):\n        return torch.amp.GradScaler('cuda', **kwargs)\n    else:\n        return torch.cuda.amp.GradScaler(**kwargs)\n",
    "flag_in_ifexp": "import torch\nfrom ultralytics.utils.torch_utils import TORCH_2_4\n\nscaler = torch.amp.GradScaler('cuda') if TORCH_2_4 else torch.cuda.amp.GradScaler()\n",
    "npu_scaler": "import torch_npu\n\nscaler = torch_npu.npu.amp.GradScaler(enabled=True)\n",
    "sharded_scaler": "from fairscale.optim.grad_scaler import ShardedGradScaler\n\nscaler = ShardedGradScaler()\n",
}
SEEN = {
    "from_import": "HFtion/Env_set pytorch/autocast.py (from torch.cuda.amp import GradScaler, autocast; scaler = GradScaler())",
    "full_path_in_method": "sentence_transformers/sentence_transformer/fit_mixin.py (scaler = torch.cuda.amp.GradScaler(), in build/realcode/untuned)",
    "from_cuda_import_amp": "code search rank 8 of 'from torch.cuda.amp import GradScaler': from torch.cuda import amp; build_all_scaler()",
    "import_as_amp_grad_scaler_module": "lyuwenyu/RT-DETR rtdetr_pytorch/src/optim/amp.py (GradScaler = register(amp.grad_scaler.GradScaler))",
    "keyword_args": "ultralytics/engine/trainer.py (torch.cuda.amp.GradScaler(enabled=...), in build/realcode/untuned)",
}
