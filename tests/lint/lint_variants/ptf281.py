"""PTF281 (tensorboard-writer-not-closed): a SummaryWriter that the file never closes or flushes."""

PITFALL = {
    "training_script": """
import torch
from torch.utils.tensorboard import SummaryWriter
def main(args, model, loader, optimizer):
    writer = SummaryWriter(args.save_path)
    for epoch in range(args.epochs):
        for i, (x, y) in enumerate(loader):
            loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            writer.add_scalar("loss_train", loss.item(), epoch * len(loader) + i)
""",
    "logger_class_attribute": """
from torch.utils.tensorboard import SummaryWriter
class Logger:
    def __init__(self, log_dir, use_tb=True):
        self._sw = SummaryWriter(log_dir) if use_tb else None
    def log(self, key, value, step):
        if self._sw is not None:
            self._sw.add_scalar(key, value, step)
""",
    "writer_per_benchmark_in_a_loop": """
from torch.utils.tensorboard import SummaryWriter
def on_epoch_end(log_dir, results):
    for name, metrics in results.items():
        bm_writer = SummaryWriter(log_dir / name)
        for metric, value in metrics.items():
            bm_writer.add_scalar(metric, value)
""",
    "handed_to_the_training_function": """
from torch.utils import tensorboard
def train(model, loader, tb, epoch):
    for step, batch in enumerate(loader):
        tb.add_scalar("train/loss", model(batch).item(), step)
def run(model, loader, epochs):
    tb_writer = tensorboard.SummaryWriter(log_dir="runs/exp")
    for epoch in range(epochs):
        train(model, loader, tb_writer, epoch)
""",
    "module_level_writer": """
from torch.utils.tensorboard import SummaryWriter
writer = SummaryWriter(comment="_lr0.01")
for n_iter in range(100):
    writer.add_scalar("Loss/train", 1.0 / (n_iter + 1), n_iter)
""",
}

NEAR_MISS = {
    "tensorboardx_writer_closed_at_exit": """
from tensorboardX import SummaryWriter
def run(losses):
    writer = SummaryWriter("runs/x")
    for step, loss in enumerate(losses):
        writer.add_scalar("loss", loss, step)
""",
    "with_block": """
from torch.utils.tensorboard import SummaryWriter
def main(logdir, losses):
    with SummaryWriter(logdir) as writer:
        for step, loss in enumerate(losses):
            writer.add_scalar("loss", loss, step)
""",
    "closed_in_finally": """
from torch.utils.tensorboard import SummaryWriter
def main(logdir, train_one_epoch, epochs):
    writer = SummaryWriter(logdir)
    try:
        for epoch in range(epochs):
            writer.add_scalar("loss", train_one_epoch(), epoch)
    finally:
        writer.close()
""",
    "returned_to_the_caller": """
from torch.utils.tensorboard import SummaryWriter
def init_tb_logger(log_dir):
    tb_logger = SummaryWriter(log_dir=log_dir)
    return tb_logger
""",
    "closed_by_another_method": """
from torch.utils.tensorboard import SummaryWriter
class Trainer:
    def __init__(self, log_dir):
        self.writer = SummaryWriter(log_dir)
    def on_train_end(self):
        self.writer.close()
""",
    "flushed_each_epoch_through_a_parameter": """
from torch.utils.tensorboard import SummaryWriter
def log_epoch(tb, epoch, loss):
    tb.add_scalar("loss", loss, epoch)
    tb.flush()
def main(losses):
    writer = SummaryWriter("runs")
    for epoch, loss in enumerate(losses):
        log_epoch(tb=writer, epoch=epoch, loss=loss)
""",
    "handed_to_a_library_trainer": """
from torch.utils.tensorboard import SummaryWriter
from mylib.training import Trainer
def main(model):
    writer = SummaryWriter("runs/a")
    Trainer(model, writer=writer).fit()
""",
    "closed_at_exit": """
import atexit
from torch.utils.tensorboard import SummaryWriter
writer = SummaryWriter("runs/b")
atexit.register(writer.close)
""",
}

SEEN = {
    "tensorboardx_writer_closed_at_exit": "tensorboardX's SummaryWriter registers its close() with atexit (checked by round 17's tuning reader: nothing lost without close()); hover_net and adaptive_voice_conversion were read harmless there",
    "training_script": "https://github.com/huggingface/transformers/issues/779 (an example script's SummaryWriter left unclosed; some scalars never reached TensorBoard)",
    "logger_class_attribute": "MishaLaskin/curl logger.py (Logger keeps self._sw = SummaryWriter(tb_dir) and never closes it)",
    "writer_per_benchmark_in_a_loop": "jankrepl/deepdow deepdow/callbacks.py (a SummaryWriter per benchmark, made in a loop, never closed)",
    "handed_to_the_training_function": "wolny/pytorch-3dunet and hszhao/semseg tool/train.py (the writer used across the run, never closed)",
    "module_level_writer": "PyTorch docs, torch.utils.tensorboard (the tutorial's writer = SummaryWriter() logging scalars)",
    "with_block": "PyTorch docs, torch.utils.tensorboard.writer.SummaryWriter (a context manager: __exit__ closes it)",
    "returned_to_the_caller": "XPixelGroup/BasicSR basicsr/utils/logger.py (init_tb_logger returns the writer; train.py closes it)",
    "closed_at_exit": "common in scripts: atexit.register(writer.close)",
}
