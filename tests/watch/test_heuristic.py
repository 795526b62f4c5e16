"""The heuristic detectors (``watch(pedantic=True)``), each proven by its case and by code
written the way public code writes it.

For every heuristic detector: the case's broken variant is reported with the case id, at a line
of the case file, and only under ``pedantic=True`` (that its fixed variant and near miss are not
reported is proven for every detector by tests/watch/test_proofs.py). Then at least three
re-spellings of the pitfall (other shapes, other call forms: Tensor method, torch function, F., nn
module, keyword or positional) are reported, and at least two correct look-alikes stay silent. Each
re-spelling names, in a comment, the public repository (issue or file) its spelling comes from.
"""

from __future__ import annotations

import copy
import os

import pytest
import torch
import torch.nn.functional as F
from planting import ROOT
from torch import nn

from torch_pitfalls.loader import load_case
from torch_pitfalls.watch import watch
from torch_pitfalls.watch.detectors import all_detectors

pytestmark = pytest.mark.filterwarnings("ignore:reduction. .mean. divides:UserWarning")  # the kl-div case warns itself

HERE = os.path.realpath(__file__)
with open(HERE, encoding="utf-8") as _f:
    N_LINES = len(_f.read().splitlines())

CASE_FILES = {
    "l2-normalize-all-dims": "cases/shapes/l2_normalize_all_dims.py",
    "interpolate-3d-input": "cases/shapes/interpolate_3d_input.py",
    "view-instead-of-permute": "cases/shapes/view_instead_of_permute.py",
    "train-eval-mode": "cases/training/train_eval_mode.py",
    "shared-module-reuse": "cases/training/shared_module_reuse.py",
    "cross-entropy-after-softmax": "cases/training/cross_entropy_after_softmax.py",
    "kldiv-expects-log-input": "cases/training/kldiv_expects_log_input.py",
    "functional-dropout-training-flag": "cases/training/functional_dropout_training_flag.py",
    "missing-zero-grad": "cases/training/missing_zero_grad.py",
    "frozen-by-name-filter": "cases/training/frozen_by_name_filter.py",
    "model-eval-freezes-nothing": "cases/training/model_eval_freezes_nothing.py",
}


def _watched(case_id: str, fn, *args, pedantic: bool = True):
    """The findings of ``case_id`` while ``fn(*args)`` runs (an exception it raises is part of
    some spellings: the error form of a pitfall)."""
    with watch(pedantic=pedantic, explain=False, select=(case_id,)) as w:
        try:
            fn(*args)
        except (ValueError, RuntimeError):
            pass
    assert w.errors == [], w.errors
    return [f for f in w.findings if f.case == case_id]


def reported(case_id: str, fn) -> None:
    found = _watched(case_id, fn)
    assert found, f"{fn.__name__}: {case_id} not reported"
    # at a line of this file: inside the spelling, or the helper it calls (a forward, a train_step)
    assert all(os.path.realpath(f.path) == HERE and 1 <= f.line <= N_LINES for f in found), [
        (f.path, f.line) for f in found
    ]
    assert all(f.pedantic for f in found)


def silent(case_id: str, fn) -> None:
    found = _watched(case_id, fn)
    assert found == [], f"{fn.__name__}: {[(f.path, f.line, f.detail) for f in found]}"


# -- the cases themselves --------------------------------------------------------------------
def _case(case_id):
    return load_case(ROOT / CASE_FILES[case_id])


def test_every_heuristic_detector_is_pedantic_and_has_its_case_here():
    heuristic = {d.case for d in all_detectors() if d.pedantic}
    assert heuristic == set(CASE_FILES)


@pytest.mark.parametrize("case_id", sorted(CASE_FILES))
def test_broken_is_reported_at_a_line_of_the_case_file(case_id):
    loaded = _case(case_id)
    found = _watched(case_id, loaded.module.broken, "cpu")
    assert found, f"{case_id}: broken not reported"
    n_lines = len((ROOT / CASE_FILES[case_id]).read_text(encoding="utf-8").splitlines())
    for f in found:
        assert os.path.realpath(f.path) == os.path.realpath(ROOT / CASE_FILES[case_id])
        assert 1 <= f.line <= n_lines and f.pedantic and f.message


@pytest.mark.parametrize("case_id", sorted(CASE_FILES))
def test_not_run_without_pedantic(case_id):
    loaded = _case(case_id)
    assert _watched(case_id, loaded.module.broken, "cpu", pedantic=False) == []


# -- l2-normalize-all-dims ---------------------------------------------------------------------
def nerfstudio_normalize(x):
    # nerfstudio-project/nerfstudio, nerfstudio/cameras/camera_utils.py: normalize(x) "Returns a
    # normalized vector": x / torch.linalg.norm(x); here given a batch of ray directions.
    return x / torch.linalg.norm(x)


def l2_batch_of_directions():
    return nerfstudio_normalize(torch.randn(16, 3))


def l2_inplace_chain():
    # shioda999/prequant, lib/utils.py: A.float().div_(A.float().pow(2)...sqrt()), with sum (the
    # L2 norm) where that file takes the mean
    feats = torch.randn(2, 8, 5, 5)
    return feats.float().div_(feats.float().pow(2).sum().sqrt())


def l2_keepdim_over_every_axis():
    # EmilioOldenziel/torch-cbc, torch_cbc/constraints.py: x / x.pow(2).sum(dim=(0, 1, 2),
    # keepdim=True).clamp(min=eps).sqrt(), on a 3-D tensor: every axis
    x, eps = torch.randn(4, 6, 6), 10e-10
    return x / x.pow(2).sum(dim=(0, 1, 2), keepdim=True).clamp(min=eps).sqrt()


def l2_multiplied_by_rsqrt():
    # own: the reciprocal form, torch.rsqrt of the sum of squares, with an epsilon
    emb = torch.randn(32, 64)
    return emb * torch.rsqrt((emb * emb).sum() + 1e-12)


def l2_normalize_flattened():
    # own: F.normalize over the one axis of the whole map, flattened
    fmap = torch.randn(2, 16, 4, 4)
    return F.normalize(fmap.flatten(), dim=0).view_as(fmap)


@pytest.mark.parametrize(
    "spelling",
    [
        l2_batch_of_directions,
        l2_inplace_chain,
        l2_keepdim_over_every_axis,
        l2_multiplied_by_rsqrt,
        l2_normalize_flattened,
    ],
)
def test_l2_normalize_all_dims_respellings_reported(spelling):
    reported("l2-normalize-all-dims", spelling)


def l2_per_vector_sqrt_sum():
    # jddaggett/gumnet-implementation, gumnet_pytorch/models/layers/FeatureL2Norm.py: per position
    x = torch.randn(2, 8, 5, 5)
    return x / torch.sqrt(torch.sum(x**2, dim=1, keepdim=True) + 1e-6)


def l2_one_vector():
    # nerfstudio's normalize used as meant: one 3-vector
    return nerfstudio_normalize(torch.tensor([3.0, 0.0, 4.0]))


def l2_rms_of_weights():
    # shioda999/prequant, lib/utils.py as written: divided by the RMS, not the norm
    a = torch.randn(64, 32)
    return a.float().div_(a.float().pow(2).mean().sqrt())


def l2_weight_by_frobenius_norm():
    # own: a Parameter scaled by its Frobenius norm (a method of its own, not features)
    lin = nn.Linear(8, 8)
    return lin.weight / lin.weight.norm()


def l2_hand_made_weight_view():
    # own: a weight kept as a leaf tensor that requires grad, flattened per output and scaled as a whole
    w = torch.randn(8, 3, 3, 3, requires_grad=True)
    flat = w.view(w.size(0), -1)
    return flat / flat.norm()


@pytest.mark.parametrize(
    "spelling",
    [l2_per_vector_sqrt_sum, l2_one_vector, l2_rms_of_weights, l2_weight_by_frobenius_norm, l2_hand_made_weight_view],
)
def test_l2_normalize_all_dims_near_misses_silent(spelling):
    silent("l2-normalize-all-dims", spelling)


# -- interpolate-3d-input ----------------------------------------------------------------------
def interpolate_feature_to_pair():
    # chenhonghua/MvDrag3D#4: F.interpolate(up_ft_tar[f_id], size=(256, 256), ...) on a (4, 32, 32) feature
    up_ft_tar = torch.randn(2, 4, 32, 32)
    return F.interpolate(up_ft_tar[0], size=(256, 256), mode="bilinear")


def interpolate_disparity_unsqueezed_once():
    # vye16/shape-of-motion#69: interpolate(disp.unsqueeze(1), size=image.size[::-1], mode="bicubic")
    disp, image_size = torch.rand(48, 85), (85, 48)
    return torch.nn.functional.interpolate(
        disp.unsqueeze(1), size=image_size[::-1], mode="bicubic", align_corners=False
    )


def interpolate_upsample_module_on_image():
    # pytorch/pytorch#63845 (a 3x244x395 image resized as it is); here the module form, nn.Upsample
    img = torch.rand(3, 24, 39)
    return nn.Upsample(scale_factor=2)(img)


def interpolate_grey_mask_scale_factor():
    # own: a grey H x W mask given a channel axis only, scale_factor by keyword, mode="nearest-exact"
    mask = torch.rand(40, 30) > 0.5
    return F.interpolate(mask[None].float(), scale_factor=0.5, mode="nearest-exact")


@pytest.mark.parametrize(
    "spelling",
    [
        interpolate_feature_to_pair,
        interpolate_disparity_unsqueezed_once,
        interpolate_upsample_module_on_image,
        interpolate_grey_mask_scale_factor,
    ],
)
def test_interpolate_3d_input_respellings_reported(spelling):
    reported("interpolate-3d-input", spelling)


def interpolate_disparity_fixed():
    # vye16/shape-of-motion#69, the fix from its thread: disp.unsqueeze(0).unsqueeze(1)
    disp = torch.rand(48, 85)
    return F.interpolate(disp.unsqueeze(0).unsqueeze(1), size=(96, 170), mode="bicubic", align_corners=False)


def interpolate_mel_linear():
    # own: a batch of mel spectrograms (N, 80, T) stretched in time with the 1-D mode by name
    mel = torch.randn(4, 80, 100)
    return F.interpolate(mel, scale_factor=2, mode="linear", align_corners=False)


def interpolate_stereo_audio():
    # own: a batch of 4 stereo clips (N, 2, L): a signal, not an image's proportions
    return F.interpolate(torch.randn(4, 2, 16000), scale_factor=0.5)


@pytest.mark.parametrize("spelling", [interpolate_disparity_fixed, interpolate_mel_linear, interpolate_stereo_audio])
def test_interpolate_3d_input_near_misses_silent(spelling):
    silent("interpolate-3d-input", spelling)


# -- view-instead-of-permute -------------------------------------------------------------------
def view_bhwc_reshape():
    # Selen-Suyue/DensePolicy2D#3 (policy.py): b x h x w x c images reshaped to b x c x h x w
    img = torch.rand(2, 12, 16, 3)
    b, h, w, c = img.shape
    return img.reshape(b, c, h, w)


def view_sizes_from_the_image():
    # pytorch/vision#2018 (to_tensor: img.view(pic.size[1], pic.size[0], len(pic.getbands())) then
    # a transpose); here the view spelled straight to C x H x W from the H x W x C tensor
    img, size, bands = torch.rand(10, 14, 3), (14, 10), "RGB"
    return img.view(len(bands), size[1], size[0])


def view_numpy_image_batch_of_one():
    # own: an H x W x C array from OpenCV/PIL made a batch of one with -1
    import numpy as np

    arr = np.random.rand(8, 6, 3).astype("float32")
    return torch.from_numpy(arr).view(-1, 3, 8, 6)


def view_torch_reshape_time_major():
    # own: batch-first (B, T, D) read as time-first (T, B, D), torch function form
    seq = torch.randn(4, 7, 5)
    return torch.reshape(seq, (7, 4, 5))


@pytest.mark.parametrize(
    "spelling",
    [view_bhwc_reshape, view_sizes_from_the_image, view_numpy_image_batch_of_one, view_torch_reshape_time_major],
)
def test_view_instead_of_permute_respellings_reported(spelling):
    reported("view-instead-of-permute", spelling)


def view_to_tensor_as_written():
    # pytorch/vision#2018: a flat buffer viewed as H x W x C, then permuted to C x H x W
    buf, size, bands = torch.arange(10 * 14 * 3, dtype=torch.uint8), (14, 10), "RGB"
    return buf.view(size[1], size[0], len(bands)).permute(2, 0, 1).contiguous()


def view_split_heads():
    # own (every attention block): (B, T, C) -> (B, T, H, D), then transpose
    x = torch.randn(2, 5, 12)
    return x.view(2, 5, 3, 4).transpose(1, 2)


def view_add_batch_axis():
    # own: only an axis of length 1 added, nothing re-cut
    img = torch.rand(8, 6, 3)
    return img.view(1, 8, 6, 3)


@pytest.mark.parametrize("spelling", [view_to_tensor_as_written, view_split_heads, view_add_batch_axis])
def test_view_instead_of_permute_near_misses_silent(spelling):
    silent("view-instead-of-permute", spelling)


# -- train-eval-mode -----------------------------------------------------------------------------
def _cnn():
    return nn.Sequential(
        nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Dropout(0.5), nn.Linear(4 * 6 * 6, 10)
    )


def _batches(n=3):
    return [(torch.randn(5, 1, 8, 8), torch.randint(0, 10, (5,))) for _ in range(n)]


def eval_loop_without_eval():
    # tokyoupscale/cnn_practice, cnn/test_model.py: the test loop, with its model.eval() left out
    model = _cnn()
    with torch.no_grad():
        correct = 0
        total = 0
        for images, labels in _batches():
            outputs = model(images)
            _, predicted = torch.max(outputs.data, 1)
            total += labels.size(0)
            correct += (predicted == labels).sum().item()
    return correct / total


class Solver:
    # sinhasam/vaal#2: Solver.test() runs task_model (vgg16_bn) without task_model.eval()
    def __init__(self):
        self.task_model = _cnn()

    def test(self, loader):
        total, correct = 0, 0
        for imgs, labels in loader:
            with torch.no_grad():
                preds = self.task_model(imgs)
            preds = torch.argmax(preds, dim=1)
            correct += (preds == labels).sum().item()
            total += imgs.size(0)
        return correct / total * 100


def eval_solver_test():
    return Solver().test(_batches())


def eval_inference_mode_predict():
    # yangze0930/NTS-Net#46 ("I forgot to set net.eval()"); here under torch.inference_mode
    net = _cnn()
    with torch.inference_mode():
        return [net(x).argmax(1) for x, _ in _batches()]


@pytest.mark.parametrize("spelling", [eval_loop_without_eval, eval_solver_test, eval_inference_mode_predict])
def test_train_eval_mode_respellings_reported(spelling):
    reported("train-eval-mode", spelling)


def gan_generator_under_no_grad():
    # own (a common GAN spelling): fakes drawn under no_grad for the discriminator's step, G in train()
    g = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 2))
    d = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
    opt_d = torch.optim.SGD(d.parameters(), lr=0.01)
    for _ in range(3):
        with torch.no_grad():
            fake = g(torch.randn(6, 4))
        opt_d.zero_grad()
        F.binary_cross_entropy_with_logits(d(fake), torch.zeros(6, 1)).backward()
        opt_d.step()


def swa_update_bn():
    # torch's own torch.optim.swa_utils.update_bn: training mode under no_grad on purpose
    model = _cnn()
    torch.optim.swa_utils.update_bn([x for x, _ in _batches()], model)


def model_without_mode_dependent_layers():
    # own: nothing in the model reads the mode (no BatchNorm, no dropout)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    with torch.no_grad():
        return [model(torch.randn(3, 4)) for _ in range(3)]


@pytest.mark.parametrize("spelling", [gan_generator_under_no_grad, swa_update_bn, model_without_mode_dependent_layers])
def test_train_eval_mode_near_misses_silent(spelling):
    silent("train-eval-mode", spelling)


# -- shared-module-reuse ---------------------------------------------------------------------------
class Residual(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self._block = nn.Sequential(nn.ReLU(), nn.Conv2d(channels, channels, 3, padding=1, bias=False))

    def forward(self, x):
        return x + self._block(x)


def shared_modulelist_times_n():
    # swasun/VQ-VAE-Images, src/residual_stack.py: nn.ModuleList([Residual(...)] * self._num_residual_layers)
    num_residual_layers = 2
    return nn.ModuleList([Residual(4)] * num_residual_layers)


def shared_sequential_n_times_list():
    # deep-learning-with-pytorch/dlwpt-code#89: nn.Sequential(*(n_blocks * [ResBlock(n_chans=n_chans1)]))
    n_blocks = 3
    return nn.Sequential(*(n_blocks * [Residual(4)]))


class TwoHeads(nn.Module):
    # acids-ircam/ddsp_pytorch#37 asks whether two MLPs share weights; here the attribute form
    def __init__(self):
        super().__init__()
        self.head_a = nn.Linear(4, 4)
        self.head_b = self.head_a


def shared_attribute_alias():
    return TwoHeads()


@pytest.mark.parametrize(
    "spelling", [shared_modulelist_times_n, shared_sequential_n_times_list, shared_attribute_alias]
)
def test_shared_module_reuse_respellings_reported(spelling):
    reported("shared-module-reuse", spelling)


def shared_list_comprehension():
    # WenjieDu/PyPOTS, pypots/nn/modules/totem/layers.py: one Residual per layer
    return nn.ModuleList([Residual(4) for _ in range(2)])


def shared_deepcopy():
    # own (nn.TransformerEncoder's _get_clones): copy.deepcopy per position
    layer = Residual(4)
    return nn.ModuleList([copy.deepcopy(layer) for _ in range(3)])


def shared_activation_instance():
    # own: one parameter-free ReLU listed twice
    act = nn.ReLU()
    return nn.Sequential(nn.Linear(4, 4), act, nn.Linear(4, 4), act)


class TiedLM(nn.Module):
    # pytorch/examples, word_language_model/model.py: tie_weights, decoder.weight = encoder.weight
    def __init__(self):
        super().__init__()
        self.encoder = nn.Embedding(10, 6)
        self.decoder = nn.Linear(6, 10)
        self.decoder.weight = self.encoder.weight


def shared_tied_weights():
    return TiedLM()


@pytest.mark.parametrize(
    "spelling", [shared_list_comprehension, shared_deepcopy, shared_activation_instance, shared_tied_weights]
)
def test_shared_module_reuse_near_misses_silent(spelling):
    silent("shared-module-reuse", spelling)


# -- cross-entropy-after-softmax ------------------------------------------------------------------
class ActivityNet(nn.Module):
    # jindongwang/Deep-learning-activity-recognition#10: forward returns F.softmax(out, dim=1)
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(9, 6)

    def forward(self, x):
        out = self.fc(x)
        return F.softmax(out, dim=1)


def ce_model_returns_softmax():
    criterion = nn.CrossEntropyLoss()
    x, y = torch.randn(8, 9), torch.randint(0, 6, (8,))
    loss = criterion(ActivityNet()(x), y)
    loss.backward()


def ce_sequence_logits_softmaxed():
    # bkitano/llama-from-scratch#5: logits = F.softmax(a, dim=-1); F.cross_entropy(logits.view(-1, V), targets.view(-1))
    vocab_size = 11
    a = torch.randn(2, 5, vocab_size, requires_grad=True)
    targets = torch.randint(0, vocab_size, (2, 5))
    logits = F.softmax(a, dim=-1)
    return F.cross_entropy(logits.view(-1, vocab_size), targets.view(-1))


def ce_aux_layer_with_softmax_module():
    # nocotan/pytorch-lightning-gans#9: aux_layer = nn.Sequential(nn.Linear(...), nn.Softmax()) and F.cross_entropy
    aux_layer = nn.Sequential(nn.Linear(16, 4), nn.Softmax(dim=1))
    return F.cross_entropy(aux_layer(torch.randn(6, 16)), torch.randint(0, 4, (6,)))


def ce_tensor_softmax_method():
    # lansinuote/Huggingface_Toturials#6: out = out.softmax(dim=1), then criterion(out, labels)
    out = torch.randn(4, 2).softmax(dim=1)
    return torch.nn.CrossEntropyLoss()(out, torch.tensor([0, 1, 1, 0]))


@pytest.mark.parametrize(
    "spelling",
    [
        ce_model_returns_softmax,
        ce_sequence_logits_softmaxed,
        ce_aux_layer_with_softmax_module,
        ce_tensor_softmax_method,
    ],
)
def test_cross_entropy_after_softmax_respellings_reported(spelling):
    reported("cross-entropy-after-softmax", spelling)


def ce_relu_logits():
    # own: non-negative scores (a ReLU head) whose rows do not sum to 1
    scores = F.relu(torch.randn(8, 5)) + 0.5
    return F.cross_entropy(scores, torch.randint(0, 5, (8,)))


def ce_soft_targets():
    # own: probabilities as the *target* (label smoothing / distillation), logits as the input
    logits, teacher = torch.randn(4, 3), torch.randn(4, 3)
    return F.cross_entropy(logits, F.softmax(teacher, dim=1))


def ce_log_softmax_input():
    # speedinghzl/Pytorch-Deeplab#2 (log_softmax before F.cross_entropy): log-probabilities, <= 0,
    # which cross_entropy's own log_softmax leaves unchanged
    return F.cross_entropy(F.log_softmax(torch.randn(4, 3), dim=1), torch.tensor([0, 1, 2, 0]))


@pytest.mark.parametrize("spelling", [ce_relu_logits, ce_soft_targets, ce_log_softmax_input])
def test_cross_entropy_after_softmax_near_misses_silent(spelling):
    silent("cross-entropy-after-softmax", spelling)


# -- kldiv-expects-log-input -----------------------------------------------------------------------
def kl_segmentation_softmax_both():
    # microsoft/ProDA#43: student = F.softmax(...); F.kl_div(student, teacher, reduction='none')
    student = F.softmax(torch.randn(2, 5, 4, 4), dim=1)
    teacher = F.softmax(torch.randn(2, 5, 4, 4), dim=1)
    loss_kd = F.kl_div(student, teacher, reduction="none")
    return loss_kd.sum() / loss_kd.numel()


def kl_log_target_with_probabilities():
    # NightShade99/Self-Supervised-Vision#5: probs_io = F.softmax(...); F.kl_div(probs_io, probs_jo, log_target=True)
    probs_io = F.softmax(torch.randn(6, 4), -1)
    probs_jo = F.log_softmax(torch.randn(6, 4), -1)
    return F.kl_div(probs_io, probs_jo, log_target=True, reduction="sum")


def kl_module_batchmean_probabilities():
    # fywang222/KD-For-RT-DETR (src/zoo/distiller/kd_losses.py) with log_softmax swapped for softmax
    temperature = 4.0
    pred_student = F.softmax(torch.randn(8, 10) / temperature, dim=1)
    pred_teacher = F.softmax(torch.randn(8, 10) / temperature, dim=1)
    return nn.KLDivLoss(reduction="batchmean")(pred_student, pred_teacher) * temperature**2


@pytest.mark.parametrize(
    "spelling", [kl_segmentation_softmax_both, kl_log_target_with_probabilities, kl_module_batchmean_probabilities]
)
def test_kldiv_expects_log_input_respellings_reported(spelling):
    reported("kldiv-expects-log-input", spelling)


def kl_distillation_as_written():
    # fywang222/KD-For-RT-DETR, src/zoo/distiller/kd_losses.py: log_softmax student, softmax teacher
    log_pred_student = F.log_softmax(torch.randn(8, 10) / 4.0, dim=1)
    pred_teacher = F.softmax(torch.randn(8, 10) / 4.0, dim=1)
    return F.kl_div(log_pred_student, pred_teacher, reduction="batchmean")


def kl_log_of_probabilities():
    # pytorch/pytorch#60928: loss(output.log(), target)
    output = torch.tensor([[0.1132, 0.5477, 0.3390]])
    target = torch.tensor([[0.1541, 0.0511, 0.0947]])
    return nn.KLDivLoss(reduction="batchmean")(output.log(), target)


def kl_both_log_space():
    # own: log_target=True with log-probabilities on both sides
    return F.kl_div(
        F.log_softmax(torch.randn(3, 4), 1), F.log_softmax(torch.randn(3, 4), 1), log_target=True, reduction="batchmean"
    )


@pytest.mark.parametrize("spelling", [kl_distillation_as_written, kl_log_of_probabilities, kl_both_log_space])
def test_kldiv_expects_log_input_near_misses_silent(spelling):
    silent("kldiv-expects-log-input", spelling)


# -- functional-dropout-training-flag --------------------------------------------------------------
class FieldAttention(nn.Module):
    # rixwew/pytorch-fm#21: F.dropout(attn_scores, p=0.1) in an attention forward
    def __init__(self):
        super().__init__()
        self.attention = nn.Linear(4, 1)

    def forward(self, x):
        attn_scores = F.softmax(self.attention(x), dim=1)
        attn_scores = F.dropout(attn_scores, p=0.1)
        return (attn_scores * x).sum(dim=1)


class DefaultDropoutNet(nn.Module):
    # pytorch/pytorch#26338: x = F.dropout(x), nothing but the input
    def forward(self, x):
        x = F.dropout(x)
        return x


class BuiltInForward(nn.Module):
    # yangze0930/NTS-Net#14 (resnet.py): x = nn.Dropout(p=0.5)(x) inside forward
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        x = nn.Dropout(p=0.5)(x)
        return self.fc(x)


class SpatialDropoutNet(nn.Module):
    # own: the 2-D form, positional p
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3)

    def forward(self, x):
        return F.dropout2d(self.conv(x), 0.2)


def _in_eval(module_cls, x):
    model = module_cls().eval()
    return model(x)


def dropout_keyword_p():
    return _in_eval(FieldAttention, torch.randn(3, 5, 4))


def dropout_no_arguments():
    return _in_eval(DefaultDropoutNet, torch.ones(10))


def dropout_layer_built_in_forward():
    return _in_eval(BuiltInForward, torch.randn(2, 8))


def dropout2d_positional():
    return _in_eval(SpatialDropoutNet, torch.randn(1, 2, 6, 6))


@pytest.mark.parametrize(
    "spelling", [dropout_keyword_p, dropout_no_arguments, dropout_layer_built_in_forward, dropout2d_positional]
)
def test_functional_dropout_training_flag_respellings_reported(spelling):
    reported("functional-dropout-training-flag", spelling)


class Prenet(nn.Module):
    # BogiHsu/Tacotron2-PyTorch#8: F.dropout(F.relu(linear(x)), p=0.5, training=True), on purpose
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4)])

    def forward(self, x):
        for linear in self.layers:
            x = F.dropout(F.relu(linear(x)), p=0.5, training=True)
        return x


class FollowsTheMode(nn.Module):
    # rixwew/pytorch-fm, the fix of #21: training=self.training
    def forward(self, x):
        return F.dropout(x, p=0.1, training=self.training)


def dropout_on_purpose():
    return _in_eval(Prenet, torch.randn(2, 4))


def dropout_following_the_mode():
    return _in_eval(FollowsTheMode, torch.randn(2, 4))


def dropout_mc_sampling():
    # own: Monte Carlo dropout, the registered layers switched back to train() after eval()
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.3), nn.Linear(4, 1)).eval()
    for m in model.modules():
        if isinstance(m, nn.Dropout):
            m.train()
    return [model(torch.randn(2, 4)) for _ in range(3)]


@pytest.mark.parametrize("spelling", [dropout_on_purpose, dropout_following_the_mode, dropout_mc_sampling])
def test_functional_dropout_training_flag_near_misses_silent(spelling):
    silent("functional-dropout-training-flag", spelling)


# -- missing-zero-grad -----------------------------------------------------------------------------
def _regression(n=4):
    return [(torch.randn(6, 3), torch.randn(6, 1)) for _ in range(n)]


def zero_grad_outside_the_loop():
    # salesforce/corr_based_prediction#1: zero_grad outside the training stage, once
    model = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    optimizer.zero_grad()
    for x, y in _regression():
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()


class CustomModel(nn.Module):
    # fchollet/deep-learning-with-python-notebooks#293: a torch train_step without self.zero_grad()
    def __init__(self):
        super().__init__()
        self.dense = nn.Linear(3, 1)
        self.optimizer = torch.optim.RMSprop(self.parameters(), lr=1e-3)

    def train_step(self, x, y):
        loss = F.mse_loss(self.dense(x), y)
        loss.backward()
        self.optimizer.step()
        return loss.item()


def zero_grad_missing_in_train_step():
    model = CustomModel()
    return [model.train_step(x, y) for x, y in _regression()]


def zero_grad_once_per_epoch():
    # pytorch/pytorch#47175 ("calling it at the beginning of each epoch instead of each iteration")
    model = nn.Linear(3, 1)
    optimizer = torch.optim.Adam(model.parameters())
    for _epoch in range(2):
        model.zero_grad()
        for x, y in _regression(3):
            F.mse_loss(model(x), y).backward()
            optimizer.step()


@pytest.mark.parametrize(
    "spelling", [zero_grad_outside_the_loop, zero_grad_missing_in_train_step, zero_grad_once_per_epoch]
)
def test_missing_zero_grad_respellings_reported(spelling):
    reported("missing-zero-grad", spelling)


def zero_grad_after_step():
    # SharifiZarchi/Introduction_to_Machine_Learning#55: backward, step, then zero_grad (correct)
    model = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for x, y in _regression():
        F.mse_loss(model(x), y).backward()
        optimizer.step()
        optimizer.zero_grad()


def zero_grad_after_the_loss():
    # rll/deepul#12: loss first, then optimizer.zero_grad(), backward, step
    model = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for x, y in _regression():
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def zero_grad_in_place_and_accumulation():
    # own: zeroing in place (set_to_none=False) every 2 micro-batches, one step per 2
    model = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for i, (x, y) in enumerate(_regression(6)):
        (F.mse_loss(model(x), y) / 2).backward()
        if i % 2 == 1:
            optimizer.step()
            optimizer.zero_grad(set_to_none=False)


def zero_grad_in_closure():
    # own: LBFGS, whose closure zeroes the gradients inside step()
    model = nn.Linear(3, 1)
    optimizer = torch.optim.LBFGS(model.parameters(), max_iter=2)
    x, y = torch.randn(6, 3), torch.randn(6, 1)

    def closure():
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        return loss

    for _ in range(2):
        optimizer.step(closure)


def gradients_overwritten_each_step():
    # own (averaged or externally computed gradients): each step's .grad overwritten with copy_
    model = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for x, y in _regression():
        grads = torch.autograd.grad(F.mse_loss(model(x), y), list(model.parameters()))
        for p, g in zip(model.parameters(), grads):
            if p.grad is None:
                p.grad = torch.zeros_like(p)
            p.grad.copy_(g)
        optimizer.step()


@pytest.mark.parametrize(
    "spelling",
    [
        zero_grad_after_step,
        zero_grad_after_the_loss,
        zero_grad_in_place_and_accumulation,
        zero_grad_in_closure,
        gradients_overwritten_each_step,
    ],
)
def test_missing_zero_grad_near_misses_silent(spelling):
    silent("missing-zero-grad", spelling)


# -- frozen-by-name-filter ---------------------------------------------------------------------------
class _Blocks(nn.Module):
    """A small ResNet-shaped model: stem, layer1..layer4, a head given as ``head``."""

    def __init__(self, head_name="fc"):
        super().__init__()
        self.stem = nn.Linear(6, 8)
        self.bn1 = nn.BatchNorm1d(8)
        for i in range(1, 5):
            setattr(self, f"layer{i}", nn.Sequential(nn.Linear(8, 8), nn.ReLU()))
        self.head_name = head_name
        setattr(self, head_name, nn.Linear(8, 3))

    def forward(self, x):
        x = torch.relu(self.bn1(self.stem(x)))
        for i in range(1, 5):
            x = getattr(self, f"layer{i}")(x)
        return getattr(self, self.head_name)(x)


def _fit(model, steps=2):
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1, momentum=0.9)
    for _ in range(steps):
        opt.zero_grad()
        F.cross_entropy(model(torch.randn(8, 6)), torch.randint(0, 3, (8,))).backward()
        opt.step()


def name_filter_after_the_new_head():
    # pamintandrei/plantvillage_modele_ai load_model.py trains only "layer4" in name, and attaches
    # the new fc afterwards; here the head is attached first, so the filter freezes it too
    model = _Blocks()
    model.fc = nn.Linear(8, 3)
    for name, param in model.named_parameters():
        param.requires_grad = "layer4" in name
    _fit(model)


def name_filter_for_another_head_name():
    # own: a filter written for a head called "classifier", on a model whose head is "head"
    model = _Blocks(head_name="head")
    for name, p in model.named_parameters():
        if not name.startswith("classifier"):
            p.requires_grad_(False)
        if name.startswith("layer3"):
            p.requires_grad_(True)  # "and fine-tune the last blocks"
    _fit(model)


def name_filter_that_trains_only_norms():
    # own: "train only BatchNorm (and the head)", written as one substring test
    model = _Blocks()
    for name, p in model.named_parameters():
        if "bn" not in name:
            p.requires_grad = False
    _fit(model)


@pytest.mark.parametrize(
    "spelling", [name_filter_after_the_new_head, name_filter_for_another_head_name, name_filter_that_trains_only_norms]
)
def test_frozen_by_name_filter_respellings_reported(spelling):
    reported("frozen-by-name-filter", spelling)


def linear_probe():
    # own: the backbone frozen by module, only the head trains
    model = _Blocks()
    for part in (model.stem, model.bn1, model.layer1, model.layer2, model.layer3, model.layer4):
        part.requires_grad_(False)
    _fit(model)


def generator_step_through_a_frozen_discriminator():
    # pytorch/examples dcgan main.py: G is trained through D(G(z)); here D is frozen for G's step
    netG = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 6))
    netD = nn.Sequential(nn.Linear(6, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
    optG = torch.optim.Adam(netG.parameters(), lr=2e-4)
    netD.requires_grad_(False)
    for _ in range(2):
        optG.zero_grad()
        F.binary_cross_entropy_with_logits(netD(netG(torch.randn(5, 4))), torch.ones(5, 1)).backward()
        optG.step()


def perceptual_loss_through_a_frozen_network():
    # pytorch/examples fast_neural_style: the loss network (VGG) frozen, the transformer trained
    transformer = nn.Sequential(nn.Linear(6, 6), nn.Tanh(), nn.Linear(6, 6))
    vgg = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 12))
    vgg.requires_grad_(False)
    opt = torch.optim.Adam(transformer.parameters(), lr=1e-3)
    x = torch.randn(4, 6)
    for _ in range(2):
        opt.zero_grad()
        F.mse_loss(vgg(transformer(x)), vgg(x)).backward()
        opt.step()


@pytest.mark.parametrize(
    "spelling", [linear_probe, generator_step_through_a_frozen_discriminator, perceptual_loss_through_a_frozen_network]
)
def test_frozen_by_name_filter_near_misses_silent(spelling):
    silent("frozen-by-name-filter", spelling)


# -- model-eval-freezes-nothing ------------------------------------------------------------------------
class _EncoderHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Dropout(0.1))
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        return self.head(self.encoder(x))


def _train_all(model, steps=2):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(steps):
        opt.zero_grad()
        F.cross_entropy(model(torch.randn(8, 6)), torch.randint(0, 2, (8,))).backward()
        opt.step()


def train_false_on_the_encoder():
    # own: train(False) meant as "do not train the encoder"
    model = _EncoderHead()
    model.encoder.train(False)
    _train_all(model)


def freeze_helper_that_only_evals():
    # own, after the question "does model.eval() freeze the weights?" (jovian.ml forum,
    # "Question About Model.eval() and when to unfreeze models?"): a freeze() that calls eval()
    def freeze(module):
        module.eval()
        return module

    model = _EncoderHead()
    freeze(model.encoder)
    _train_all(model)


def eval_on_every_encoder_module():
    # own: eval() module by module over the part meant to stay fixed
    model = _EncoderHead()
    for m in model.encoder.modules():
        m.eval()
    _train_all(model)


def eval_undone_by_the_loops_train():
    # own: the encoder put in eval mode "to freeze it", then the training loop's own model.train()
    # switches it back; its weights train either way
    model = _EncoderHead()
    model.encoder.eval()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(2):
        model.train()
        opt.zero_grad()
        F.cross_entropy(model(torch.randn(8, 6)), torch.randint(0, 2, (8,))).backward()
        opt.step()


@pytest.mark.parametrize(
    "spelling",
    [
        train_false_on_the_encoder,
        freeze_helper_that_only_evals,
        eval_on_every_encoder_module,
        eval_undone_by_the_loops_train,
    ],
)
def test_model_eval_freezes_nothing_respellings_reported(spelling):
    reported("model-eval-freezes-nothing", spelling)


def norm_layers_in_eval_while_training():
    # open-mmlab/mmdetection backbones/resnet.py train(): norm_eval puts every BatchNorm in eval
    # mode (fixed statistics) while its affine weights and the convolutions train
    model = _EncoderHead()
    model.train()
    for m in model.modules():
        if isinstance(m, nn.BatchNorm1d):
            m.eval()
    _train_all(model)


def frozen_stage_eval_and_no_grad():
    # open-mmlab/mmdetection backbones/resnet.py _freeze_stages(): eval() and requires_grad = False
    model = _EncoderHead()
    model.encoder.eval()
    for p in model.encoder.parameters():
        p.requires_grad = False
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    for _ in range(2):
        opt.zero_grad()
        F.cross_entropy(model(torch.randn(8, 6)), torch.randint(0, 2, (8,))).backward()
        opt.step()


def validation_between_epochs():
    # own: eval for validation, train() again before the next epoch's steps
    model = _EncoderHead()
    for _epoch in range(2):
        model.train()
        _train_all(model, steps=1)
        model.eval()
        with torch.no_grad():
            model(torch.randn(4, 6))


def encoder_evaluated_alone_mid_training():
    # own, after the k-NN monitor of self-supervised training loops: the encoder alone put in eval
    # mode and run under no_grad to score features, then model.train() and training goes on
    model = _EncoderHead()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(2):
        model.train()
        opt.zero_grad()
        F.cross_entropy(model(torch.randn(8, 6)), torch.randint(0, 2, (8,))).backward()
        opt.step()
        model.encoder.eval()
        with torch.no_grad():
            model.encoder(torch.randn(4, 6))


@pytest.mark.parametrize(
    "spelling",
    [
        norm_layers_in_eval_while_training,
        frozen_stage_eval_and_no_grad,
        validation_between_epochs,
        encoder_evaluated_alone_mid_training,
    ],
)
def test_model_eval_freezes_nothing_near_misses_silent(spelling):
    silent("model-eval-freezes-nothing", spelling)
