"""A GPU-bound single-GPU job: few, long kernels (large bf16 GEMMs and a convolution stack), the
host far ahead of the GPU. The counterpart of lm.py for the collector's overhead (issue 25): a
collector that costs host time per launch should cost nothing measurable here. Fixed seed; prints
one JSON line (common.run)."""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402

p = common.parser(__doc__)
p.add_argument("--size", type=int, default=8192, help="GEMM side")
p.add_argument("--gemms", type=int, default=8, help="GEMMs per step")
p.add_argument("--channels", type=int, default=256)
p.add_argument("--image", type=int, default=128)
args = p.parse_args()
torch.manual_seed(args.seed)
dev = torch.device("cuda")
a = torch.randn(args.size, args.size, device=dev, dtype=torch.bfloat16)
b = torch.randn(args.size, args.size, device=dev, dtype=torch.bfloat16)
conv = torch.nn.Conv2d(args.channels, args.channels, 3, padding=1).to(dev, torch.bfloat16)
img = torch.randn(32, args.channels, args.image, args.image, device=dev, dtype=torch.bfloat16)


def step():
    c = a
    for _ in range(args.gemms):
        c = torch.mm(c, b)
        c = c * (1.0 / args.size ** 0.5)
    y = img
    for _ in range(4):
        y = F.relu(conv(y))
    return c, y


with torch.no_grad():
    common.run("gpubound", args, step, {"size": args.size, "gemms": args.gemms})
