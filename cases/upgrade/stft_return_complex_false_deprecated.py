# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `torch.stft(..., return_complex=False)` is deprecated
#
# An audio pipeline computes its spectrogram with `torch.stft(wave, n_fft, window=...,
# return_complex=False)` and reads the real and imaginary parts from the last dimension of size 2,
# the layout torch used before it had complex tensors. Passing `return_complex` explicitly was
# exactly what 1.7 to 1.13 asked for, and on 1.13 the call is quiet. After the upgrade to 2.0 the
# first call of the process prints `UserWarning: stft with return_complex=False is deprecated. In a
# future pytorch release, stft will return complex tensors for all inputs, and return_complex=False
# will raise an error.` The numbers are the same; the layout is on its way out. (The code that did
# not pass `return_complex` at all stops working in 2.0 with a `RuntimeError`: the
# `stft-without-return-complex` case. That error names only `return_complex=True`, but the 2.0
# release notes, like the 1.7 warning before them, show `return_complex=False` as the spelling that
# keeps the old layout. This case is where following them leads.)

# %%
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# The warning comes from C++ with `TORCH_WARN_ONCE`: torch prints it once per process, so a
# second call in the same process is silent. To observe every run, `broken` switches on
# `torch.set_warn_always` for the call and restores it (the user sees the same warning once).

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
        lambda: torch.stft(wave, N_FFT, hop_length=HOP, window=window, center=False, return_complex=False)
    )


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# Before torch had complex dtypes, `stft` returned its complex result as a real tensor with a
# trailing dimension of 2 (real, imaginary). Since complex tensors arrived, torch has been moving
# `stft` to return them: 1.7 already warned when `return_complex` was not given for real input (1.8
# reworded the warning), and pytorch/pytorch#72882 laid out the next steps, an error for the
# unspecified default and a warning for an explicit `return_complex=False`. In 2.0 the first step
# landed as a backwards-incompatible change (pytorch/pytorch#86724: `return_complex` is required for
# real input; the `stft-without-return-complex` case), and the explicit `False` started to warn, as
# the surface diff of torch's native messages between 1.13.1 and 2.0.1 shows.
#
# ## The fix
# Ask for the complex result and view it as the old layout where the code needs it:
# `torch.view_as_real(torch.stft(..., return_complex=True))`. Both calls exist on 1.13.1, and
# the result has the same shape and values as `return_complex=False`. (Better still, keep the
# complex tensor and use `.abs()`, `.angle()`.) The check recomputes the transform frame by
# frame with `torch.fft.rfft` of the windowed frames.


# %%
def fixed(device):
    wave = torch.tensor(WAVE, device=device)
    window = torch.hann_window(N_FFT, device=device)
    spec = torch.stft(wave, N_FFT, hop_length=HOP, window=window, center=False, return_complex=True)
    return torch.view_as_real(spec)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The 2.0.0 release notes record the stft change among the backwards-incompatible changes:
# "Require `return_complex` to be passed explicitly to `torch.stft` for real input"
# (pytorch/pytorch#86724), with `return_complex=False` shown as the 2.0 spelling that keeps
# the old behaviour; they do not mention that this spelling warns. The plan for both steps is
# in pytorch/pytorch#72882 (this project could not pin the warning to one merged PR; the surface diff
# shows it as a native message new in 2.0.1). Downstream, audio and speech projects that had
# moved to the explicit `return_complex=False` got the warning in every run: coqui-ai/TTS#2639,
# speechbrain/speechbrain#2045 ("I got it with torch 2.0"), NVIDIA NeMo in
# NVIDIA-NeMo/Speech#5729 (moved to `view_as_real`). Observed here on CPU: quiet on 1.13.1, the
# warning from 2.0.1 on (releases run: 1.13.1, 2.0.1, 2.1.2, 2.2.2, 2.3.1, 2.4.1, 2.5.1, 2.6.0,
# 2.7.1, 2.8.0, 2.9.1, 2.10.0, 2.13.0, 2.14.1 and 2.15.0; each showed `absent` on 1.13.1 and
# `reproduced` from 2.0.1 on).

# %% [markdown]
# ## How the harness checks it
#
# `torch.stft` has another `UserWarning` on recent releases, about a missing window: the
# default rectangular window leaks spectrum. Same function, same category, another problem.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """The C++ deprecation warning about return_complex=False."""
    return run.warned(UserWarning, r"stft with return_complex=False is deprecated")


def near_miss(device):
    wave = torch.tensor(WAVE, device=device)
    return _warn_every_time(
        lambda: torch.stft(wave, N_FFT, hop_length=HOP, center=False, return_complex=True)
    )  # no window


def check(run, device):
    """Real and imaginary parts equal the rfft of each windowed frame (frequency x frame x 2),
    and the call did not warn (the broken call returns the same numbers; the warning is what
    tells it apart)."""
    assert run.error is None, f"raised {run.error!r}"
    wave = torch.tensor(WAVE, device=device)
    frames = wave.unfold(0, N_FFT, HOP) * torch.hann_window(N_FFT, device=device)  # frame x time
    expected = torch.view_as_real(torch.fft.rfft(frames, dim=-1)).transpose(0, 1)  # freq x frame x 2
    torch.testing.assert_close(run.value, expected, atol=1e-5, rtol=1e-5)
    assert not run.warnings, f"the call warned: {run.warnings[0].message}"


CASE = Case(
    id="stft-return-complex-false-deprecated",
    title="torch.stft(..., return_complex=False) is deprecated",
    kind="warning",
    symptom_category="warning",
    symptom_line="torch.stft(..., return_complex=False) warns that it is deprecated.",
    affects=(
        Affects(
            versions=">=2.0",
            reason="stft warns from C++ when return_complex=False is passed "
            "(observed: quiet on 1.13.1, UserWarning from 2.0.1 to 2.15.0)",
            issue="https://github.com/pytorch/pytorch/pull/86724",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        release_notes("2.0.0").at(
            "Backwards Incompatible changes: Require return_complex to be passed explicitly to torch.stft for real input (#86724)"
        ),
    ),
    tags=("upgrade", "stft", "complex", "deprecation"),
    references=(
        "https://github.com/pytorch/pytorch/pull/72882",  # plan: error on the default, warn on explicit False
        "https://github.com/pytorch/pytorch/pull/86724",  # 2.0: return_complex required for real input
        "https://github.com/speechbrain/speechbrain/pull/2045",  # downstream: fixes the 2.0 warning
        "https://github.com/coqui-ai/TTS/issues/2639",  # downstream: the warning in every training run
        "https://github.com/NVIDIA-NeMo/Speech/pull/5729",  # downstream: NeMo moves to view_as_real
    ),
)
