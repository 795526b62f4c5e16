"""PTF103 (dataloader-prefetch-factor-without-workers): prefetch_factor with num_workers=0 is a
ValueError since torch 2.0."""
PITFALL = {
    "literal_zero_workers": "from torch.utils.data import DataLoader\n\ndef make(ds):\n    return DataLoader(ds, batch_size=8, num_workers=0, prefetch_factor=2)\n",
    "default_workers": "import torch\n\ndef make(ds):\n    return torch.utils.data.DataLoader(ds, batch_size=32, shuffle=True, prefetch_factor=4)\n",
    "workers_variable_zero": "from torch.utils.data import DataLoader\n\ndef make(ds):\n    workers = 0\n    return DataLoader(ds, num_workers=workers, prefetch_factor=2, pin_memory=True)\n",
    "aliased_module": "import torch.utils.data as tud\n\nloader = tud.DataLoader(range(10), batch_size=2, prefetch_factor=2, persistent_workers=False)\n",
    "in_method": "from torch.utils.data import DataLoader\n\nclass DM:\n    def val_dataloader(self):\n        return DataLoader(self.val, batch_size=self.bs, num_workers=0, prefetch_factor=None if False else 2)\n",
    "workers_parameter_default_zero": "from torch.utils.data import DataLoader\n\ndef loader_for(split, bs, n_proc=0):\n    return DataLoader(split, batch_size=bs, num_workers=n_proc, prefetch_factor=2)\n\ndef loaders(tr, va):\n    return loader_for(tr, 64), loader_for(va, 128)\n",
    "config_dict_with_environment_fallback": "benchmarks/fresh/lint14 n03_bird_call_spectrogram.py (tuning half, missed at its first run: a CONFIG dict whose workers come from an environment variable defaulting to 0)",
    "workers_parameter_passed_zero": "import torch\n\ndef build(split, procs):\n    return torch.utils.data.DataLoader(split, num_workers=procs, prefetch_factor=8, drop_last=True)\n\ntrain_dl = build(range(100), procs=0)\n",
}

PITFALL["config_dict_with_environment_fallback"] = """
import os
from torch.utils.data import DataLoader
SETTINGS = {"batch": 32, "num_workers": int(os.getenv("NUM_WORKERS", "0")), "prefetch": 2}
def loaders(train_set, settings):
    return DataLoader(train_set, batch_size=settings["batch"], num_workers=settings["num_workers"],
                      prefetch_factor=settings["prefetch"])
def run(settings=SETTINGS):
    return loaders(range(10), settings)
if __name__ == "__main__":
    run()
"""

NEAR_MISS = {
    "workers_parameter_passed_positive": "from torch.utils.data import DataLoader\n\ndef loader_for(split, bs, n_proc=0):\n    return DataLoader(split, batch_size=bs, num_workers=n_proc, prefetch_factor=2)\n\ndef loaders(tr, va):\n    return loader_for(tr, 64, 4), loader_for(va, 128, n_proc=4)\n",
    "workers_parameter_sites_disagree": "import torch\n\ndef build(split, procs):\n    return torch.utils.data.DataLoader(split, num_workers=procs, prefetch_factor=8)\n\ntrain_dl = build(range(100), procs=8)\nval_dl = build(range(10), procs=0)\n",
    "workers_parameter_no_caller": "from torch.utils.data import DataLoader\n\ndef loader_for(split, bs, n_proc=0):\n    return DataLoader(split, batch_size=bs, num_workers=n_proc, prefetch_factor=2)\n",
    "workers_positive": "from torch.utils.data import DataLoader\n\ndef make(ds):\n    return DataLoader(ds, batch_size=8, num_workers=4, prefetch_factor=2)\n",
    "workers_from_args": "from torch.utils.data import DataLoader\n\ndef make(ds, args):\n    return DataLoader(ds, num_workers=args.workers, prefetch_factor=2 if args.workers > 0 else None)\n",
    "no_prefetch": "from torch.utils.data import DataLoader\n\ndef make(ds):\n    return DataLoader(ds, batch_size=8, num_workers=0)\n",
    "other_library_loader": "from torch_geometric.loader import DataLoader\n\ndef make(ds):\n    return DataLoader(ds, batch_size=8)\n",
}
NEAR_MISS["config_dict_with_positive_environment_fallback"] = """
import os
from torch.utils.data import DataLoader
SETTINGS = {"num_workers": int(os.environ.get("NUM_WORKERS", 8))}
def loaders(train_set, settings):
    return DataLoader(train_set, num_workers=settings["num_workers"], prefetch_factor=4)
loaders(range(10), SETTINGS)
"""

SEEN = {
    "literal_zero_workers": "https://github.com/deepseek-ai/DeepSpec/pull/40 (prefetch_factor=4 with data.num_workers=0)",
    "default_workers": "https://github.com/rom1504/clip-retrieval/issues/356 (DataLoader(..., prefetch_factor=...) raises on torch 2.1.2)",
    "workers_variable_zero": "https://github.com/AnswerDotAI/ModernBERT/issues/38 (convert_dataset.py num_workers 0 on non-Linux)",
    "aliased_module": "https://github.com/FudanNLP/fastHan/issues/45 (TorchDataLoader passes prefetch_factor through)",
    "in_method": "https://github.com/Azure/azureml-assets/pull/13 (vision: prefetch_factor when num_workers = 0)",
    "workers_parameter_default_zero": "github.com/Alibubere/Deepfake_detection src/data_prep/dataloader.py (get_dataloader(..., num_workers=..., prefetch_factor=...) passes both through); a build_loader(dataset, batch_size=2, num_workers: int = 0) with prefetch_factor=2 in the code corpus",
    "config_dict_with_environment_fallback": "benchmarks/fresh/lint14 n03_bird_call_spectrogram.py (tuning half, missed at its first run: a CONFIG dict whose workers come from an environment variable defaulting to 0)",
    "workers_parameter_passed_zero": "same helper shape, its caller passing num_workers=0 (the ModernBERT issue 38 case above)",
}
PITFALL["option_defaults_to_zero"] = """
import argparse
import torch
from torch.utils.data import DataLoader
ap = argparse.ArgumentParser()
ap.add_argument("--num-workers", type=int, default=0)
args = ap.parse_args()
loader = DataLoader(torch.arange(10), batch_size=2, num_workers=args.num_workers, prefetch_factor=4)
"""
NEAR_MISS["option_defaults_to_workers"] = """
import argparse
import torch
from torch.utils.data import DataLoader
ap = argparse.ArgumentParser()
ap.add_argument("--num-workers", type=int, default=4)
args = ap.parse_args()
loader = DataLoader(torch.arange(10), batch_size=2, num_workers=args.num_workers, prefetch_factor=4)
"""
SEEN["option_defaults_to_zero"] = "fresh set 4, tuning half (v14: num_workers=args.workers, --workers defaulting to 0, beside prefetch_factor=4)"
NEAR_MISS["prefetch_only_with_workers"] = """
import argparse
import torch
from torch.utils.data import DataLoader
ap = argparse.ArgumentParser()
ap.add_argument("--workers", type=int, default=0)
args = ap.parse_args()
loader = DataLoader(torch.arange(10), batch_size=2, num_workers=args.workers,
                    prefetch_factor=4 if args.workers > 0 else None)
"""
SEEN["prefetch_only_with_workers"] = "fresh set 4, held-out half (v26, a correct script: its first score had this false finding)"
