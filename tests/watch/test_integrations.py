"""The watcher where people train, with the real libraries on a tiny model: the PyTorch Lightning
callback and the Hugging Face Trainer callback each report the pitfall planted in the user's
training code, at its line, and nothing on the correct twin."""

from __future__ import annotations

import inspect
import warnings

import pytest
import torch
import torch.nn.functional as F
from torch import nn

CASE = "target-shape-broadcast"


def _line(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


# -- PyTorch Lightning -----------------------------------------------------------------------------
L = pytest.importorskip("lightning")


class Regressor(L.LightningModule):
    def __init__(self, squeeze: bool):
        super().__init__()
        self.net = nn.Linear(3, 1)
        self.squeeze = squeeze

    def training_step(self, batch, batch_idx):
        x, y = batch
        out = self.net(x)
        pred = out.squeeze(1) if self.squeeze else out
        return F.mse_loss(pred, y)  # (8, 1) against (8,) unless squeezed

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)


def _fit(squeeze: bool, tmp_path):
    from torch.utils.data import DataLoader, TensorDataset

    from torch_pitfalls.watch.integrations.lightning import PitfallsWatch

    callback = PitfallsWatch(report=lambda w: None)
    trainer = L.Trainer(
        max_epochs=1,
        limit_train_batches=2,
        accelerator="cpu",
        devices=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=tmp_path,
        callbacks=[callback],
    )
    data = DataLoader(TensorDataset(torch.randn(16, 3), torch.randn(16)), batch_size=8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer.fit(Regressor(squeeze), data)
    return callback


def test_lightning_callback_reports_the_pitfall_at_its_line(tmp_path):
    callback = _fit(False, tmp_path)
    found = [f for f in callback.findings if f.case == CASE]
    assert found and {f.line for f in found} == {_line(Regressor.training_step, "F.mse_loss")}
    assert callback.run.running is None  # switched off when fit ended


def test_lightning_callback_is_silent_on_the_fixed_module(tmp_path):
    assert _fit(True, tmp_path).findings == []


# -- Hugging Face Trainer ---------------------------------------------------------------------------
transformers = pytest.importorskip("transformers")


class TinyModel(nn.Module):
    def __init__(self, squeeze: bool):
        super().__init__()
        self.net = nn.Linear(3, 1)
        self.squeeze = squeeze

    def forward(self, x, labels=None):
        out = self.net(x)
        pred = out.squeeze(1) if self.squeeze else out
        return {"loss": F.mse_loss(pred, labels), "logits": out}  # (4, 1) against (4,) unless squeezed


def _train(squeeze: bool, tmp_path):
    from torch_pitfalls.watch.integrations.transformers import PitfallsWatchCallback

    callback = PitfallsWatchCallback(report=lambda w: None)
    args = transformers.TrainingArguments(
        output_dir=str(tmp_path),
        max_steps=2,
        per_device_train_batch_size=4,
        report_to=[],
        save_strategy="no",
        logging_strategy="no",
        use_cpu=True,
        disable_tqdm=True,
    )
    rows = [{"x": torch.randn(3), "labels": torch.randn(())} for _ in range(8)]
    trainer = transformers.Trainer(model=TinyModel(squeeze), args=args, train_dataset=rows, callbacks=[callback])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer.train()
    return callback


def test_transformers_callback_reports_the_pitfall_at_its_line(tmp_path):
    callback = _train(False, tmp_path)
    found = [f for f in callback.findings if f.case == CASE]
    assert found and {f.line for f in found} == {_line(TinyModel.forward, "F.mse_loss")}
    assert callback.run.running is None


def test_transformers_callback_is_silent_on_the_fixed_model(tmp_path):
    assert _train(True, tmp_path).findings == []
