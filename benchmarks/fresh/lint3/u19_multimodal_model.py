"""Product-category model for the catalogue: image (ConvNeXt-T) + title (DistilBERT) + listing metadata."""

from dataclasses import dataclass

import timm
import torch
import torch.nn as nn
from transformers import AutoModel


@dataclass
class FusionConfig:
    n_classes: int = 1412
    n_meta: int = 24
    text_model: str = "distilbert-base-multilingual-cased"
    image_model: str = "convnext_tiny"
    proj_dim: int = 512
    dropout: float = 0.2


class MetaEncoder(nn.Module):
    """Price, seller and shipping features, already standardised by the data module."""

    def __init__(self, n_meta, out_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_meta, 128), nn.GELU(), nn.Linear(128, out_dim))

    def forward(self, meta):
        return self.net(meta)


class ProductClassifier(nn.Module):
    def __init__(self, cfg: FusionConfig):
        super().__init__()
        self.cfg = cfg
        self.image_backbone = timm.create_model(cfg.image_model, pretrained=True, num_classes=0)
        self.text_backbone = AutoModel.from_pretrained(cfg.text_model)
        self.image_proj = nn.Linear(self.image_backbone.num_features, cfg.proj_dim)
        self.text_proj = nn.Linear(self.text_backbone.config.hidden_size, cfg.proj_dim)
        self.meta_encoder = MetaEncoder(cfg.n_meta, cfg.proj_dim)
        self.fuse_norm = nn.LayerNorm(3 * cfg.proj_dim)
        self.dropout = nn.Dropout(cfg.dropout)
        self.classifier = nn.Linear(3 * cfg.proj_dim, cfg.n_classes)

    def encode_text(self, input_ids, attention_mask):
        hidden = self.text_backbone(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        m = attention_mask.unsqueeze(-1).to(hidden.dtype)
        return (hidden * m).sum(1) / m.sum(1).clamp(min=1.0)

    def forward(self, image, input_ids, attention_mask, meta):
        img = self.image_proj(self.image_backbone(image))
        txt = self.text_proj(self.encode_text(input_ids, attention_mask))
        met = self.meta_encoder(meta)
        fused = torch.cat([img, txt, met], dim=-1)
        return self.classifier(self.dropout(fused))

    def set_backbones_trainable(self, trainable: bool):
        for module in (self.image_backbone, self.text_backbone):
            module.requires_grad_(trainable)


def param_groups(model: nn.Module, weight_decay=0.05, backbone_lr_scale=0.1, lr=1e-3):
    """AdamW groups: no decay on biases and norm weights, a lower learning rate for the backbones."""
    groups = {}
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        is_backbone = name.startswith(("image_backbone.", "text_backbone."))
        no_decay = p.ndim == 1 or name.endswith(".bias")
        key = (is_backbone, no_decay)
        if key not in groups:
            groups[key] = {
                "params": [],
                "lr": lr * (backbone_lr_scale if is_backbone else 1.0),
                "weight_decay": 0.0 if no_decay else weight_decay,
            }
        groups[key]["params"].append(p)
    return list(groups.values())


def load_for_inference(path, device="cpu"):
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    model = ProductClassifier(FusionConfig(**ckpt["config"]))
    model.load_state_dict(ckpt["state_dict"])
    return model.to(device).eval()


if __name__ == "__main__":
    cfg = FusionConfig(n_classes=10)
    model = ProductClassifier(cfg)
    batch = {
        "image": torch.randn(2, 3, 224, 224),
        "input_ids": torch.randint(100, 1000, (2, 32)),
        "attention_mask": torch.ones(2, 32, dtype=torch.long),
        "meta": torch.randn(2, cfg.n_meta),
    }
    logits = model(**batch)
    print(logits.shape, sum(p.numel() for p in model.parameters()) / 1e6, "M params")
    opt = torch.optim.AdamW(param_groups(model))
    logits.logsumexp(-1).mean().backward()
    opt.step()
