"""DDPM (epsilon prediction, linear beta schedule) on 64x64 face crops, with an EMA copy of
the U-Net for sampling and resumable checkpoints."""

import copy
import os

import torch
import torch.nn.functional as F
from torchvision import datasets, transforms
from torchvision.utils import save_image

from ddpm.unet import UNet

T_STEPS, BATCH, LR, TOTAL, WARMUP, EMA_DECAY = 1000, 64, 2e-4, 300_000, 5_000, 0.9999
CKPT = "runs/ddpm_faces/last.pt"

betas = torch.linspace(1e-4, 0.02, T_STEPS)
alpha_bar = torch.cumprod(1.0 - betas, dim=0)


def q_sample(x0, t, noise):
    a = alpha_bar.to(x0.device)[t].view(-1, 1, 1, 1)
    return a.sqrt() * x0 + (1 - a).sqrt() * noise


@torch.no_grad()
def sample(net, n, device):
    x = torch.randn(n, 3, 64, 64, device=device)
    for t in reversed(range(T_STEPS)):
        tt = torch.full((n,), t, device=device, dtype=torch.long)
        eps = net(x, tt)
        a, ab, b = 1.0 - betas[t], alpha_bar[t], betas[t]
        x = (x - b / (1 - ab).sqrt() * eps) / a.sqrt()
        if t > 0:
            x = x + b.sqrt() * torch.randn_like(x)
    return x.clamp(-1, 1)


def main(root="data/faces64"):
    device = torch.device("cuda")
    tf = transforms.Compose([transforms.RandomHorizontalFlip(), transforms.ToTensor(),
                             transforms.Normalize((0.5,) * 3, (0.5,) * 3)])
    loader = torch.utils.data.DataLoader(datasets.ImageFolder(root, tf), batch_size=BATCH, shuffle=True,
                                         num_workers=8, drop_last=True, pin_memory=True)
    model = UNet(ch=128, ch_mult=(1, 2, 2, 2), attn_res=(16,), dropout=0.1).to(device)
    ema = copy.deepcopy(model).eval().requires_grad_(False)
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / WARMUP))
    step = 0

    if os.path.exists(CKPT):
        ckpt = torch.load(CKPT, map_location=device, weights_only=True)
        model.load_state_dict(ckpt["model"])
        ema.load_state_dict(ckpt["ema"])
        opt.load_state_dict(ckpt["opt"])
        sched.load_state_dict(ckpt["sched"])
        step = ckpt["step"]
        print(f"resumed at step {step}")

    model.train()
    while step < TOTAL:
        for x0, _ in loader:
            x0 = x0.to(device, non_blocking=True)
            t = torch.randint(0, T_STEPS, (x0.shape[0],), device=device)
            noise = torch.randn_like(x0)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                pred = model(q_sample(x0, t, noise), t)
            loss = F.mse_loss(pred.float(), noise)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            with torch.no_grad():
                for p_ema, p in zip(ema.parameters(), model.parameters()):
                    p_ema.lerp_(p, 1.0 - EMA_DECAY)
            step += 1

            if step % 1000 == 0:
                print(f"step {step}  loss {loss.item():.4f}  lr {sched.get_last_lr()[0]:.2e}")
            if step % 20_000 == 0:
                save_image(sample(ema, 64, device) * 0.5 + 0.5, f"runs/ddpm_faces/ema_{step:06d}.png", nrow=8)
                torch.save({"model": model.state_dict(), "ema": ema.state_dict(), "opt": opt.state_dict(),
                            "sched": sched.state_dict(), "step": step}, CKPT)
            if step >= TOTAL:
                break


if __name__ == "__main__":
    main()
