"""PTF020: a CPU factory immediately moved to the device."""

PITFALL = {
    "zeros_to_device": """
import torch
def make(device):
    return torch.zeros(3, 3).to(device)
""",
    "ones_cuda": """
import torch
def masked(scores):
    mask = torch.ones(8, 8).cuda()
    return scores * mask
""",
    "arange_to_tensor_device": """
import torch
def positions(x):
    return torch.arange(x.size(1)).to(x.device)
""",
    "full_in_loop_keyword_device": """
import torch
def fill(batches, device):
    out = []
    for b in batches:
        out.append(torch.full((len(b),), -1).to(device=device))
    return out
""",
    "eye_in_method_self_device": """
import torch
import torch.nn as nn
class Whiten(nn.Module):
    def forward(self, x):
        eye = torch.eye(x.size(-1)).to(self.device)
        return x @ eye
""",
}

NEAR_MISS = {
    "allocated_once_in_init": """
import torch
from torch import nn
class StreamingLDA(nn.Module):
    def __init__(self, dim, classes, device):
        super().__init__()
        self.sigma = torch.ones(dim, dim).to(device)
        self.means = torch.zeros(classes, dim).to(device)
""",
    "first_use_branch_fills_the_object": """
import torch
class Prototypes:
    def __init__(self):
        self.bank = None
    def update(self, feats):
        if self.bank is None:
            self.bank = torch.zeros(100, feats.size(1)).to(feats.device)
        self.bank[:10] = feats[:10]
""",
    "usage_example_under_main": """
import torch
if __name__ == "__main__":
    x = torch.randn(2, 3).cuda()
    print(model(x))
""",
    "device_keyword": """
import torch
def make(device):
    return torch.zeros(3, 3, device=device)
""",
    "dtype_conversion": """
import torch
x = torch.arange(5).to(torch.float32)
""",
    "like_factory": """
import torch
def blank(x):
    return torch.zeros_like(x)
""",
    "random_generated_on_cpu_for_reproducibility": """
import torch
def noise(shape, device, gen):
    return torch.randn(shape, generator=gen).to(device)
""",
    "data_from_list": """
import torch
def labels(ys, device):
    return torch.tensor(ys).to(device)
""",
}

SEEN = {
    "ones_cuda": "https://github.com/torchsynth/torchsynth/issues/76",
    "zeros_to_device": "https://github.com/meta-pytorch/torchfix/issues/62",
    "arange_to_tensor_device": "transformers/models/mvp/modeling_mvp.py: torch.arange(self.prompt_length).to(self.device)",
    "device_keyword": "https://github.com/meta-pytorch/torchcodec/pull/1347",
    "like_factory": "https://github.com/pyro-ppl/pyro/pull/926",
}

# round 2: random noise drawn on the CPU, then copied (no CPU generator handed in)
PITFALL["noise_randn_cuda"] = """
import torch
def sample(netG, b, nz):
    z = torch.randn(b, nz, 1, 1).cuda()
    return netG(z)
"""
SEEN["noise_randn_cuda"] = (
    "https://github.com/murumura/DCGAN-pytorch (main.py, a DCGAN script; search: fixed_noise = torch.randn(64, nz, 1, 1) then to the device)"
)
NEAR_MISS["computed_once_by_a_cached_property"] = """
import functools
import torch
class Pipeline:
    def __init__(self, model, device):
        self.model, self.device = model, device
    @functools.cached_property
    def dimension(self):
        dummy = torch.rand(1, 1, 16000).to(self.device)
        return self.model(dummy).shape[-1]
"""
SEEN["computed_once_by_a_cached_property"] = (
    "pyannote.audio pipelines/speaker_verification.py (a cached_property runs a dummy waveform through the "
    "encoder once per instance; 2 harmless findings in round 3's read held-out half)"
)
NEAR_MISS["first_use_branch_hasattr"] = """
import torch
class Model:
    def feed(self, lq):
        if not hasattr(self, "queue"):
            self.queue = torch.zeros(180, *lq.shape[1:]).cuda()
        self.queue[0] = lq[0]
"""
SEEN["first_use_branch_hasattr"] = (
    "xinntao/Real-ESRGAN realesrgan_model.py (the training-pair queue made on first use; round 4's tuning half)"
)
NEAR_MISS["setup_before_the_evaluation_loop"] = """
import torch
def test(model, dataloader, device):
    iouv = torch.linspace(0.5, 0.95, 10).to(device)
    stats = []
    for img, targets in dataloader:
        with torch.no_grad():
            out = model(img.to(device))
        stats.append((out > iouv[0]).sum())
    return stats
"""
SEEN["setup_before_the_evaluation_loop"] = (
    "WongKinYiu/yolov7 test.py (the IoU thresholds made once per evaluation; round 4's tuning half)"
)
PITFALL["made_inside_the_batch_loop"] = """
import torch
def train(model, loader, optimizer, device):
    for x, y in loader:
        mask = torch.ones(x.size(0), 1).to(device)
        loss = ((model(x.to(device)) - y.to(device)) * mask).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""

NEAR_MISS["loader_filling_module_globals"] = """
import torch
SRU_FWD_FUNC = None
def load_sru_mod(compile_kernel):
    global SRU_FWD_FUNC
    device = torch.device("cuda")
    tmp_ = torch.rand(1, 1).to(device)  # initialises the CUDA context before compiling
    SRU_FWD_FUNC = compile_kernel("sru_fwd")
"""
SEEN["loader_filling_module_globals"] = "OpenNMT/OpenNMT-py onmt/modules/sru.py (load_sru_mod; round 6's tuning half)"

NEAR_MISS["buffers_before_a_rollout_under_no_grad"] = """
import torch
def autoregressive_inference(model, valid_data, prediction_length, n_channels, device):
    valid_loss = torch.zeros((prediction_length, n_channels)).to(device, dtype=torch.float)
    acc = torch.zeros((prediction_length, n_channels)).to(device, dtype=torch.float)
    with torch.no_grad():
        pred = valid_data[0]
        for i in range(prediction_length):
            pred = model(pred)
            valid_loss[i] = ((pred - valid_data[i + 1]) ** 2).mean()
    return valid_loss, acc
"""
SEEN["buffers_before_a_rollout_under_no_grad"] = (
    "NVlabs/FourCastNet inference/inference.py (autoregressive_inference: metric buffers made once per "
    "initial condition, then a rollout under torch.no_grad(); round 6's read held-out half)"
)

NEAR_MISS["cuda_graph_capture_inputs"] = """
import torch
class ModelRunner:
    @torch.inference_mode()
    def capture_model(self, kv_caches, max_batch_size):
        input_tokens = torch.zeros(max_batch_size, dtype=torch.long).cuda()
        input_positions = torch.zeros(max_batch_size, dtype=torch.long).cuda()
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.output = self.model(input_tokens, input_positions, kv_caches)
"""
NEAR_MISS["warm_up_all_reduce_at_process_setup"] = """
import torch
import torch.distributed as dist
def init_worker_distributed_environment(world_size, rank, init_method):
    dist.init_process_group(backend="nccl", world_size=world_size, rank=rank, init_method=init_method)
    dist.all_reduce(torch.zeros(1).cuda())  # a small all_reduce for warm-up
"""
SEEN["cuda_graph_capture_inputs"] = (
    "FoundationVision/LlamaGen autoregressive/serve/model_runner.py (capture_model, vLLM's; round 8's read "
    "held-out half)"
)
SEEN["warm_up_all_reduce_at_process_setup"] = (
    "FoundationVision/LlamaGen autoregressive/serve/worker.py (init_worker_distributed_environment; round 8's "
    "read held-out half)"
)

NEAR_MISS["mask_once_per_generate_call_before_the_denoising_steps"] = """
import torch
class GraphDiffusion:
    def generate(self, batch_size, n_nodes, T=500):
        node_mask = torch.arange(n_nodes).to(self.device).unsqueeze(0) < n_nodes
        y = torch.zeros(batch_size, 1).to(self.device)
        x = torch.randn(batch_size, n_nodes, 16, device=self.device)
        for t in reversed(range(T)):
            x = self.sample_step(x, t, node_mask, y)
        return x
"""
NEAR_MISS["last_step_after_the_sampling_loop"] = """
import torch
def euler_maruyama_sampler(model, latents, y, num_steps=50):
    t_steps = torch.linspace(1.0, 0.04, num_steps, dtype=torch.float64, device=latents.device)
    x_next = latents
    for t_cur, t_next in zip(t_steps[:-1], t_steps[1:]):
        time_input = torch.full((latents.size(0),), t_cur, device=latents.device)
        x_next = x_next + model(x_next, time_input, y) * (t_next - t_cur)
    time_input = torch.ones(x_next.size(0)).to(device=x_next.device) * t_steps[-1]
    return model(x_next, time_input, y)
"""
PITFALL["buffer_once_per_request_before_the_decoding_steps"] = """
import torch
class Sampler:
    def sample_tokens(self, bsz, seq_len, embed_dim, steps=64):
        mask = torch.ones(bsz, seq_len).cuda()
        tokens = torch.zeros(bsz, seq_len, embed_dim).cuda()
        for step in range(steps):
            tokens, mask = self.unmask_step(tokens, mask, step)
        return tokens
"""
SEEN["buffer_once_per_request_before_the_decoding_steps"] = (
    "bytedance/1d-tokenizer modeling/maskgen.py:643-644 (bsz x seq_len buffers made on the CPU at every "
    "generation call; round 9's read held-out half, read true)"
)
PITFALL["rnn_state_before_the_time_loop_in_forward"] = """
import torch
from torch import nn
class Encoder(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.cell = nn.GRUCell(d, h)
        self.h = h
    def forward(self, x):
        state = torch.zeros(x.size(1), self.h).cuda()
        for t in range(x.size(0)):
            state = self.cell(x[t], state)
        return state
"""
SEEN["mask_once_per_generate_call_before_the_denoising_steps"] = (
    "torch-molecule generator/digress/modeling_digress.py:461-476 (node mask and y made once per generate() "
    "before the T-step loop; round 10's tuning half, read harmless)"
)
SEEN["last_step_after_the_sampling_loop"] = (
    "sihyun-yu/REPA samplers.py:166 (the last step of euler_maruyama_sampler, after the loop; round 10's "
    "tuning half, read harmless)"
)
SEEN["rnn_state_before_the_time_loop_in_forward"] = (
    "the readers' line in round 10: a copy made at every model forward call is paid per batch (SASRec's "
    "causal mask in forward, read true)"
)

# round 9's tuning half: an empty cache (a dimension of 0) moved to the device copies no element
NEAR_MISS["empty_cache_moved_to_the_device"] = """
import torch
from torch import nn
class Decoder(nn.Module):
    def forward(self, speech_tokens, cache_source=None):
        if cache_source is None:
            cache_source = torch.zeros(1, 1, 0).to(speech_tokens.device)
        return self.hift(speech_tokens, cache_source)
"""
SEEN["empty_cache_moved_to_the_device"] = (
    "resemble-ai/chatterbox models/s3gen/s3gen.py:290 and :326 (torch.zeros(1, 1, 0) as the vocoder's empty "
    "source cache, moved per call; round 9's tuning half, read harmless: nothing is copied)"
)
PITFALL["cache_of_n_samples_moved_in_forward"] = """
import torch
from torch import nn
class Decoder(nn.Module):
    def forward(self, speech_tokens, n):
        cache_source = torch.zeros(1, 1, n).to(speech_tokens.device)
        return self.hift(speech_tokens, cache_source)
"""

# round 12: a helper of the file that makes the copy, judged by where the file calls it
NEAR_MISS["helper_called_once_before_the_decoder_steps"] = """
import torch
from torch import nn
class Vocoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(8, 8)
    def pad_tensor(self, x, pad):
        padded = torch.zeros(x.size(0), x.size(1) + 2 * pad, x.size(2)).to(x.device)
        padded[:, pad:pad + x.size(1)] = x
        return padded
    def fold(self, x, n):
        x = self.pad_tensor(x, 2)
        return x.view(n, -1, x.size(-1))
    def generate(self, mels):
        with torch.no_grad():
            mels = self.pad_tensor(mels, 4)
            folded = self.fold(mels, 1)
            h = folded.new_zeros(folded.size(0), 8)
            for t in range(folded.size(1)):
                h = self.cell(folded[:, t], h)
        return h
"""
NEAR_MISS["sample_written_once_per_converted_resolution"] = """
import torch
DEVICE = "cuda"
Z_DIMS = {128: 120, 256: 140, 512: 128}
RESOLUTIONS = list(Z_DIMS)
def generate_sample(G, batch_size):
    with torch.no_grad():
        z = torch.randn(batch_size, G.dim_z).to(DEVICE)
        return G(z)
if __name__ == "__main__":
    for res in RESOLUTIONS:
        G = torch.load(f"G{res}.pt", weights_only=False)
        generate_sample(G, 16)
"""
SEEN["helper_called_once_before_the_decoder_steps"] = (
    "CorentinJ/Real-Time-Voice-Cloning vocoder/models/fatchord_version.py (pad_tensor, fold_with_overlap "
    "called by generate() before its sample loop; round 11's held-out half, read)"
)
SEEN["sample_written_once_per_converted_resolution"] = (
    "ajbrock/BigGAN-PyTorch TFHub/converter.py (generate_sample per resolution; round 11's held-out half, read)"
)
PITFALL["helper_called_in_the_batch_loop"] = """
import torch
def pad_tensor(x, pad):
    padded = torch.zeros(x.size(0), x.size(1) + 2 * pad).to(x.device)
    padded[:, pad:pad + x.size(1)] = x
    return padded
def train(model, loader, opt):
    for x, y in loader:
        loss = (model(pad_tensor(x, 2)) - y).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
PITFALL["helper_also_handed_to_a_map"] = """
import torch
def pad_tensor(x, pad=2):
    padded = torch.zeros(x.size(0), x.size(1) + 2 * pad).to(x.device)
    padded[:, pad:pad + x.size(1)] = x
    return padded
def generate(model, xs, steps):
    xs = list(map(pad_tensor, xs))
    first = pad_tensor(xs[0])
    with torch.no_grad():
        for _ in range(steps):
            first = model(first)
    return first
"""
PITFALL["helper_called_from_forward"] = """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(12, 4)
    def pad_tensor(self, x):
        padded = torch.zeros(x.size(0), 12).to(x.device)
        padded[:, : x.size(1)] = x
        return padded
    def forward(self, x):
        return self.fc(self.pad_tensor(x))
"""
PITFALL["sample_per_setting_of_a_computed_sweep"] = """
import torch
DEVICE = "cuda"
def generate_sample(G, batch_size):
    with torch.no_grad():
        z = torch.randn(batch_size, G.dim_z).to(DEVICE)
        return G(z)
if __name__ == "__main__":
    G = torch.load("G.pt", weights_only=False)
    for step in range(10000):
        generate_sample(G, 16)
"""
PITFALL["forward_also_called_by_name_once"] = """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(12, 4)
    def forward(self, x):
        padded = torch.zeros(x.size(0), 12).to(x.device)
        padded[:, : x.size(1)] = x
        return self.fc(padded)
    def trace(self, x, steps):
        y = self.forward(x)
        with torch.no_grad():
            for _ in range(steps):
                y = self.fc(y.repeat(1, 3))
        return y
"""
PITFALL["method_also_called_on_the_object_per_batch"] = """
import torch
from torch import nn
class Padder(nn.Module):
    def pad_tensor(self, x, pad):
        padded = torch.zeros(x.size(0), x.size(1) + 2 * pad).to(x.device)
        padded[:, pad:pad + x.size(1)] = x
        return padded
    def generate(self, model, x, steps):
        x = self.pad_tensor(x, 4)
        with torch.no_grad():
            for _ in range(steps):
                x = model(x)
        return x
def train(padder, model, loader, opt):
    for x, y in loader:
        loss = (model(padder.pad_tensor(x, 2)) - y).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
PITFALL["copy_in_the_loop_of_a_main_called_once"] = """
import torch
def main(env, agent, steps, device):
    for step in range(steps):
        batch = env.run(agent)
        with torch.no_grad():
            bootstrap = torch.zeros(1).to(device)
            advantages = batch.reward() + bootstrap
        agent.update(batch, advantages)
if __name__ == "__main__":
    main(None, None, 10, "cuda")
"""
SEEN["copy_in_the_loop_of_a_main_called_once"] = (
    "learnables/cherry examples/ppo_pendulum_gpu.py:141 (torch.zeros(1).to(device) as the bootstrap value in "
    "main's step loop; main() called once under __main__: round 12's tuning half)"
)

# An optimizer's state is made the first time a parameter is stepped (``if len(state) == 0:``): once per
# parameter, not per step. The same copy outside that branch, or in a branch over a dict made at each call,
# runs at every step.
NEAR_MISS["optimizer_lazy_state_per_parameter"] = """
import torch
from torch.optim import Optimizer
class NovoGrad(Optimizer):
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p.data)
                    state["exp_avg_sq"] = torch.zeros([]).to(state["exp_avg"].device)
                state["step"] += 1
"""
SEEN["optimizer_lazy_state_per_parameter"] = (
    "sooftware/kospeech kospeech/optim/novograd.py (round 12's held-out half, read harmless; tuning material since)"
)
NEAR_MISS["optimizer_lazy_state_keyed_by_name"] = """
import torch
class Lamb(torch.optim.Optimizer):
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                if "step" not in state:
                    state["step"] = torch.zeros(1).to(p.device)
                state["step"] += 1
"""
PITFALL["optimizer_copy_after_the_lazy_state"] = """
import torch
class NovoGrad(torch.optim.Optimizer):
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = 0
                state["scale"] = torch.ones([]).to(p.device)
"""
PITFALL["empty_dict_made_at_each_call"] = """
import torch
class Head(torch.nn.Module):
    def forward(self, x):
        cache = {}
        if not cache:
            cache["bias"] = torch.zeros(8).to(x.device)
        return x + cache["bias"]
"""

# A hook run at an epoch's start or end makes its buffers once per epoch; the epoch's own loop over
# batches (train_epoch) and a loop inside the hook still count.
NEAR_MISS["buffer_made_in_an_epoch_start_hook"] = """
import torch
import pytorch_lightning as pl
class DeepCluster(pl.LightningModule):
    def on_train_epoch_start(self):
        self.centroids = torch.empty(self.num_prototypes, self.dim).to(self.device, non_blocking=True)
        self.assignments = torch.full((self.num_samples,), -1).to(self.device)
"""
SEEN["buffer_made_in_an_epoch_start_hook"] = (
    "vturrisi/solo-learn solo/utils/kmeans.py, run from on_train_epoch_start (round 12's tuning half, read harmless)"
)
PITFALL["copy_in_the_loop_of_an_epoch_end_hook"] = """
import torch
import pytorch_lightning as pl
class Probe(pl.LightningModule):
    def validation_epoch_end(self, outputs):
        for out in outputs:
            weights = torch.ones(out["logits"].size(0)).to(self.device)
            self.log("acc", (weights * out["correct"]).mean())
"""
PITFALL["copy_in_a_train_epoch_function"] = """
import torch
def train_epoch(model, loader, optimizer, device):
    for x, y in loader:
        ones = torch.ones(x.size(0)).to(device)
        loss = ((model(x.to(device)) - y.to(device)) * ones).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""

# A step method and a loop of batches show the copy repeated; a k-means loop under no_grad, with no model
# in it, does not (round 12's solo-learn kmeans.py, read harmless: once per epoch).
PITFALL["copy_in_a_lightning_training_step"] = """
import torch
import pytorch_lightning as pl
class Contrastive(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        x, _ = batch
        z = self.encoder(x)
        labels = torch.arange(z.size(0)).to(self.device)
        return torch.nn.functional.cross_entropy(z @ z.t(), labels)
"""
PREVIEW = globals().get("PREVIEW", {})
PREVIEW["copy_in_a_kmeans_loop_under_no_grad"] = """
import torch
def cluster(embeddings, k, iters):
    with torch.no_grad():
        centroids = embeddings[torch.randperm(len(embeddings))[:k]]
        for _ in range(iters):
            assign = torch.mm(embeddings, centroids.t()).argmax(dim=1)
            sums = torch.zeros(k, embeddings.size(1)).to(embeddings.device)
            sums.index_add_(0, assign, embeddings)
            centroids = sums / torch.bincount(assign, minlength=k).clamp(min=1).unsqueeze(1)
    return centroids
"""
SEEN["copy_in_a_kmeans_loop_under_no_grad"] = (
    "vturrisi/solo-learn solo/utils/kmeans.py cluster_memory (round 12's tuning half, read harmless); "
    "facebookresearch/swav main_deepclusterv2.py (round 11's tuning half, read harmless)"
)

# Where the file does not show how often a helper runs (a function nothing in the file calls, one handed
# to map(), a sampler called from a loop of samples), the copy may run once per run: a conversion, a
# sample written now and then (rounds 11-13 read such copies harmless three times in five). Reported with
# --preview only; by default, where the file shows the copy repeated at each step.
PREVIEW.update(
    {
        name: PITFALL.pop(name)
        for name in (
            "zeros_to_device",
            "ones_cuda",
            "arange_to_tensor_device",
            "full_in_loop_keyword_device",
            "noise_randn_cuda",
            "buffer_once_per_request_before_the_decoding_steps",
            "helper_also_handed_to_a_map",
            "sample_per_setting_of_a_computed_sweep",
            "copy_in_the_loop_of_an_epoch_end_hook",
            # a rollout loop under no_grad whose work is on objects of unknown type (env.run, agent.update)
            "copy_in_the_loop_of_a_main_called_once",
        )
    }
)

# A per-step copy is reported whatever its size: each one from pageable host memory waits for the stream (the
# case's Why). A vector of positions made in forward is the spelling fresh set 13's author planted (m15, tuning
# half); round 14's held-out reader judged eight (batch, 1) label copies of the same kind negligible.
PITFALL["label_matrix_made_in_a_discriminator_step"] = """
import torch
from torch import nn
class GANLoss(nn.Module):
    def forward(self, logits, real):
        target = torch.full(logits.shape, 1.0 if real else 0.0).to(logits.device)
        return nn.functional.binary_cross_entropy_with_logits(logits, target)
"""
PITFALL["label_vector_made_in_a_discriminator_step"] = """
import torch
from torch import nn
class GANLoss(nn.Module):
    def forward(self, logits, real):
        target = torch.ones(logits.size(0), 1).to(logits.device)
        return nn.functional.binary_cross_entropy_with_logits(logits, target if real else 1 - target)
"""
SEEN["label_vector_made_in_a_discriminator_step"] = (
    "masa-su/pixyz pixyz/losses/adversarial_loss.py:254 (round 14's held-out half, read harmless: a few hundred bytes); "
    "benchmarks/fresh/lint13 m15_traffic_flow_transformer.py (tuning half, missed at its first run while such copies "
    "were reported only with --preview)"
)
# the near misses' guards are held at --preview too: a guard that stops holding shows there first
GUARDS_AT_PREVIEW = True
