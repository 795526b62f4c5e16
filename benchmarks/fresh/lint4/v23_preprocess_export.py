"""Package the trained sound-event classifier for the edge devices.

The device computes 64-bin log-mel patches of 64 frames (about 0.64 s) and feeds them raw;
the per-bin standardisation measured on the training set is baked into the exported
program so that the firmware does not have to know about it.
"""

import json
import sys
from pathlib import Path

import numpy as np
import torch
from torch import nn

from sed.model import PatchCNN

N_MELS, N_FRAMES = 64, 64


class Deployable(nn.Module):
    def __init__(self, net, mel_mean, mel_std, labels):
        super().__init__()
        self.net = net
        self.register_buffer("mel_mean", torch.as_tensor(mel_mean, dtype=torch.float32))
        self.register_buffer("mel_std", torch.as_tensor(mel_std, dtype=torch.float32).clamp(min=1e-3))
        self.labels = list(labels)

    def forward(self, logmel):
        # logmel: (batch, 1, N_MELS, N_FRAMES)
        x = (logmel - self.mel_mean) / self.mel_std
        return torch.sigmoid(self.net(x))


def training_statistics(stats_path):
    blob = np.load(stats_path)
    mean, std = blob["mel_mean"], blob["mel_std"]
    assert mean.shape == (N_MELS,) and std.shape == (N_MELS,), (mean.shape, std.shape)
    return mean, std


def check_against_reference(program, wrapper, ref_dir):
    """Exported program and eager wrapper must agree on the recorded reference patches."""
    worst = 0.0
    for patch_file in sorted(Path(ref_dir).glob("*.npy")):
        x = torch.from_numpy(np.load(patch_file)).float().reshape(1, 1, N_MELS, N_FRAMES)
        with torch.no_grad():
            eager = wrapper(x)
        exported = program.module()(x)
        worst = max(worst, (eager - exported).abs().max().item())
    return worst


def main(run_dir, out_dir="export"):
    run_dir, out_dir = Path(run_dir), Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    cfg = json.loads((run_dir / "config.json").read_text())
    net = PatchCNN(n_classes=len(cfg["labels"]), width=cfg["width"])
    net.load_state_dict(torch.load(run_dir / "best.pt", map_location="cpu", weights_only=True))
    mean, std = training_statistics(run_dir / "mel_stats.npz")
    wrapper = Deployable(net, mean, std, cfg["labels"]).eval()

    example = torch.randn(2, 1, N_MELS, N_FRAMES)
    batch = torch.export.Dim("batch", min=1, max=64)
    program = torch.export.export(wrapper, (example,), dynamic_shapes={"logmel": {0: batch}})
    torch.export.save(program, out_dir / "sed_patchcnn.pt2")

    worst = check_against_reference(program, wrapper, run_dir / "reference_patches")
    print(f"max |eager - exported| on reference patches: {worst:.2e}")
    if worst > 1e-4:
        sys.exit("exported program disagrees with the eager model")

    (out_dir / "labels.json").write_text(json.dumps(wrapper.labels, indent=2))
    meta = {"input": [None, 1, N_MELS, N_FRAMES], "output": "per-class probability",
            "threshold": cfg.get("threshold", 0.5), "source_run": str(run_dir)}
    (out_dir / "meta.json").write_text(json.dumps(meta, indent=2))
    print("wrote", sorted(p.name for p in out_dir.iterdir()))


if __name__ == "__main__":
    main(sys.argv[1])
