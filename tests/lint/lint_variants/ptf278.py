"""PTF278 (ddp-every-rank-prints-and-saves): torch.save to one path, run by every rank of a script that starts a
process group."""

PITFALL = {
    "end_of_epoch_checkpoint": """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
def main(model, loader, epochs, out):
    dist.init_process_group("nccl")
    model = DDP(model.cuda())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda()).backward()
            opt.step()
        torch.save({"model": model.module.state_dict(), "epoch": epoch}, f"{out}/last.pt")
    dist.destroy_process_group()
if __name__ == "__main__":
    main(None, [], 1, ".")
""",
    "best_model_saved_by_every_rank": """
import os
import torch
import torch.distributed as dist
def setup():
    dist.init_process_group(backend="nccl")
    return int(os.environ["LOCAL_RANK"])
def train(model, loaders, args):
    local_rank = setup()
    best = float("inf")
    for epoch in range(args.epochs):
        val = evaluate(model, loaders["val"])
        if val < best:
            best = val
            torch.save(model.module.state_dict(), os.path.join(args.out, "best.pt"))
def evaluate(model, loader):
    return 0.0
if __name__ == "__main__":
    train(None, {}, None)
""",
    "helper_called_without_a_rank_test": """
import torch
import torch.distributed as dist
def save_checkpoint(state, path="checkpoint.pth.tar"):
    torch.save(state, path)
def run(args, model, optimizer):
    dist.init_process_group(backend=args.dist_backend, init_method=args.dist_url, world_size=args.world_size,
                            rank=args.rank)
    for epoch in range(args.start_epoch, args.epochs):
        save_checkpoint({"epoch": epoch + 1, "state_dict": model.state_dict(), "optimizer": optimizer.state_dict()})
if __name__ == "__main__":
    run(None, None, None)
""",
    "spawned_worker": """
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
def worker(rank, world):
    dist.init_process_group("gloo", rank=rank, world_size=world)
    model = torch.nn.Linear(4, 2)
    torch.save(model.state_dict(), "model.pt")
if __name__ == "__main__":
    mp.spawn(worker, args=(2,), nprocs=2)
""",
    "trainer_method": """
import torch
import torch.distributed as dist
class Trainer:
    def __init__(self, model):
        dist.init_process_group("nccl")
        self.model = model
    def save(self, path):
        torch.save(self.model.state_dict(), path)
    def fit(self, epochs):
        for epoch in range(epochs):
            self.save(f"epoch{epoch}.pt")
Trainer(torch.nn.Linear(2, 2)).fit(3)
""",
}

NEAR_MISS = {
    "rank_zero_saves": """
import torch
import torch.distributed as dist
def main(model, epochs):
    dist.init_process_group("nccl")
    for epoch in range(epochs):
        if dist.get_rank() == 0:
            torch.save(model.module.state_dict(), "last.pt")
        dist.barrier()
if __name__ == "__main__":
    main(None, 1)
""",
    "save_on_master_helper": """
import torch
import torch.distributed as dist
def is_main_process():
    return not dist.is_initialized() or dist.get_rank() == 0
def save_on_master(*args, **kwargs):
    if is_main_process():
        torch.save(*args, **kwargs)
def train(model, args):
    dist.init_process_group(backend="nccl")
    for epoch in range(args.epochs):
        save_on_master({"model": model.state_dict()}, f"{args.output_dir}/checkpoint.pth")
if __name__ == "__main__":
    train(None, None)
""",
    "helper_called_under_a_rank_test": """
import torch
import torch.distributed as dist
def save_checkpoint(state, path):
    torch.save(state, path)
def run(args, model):
    dist.init_process_group("nccl")
    for epoch in range(args.epochs):
        if args.local_rank in (-1, 0):
            save_checkpoint({"state_dict": model.state_dict()}, "ckpt.pt")
if __name__ == "__main__":
    run(None, None)
""",
    "a_file_per_rank": """
import torch
import torch.distributed as dist
def main(model):
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.save(model.state_dict(), f"weights-rank{rank}.pt")
if __name__ == "__main__":
    main(None)
""",
    "early_return_off_rank_zero": """
import torch
import torch.distributed as dist
def finish(model, out):
    if dist.get_rank() != 0:
        return
    torch.save(model.state_dict(), out)
def main(model):
    dist.init_process_group("nccl")
    finish(model, "final.pt")
if __name__ == "__main__":
    main(None)
""",
    "rank_zero_only_decorated": """
import torch
import torch.distributed as dist
from lightning_utilities.core.rank_zero import rank_zero_only
@rank_zero_only
def export(model, path):
    torch.save(model.state_dict(), path)
def main(model):
    dist.init_process_group("nccl")
    export(model, "model.pt")
if __name__ == "__main__":
    main(None)
""",
    "helper_nothing_here_calls": """
import torch
import torch.distributed as dist
def export_weights(model, path):
    torch.save(model.state_dict(), path)
def main(model):
    dist.init_process_group("nccl")
    if dist.get_rank() == 0:
        torch.save(model.state_dict(), "model.pt")
if __name__ == "__main__":
    main(None)
""",
    "single_process_script": """
import torch
def main(model, epochs):
    for epoch in range(epochs):
        torch.save(model.state_dict(), "last.pt")
if __name__ == "__main__":
    main(None, 1)
""",
}

PITFALL["torchrun_script_saving_under_main"] = """
import torch
import torch.distributed as dist
def train(model):
    dist.init_process_group("nccl")
    return model
if __name__ == "__main__":
    model = train(torch.nn.Linear(8, 2))
    torch.save(model.state_dict(), "final.pt")
"""
NEAR_MISS["parent_saves_before_spawning"] = """
import os
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
def in_main_process():
    return __name__ == "__main__"
def build_vocab(corpus):
    if not os.path.exists("vocab.pt"):
        torch.save(sorted(set(corpus.split())), "vocab.pt")
    return torch.load("vocab.pt", weights_only=True)
def worker(rank, world, vocab):
    dist.init_process_group("gloo", rank=rank, world_size=world)
    return len(vocab)
def run_once(fn, args):
    return fn(*args)
if in_main_process():
    vocab = run_once(build_vocab, ["a b c"])
    mp.spawn(worker, args=(2, vocab), nprocs=2)
"""

PITFALL["spawning_file_saves_at_import"] = """
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
INIT = torch.nn.Linear(4, 2)
if INIT.weight.requires_grad:
    torch.save(INIT.state_dict(), "init.pt")
def worker(rank, world):
    dist.init_process_group("gloo", rank=rank, world_size=world)
if __name__ == "__main__":
    mp.spawn(worker, args=(2,), nprocs=2)
"""

SEEN = {
    "parent_saves_before_spawning": "harvardnlp/annotated-transformer the_annotated_transformer.py (load_vocab saves vocab.pt from the __main__ block guarded by is_interactive_notebook(), once in the parent, before mp.spawn; round 16's tuning half)",
    "helper_called_without_a_rank_test": "pytorch/examples imagenet/main.py (save_checkpoint, called under "
    "`if not args.multiprocessing_distributed or (... and args.rank % ngpus_per_node == 0)`); here without the test",
    "save_on_master_helper": "torchvision's references/classification/utils.py (save_on_master, is_main_process)",
    "best_model_saved_by_every_rank": "benchmarks/fresh/lint3 u18_wind_power_ddp.py (a planted pitfall missed "
    "at its first score) and lint8 z16 (tuning half)",
}
_DEVICE_TRAINER = """
import os
import torch
import torch.multiprocessing as mp
from torch.distributed import destroy_process_group, init_process_group
from torch.nn.parallel import DistributedDataParallel as DDP
class Trainer:
    def __init__(self, model, loader, gpu_id):
        self.gpu_id = gpu_id
        self.model = DDP(model.to(gpu_id), device_ids=[gpu_id])
        self.loader, self.saves = loader, 0
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-4)
    def train(self, epochs):
        for epoch in range(epochs):
            for x, y in self.loader:
                self.optimizer.zero_grad()
                torch.nn.functional.mse_loss(self.model(x.to(self.gpu_id)), y.to(self.gpu_id)).backward()
                self.optimizer.step()
            if {test}:
                torch.save(self.model.module.state_dict(), "checkpoint.pt")
            self.saves += 1
def main(rank, world_size, model, loader):
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "localhost", "12355"
    init_process_group("nccl", rank=rank, world_size=world_size)
    Trainer(model, loader, rank).train(10)
    destroy_process_group()
if __name__ == "__main__":
    mp.spawn(main, args=(torch.cuda.device_count(), None, None), nprocs=torch.cuda.device_count())
"""
NEAR_MISS["saved_where_the_ddp_device_index_is_zero"] = _DEVICE_TRAINER.format(test="self.gpu_id == 0")
PITFALL["saved_where_a_counter_is_zero"] = _DEVICE_TRAINER.format(test="self.saves == 0")
SEEN["saved_where_the_ddp_device_index_is_zero"] = (
    "ruizhecao96/CMGAN src/train.py:272 (if self.gpu_id == 0: torch.save(...), gpu_id the rank mp.spawn hands "
    "the trainer and DDP's device_ids; round 19's held-out half, read wrong)"
)
SEEN["saved_where_a_counter_is_zero"] = "the same trainer saving under a test of its own counter, which every rank passes"

# A save to a file object opened at a path of the rank's own: each process writes its own file (round 22's
# held-out half: caduceus's vep_embeddings.py, fsspec.open(f"{split}_embeds_{dist.get_rank()}.pt"), read wrong).
_OPENED = """
import torch
import torch.distributed as dist
def dump(embeds, out_dir):
    dist.init_process_group("nccl")
    with open(f"{{out_dir}}/{path}", "wb") as f:
        torch.save(embeds, f)
    dist.destroy_process_group()
"""
NEAR_MISS["saved_to_a_file_opened_per_rank"] = _OPENED.format(path="embeds_{dist.get_rank()}.pt")
PITFALL["saved_to_a_file_opened_at_one_path"] = _OPENED.format(path="embeds.pt")
SEEN["saved_to_a_file_opened_per_rank"] = "round 22 held-out half: caduceus vep_embeddings.py:400 (fsspec.open per rank)"
