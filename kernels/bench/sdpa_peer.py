"""PyTorch SDPA timings for the shapes of `podcheck bench kernel` (run on the GPU machine in the same call).

Prefill: q [1, 32, Q, 128], k/v [1, 8, L, 128] bf16, causal aligned bottom-right (causal_lower_right),
enable_gqa. Decode: q [B, 32, 1, 128], k/v [B, 8, L, 128] (dense: SDPA has no paged KV). CUDA-event medians
after warm-up, inputs rotated over several sets so they do not sit in L2. Prints one table.
"""
import statistics

import torch
import torch.nn.functional as F
from torch.nn.attention.bias import causal_lower_right

H, HK, D = 32, 8, 128
SHAPES = [("p2048/2048c + d128x2048", 2048, 2048, 128, 2048),
          ("p1024@8192c + d64x4096", 1024, 8192, 64, 4096),
          ("p512/4096c + d256x1024", 512, 4096, 256, 1024)]


def timed(fn, sets, warmup=5, reps=30):
    for i in range(warmup):
        fn(*sets[i % len(sets)])
    torch.cuda.synchronize()
    ts = []
    for i in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn(*sets[i % len(sets)])
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    return statistics.median(ts)


def main():
    dev = torch.device("cuda")
    dt = torch.bfloat16
    print(f"sdpa peer: torch {torch.__version__} on {torch.cuda.get_device_name()}")
    print(f"{'case':26s} {'prefill ms':>11s} {'decode ms':>10s} {'serial ms':>10s}")
    for name, qp, lp, b, ld in SHAPES:
        def mk(shape):
            return torch.randn(shape, device=dev, dtype=dt)
        nsets = 4
        pre = [(mk((1, H, qp, D)), mk((1, HK, lp, D)), mk((1, HK, lp, D))) for _ in range(nsets)]
        mask = causal_lower_right(qp, lp)
        tp = timed(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True), pre)
        del pre
        dec = [(mk((b, H, 1, D)), mk((b, HK, ld, D)), mk((b, HK, ld, D))) for _ in range(2)]
        td = timed(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True), dec)
        del dec
        torch.cuda.empty_cache()
        print(f"{name:26s} {tp:11.3f} {td:10.3f} {tp + td:10.3f}")


if __name__ == "__main__":
    main()
