"""Export the trained defect classifier (checkpoint written by the DDP training job) to ONNX and check it
against PyTorch with onnxruntime on a few real images.

Requires: torch >= 2.8, onnx, onnxscript, onnxruntime.
"""

import argparse
import glob
import logging
import os

import numpy as np
import onnx
import onnxruntime as ort
import torch
import torch.nn as nn
from PIL import Image
from torchvision import models, transforms

log = logging.getLogger("export")
CLASSES = ["ok", "scratch", "dent", "stain", "crack"]


def build_model(n_classes):
    net = models.mobilenet_v3_large(weights=None)
    net.classifier[-1] = nn.Linear(net.classifier[-1].in_features, n_classes)
    return net


def load_weights(model, path):
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    state = ckpt.get("model", ckpt)
    torch.nn.modules.utils.consume_prefix_in_state_dict_if_present(state, "module.")
    result = model.load_state_dict(state, strict=True)
    log.info("loaded %s (%s)", path, result)
    return model


class WithSoftmax(nn.Module):
    """Deployment wrapper: the service wants class probabilities, not logits."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return torch.softmax(self.net(x), dim=1)


def preprocess(paths):
    tf = transforms.Compose([
        transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(),
        transforms.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225)),
    ])
    return torch.stack([tf(Image.open(p).convert("RGB")) for p in paths])


def export(model, path, opset=18):
    example = torch.randn(2, 3, 224, 224)
    batch = torch.export.Dim("batch", min=1, max=64)
    program = torch.onnx.export(
        model, (example,), path, input_names=["image"], output_names=["probs"],
        dynamo=True, dynamic_shapes=({0: batch},), opset_version=opset,
    )
    onnx.checker.check_model(onnx.load(path))
    return program


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("checkpoint")
    ap.add_argument("--out", default="export/defects.onnx")
    ap.add_argument("--images", default="data/defects/val/*/*.png")
    ap.add_argument("--n", type=int, default=16)
    ap.add_argument("--atol", type=float, default=1e-4)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)

    net = load_weights(build_model(len(CLASSES)), args.checkpoint)
    model = WithSoftmax(net).eval()
    export(model, args.out)
    log.info("wrote %s (%.1f MB)", args.out, os.path.getsize(args.out) / 2**20)

    paths = sorted(glob.glob(args.images))[: args.n]
    x = preprocess(paths)
    with torch.inference_mode():
        expected = model(x).numpy()
    session = ort.InferenceSession(args.out, providers=["CPUExecutionProvider"])
    got = session.run(["probs"], {"image": x.numpy()})[0]
    diff = np.abs(got - expected).max()
    log.info("max |onnx - torch| = %.2e over %d images", diff, len(paths))
    if diff > args.atol:
        raise SystemExit(f"mismatch {diff:.2e} > {args.atol}")
    for p, row in zip(paths, got):
        log.info("%-40s %s (%.3f)", os.path.basename(p), CLASSES[int(row.argmax())], float(row.max()))


if __name__ == "__main__":
    main()
