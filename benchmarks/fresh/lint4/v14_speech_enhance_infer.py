"""Denoise a folder of recordings with the trained spectral-mask model on a CPU server.

    python v14_speech_enhance_infer.py noisy/ clean_out/ --bf16 --workers 0
"""

import argparse
from pathlib import Path

import soundfile as sf
import torch
from torch.utils.data import DataLoader, Dataset

from enhance.model import MaskUNet

SR, N_FFT, HOP = 16000, 512, 128


class Recordings(Dataset):
    def __init__(self, folder):
        self.paths = sorted(Path(folder).glob("*.wav"))

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        audio, sr = sf.read(self.paths[i], dtype="float32", always_2d=True)
        if sr != SR:
            raise ValueError(f"{self.paths[i]}: expected {SR} Hz, got {sr}")
        return torch.from_numpy(audio.mean(axis=1)), self.paths[i].name


def enhance(model, wave, window, use_bf16):
    spec = torch.stft(wave, N_FFT, HOP, window=window, return_complex=True)
    mag = spec.abs().unsqueeze(0).unsqueeze(0)
    with torch.cpu.amp.autocast(enabled=use_bf16, dtype=torch.bfloat16):
        mask = model(torch.log1p(mag))
    mask = mask.float().squeeze(0).squeeze(0).clamp(0.0, 1.0)
    return torch.istft(spec * mask, N_FFT, HOP, window=window, length=wave.shape[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--weights", default="checkpoints/mask_unet.pt")
    ap.add_argument("--bf16", action="store_true")
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--threads", type=int, default=8)
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    out_dir = Path(args.dst)
    out_dir.mkdir(parents=True, exist_ok=True)

    model = MaskUNet(channels=(16, 32, 64, 128))
    state = torch.load(args.weights, map_location="cpu", weights_only=True)
    model.load_state_dict(state["model"] if "model" in state else state)
    model.eval()
    window = torch.hann_window(N_FFT)

    loader = DataLoader(Recordings(args.src), batch_size=None, num_workers=args.workers,
                        prefetch_factor=4)
    peak_in, peak_out = [], []
    with torch.inference_mode():
        for wave, name in loader:
            clean = enhance(model, wave, window, args.bf16)
            peak = clean.abs().max().clamp(min=1e-4)
            if peak > 0.99:
                clean = clean * (0.99 / peak)
            sf.write(out_dir / name, clean.numpy(), SR, subtype="PCM_16")
            peak_in.append(wave.abs().max().item())
            peak_out.append(clean.abs().max().item())
    print(f"wrote {len(peak_out)} files to {out_dir}; "
          f"mean peak {sum(peak_in) / max(len(peak_in), 1):.3f} -> {sum(peak_out) / max(len(peak_out), 1):.3f}")


if __name__ == "__main__":
    main()
