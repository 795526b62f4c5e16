"""Export a trained defect-segmentation model (torch.export) for the inspection line."""
import argparse
from pathlib import Path

import torch
import torch.nn as nn


def conv_block(c_in, c_out):
    return nn.Sequential(
        nn.Conv2d(c_in, c_out, 3, padding=1, bias=False),
        nn.BatchNorm2d(c_out),
        nn.ReLU(inplace=True),
        nn.Conv2d(c_out, c_out, 3, padding=1, bias=False),
        nn.BatchNorm2d(c_out),
        nn.ReLU(inplace=True),
    )


class TinyUNet(nn.Module):
    def __init__(self, in_ch=1, n_classes=2, width=16):
        super().__init__()
        self.enc1 = conv_block(in_ch, width)
        self.enc2 = conv_block(width, width * 2)
        self.pool = nn.MaxPool2d(2)
        self.up = nn.ConvTranspose2d(width * 2, width, 2, stride=2)
        self.dec1 = conv_block(width * 2, width)
        self.head = nn.Conv2d(width, n_classes, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(self.pool(e1))
        d1 = self.dec1(torch.cat([self.up(e2), e1], dim=1))
        return self.head(d1)


def init_weights(m):
    if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)):
        nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
    elif isinstance(m, nn.BatchNorm2d):
        nn.init.ones_(m.weight)
        nn.init.zeros_(m.bias)


def load_model(ckpt_path, width):
    model = TinyUNet(width=width)
    checkpoint = torch.load(ckpt_path, map_location="cpu", weights_only=True)
    state = checkpoint.get("model_state", checkpoint)
    missing, unexpected = model.load_state_dict(state, strict=True)
    model.apply(init_weights)
    return model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("checkpoint", type=Path)
    parser.add_argument("--out-dir", type=Path, default=Path("export"))
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--size", type=int, default=256)
    args = parser.parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)

    model = load_model(args.checkpoint, args.width).eval()
    example = torch.randn(1, 1, args.size, args.size)

    with torch.inference_mode():
        reference = model(example)
    print("reference output", tuple(reference.shape), float(reference.abs().mean()))

    batch = torch.export.Dim("batch", min=1, max=64)
    program = torch.export.export(model, (example,), dynamic_shapes={"x": {0: batch}})
    torch.export.save(program, str(args.out_dir / "unet.pt2"))
    torch.save(model.state_dict(), args.out_dir / "unet_weights.pt")
    print("exported to", args.out_dir)


if __name__ == "__main__":
    main()
