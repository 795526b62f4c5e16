"""``pitfalls watch`` as a PyTorch Lightning callback:

    from torch_pitfalls.watch.integrations.lightning import PitfallsWatch
    trainer = L.Trainer(callbacks=[PitfallsWatch(pedantic=True)])
    trainer.fit(model, data)          # the report is printed when fit ends; also callback.findings

Works with ``lightning`` (``lightning.pytorch``) or the older ``pytorch_lightning`` package.
"""

from __future__ import annotations

from torch_pitfalls.watch.integrations._run import WatchedTraining

try:
    from lightning.pytorch.callbacks import Callback
except ImportError:  # the older package name
    from pytorch_lightning.callbacks import Callback


class PitfallsWatch(Callback):
    """Watches everything a ``fit``/``validate``/``test`` runs, from ``setup`` to ``teardown``."""

    def __init__(self, pedantic: bool = False, select: tuple[str, ...] = (), explain: bool = True, report=None):
        super().__init__()
        self.run = WatchedTraining(pedantic=pedantic, select=select, explain=explain, report=report)

    def setup(self, trainer, pl_module, stage) -> None:
        self.run.begin()

    def on_exception(self, trainer, pl_module, exception) -> None:
        self.run.end(exception)

    def teardown(self, trainer, pl_module, stage) -> None:
        self.run.end()

    @property
    def findings(self) -> list:
        return self.run.findings
