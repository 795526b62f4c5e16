"""Latency / throughput benchmark of torchvision classifiers for the deployment report.

Measures per-batch latency (p50 / p95) and images per second for several batch sizes, in fp32
and bf16, with channels-last memory format. Results are appended to a CSV.

python m20_inference_latency_bench.py --models resnet50 efficientnet_b0 convnext_tiny --device cuda
"""
import argparse
import csv
import os
import platform
import statistics
import time

import torch
from torchvision import models


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--models", nargs="+", default=["resnet50", "efficientnet_b0", "convnext_tiny"])
    p.add_argument("--batch-sizes", nargs="+", type=int, default=[1, 8, 32, 128])
    p.add_argument("--device", default="cuda")
    p.add_argument("--image-size", type=int, default=224)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--iters", type=int, default=100)
    p.add_argument("--out", default="reports/latency.csv")
    return p.parse_args()


def build(name, device, channels_last):
    model = getattr(models, name)(weights=None).eval().to(device)
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
    return model


def wait_for(result, device):
    if device.type == "cuda" and result.device == device:
        torch.cuda.synchronize(device)


def time_batches(model, batch, device, dtype, warmup, iters):
    use_amp = dtype != torch.float32
    timings = []
    with torch.inference_mode(), torch.autocast(device_type=device.type, dtype=dtype, enabled=use_amp):
        for _ in range(warmup):
            wait_for(model(batch), device)
        for _ in range(iters):
            start = time.perf_counter()
            out = model(batch)
            wait_for(out, device)
            timings.append((time.perf_counter() - start) * 1000.0)
    return timings


def describe(timings, batch_size):
    timings = sorted(timings)
    p50 = statistics.median(timings)
    p95 = timings[int(0.95 * (len(timings) - 1))]
    return {"p50_ms": round(p50, 3), "p95_ms": round(p95, 3), "img_per_s": round(1000.0 * batch_size / p50, 1)}


def environment(device):
    env = {"torch": torch.__version__, "python": platform.python_version(), "host": platform.node()}
    if device.type == "cuda":
        env["gpu"] = torch.cuda.get_device_name(device)
        env["cudnn"] = torch.backends.cudnn.version()
    else:
        env["cpu_threads"] = torch.get_num_threads()
    return env


def main():
    args = get_args()
    device = torch.device(args.device)
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = True
    env = environment(device)
    print(env)
    rows = []
    for name in args.models:
        for channels_last in (False, True):
            model = build(name, device, channels_last)
            for dtype in (torch.float32, torch.bfloat16):
                for bs in args.batch_sizes:
                    batch = torch.randn(bs, 3, args.image_size, args.image_size, device=device)
                    if channels_last:
                        batch = batch.contiguous(memory_format=torch.channels_last)
                    stats = describe(time_batches(model, batch, device, dtype, args.warmup, args.iters), bs)
                    row = {"model": name, "channels_last": channels_last, "dtype": str(dtype).split(".")[-1],
                           "batch": bs, **stats, **env}
                    rows.append(row)
                    print(f"{name:18s} cl={int(channels_last)} {row['dtype']:9s} bs={bs:4d}  "
                          f"p50 {stats['p50_ms']:8.2f} ms  p95 {stats['p95_ms']:8.2f} ms  {stats['img_per_s']:9.1f} img/s")
            del model
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    new_file = not os.path.exists(args.out)
    with open(args.out, "a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        if new_file:
            writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
