"""``pitfalls watch`` as a Hugging Face ``Trainer`` callback:

from torch_pitfalls.watch.integrations.transformers import PitfallsWatchCallback
trainer = Trainer(model=model, args=args, train_dataset=ds, callbacks=[PitfallsWatchCallback()])
trainer.train()                   # the report is printed when training ends; also callback.findings
"""

from __future__ import annotations

from transformers import TrainerCallback

from torch_pitfalls.watch.integrations._run import WatchedTraining


class PitfallsWatchCallback(TrainerCallback):
    """Watches ``trainer.train()`` from ``on_train_begin`` to ``on_train_end``."""

    def __init__(self, pedantic: bool = False, select: tuple[str, ...] = (), explain: bool = True, report=None):
        self.run = WatchedTraining(pedantic=pedantic, select=select, explain=explain, report=report)

    def on_train_begin(self, args, state, control, **kwargs):
        self.run.begin()

    def on_train_end(self, args, state, control, **kwargs):
        self.run.end()

    @property
    def findings(self) -> list:
        return self.run.findings
