"""Port the pump-vibration anomaly autoencoder from the old framework's export to PyTorch,
check it against the reference reconstruction errors shipped with the export, and write a
compact state dict for the edge gateway.

The export is a torch-saved dict of tensors: dense kernels stored (in, out), biases, a scalar
temperature for the anomaly score, and the reference inputs/errors for the check.
"""
import argparse
import json
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn as nn
import torch.utils._pytree as pytree


@dataclass
class Reconstruction:
    output: torch.Tensor
    error: torch.Tensor


pytree.register_pytree_node(
    Reconstruction,
    lambda r: ([r.output, r.error], None),
    lambda values, _: Reconstruction(*values),
)


class VibrationAE(nn.Module):
    def __init__(self, n_in, widths=(64, 16)):
        super().__init__()
        self.enc1 = nn.Linear(n_in, widths[0])
        self.enc2 = nn.Linear(widths[0], widths[1])
        self.dec1 = nn.Linear(widths[1], widths[0])
        self.dec2 = nn.Linear(widths[0], n_in)
        self.register_buffer("temperature", torch.tensor(1.0))

    def forward(self, x):
        z = torch.tanh(self.enc2(torch.tanh(self.enc1(x))))
        out = self.dec2(torch.tanh(self.dec1(z)))
        error = ((out - x) ** 2).mean(dim=1) / self.temperature
        return Reconstruction(out, error)


def to_torch_layout(name, tensor):
    if tensor.dim() == 2 and name.endswith("kernel"):
        return tensor.t().contiguous()
    return tensor.clone()


def rename(name):
    layer, leaf = name.split("/")
    return f"{layer}.{'weight' if leaf == 'kernel' else leaf}"


def shares_memory(a, b):
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def convert(export):
    state = {}
    for name, tensor in export["variables"].items():
        state[rename(name)] = to_torch_layout(name, tensor).float()
    state["temperature"] = export["temperature"].reshape(()).float()
    return state


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--export", default="exports/pump_ae_v7.pt")
    ap.add_argument("--out", default="gateway/pump_ae_v7_state.pt")
    ap.add_argument("--atol", type=float, default=1e-5)
    args = ap.parse_args(argv)

    export = torch.load(args.export, map_location="cpu", weights_only=True)
    state = convert(export)
    for name, tensor in export["variables"].items():
        if shares_memory(state[rename(name)], tensor):
            raise RuntimeError(f"{name} still aliases the export buffer")
    n_in = state["enc1.weight"].shape[1]
    widths = (state["enc1.weight"].shape[0], state["enc2.weight"].shape[0])
    model = VibrationAE(n_in, widths)
    model.load_state_dict(state)
    model.eval()

    with torch.no_grad():
        result = model(export["reference_inputs"].float())
    result = pytree.tree_map(lambda t: t.double(), result)
    reference = export["reference_errors"].double()
    max_diff = (result.error - reference).abs().max().item()
    print(f"max |error - reference| = {max_diff:.3g}")
    torch.testing.assert_close(result.error, reference, atol=args.atol, rtol=1e-4)

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), out)
    out.with_suffix(".json").write_text(json.dumps({"n_in": n_in, "widths": list(widths), "max_diff": max_diff}))


if __name__ == "__main__":
    main()
