"""PTF223 (forgot-train-after-eval): a training loop that evaluates the trained model and never puts it back in train mode."""

PITFALL = {
    "inline_eval_end_of_epoch": """
import torch
import torch.nn.functional as F
from torch import nn
def objective(train_loader, valid_loader, epochs):
    model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Dropout(0.3), nn.Linear(128, 10))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    for epoch in range(epochs):
        for data, target in train_loader:
            optimizer.zero_grad()
            F.nll_loss(model(data), target).backward()
            optimizer.step()
        model.eval()
        correct = 0
        with torch.no_grad():
            for data, target in valid_loader:
                correct += model(data).argmax(1).eq(target).sum().item()
    return correct
""",
    "trainer_validates_mid_epoch": """
import torch
class Trainer:
    def __init__(self, model, optimizer, train_loader, val_loader, interval):
        self.model, self.optim = model, optimizer
        self.train_loader, self.val_loader, self.interval = train_loader, val_loader, interval
        self.iteration = 0
    def validate(self):
        self.model.eval()
        total = 0.0
        with torch.no_grad():
            for x, y in self.val_loader:
                total += torch.nn.functional.cross_entropy(self.model(x), y).item()
        return total
    def train_epoch(self):
        self.model.train()
        for batch_idx, (x, y) in enumerate(self.train_loader):
            if self.iteration % self.interval == 0:
                self.validate()
            self.optim.zero_grad()
            loss = torch.nn.functional.cross_entropy(self.model(x), y)
            loss.backward()
            self.optim.step()
            self.iteration += 1
""",
    "evaluate_helper_each_epoch": """
import torch
from torch import nn
def evaluate(model, loader):
    model.eval()
    hits = 0
    with torch.no_grad():
        for x, y in loader:
            hits += (model(x).argmax(-1) == y).sum().item()
    return hits
def train(model, train_loader, eval_loader, num_epochs):
    criterion = nn.CrossEntropyLoss()
    optim = torch.optim.AdamW(model.parameters(), lr=2e-5)
    model.train()
    for epoch in range(num_epochs):
        for x, y in train_loader:
            loss = criterion(model(x), y)
            optim.zero_grad()
            loss.backward()
            optim.step()
        print(epoch, evaluate(model, eval_loader))
""",
    "while_steps_log_validation": """
import torch
def run(score, optimizer, train_iter, test_batch, n_iters, log_every):
    step = 0
    while step < n_iters:
        x = next(train_iter)
        loss = (score(x) - x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % log_every == 0:
            score.eval()
            with torch.no_grad():
                test_loss = (score(test_batch) - test_batch).pow(2).mean()
            print(step, test_loss.item())
        step += 1
""",
    "train_false_spelling": """
import torch
from torch import nn
def fit(net, loader, val_x, val_y, epochs):
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    loss_fn = nn.MSELoss()
    for epoch in range(epochs):
        for xb, yb in loader:
            opt.zero_grad()
            loss_fn(net(xb), yb).backward()
            opt.step()
        net.train(False)
        with torch.no_grad():
            print(epoch, loss_fn(net(val_x), val_y).item())
""",
    "nested_eval_helper": """
import torch
def set_eval(m):
    m.eval()
def validation_loss(model, batch):
    set_eval(model)
    with torch.no_grad():
        return model(batch).mean().item()
def main(model, loader, val_batch, epochs):
    opt = torch.optim.Adam(model.parameters())
    for epoch in range(epochs):
        for batch in loader:
            opt.zero_grad()
            model(batch).mean().backward()
            opt.step()
        validation_loss(model, val_batch)
""",
}

NEAR_MISS = {
    "train_at_top_of_epoch": """
import torch
def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        return sum(model(x).sum().item() for x in loader)
def train(model, loader, val_loader, epochs):
    opt = torch.optim.Adam(model.parameters())
    for epoch in range(epochs):
        model.train()
        for x in loader:
            opt.zero_grad()
            model(x).sum().backward()
            opt.step()
        evaluate(model, val_loader)
""",
    "train_helper_sets_mode": """
import torch
def train_one_epoch(model, loader, opt):
    model.train()
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        return [model(x) for x, _ in loader]
def main(model, train_loader, val_loader, epochs):
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(epochs):
        train_one_epoch(model, train_loader, opt)
        for x, y in train_loader:
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            opt.step()
        evaluate(model, val_loader)
""",
    "ema_copy_evaluated": """
import copy
import torch
def train(model, loader, val_loader, epochs):
    ema = copy.deepcopy(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model.train()
    for epoch in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
            with torch.no_grad():
                for pe, pm in zip(ema.parameters(), model.parameters()):
                    pe.mul_(0.999).add_(pm, alpha=0.001)
        ema.eval()
        with torch.no_grad():
            acc = sum((ema(x).argmax(1) == y).sum().item() for x, y in val_loader)
        print(epoch, acc)
""",
    "helper_restores_mode": """
import torch
def evaluate(model, loader):
    was_training = model.training
    model.eval()
    with torch.no_grad():
        out = [model(x) for x in loader]
    model.train(was_training)
    return out
def fit(model, loader, val_loader, epochs):
    opt = torch.optim.Adam(model.parameters())
    model.train()
    for epoch in range(epochs):
        for x in loader:
            opt.zero_grad()
            model(x).pow(2).mean().backward()
            opt.step()
        evaluate(model, val_loader)
""",
    "eval_after_the_loop": """
import torch
def fit(model, loader, test_x, epochs):
    opt = torch.optim.Adam(model.parameters())
    model.train()
    for epoch in range(epochs):
        for x in loader:
            opt.zero_grad()
            model(x).pow(2).mean().backward()
            opt.step()
    model.eval()
    with torch.no_grad():
        return model(test_x)
""",
    "teacher_kept_in_eval": """
import torch
import torch.nn.functional as F
def distill(student, teacher, loader, epochs, T=4.0):
    opt = torch.optim.SGD(student.parameters(), lr=0.05)
    for epoch in range(epochs):
        student.train()
        teacher.eval()
        for x, y in loader:
            with torch.no_grad():
                soft = F.softmax(teacher(x) / T, dim=1)
            loss = F.kl_div(F.log_softmax(student(x) / T, dim=1), soft, reduction="batchmean")
            opt.zero_grad()
            loss.backward()
            opt.step()
""",
    "teacher_eval_each_epoch_no_train": """
import torch
import torch.nn.functional as F
def distill(student, teacher, loader, epochs):
    opt = torch.optim.Adam(student.parameters())
    student.train()
    for epoch in range(epochs):
        teacher.eval()
        for x in loader:
            with torch.no_grad():
                target = teacher(x)
            opt.zero_grad()
            F.mse_loss(student(x), target).backward()
            opt.step()
""",
    "freeze_batchnorm_layers": """
import torch
from torch import nn
def finetune(model, loader, epochs):
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    model.train()
    for epoch in range(epochs):
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.eval()
        for x, y in loader:
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
""",
    "eval_then_stop": """
import torch
def train(model, loader, val_batch, max_steps):
    opt = torch.optim.Adam(model.parameters())
    model.train()
    for step, x in enumerate(loader):
        opt.zero_grad()
        model(x).mean().backward()
        opt.step()
        if step == max_steps:
            model.eval()
            with torch.no_grad():
                print(model(val_batch).mean().item())
            break
""",
}

# a helper of another module gets the model in the loop: it may well call model.train() itself
PREVIEW = {
    "unknown_helper_gets_model": """
import torch
from mylib import train_epoch
def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        return [model(x) for x in loader]
def main(model, loader, val_loader, epochs):
    opt = torch.optim.Adam(model.parameters())
    for epoch in range(epochs):
        train_epoch(model, loader, opt)
        for x in loader:
            opt.zero_grad()
            model(x).mean().backward()
            opt.step()
        evaluate(model, val_loader)
""",
}

SEEN = {
    "trainer_validates_mid_epoch": "wkentaro/pytorch-fcn#57 and PR #56 (validate() every interval inside train_epoch's batch loop, "
    "model.train() only at the top of the epoch); joeynmt/joeynmt#184 (the same with _validate mid-epoch)",
    "inline_eval_end_of_epoch": "optuna/optuna PR #1725 (pytorch_simple.py: model.train() before the epoch loop, model.eval() at its end)",
    "evaluate_helper_each_epoch": "asyml/texar-pytorch#310 (BERT example: _eval_epoch() leaves the model in eval mode)",
    "while_steps_log_validation": "ermongroup/ncsn#2 (anneal_runner: the score model put in eval() to log a test loss, never back)",
    "helper_restores_mode": "webis-de/small-text#40 (validations_per_epoch > 1 left the model in eval mode; fixed by restoring the mode)",
}

# A trainer that builds its optimizer on the module it was handed and keeps it as self.model: the optimizer
# trains self.model (fresh set 8's tuning half, z11: missed while only the argument's name was taken).
PITFALL["trainer_optimizer_on_the_handed_module"] = """
import torch
from torch import nn
class Trainer:
    def __init__(self, model, loader, val_loader, device, epochs=10):
        self.model, self.device = model.to(device), device
        self.loader, self.val_loader, self.epochs = loader, val_loader, epochs
        self.opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    @torch.no_grad()
    def evaluate(self):
        self.model.eval()
        return sum(self.model(x.to(self.device)).argmax(1).eq(y.to(self.device)).sum().item() for x, y in self.val_loader)
    def fit(self):
        self.model.train()
        for epoch in range(self.epochs):
            for x, y in self.loader:
                loss = nn.functional.cross_entropy(self.model(x.to(self.device)), y.to(self.device))
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
            print(epoch, self.evaluate())
"""
SEEN["trainer_optimizer_on_the_handed_module"] = "benchmarks/fresh/lint8 z11_session_recsys_gru.py (tuning half)"

# Fitting a latent code through a trained decoder kept in eval mode (auto-decoder inference, GAN inversion): the
# optimizer holds the code alone, so eval() at the top of each iteration is what the author wants. An optimizer
# over the decoder's parameters makes it the pitfall again.
_FIT_CODE = """
import torch
def reconstruct(decoder, samples, latent_size, iterations, lr):
    latent = torch.zeros(1, latent_size).normal_(0, 0.01).requires_grad_()
    optimizer = torch.optim.Adam({params}, lr=lr)
    loss_l1 = torch.nn.L1Loss()
    for e in range(iterations):
        decoder.eval()
        xyz, sdf_gt = samples[:, :3], samples[:, 3:]
        optimizer.zero_grad()
        pred = decoder(torch.cat([latent.expand(len(xyz), -1), xyz], 1))
        loss = loss_l1(pred, sdf_gt)
        loss.backward()
        optimizer.step()
    return latent
"""
NEAR_MISS["latent_code_fitted_through_a_decoder_in_eval"] = _FIT_CODE.format(params="[latent]")
PITFALL["decoder_fitted_with_the_code_while_in_eval"] = _FIT_CODE.format(
    params="[latent, *decoder.parameters()]"
)
SEEN["latent_code_fitted_through_a_decoder_in_eval"] = (
    "round 18's tuning half, read (DeepSDF's reconstruct.py: Adam([latent]), decoder.eval() at the top of each "
    "iteration; read wrong)"
)
SEEN["decoder_fitted_with_the_code_while_in_eval"] = "the same loop with the decoder's parameters in the optimizer"
