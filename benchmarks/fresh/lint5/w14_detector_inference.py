"""Run the trained parcel detector over a folder of warehouse camera frames and dump boxes as JSON."""

import argparse
import json
from pathlib import Path

import numpy as np
import torch
import torchvision
from PIL import Image
from torchvision.models.detection import fasterrcnn_resnet50_fpn_v2
from torchvision.models.detection.faster_rcnn import FastRCNNPredictor

CLASSES = ["background", "parcel", "pallet", "forklift"]


def load_detector(ckpt_path, device):
    model = fasterrcnn_resnet50_fpn_v2(weights=None, weights_backbone=None)
    in_features = model.roi_heads.box_predictor.cls_score.in_features
    model.roi_heads.box_predictor = FastRCNNPredictor(in_features, len(CLASSES))
    checkpoint = torch.load(ckpt_path, map_location="cpu", weights_only=True)
    state = checkpoint["model"] if "model" in checkpoint else checkpoint
    state = {k.removeprefix("module."): v for k, v in state.items()}
    model.load_state_dict(state)
    return model.to(device).eval()


def to_tensor(path, max_side):
    img = Image.open(path).convert("RGB")
    scale = min(1.0, max_side / max(img.size))
    if scale < 1.0:
        img = img.resize((round(img.width * scale), round(img.height * scale)), Image.BILINEAR)
    arr = np.asarray(img, dtype=np.float32) / 255.0
    return torch.from_numpy(arr).permute(2, 0, 1).contiguous(), scale


def batched(items, n):
    for i in range(0, len(items), n):
        yield items[i : i + n]


@torch.inference_mode()
def detect(model, paths, device, max_side=1333, score_thr=0.5, iou_thr=0.5, batch_size=4):
    results = {}
    for chunk in batched(paths, batch_size):
        tensors, scales = zip(*(to_tensor(p, max_side) for p in chunk))
        images = [t.to(device, non_blocking=True) for t in tensors]
        outputs = model(images)
        for path, scale, out in zip(chunk, scales, outputs):
            keep = out["scores"] >= score_thr
            boxes, scores, labels = out["boxes"][keep], out["scores"][keep], out["labels"][keep]
            keep = torchvision.ops.batched_nms(boxes, scores, labels, iou_thr)
            boxes = boxes[keep] / scale
            results[path.name] = [
                {"label": CLASSES[int(l)], "score": round(float(s), 4), "box": [round(float(v), 1) for v in b]}
                for b, s, l in zip(boxes.cpu(), scores[keep].cpu(), labels[keep].cpu())
            ]
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("frames", type=Path)
    ap.add_argument("--ckpt", type=Path, default=Path("checkpoints/parcel_frcnn_best.pt"))
    ap.add_argument("--out", type=Path, default=Path("detections.json"))
    ap.add_argument("--score-thr", type=float, default=0.5)
    ap.add_argument("--batch-size", type=int, default=4)
    args = ap.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = load_detector(args.ckpt, device)
    paths = sorted(p for p in args.frames.iterdir() if p.suffix.lower() in {".jpg", ".jpeg", ".png"})
    print(f"{len(paths)} frames on {device}")
    results = detect(model, paths, device, score_thr=args.score_thr, batch_size=args.batch_size)
    n_boxes = sum(len(v) for v in results.values())
    args.out.write_text(json.dumps(results, indent=1))
    print(f"wrote {n_boxes} boxes for {len(results)} frames to {args.out}")


if __name__ == "__main__":
    main()
