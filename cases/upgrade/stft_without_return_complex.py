# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `torch.stft` on a real signal without `return_complex` raises from 2.0
#
# A vocoder's data pipeline computes its spectrogram with `torch.stft(wave, n_fft,
# hop_length=..., window=...)`, the call written before torch had complex tensors, and reads
# the real and imaginary parts from a last dimension of size 2. On 1.13 the call still works:
# it prints a `UserWarning` once ("stft will soon require the return_complex parameter be given
# for real inputs") and returns the old layout. After the upgrade to 2.0 the same line stops the
# run: `RuntimeError: stft requires the return_complex parameter be given for real inputs, and
# will further require that return_complex=True in a future PyTorch release.`

# %%
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# The 1.13 warning comes from C++ with `TORCH_WARN_ONCE`, once per process. So that every run
# shows what the first call of a fresh script shows, `broken` switches on
# `torch.set_warn_always` around the call and puts it back.

# %%
N_FFT, HOP = 8, 4
WAVE = [0.0, 1.0, 0.0, -1.0, 0.5, 0.25, -0.5, 2.0, 1.0, 0.0, -1.0, 0.0, 3.0, -2.0, 1.0, 0.5]


def _warn_every_time(fn):
    previous = torch.is_warn_always_enabled()
    torch.set_warn_always(True)
    try:
        return fn()
    finally:
        torch.set_warn_always(previous)


def broken(device):
    wave = torch.tensor(WAVE, device=device)
    window = torch.hann_window(N_FFT, device=device)
    return _warn_every_time(
        lambda: torch.stft(wave, N_FFT, hop_length=HOP, window=window, center=False)
    )  # no return_complex


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# Before complex dtypes, `stft` returned each complex coefficient as two real numbers in a trailing
# dimension of size 2. Once complex tensors existed, torch set out to make `stft` return them.
# pytorch/pytorch#43886 added `return_complex` for 1.7, and the 1.7.0 release already warned when
# real input left it out (the default stayed the old layout), in the wording of
# pytorch/pytorch#45409, which told users to pass `return_complex=False` to preserve the current
# behaviour. 1.8 reworded it into the "will soon require" warning that 1.13 still prints
# (pytorch/pytorch#50102), and pytorch/pytorch#86724 turned it into an error for 2.0, listed among
# the release's backwards-incompatible changes. Complex input still defaults to a complex result.
# The 2.0 error names only `return_complex=True`; it is the 2.0 release notes, like the 1.7 warning
# before them, that show `return_complex=False` as the spelling that keeps the old layout, and that
# spelling warns in its turn from 2.0 on (the `stft-return-complex-false-deprecated` case):
# following the notes trades an error for a deprecation.
#
# ## The fix
# Ask for the complex result and, where the code needs the old layout, view it as real:
# `torch.view_as_real(torch.stft(..., return_complex=True))` has the same shape and values as
# the 1.13 result, and runs without a warning on every release from 1.13.1 to 2.15.0 (both
# functions exist on 1.13). Code that only needs magnitudes can keep the complex tensor and
# call `.abs()`. The check recomputes the transform frame by frame with `torch.fft.rfft`.


# %%
def fixed(device):
    wave = torch.tensor(WAVE, device=device)
    window = torch.hann_window(N_FFT, device=device)
    spec = torch.stft(wave, N_FFT, hop_length=HOP, window=window, center=False, return_complex=True)
    return torch.view_as_real(spec)  # frequency x frame x (real, imaginary), the 1.13 layout


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The 2.0.0 release notes list "Require `return_complex` to be passed explicitly to `torch.stft` for
# real input" (pytorch/pytorch#86724) among the backwards-incompatible changes, with 1.13 and 2.0
# spellings side by side (the 2.0 one passes `return_complex=False`). The PR says the behaviour had
# been deprecated since 1.8, which holds for the docs and the 1.8 wording; the warning itself is one
# release older: the 1.7.0 wheel already warns "stft will require the return_complex parameter ..."
# (pytorch/pytorch#43886, pytorch/pytorch#45409). The PR also says that this step, first attempted
# in pytorch/pytorch#49022 (December 2020, turned back into a warning by pytorch/pytorch#50102
# before 1.8 was released), had been put on hold for years; torchaudio had already moved to
# `view_as_real(stft(..., return_complex=True))` in pytorch/audio#1096 to avoid the deprecation.
# Downstream, the error stopped diff-svc's training (prophesier/diff-svc#180 quotes it and adds
# `return_complex=False`, which then warns), CoMoSpeech's `train.py` (zhenye234/CoMoSpeech#5) and
# PaSST's HEAR wrapper (kkoutini/passt_hear21#7). The explicit `return_complex=False`, and its own
# deprecation, are the subject of `stft-return-complex-false-deprecated`; this case is the call that
# left the argument out. Observed with this project's venvs on CPU: on 1.13.1 the call returns the
# old layout with the `UserWarning`; on 2.0.1, 2.13.0 and 2.15.0 it raises the `RuntimeError`, and
# the fix is quiet and correct on all four. The other releases are left to the version matrix.

# %% [markdown]
# ## How the harness checks it
#
# A `RuntimeError` from `torch.stft` after an upgrade is not always this one. A window whose
# length differs from `win_length` (here the default, `n_fft`) is refused on every release,
# with `return_complex` given: the same function, the same exception type, another mistake.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """2.0 on: stft refuses real input without return_complex; 1.13: it works and warns that
    it soon will not."""
    if run.raised(RuntimeError, r"stft requires the return_complex parameter"):
        return "RuntimeError"
    if run.error is None and run.warned(UserWarning, r"stft will soon require the return_complex parameter"):
        return "UserWarning"
    return False


def near_miss(device):
    wave = torch.tensor(WAVE, device=device)
    window = torch.hann_window(N_FFT // 2, device=device)  # 4 samples for an 8-point frame
    return torch.stft(wave, N_FFT, hop_length=HOP, window=window, center=False, return_complex=True)


def check(run, device):
    """Real and imaginary parts equal the rfft of each windowed frame (frequency x frame x 2),
    and the call did not warn (on 1.13 the broken call returns the same numbers; its warning is
    what tells it apart)."""
    assert run.error is None, f"raised {run.error!r}"
    wave = torch.tensor(WAVE, device=device)
    frames = wave.unfold(0, N_FFT, HOP) * torch.hann_window(N_FFT, device=device)  # frame x time
    expected = torch.view_as_real(torch.fft.rfft(frames, dim=-1)).transpose(0, 1)  # freq x frame x 2
    torch.testing.assert_close(run.value, expected, atol=1e-5, rtol=1e-5)
    assert not run.warnings, f"the call warned: {run.warnings[0].message}"


CASE = Case(
    id="stft-without-return-complex",
    title="torch.stft on a real signal without return_complex raises from 2.0",
    kind="error",
    symptom_category="error",
    symptom_line="torch.stft on a real signal without return_complex raises from torch 2.0.",
    affects=(
        Affects(
            versions=">=2.0",
            form="RuntimeError",
            reason="return_complex is required for real input: a RuntimeError from the C++ stft "
            "(observed from 2.0.1 to 2.15.0)",
            issue="https://github.com/pytorch/pytorch/pull/86724",
        ),
        Affects(
            versions=">=1.8,<2.0",
            form="UserWarning",
            reason="the call works and warns that return_complex will be required (observed on 1.13.1)",
            issue="https://github.com/pytorch/pytorch/pull/86724",
            since="pytorch/pytorch#86724 (the 2.0 change): 'This behavior has been deprecated since "
            "PyTorch 1.8'; pytorch/audio#1096 (December 2020) moved torchaudio's calls off it "
            "ahead of 1.8",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        release_notes("2.0.0").at(
            "Backwards Incompatible changes: Require return_complex to be passed explicitly to torch.stft for real input (#86724)"
        ),
    ),
    tags=("upgrade", "stft", "complex", "removal"),
    references=(
        "https://github.com/pytorch/pytorch/pull/86724",  # 2.0: return_complex required for real input
        "https://github.com/pytorch/pytorch/pull/43886",  # 1.7: return_complex added, with a first warning
        "https://github.com/pytorch/pytorch/pull/45409",  # 1.7: the warning as released ("Use return_complex=False")
        "https://github.com/pytorch/pytorch/pull/49022",  # the same step, first tried for 1.8 and put on hold
        "https://github.com/pytorch/pytorch/pull/50102",  # 1.8: #49022's error back to a warning, reworded
        "https://github.com/pytorch/audio/pull/1096",  # torchaudio moves to view_as_real(stft(..., True))
        "https://github.com/prophesier/diff-svc/pull/180",  # downstream: the RuntimeError on 2.0
        "https://github.com/zhenye234/CoMoSpeech/pull/5",  # downstream: the RuntimeError in train.py
        "https://github.com/kkoutini/passt_hear21/pull/7",  # downstream: "an error will be raised"
    ),
)
