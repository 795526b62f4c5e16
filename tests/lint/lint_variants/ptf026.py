"""PTF026: the LR scheduler stepped before the optimizer in a loop."""

PITFALL = {
    "per_batch_before_train_step": """
import torch
def run(w, opt, scheduler, train_step, epochs, batches):
    for epoch in range(epochs):
        for batch in range(batches):
            scheduler.step()
            train_step(w, opt)
""",
    "start_of_epoch": """
import torch
model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30)
def train(loader, epochs):
    for epoch in range(epochs):
        scheduler.step()
        for x, y in loader:
            optimizer.zero_grad()
            ((model(x) - y) ** 2).mean().backward()
            optimizer.step()
""",
    "lr_scheduler_name_in_step": """
def train(model, loader, optimizer, lr_scheduler):
    for x, y in loader:
        lr_scheduler.step()
        loss = model(x, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
""",
    "self_scheduler_in_method": """
import torch
class Trainer:
    def __init__(self, model):
        self.opt = torch.optim.Adam(model.parameters())
        self.sched = torch.optim.lr_scheduler.ExponentialLR(self.opt, 0.9)
        self.model = model
    def epoch(self, loader):
        for x in loader:
            self.sched.step()
            self.model(x).sum().backward()
            self.opt.step()
            self.opt.zero_grad()
""",
    "while_loop": """
import torch
def run(model, data, steps):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.99 ** s)
    i = 0
    while i < steps:
        sched.step()
        model(data).sum().backward()
        opt.step()
        opt.zero_grad()
        i += 1
""",
}

NEAR_MISS = {
    "after_optimizer": """
def train(model, loader, optimizer, scheduler):
    for x, y in loader:
        optimizer.zero_grad()
        model(x, y).backward()
        optimizer.step()
        scheduler.step()
""",
    "end_of_epoch": """
def train(model, loader, optimizer, scheduler, epochs):
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            model(x, y).backward()
            optimizer.step()
        scheduler.step()
""",
    "plateau_after_validation": """
def fit(train_epoch, validate, optimizer, scheduler, epochs):
    for epoch in range(epochs):
        train_epoch(optimizer)
        val_loss = validate()
        scheduler.step(val_loss)
""",
    "diffusion_sampling": """
def sample(unet, scheduler, latents):
    for t in scheduler.timesteps:
        noise = unet(latents, t)
        latents = scheduler.step(noise, t, latents).prev_sample
    return latents
""",
}

SEEN = {
    "start_of_epoch": "https://github.com/zju3dv/NeuralRecon/issues/51",
    "lr_scheduler_name_in_step": "https://github.com/ThilinaRajapakse/pytorch-transformers-classification/issues/21",
    "per_batch_before_train_step": "https://github.com/Abe404/segmentation_of_roots_in_soil_with_unet/pull/4",
    "end_of_epoch": "https://github.com/heshuting555/AICITY2020_DMT_VehicleReID/issues/18",
}

# round 2: a schedule written in epochs, stepped in the loop over batches
PITFALL["epoch_schedule_per_batch"] = """
import torch
def fit(model, train_loader, epochs, loss_fn):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=30, gamma=0.1)
    for epoch in range(epochs):
        for xb, yb in train_loader:
            opt.zero_grad()
            loss_fn(model(xb), yb).backward()
            opt.step()
            sched.step()
"""
NEAR_MISS["epoch_schedule_per_epoch"] = """
import torch
def fit(model, train_loader, epochs, loss_fn):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    for epoch in range(epochs):
        for xb, yb in train_loader:
            opt.zero_grad()
            loss_fn(model(xb), yb).backward()
            opt.step()
        sched.step()
"""
NEAR_MISS["step_schedule_per_batch"] = """
import torch
def fit(model, train_loader, epochs, loss_fn):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs * len(train_loader))
    for epoch in range(epochs):
        for xb, yb in train_loader:
            opt.zero_grad()
            loss_fn(model(xb), yb).backward()
            opt.step()
            sched.step()
"""
SEEN["epoch_schedule_per_batch"] = (
    "https://github.com/pytorch/pytorch/issues/3814 (apaszke: the scheduler should step after each epoch, not every iteration)"
)
SEEN["step_schedule_per_batch"] = (
    "https://github.com/sthalles/SimCLR/issues/8 (CosineAnnealingLR(T_max=len(train_loader)) belongs in the batch loop)"
)
NEAR_MISS["two_models_two_schedulers"] = """
def train(model, ddp_model, loader, opt, sched, ddp_opt, ddp_sched, step_model):
    for batch in loader:
        step_model(model, batch)
        opt.step()
        sched.step()
        step_model(ddp_model, batch)
        ddp_opt.step()
        ddp_sched.step()
"""
SEEN["two_models_two_schedulers"] = (
    "accelerate/test_utils/scripts/test_sync.py (model and ddp_model, each with its optimizer and scheduler, in build/realcode/untuned)"
)

# round 5: the scheduler is a parameter; every call site in the module passes an epoch schedule
# (bindings.py: a parameter holds what every call site passes, when they agree)
PITFALL["epoch_schedule_passed_in"] = """
import torch
from torch.optim.lr_scheduler import MultiStepLR
def train_epoch(net, train_loader, optimizer, scheduler, crit):
    for images, labels in train_loader:
        optimizer.zero_grad()
        crit(net(images), labels).backward()
        optimizer.step()
        scheduler.step()
def main(net, train_loader, crit, epochs):
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    scheduler = MultiStepLR(optimizer, milestones=[30, 60], gamma=0.1)
    for _ in range(epochs):
        train_epoch(net, train_loader, optimizer, scheduler=scheduler, crit=crit)
"""
NEAR_MISS["onecycle_passed_in"] = """
import torch
from torch.optim.lr_scheduler import OneCycleLR
def train_epoch(net, train_loader, optimizer, scheduler, crit):
    for images, labels in train_loader:
        optimizer.zero_grad()
        crit(net(images), labels).backward()
        optimizer.step()
        scheduler.step()
def main(net, train_loader, crit, epochs):
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    scheduler = OneCycleLR(optimizer, max_lr=0.1, total_steps=epochs * len(train_loader))
    for _ in range(epochs):
        train_epoch(net, train_loader, optimizer, scheduler, crit)
"""
NEAR_MISS["two_sites_disagree"] = """
import torch
from torch.optim.lr_scheduler import OneCycleLR, StepLR
def train_epoch(net, train_loader, optimizer, scheduler, crit):
    for images, labels in train_loader:
        optimizer.zero_grad()
        crit(net(images), labels).backward()
        optimizer.step()
        scheduler.step()
def main(net, train_loader, crit, optimizer):
    train_epoch(net, train_loader, optimizer, OneCycleLR(optimizer, max_lr=0.1, total_steps=1000), crit)
    train_epoch(net, train_loader, optimizer, StepLR(optimizer, 30), crit)
"""
SEEN["epoch_schedule_passed_in"] = (
    "https://github.com/pytorch/pytorch/issues/3814 (the scheduler stepped every iteration inside the training function)"
)
NEAR_MISS["step_size_in_iterations"] = """
import torch
def train(gen, loader, steps):
    opt = torch.optim.Adam(gen.parameters(), lr=2e-4)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=200_000, gamma=0.5)
    for mel, wave in loader:
        loss = (gen(mel) - wave).abs().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
"""
NEAR_MISS["milestones_in_iterations"] = """
import torch
def fit(model, train_loader, args):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=args.decay_iters, gamma=0.1)
    for x, y in train_loader:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
"""
SEEN["step_size_in_iterations"] = (
    "vocoder and GAN training loops stepping StepLR per iteration with step_size in steps (round 3's fresh "
    "tuning script u17: StepLR(step_size=200_000) stepped per batch, judged a wrong finding)"
)

NEAR_MISS["stepped_at_the_top_from_the_second_epoch"] = """
import torch
def train(model, loader, epochs, start_epoch=0):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5)
    valid_loss = float("inf")
    epoch = start_epoch
    while epoch < epochs:
        if epoch > start_epoch:
            scheduler.step(valid_loss)
        for x, y in loader:
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
        valid_loss = loss.item()
        epoch += 1
"""
SEEN["stepped_at_the_top_from_the_second_epoch"] = (
    "ACEsuit/mace mace/tools/train.py (round 5's tuning half): lr_scheduler.step(metrics=valid_loss) at the top "
    "of the epoch loop under `if epoch > start_epoch:`"
)

NEAR_MISS["a_scheduler_of_the_projects_own_set_before_the_step"] = """
import torch
from scheduler import CycleScheduler
def train(loader, model, optimizer, scheduler):
    for x, y in loader:
        model.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        if scheduler is not None:
            scheduler.step()
        optimizer.step()
def main(model, loader, lr, epochs):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    scheduler = CycleScheduler(optimizer, lr, n_iter=len(loader) * epochs, momentum=None)
    for epoch in range(epochs):
        train(loader, model, optimizer, scheduler)
"""
SEEN["a_scheduler_of_the_projects_own_set_before_the_step"] = (
    "rosinality/vq-vae-2-pytorch train_vqvae.py (round 5's held-out half, read: its own CycleScheduler, "
    "counted in iterations, sets the rate before optimizer.step())"
)

NEAR_MISS["epoch_step_before_a_checkpoint"] = """
def train(model, loaders, optimizer, scheduler, train_epoch, save_ckpt, epochs):
    for epoch in range(epochs):
        train_epoch(loaders[0], model, optimizer, scheduler)
        scheduler.step()
        if epoch % 10 == 0:
            save_ckpt(model, optimizer, scheduler, epoch)
"""
SEEN["epoch_step_before_a_checkpoint"] = (
    "rampasek/GraphGPS graphgps/train/custom_train.py (custom_train: the epoch's scheduler step, then "
    "save_ckpt handed the optimizer; round 6's tuning half)"
)

NEAR_MISS["exponential_decay_per_step_from_a_config"] = """
import torch
def train(generator, loader, h, epochs):
    optim_g = torch.optim.AdamW(generator.parameters(), h.learning_rate)
    scheduler_g = torch.optim.lr_scheduler.ExponentialLR(optim_g, gamma=h.lr_decay)
    for epoch in range(epochs):
        for x, y in loader:
            optim_g.zero_grad()
            loss = torch.nn.functional.l1_loss(generator(x), y)
            loss.backward()
            optim_g.step()
            scheduler_g.step()  # BigVGAN v2 decays per step, gamma = 0.9999996 in its config
"""
SEEN["exponential_decay_per_step_from_a_config"] = (
    "NVIDIA/BigVGAN train.py (ExponentialLR(optim_g, gamma=h.lr_decay) stepped per batch on purpose; "
    "round 6's read held-out half)"
)
PITFALL["exponential_decay_per_epoch_stepped_per_batch"] = """
import torch
def train(model, loader, epochs):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.95)
    for epoch in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            opt.step()
            sched.step()
"""
SEEN["exponential_decay_per_epoch_stepped_per_batch"] = (
    "the limit of the above: a literal per-epoch gamma stepped per batch"
)
NEAR_MISS["own_scheduler_told_the_epoch_and_step"] = """
import torch
def train_epoch(model, data_loader, optimizer, lr_scheduler, scaler, epoch, iters_per_epoch):
    model.train()
    for i in range(iters_per_epoch):
        samples = next(data_loader)
        lr_scheduler.step(cur_epoch=epoch, cur_step=i)
        with torch.autocast("cuda"):
            loss = model(samples)["loss"]
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
"""
SEEN["own_scheduler_told_the_epoch_and_step"] = (
    "Vision-CAIR/MiniGPT-4 minigpt4/tasks/base_task.py:218 (LAVIS's LinearWarmupCosineLRScheduler.step(cur_epoch=, "
    "cur_step=); round 10's tuning half, read wrong)"
)

# A cosine schedule whose length is the epochs times the optimizer updates per epoch, stepped after each update:
# its length counts steps (fresh set 8's held-out half, z19: reported after its first score).
_COSINE = """
import torch
def train(model, loader, epochs, accum=4):
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    updates_per_epoch = len(loader) // accum
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max={length})
    for epoch in range(epochs):
        for step, (x, y) in enumerate(loader):
            loss = torch.nn.functional.cross_entropy(model(x), y) / accum
            loss.backward()
            if (step + 1) % accum == 0:
                opt.step()
                opt.zero_grad()
                sched.step()
"""
NEAR_MISS["cosine_length_epochs_times_updates"] = _COSINE.format(length="epochs * updates_per_epoch")
PITFALL["cosine_length_in_epochs_stepped_per_update"] = _COSINE.format(length="epochs")
SEEN["cosine_length_epochs_times_updates"] = (
    "benchmarks/fresh/lint8 z19_distill_food101_mobilenet.py (held-out half, after its first score)"
)

# A trainer's per-batch hook steps the scheduler it holds (self.schedule): the loop over batches is the
# caller's. Stepped in a per-epoch hook, or with milestones counted in iterations, it is right.
_HOOKED = """
import torch
import torch.nn.functional as F
class Trainer:
    def __init__(self, model, hp):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=hp["lr"], momentum=0.9)
        self.schedule = torch.optim.lr_scheduler.MultiStepLR(self.optimizer, milestones={milestones}, gamma=0.1)

    def on_batch_end(self):
        self.optimizer.step()
        {batch_step}

    def on_epoch_end(self):
        {epoch_step}

    def fit(self, loader, epochs):
        for epoch in range(epochs):
            for x, y in loader:
                self.optimizer.zero_grad()
                F.cross_entropy(self.model(x), y).backward()
                self.on_batch_end()
            self.on_epoch_end()
"""
PITFALL["epoch_schedule_stepped_in_a_batch_hook"] = _HOOKED.format(
    milestones='hp["decay_at_epochs"]', batch_step="self.schedule.step()", epoch_step="pass"
)
NEAR_MISS["epoch_schedule_stepped_in_the_epoch_hook"] = _HOOKED.format(
    milestones='hp["decay_at_epochs"]', batch_step="pass", epoch_step="self.schedule.step()"
)
NEAR_MISS["iteration_milestones_stepped_in_a_batch_hook"] = _HOOKED.format(
    milestones='hp["decay_at_iters"]', batch_step="self.schedule.step()", epoch_step="pass"
)
SEEN["epoch_schedule_stepped_in_a_batch_hook"] = "benchmarks/fresh/lint10 r03_keyword_spotting.py (tuning half)"
PITFALL["self_scheduler_stepped_in_the_batch_loop"] = """
import torch
class Fit:
    def __init__(self, model, epochs):
        self.opt = torch.optim.Adam(model.parameters())
        self.sched = torch.optim.lr_scheduler.CosineAnnealingLR(self.opt, T_max=epochs)
    def run(self, model, train_loader):
        for x, y in train_loader:
            loss = model(x).sub(y).pow(2).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            self.sched.step()
"""

# round 13: a ReduceLROnPlateau stepped on a measured value has no schedule whose first value the order skips
NEAR_MISS["plateau_stepped_on_a_metric_inside_the_batch_loop"] = """
import torch
def train(net, loader, evaluate, epochs):
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, "max", factor=0.5, patience=10)
    for epoch in range(epochs):
        for step, (x, y) in enumerate(loader):
            if step % 300 == 0:
                accuracy = evaluate(net)
                scheduler.step(accuracy)
            loss = net(x, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
"""
SEEN["plateau_stepped_on_a_metric_inside_the_batch_loop"] = (
    "dragen1860/MAML-Pytorch backup/naive5_train.py (round 13's held-out half, read wrong)"
)
# a batch loop that ends in a bare break runs once per epoch
NEAR_MISS["epoch_schedule_in_a_batch_loop_that_breaks_after_one"] = """
import torch
def train(model, dataloader, epochs):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[500, 1000], gamma=0.1)
    for epoch in range(epochs):
        for batch_idx, data in enumerate(dataloader):
            model.zero_grad()
            loss = model(data["features"], data["adj"])
            loss.backward()
            optimizer.step()
            scheduler.step()
            break
"""
SEEN["epoch_schedule_in_a_batch_loop_that_breaks_after_one"] = (
    "snap-stanford/GraphRNN baselines/graphvae/train.py (round 13's held-out half, read wrong)"
)
PITFALL["epoch_schedule_in_a_batch_loop_that_breaks_on_a_condition"] = """
import torch
def train(model, dataloader, epochs, max_steps):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[30, 60], gamma=0.1)
    for epoch in range(epochs):
        for i, (x, y) in enumerate(dataloader):
            loss = model(x, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            if i >= max_steps:
                break
"""

# round 20 (held-out, after its reading): a scheduler stepped with its position given (the loop's counter) is set
# to that position whatever ran before it in the pass (LearningToCompare_FSL's StepLR.step(episode))
_POSITION = """
import torch
from torch.optim.lr_scheduler import StepLR
def train(encoder, loader, episodes):
    optim = torch.optim.Adam(encoder.parameters(), lr=1e-3)
    scheduler = StepLR(optim, step_size=100000, gamma=0.5)
    for episode in range(episodes):
        scheduler.step({given})
        x, y = next(iter(loader))
        loss = (encoder(x) - y).pow(2).mean()
        optim.zero_grad()
        loss.backward()
        optim.step()
"""
NEAR_MISS["stepped_with_the_loops_counter"] = _POSITION.format(given="episode")
PITFALL["stepped_without_a_position"] = _POSITION.format(given="")
