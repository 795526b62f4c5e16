"""PTF027: gradient accumulation without dividing the loss by the number of micro-batches."""

PITFALL = {
    "step_after_loop": """
import torch
def big_batch(w, opt, micro_batches):
    opt.zero_grad()
    for x, y in micro_batches:
        loss = ((w * x - y) ** 2).mean()
        loss.backward()
    opt.step()
""",
    "modulo_gate": """
def train(model, loader, optimizer, criterion, accum_steps):
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        loss.backward()
        if (i + 1) % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
""",
    "scaler_modulo": """
import torch
def train(model, loader, opt, scaler, k):
    for step, batch in enumerate(loader):
        with torch.autocast("cuda"):
            loss = model(**batch).loss
        scaler.scale(loss).backward()
        if step % k == 0:
            scaler.step(opt)
            scaler.update()
            opt.zero_grad()
""",
    "inline_backward": """
def train(model, loader, optimizer, n):
    for i, (x, y) in enumerate(loader):
        model(x, y).mean().backward()
        if i % n == n - 1:
            optimizer.step()
            optimizer.zero_grad()
""",
    "method_self_optimizer": """
import torch
class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    def accumulate(self, chunks):
        self.optimizer.zero_grad()
        for x, y in chunks:
            out = self.model(x)
            loss = torch.nn.functional.mse_loss(out, y)
            loss.backward()
        self.optimizer.step()
""",
}

NEAR_MISS = {
    "divided": """
def train(model, loader, optimizer, criterion, accum_steps):
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y) / accum_steps
        loss.backward()
        if (i + 1) % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
""",
    "augassign_divide": """
def big_batch(w, opt, micro_batches, k):
    opt.zero_grad()
    for x, y in micro_batches:
        loss = ((w * x - y) ** 2).mean()
        loss /= k
        loss.backward()
    opt.step()
""",
    "step_every_batch": """
def train(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        model(x, y).backward()
        optimizer.step()
""",
    "gradients_divided": """
def train(model, loader, optimizer, k):
    for i, (x, y) in enumerate(loader):
        model(x, y).backward()
        if (i + 1) % k == 0:
            for p in model.parameters():
                p.grad.data.div_(k)
            optimizer.step()
            optimizer.zero_grad()
""",
    "critic_every_pass_generator_every_k": "import torch\n\ndef train(generator, critic, loader, opt_G, opt_D, n_critic=5):\n    for i, (imgs, _) in enumerate(loader):\n        opt_D.zero_grad()\n        fake = generator(torch.randn(imgs.size(0), 100))\n        d_loss = -critic(imgs).mean() + critic(fake.detach()).mean()\n        d_loss.backward()\n        opt_D.step()\n        if i % n_critic == 0:\n            opt_G.zero_grad()\n            g_loss = -critic(generator(torch.randn(imgs.size(0), 100))).mean()\n            g_loss.backward()\n            opt_G.step()\n",
}

SEEN = {
    "step_after_loop": "https://github.com/karpathy/nanoGPT/issues/168",
    "modulo_gate": "https://github.com/karpathy/nanoGPT/issues/206",
    "divided": "https://github.com/ThilinaRajapakse/BERT_binary_text_classification/issues/15",
    "gradients_divided": "https://github.com/NVIDIA/DeepLearningExamples/issues/625",
}
NEAR_MISS["gradients_rescaled_by_a_helper"] = """
import torch
from torchtune import training
def train(model, loader, optimizer, loss_fn, accumulate=4):
    num_tokens = 0
    for idx, batch in enumerate(loader):
        tokens = (batch["labels"] != -100).sum()
        num_tokens += tokens
        loss = loss_fn(model(batch["tokens"]), batch["labels"])
        loss.backward()
        if (idx + 1) % accumulate == 0:
            training.scale_grads(model, 1 / num_tokens)
            optimizer.step()
            optimizer.zero_grad()
            num_tokens = 0
"""
SEEN["gradients_rescaled_by_a_helper"] = (
    "pytorch/torchtune recipes (training.scale_grads(self._model, 1 / num_tokens) before the step; "
    "round 2's read held-out half judged 2 such findings wrong)"
)
NEAR_MISS["window_sum_of_scaled_losses"] = """
import torch
def train(model, loader, optimizer, accum=4):
    acc = 0
    for step, (x, y) in enumerate(loader):
        loss = torch.nn.functional.mse_loss(model(x), y)
        acc = acc + loss / accum
        if (step + 1) % accum == 0:
            optimizer.zero_grad()
            acc.backward()
            optimizer.step()
            acc = 0
"""
SEEN["window_sum_of_scaled_losses"] = (
    "a near miss written while PTF226's variant set was built (a window's losses, each divided, summed and backwarded once)"
)
NEAR_MISS["adam_scale_cancels"] = """
import torch
model = torch.nn.Linear(8, 1)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
def train(loader, accum=4):
    for i, (x, y) in enumerate(loader):
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        if (i + 1) % accum == 0:
            optimizer.step()
            optimizer.zero_grad()
"""
SEEN["adam_scale_cancels"] = (
    "graphdeeplearning/benchmarking-gnns train_epoch_dense (Adam without weight decay or clipping: k times "
    "the gradient gives the same update; round 3's read held-out half judged 6 such findings harmless)"
)
PITFALL["adam_with_clipping"] = """
import torch
model = torch.nn.Linear(8, 1)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
def train(loader, accum=4):
    for i, (x, y) in enumerate(loader):
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        if (i + 1) % accum == 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad()
"""
NEAR_MISS["divided_in_the_forward_helper"] = """
import torch
def forward_pass(model, batch, cfg):
    loss = torch.nn.functional.cross_entropy(model(batch[0]), batch[1])
    if cfg.accumulation_steps > 1:
        loss = loss / cfg.accumulation_steps
    return loss
def train(model, loader, optimizer, cfg):
    for i, batch in enumerate(loader):
        loss = forward_pass(model, batch, cfg)
        loss.backward()
        if (i + 1) % cfg.accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
"""
SEEN["divided_in_the_forward_helper"] = (
    "facebookresearch/DPR train_dense_encoder.py (_do_biencoder_fwd_pass divides the loss by "
    "cfg.train.gradient_accumulation_steps; round 4's tuning half)"
)
PITFALL["count_divided_for_the_schedule"] = """
import math
import torch
ACCUM = 8
def train(model, loader, optimizer):
    total_updates = math.ceil(len(loader) / ACCUM)
    for i, (x, y) in enumerate(loader):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        if (i + 1) % ACCUM == 0:
            optimizer.step()
            optimizer.zero_grad()
    return total_updates
"""

NEAR_MISS["every_fourth_pass_steps_its_own_backward"] = """
import torch
def train(model, loader, optimizer, loss_fn):
    for step, (inputs, labels) in enumerate(loader):
        if step % 4 == 0:
            loss = loss_fn(model(inputs), labels).sum()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        else:
            with torch.no_grad():
                outputs = model(inputs)
"""
SEEN["every_fourth_pass_steps_its_own_backward"] = (
    "KellerJordan/cifar10-airbench airbench96_faster.py (a backward and its step on every fourth pass; "
    "round 7's tuning half)"
)

# Each chunk's summed loss divided by the whole batch's sample count where it is made, a regulariser (divided
# too) added after and moved to the device: the chunks' gradients add up to the batch's mean gradient.
_CHUNKS = """
import torch
def train(decoder, lat_vecs, batches, optimizer, loss_l1, split, lam):
    for indices, xyz, sdf_gt, n in batches:
        optimizer.zero_grad()
        for i in range(split):
            vecs = lat_vecs(indices[i])
            pred = decoder(torch.cat([vecs, xyz[i]], dim=1))
            chunk_loss = loss_l1(pred, sdf_gt[i].cuda()){div}
            reg_loss = (lam * torch.sum(torch.norm(vecs, dim=1))){div}
            chunk_loss = chunk_loss + reg_loss.cuda()
            chunk_loss.backward()
        optimizer.step()
"""
NEAR_MISS["chunk_and_regulariser_each_divided_where_made"] = _CHUNKS.format(div=" / n")
PITFALL["chunk_and_regulariser_summed_undivided"] = _CHUNKS.format(div="")
SEEN["chunk_and_regulariser_each_divided_where_made"] = (
    "round 18's tuning half, read (DeepSDF's train_deep_sdf.py: chunk_loss = loss_l1(...) / num_sdf_samples, then "
    "chunk_loss = chunk_loss + reg_loss.cuda() with reg_loss divided too; read wrong)"
)
SEEN["chunk_and_regulariser_summed_undivided"] = "the same loop with neither term divided"
_LOSSES_OF_ONE_OUTPUT = """
import torch
def run_step(model, optimizer, batches, keys):
    optimizer.zero_grad()
    {body}
    optimizer.step()
"""
NEAR_MISS["each_loss_of_one_forward_back_propagated"] = _LOSSES_OF_ONE_OUTPUT.format(
    body="out = model(**batches)\n    for k in keys:\n        out[k].backward()"
)
PITFALL["each_micro_batch_forward_in_the_loop"] = _LOSSES_OF_ONE_OUTPUT.format(
    body="for k in keys:\n        out = model(**batches[k])\n        out['loss'].backward()"
)
SEEN["each_loss_of_one_forward_back_propagated"] = (
    "pytorch-pfn-extras 0.9.0 pytorch_pfn_extras/runtime/_runtime.py:478 (for k in backprop_from_list: "
    "_scale(out[k]).backward(), the scalar losses of one code block's output; round 19's held-out half, read wrong)"
)
SEEN["each_micro_batch_forward_in_the_loop"] = "one forward per key inside the loop, one step after it: micro-batches, unscaled"

# round 21 (tuning half): the losses one call of the model returns (a world model's, actor's and critic's, each
# stepped by its own optimizer) back-propagated one by one are several losses of one forward (pydreamer's
# train.py); a list built up by appending micro-batches' losses is still accumulation
_LOSSES = """
import torch
def train(model, optimizers, scaler, data):
    for step, batch in enumerate(data):
        with torch.autocast("cuda"):
{made}
        for opt in optimizers:
            opt.zero_grad()
        for loss in losses:
            scaler.scale(loss).backward()
        for opt in optimizers:
            scaler.step(opt)
        scaler.update()
"""
NEAR_MISS["losses_one_call_returns"] = _LOSSES.format(
    made="            losses, state, metrics = model.training_step(batch)"
)
PITFALL["losses_appended_per_micro_batch"] = _LOSSES.format(
    made="""            losses = []
            for part in batch.chunk(4):
                losses.append(model(part).mean())"""
)
