"""Export the fine-tuned ViT-S/16 plant-species classifier to ONNX and check it against PyTorch."""

import argparse
import json
from pathlib import Path

import numpy as np
import onnxruntime as ort
import timm
import torch


def load_classifier(checkpoint: Path, num_classes: int) -> torch.nn.Module:
    model = timm.create_model("vit_small_patch16_224", pretrained=False, num_classes=num_classes)
    ckpt = torch.load(checkpoint, map_location="cpu", weights_only=True)
    state = ckpt.get("state_dict", ckpt)
    state = {k.removeprefix("module."): v for k, v in state.items()}
    model.load_state_dict(state, strict=True)
    model.eval()
    return model


class WithSoftmax(torch.nn.Module):
    """Serving wants probabilities, so the exported graph ends in a softmax over the classes."""

    def __init__(self, classifier: torch.nn.Module):
        super().__init__()
        self.classifier = classifier

    def forward(self, pixels: torch.Tensor) -> torch.Tensor:
        return self.classifier(pixels).softmax(dim=-1)


def export(model: torch.nn.Module, out: Path, image_size: int, opset: int) -> None:
    example = torch.randn(2, 3, image_size, image_size)
    batch = torch.export.Dim("batch", min=1, max=256)
    program = torch.onnx.export(
        model,
        (example,),
        dynamo=True,
        input_names=["pixels"],
        output_names=["probs"],
        dynamic_shapes={"pixels": {0: batch}},
        opset_version=opset,
    )
    program.optimize()
    program.save(str(out))


def compare(model: torch.nn.Module, onnx_path: Path, image_size: int, batch: int = 5) -> float:
    pixels = torch.randn(batch, 3, image_size, image_size)
    with torch.no_grad():
        expected = model(pixels).numpy()
    session = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    (got,) = session.run(["probs"], {"pixels": pixels.numpy()})
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert np.allclose(got.sum(axis=1), 1.0, atol=1e-4)
    return float(np.abs(got - expected).max())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", type=Path, default=Path("checkpoints/vit_s16_plants_best.pt"))
    ap.add_argument("--labels", type=Path, default=Path("checkpoints/labels.json"))
    ap.add_argument("--out", type=Path, default=Path("export/vit_s16_plants.onnx"))
    ap.add_argument("--image-size", type=int, default=224)
    ap.add_argument("--opset", type=int, default=18)
    args = ap.parse_args()

    labels = json.loads(args.labels.read_text())
    classifier = load_classifier(args.ckpt, num_classes=len(labels))
    serving = WithSoftmax(classifier).eval()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    export(serving, args.out, args.image_size, args.opset)
    err = compare(serving, args.out, args.image_size)
    print(f"exported {args.out} ({args.out.stat().st_size / 1e6:.1f} MB), max |onnx - torch| = {err:.2e}")
    if err > 1e-4:
        raise SystemExit("ONNX output differs from PyTorch")
    (args.out.parent / "labels.json").write_text(json.dumps(labels))


if __name__ == "__main__":
    main()
