"""PTF114 (lr-scheduler-verbose): the schedulers' verbose=, removed in torch 2.7 (TypeError)."""
PITFALL = {
    "plateau_full_path": "import torch\n\ndef get_scheduler(optimizer):\n    return torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=5, mode='min', factor=0.5, verbose=True, min_lr=1e-5)\n",
    "from_import": "from torch.optim.lr_scheduler import ReduceLROnPlateau\n\ndef reduce_lr_on_plateau(opt, verbose=False):\n    return ReduceLROnPlateau(opt, mode='min', patience=3, verbose=verbose)\n",
    "step_lr": "from torch.optim.lr_scheduler import StepLR\n\nsched = StepLR(opt, step_size=30, gamma=0.1, verbose=True)\n",
    "alias_module": "import torch.optim.lr_scheduler as lrs\n\nsched = lrs.CosineAnnealingLR(opt, T_max=100, eta_min=0, verbose=False)\n",
    "in_method": "from torch.optim import lr_scheduler\n\nclass Runner:\n    def build(self):\n        self.sched = lr_scheduler.MultiStepLR(self.opt, milestones=[30, 60], verbose=self.cfg.verbose)\n",
}
NEAR_MISS = {
    "no_verbose": "from torch.optim.lr_scheduler import ReduceLROnPlateau\n\nsched = ReduceLROnPlateau(opt, mode='min', patience=5)\n",
    "transformers_scheduler": "from transformers import get_linear_schedule_with_warmup\n\nsched = get_linear_schedule_with_warmup(opt, 100, 1000)\n",
    "own_class_verbose": "class ReduceLROnPlateau:\n    def __init__(self, opt, verbose=False):\n        self.verbose = verbose\n\nsched = ReduceLROnPlateau(None, verbose=True)\n",
}
SEEN = {
    "plateau_full_path": "GreatGameDota/Bengali-Character-Classification schedulers/scheduler_factory.py (ReduceLROnPlateau(..., verbose=True, min_lr=1e-5))",
    "from_import": "code search rank 5 of 'ReduceLROnPlateau(... verbose=True)': reduce_lr_on_plateau(optimizer, verbose=False)",
    "step_lr": "foocker/F2P K2P/solver/optimizer.py (StepLR / ReduceLROnPlateau(..., verbose=True))",
    "alias_module": "not found by search; alias spelling",
    "in_method": "code search rank 11: reduce_lr_on_plateau(model) building ReduceLROnPlateau(opt, ..., verbose=True)",
}
