"""Batch inference service for a fine-tuned EfficientNet image classifier."""
import json
import sys
from pathlib import Path

import torch
import torch.nn as nn
from PIL import Image
from torchvision import models, transforms

IMAGE_EXTS = {".jpg", ".jpeg", ".png"}


class Classifier(nn.Module):
    def __init__(self, n_classes):
        super().__init__()
        self.backbone = models.efficientnet_b0(weights=None)
        in_features = self.backbone.classifier[1].in_features
        self.backbone.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(in_features, n_classes))
        self.reset_head()

    def reset_head(self):
        head = self.backbone.classifier[1]
        nn.init.normal_(head.weight, std=0.01)
        nn.init.zeros_(head.bias)

    def forward(self, x):
        return self.backbone(x)


def load_classifier(weights_path, labels_path, device):
    labels = json.loads(Path(labels_path).read_text())
    model = Classifier(len(labels))
    state = torch.load(weights_path, map_location="cpu", weights_only=True)
    model.load_state_dict(state)
    model = model.to(device)
    model.eval()
    return model, labels


PREPROCESS = transforms.Compose([
    transforms.Resize(256),
    transforms.CenterCrop(224),
    transforms.ToTensor(),
    transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
])


@torch.inference_mode()
def predict(model, labels, paths, device, batch_size=32, top_k=3):
    results = []
    for start in range(0, len(paths), batch_size):
        chunk = paths[start : start + batch_size]
        batch = torch.stack([PREPROCESS(Image.open(p).convert("RGB")) for p in chunk])
        batch = batch.to(device)
        probs = model(batch).softmax(dim=-1)
        conf, idx = probs.topk(top_k, dim=1)
        for path, c, i in zip(chunk, conf.tolist(), idx.tolist()):
            results.append({"file": str(path), "top": [{"label": labels[j], "p": round(p, 4)} for j, p in zip(i, c)]})
    return results


def main(folder, weights="classifier.pt", labels="labels.json"):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model, label_names = load_classifier(weights, labels, device)
    paths = sorted(p for p in Path(folder).rglob("*") if p.suffix.lower() in IMAGE_EXTS)
    for row in predict(model, label_names, paths, device):
        print(json.dumps(row))


if __name__ == "__main__":
    main(sys.argv[1])
