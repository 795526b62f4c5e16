"""The watcher where people train: a PyTorch Lightning callback (``lightning.py``) and a Hugging
Face ``Trainer`` callback (``transformers.py``). Each imports its library only when used, so the
package never needs either."""
