"""Multi-label photo tagging (80 tags) with an EfficientNet backbone, as a LightningModule."""

import lightning as L
import timm
import torch
import torch.nn as nn
from torchmetrics.classification import MultilabelAveragePrecision, MultilabelF1Score

from tagging_data import TagDataModule


class Tagger(L.LightningModule):
    def __init__(self, num_tags=80, backbone="efficientnet_b2", lr=3e-4, tag_frequencies=None, threshold=0.5):
        super().__init__()
        self.save_hyperparameters(ignore=["tag_frequencies"])
        self.backbone = timm.create_model(backbone, pretrained=True, num_classes=0, drop_path_rate=0.1)
        self.head = nn.Sequential(nn.Dropout(0.3), nn.Linear(self.backbone.num_features, num_tags))
        if tag_frequencies is not None:
            freq = torch.as_tensor(tag_frequencies, dtype=torch.float32)
            self.register_buffer("pos_weight", ((1 - freq) / freq.clamp(min=1e-4)).clamp(max=20.0))
        else:
            self.register_buffer("pos_weight", torch.ones(num_tags))
        self.criterion = nn.BCEWithLogitsLoss(pos_weight=self.pos_weight)
        self.val_map = MultilabelAveragePrecision(num_labels=num_tags, average="macro")
        self.val_f1 = MultilabelF1Score(num_labels=num_tags, threshold=threshold, average="micro")

    def forward(self, images):
        features = self.backbone(images)
        return torch.sigmoid(self.head(features))

    def training_step(self, batch, batch_idx):
        images, tags = batch
        probs = self(images)
        loss = self.criterion(probs, tags.float())
        self.log("train/loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        images, tags = batch
        probs = self(images)
        self.log("val/loss", self.criterion(probs, tags.float()), sync_dist=True)
        self.val_map.update(probs, tags.int())
        self.val_f1.update(probs, tags.int())

    def on_validation_epoch_end(self):
        self.log("val/mAP", self.val_map.compute(), prog_bar=True)
        self.log("val/f1", self.val_f1.compute())
        self.val_map.reset()
        self.val_f1.reset()

    def predict_step(self, batch, batch_idx):
        images, _ = batch
        probs = self(images)
        return [torch.nonzero(row >= self.hparams.threshold).flatten().tolist() for row in probs]

    def configure_optimizers(self):
        decay, no_decay = [], []
        for name, param in self.named_parameters():
            if not param.requires_grad:
                continue
            (no_decay if param.ndim <= 1 or name.endswith(".bias") else decay).append(param)
        optimizer = torch.optim.AdamW(
            [{"params": decay, "weight_decay": 0.05}, {"params": no_decay, "weight_decay": 0.0}],
            lr=self.hparams.lr,
        )
        scheduler = torch.optim.lr_scheduler.OneCycleLR(
            optimizer, max_lr=self.hparams.lr, total_steps=self.trainer.estimated_stepping_batches, pct_start=0.1
        )
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}


if __name__ == "__main__":
    dm = TagDataModule("data/photo_tags", image_size=288, batch_size=48, num_workers=8)
    dm.setup("fit")
    model = Tagger(num_tags=dm.num_tags, tag_frequencies=dm.tag_frequencies())
    trainer = L.Trainer(
        max_epochs=25,
        precision="16-mixed",
        accelerator="auto",
        callbacks=[L.pytorch.callbacks.ModelCheckpoint(monitor="val/mAP", mode="max")],
    )
    trainer.fit(model, datamodule=dm)
