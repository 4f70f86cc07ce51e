"""A small decoder-only transformer language model trained on one GPU, launch-bound: hundreds of
short kernels per step (eager PyTorch, small width), at least 20 kernels per ms of step time on an
H100 (--count-kernels N measures it). The workload for the collector's overhead on jobs with many
short kernels (issue 25). Random tokens, fixed seed; prints one JSON line (common.run)."""
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, __import__("os").path.dirname(__file__))
import common  # noqa: E402

p = common.parser(__doc__)
p.add_argument("--layers", type=int, default=6)
p.add_argument("--dim", type=int, default=256)
p.add_argument("--heads", type=int, default=4)
p.add_argument("--seq", type=int, default=128)
p.add_argument("--batch", type=int, default=8)
p.add_argument("--vocab", type=int, default=4096)
args = p.parse_args()
torch.manual_seed(args.seed)
dev = torch.device("cuda")


class Block(torch.nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.qkv, self.proj = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
        self.fc1, self.fc2 = torch.nn.Linear(d, 4 * d), torch.nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.h, d // self.h).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class LM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = torch.nn.Embedding(args.vocab, args.dim)
        self.pos = torch.nn.Embedding(args.seq, args.dim)
        self.blocks = torch.nn.ModuleList(Block(args.dim, args.heads) for _ in range(args.layers))
        self.ln = torch.nn.LayerNorm(args.dim)
        self.head = torch.nn.Linear(args.dim, args.vocab, bias=False)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln(x))


model = LM().to(dev)
# foreach=False: one small kernel per parameter and op, as many optimisers without fused
# kernels run; keeps the job launch-bound
opt = torch.optim.AdamW(model.parameters(), lr=3e-4, foreach=False)
data = torch.randint(0, args.vocab, (args.batch, args.seq + 1), device=dev)


def step():
    logits = model(data[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, args.vocab), data[:, 1:].reshape(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()


common.run("lm", args, step, {"layers": args.layers, "dim": args.dim, "batch": args.batch,
                              "seq": args.seq})
