#!/usr/bin/env python3
"""ddp_tracegen.py — independent generator of multi-rank PyTorch-profiler (Kineto) traces of a DDP
training job, built from a physical model of how such a job runs, with a ground-truth file.

It writes, into OUTDIR, one Chrome-trace JSON per rank (<name>_rank<R>.json.gz, or .json with --plain)
in the format of the real traces in tests/fixtures/kineto-h200x2/, plus truth.json (what was injected
and what it measurably did).  Standard library only; deterministic given --seed.

The model (see tests/bench/README-tracegen.md for the assumptions):
  * each rank's host thread issues the ops of a training step (forward, loss, backward on the autograd
    thread, DDP gradient-bucket AllReduces, bucket copy-back, SGD optimizer, optional per-step .item()
    sync); every op costs host time and launches its kernels/memcpys through cudaLaunchKernel & co.;
  * a GPU op starts at max(its launch, its stream free, its dependencies): the host runs ahead of the
    GPU (bounded by --queue-depth outstanding ops); the GPU idles only when the queue drains;
  * an AllReduce instance starts on a rank when that rank's NCCL stream reaches it and ends on every
    rank at max(start over ranks) + transfer (ring: 2(n-1)/n * bytes / busbw + latency, noise), so
    the last arriver's kernel is the shortest; the NCCL stream is serial; compute kernels overlapping
    an NCCL kernel are stretched by --interference x overlap;
  * kernel durations come from the fixture's kernels (low percentile per kernel), scaled by model
    width, with noise per kernel, per GPU (constant) and per step; each rank's timestamps are shifted
    by a constant clock offset.

Faults (--fault TYPE[:key=val,key=val...], repeatable; ranks are '/'-separated, e.g. ranks=1/5):
  none
  slow_gpu     ranks=R|num=K factor=F onset=S          compute kernels x F from step S
  ramp         ranks=R|num=K factor=F onset=S ramp=N   factor grows linearly 1 -> F over N steps
  intermittent ranks=R|num=K factor=F onset=S period=P duty=D   slow on D*P steps of every P
  extra_work   ranks=R|num=K extra_ms=M onset=S n=3    M ms of extra GEMMs per step (like the fixture)
  host_stall   ranks=R|num=K stall_ms=M onset=S        host blocks M ms per step before launching
  spikes       prob=P factor=F onset=S                 each (rank, step) slowed with probability P
  slow_link    ranks=R|num=K factor=F onset=S          that rank's link bandwidth / F (ring-wide)
"""
import argparse
import gzip
import json
import math
import os
import random
import statistics
import sys
import time

FIXTURE_DEFAULT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'fixtures',
                               'kineto-h200x2', 'fixture_baseline_rank0.json.gz')

# ---------------------------------------------------------------------------------------------------
# Kernel table from a real trace

# key -> (category, substring of the name, extra filter on the fixture instance)
TEMPLATE_SPEC = {
    'fwd_gemm': ('kernel', 'xmma_gemm_f32f32_f32f32_f32_tn_n', None),
    'gelu': ('kernel', 'GeluCUDAKernelImpl', None),
    'sub': ('kernel', 'CUDAFunctor_add', None),
    'pow': ('kernel', 'pow_tensor_scalar', None),
    'mean_red': ('kernel', 'MeanOps', None),
    'fill': ('kernel', 'FillFunctor', None),
    'mul_scalar': ('kernel', 'BUnaryFunctor', None),
    'aunary': ('kernel', 'AUnaryFunctor', None),
    'binary': ('kernel', 'BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor', None),
    'gelu_bwd': ('kernel', 'GeluBackwardCUDAKernelImpl', None),
    'dgrad_gemm': ('kernel', 'xmma_gemm_f32f32_f32f32_f32_nn_n', None),
    'wgrad_gemm': ('kernel', 'cutlass_80_simt_sgemm', None),
    'bias_red': ('kernel', 'sum_functor', None),
    'sgd': ('kernel', 'multi_tensor_apply_kernel', None),
    'nccl_allreduce': ('kernel', 'ncclDevKernel_AllReduce', None),
    'memset': ('gpu_memset', 'Memset', None),
    'memcpy_dtod': ('gpu_memcpy', 'DtoD', None),
}
KERNEL_STATIC_KEYS = ['registers per thread', 'shared memory', 'blocks per SM', 'warps per SM', 'grid',
                      'block', 'est. achieved occupancy %']


def load_templates(path):
    """Returns {key: {'name', 'cat', 'base_us', 'static'}} from a fixture trace."""
    op = gzip.open if path.endswith('.gz') else open
    with op(path, 'rt') as f:
        d = json.load(f)
    found = {k: [] for k in TEMPLATE_SPEC}
    for e in d['traceEvents']:
        c = e.get('cat')
        if c not in ('kernel', 'gpu_memset', 'gpu_memcpy'):
            continue
        for k, (cat, sub, _) in TEMPLATE_SPEC.items():
            if c == cat and sub in e['name']:
                found[k].append(e)
                break
    t = {}
    for k, evs in found.items():
        if not evs:
            raise SystemExit('fixture %s has no kernel for template %r' % (path, k))
        durs = sorted(e['dur'] for e in evs)
        e0 = evs[0]
        static = ''
        if e0['cat'] == 'kernel':
            static = ', '.join('%s: %s' % (json.dumps(kk), json.dumps(e0['args'][kk]))
                               for kk in KERNEL_STATIC_KEYS if kk in e0['args'])
        t[k] = {'name': e0['name'], 'jname': json.dumps(e0['name']), 'cat': e0['cat'],
                'base_us': durs[len(durs) // 10], 'static': static}
    # AUnaryFunctor is used for three sizes; the memcpy for three sizes: keep per-size bases
    au = sorted(e['dur'] for e in found['aunary'])
    t['aunary']['by_size'] = {'small': statistics.median([x for x in au if x < 5] or [1.0]),
                              'act': statistics.median([x for x in au if 5 <= x < 60] or [15.6]),
                              'big': statistics.median([x for x in au if x >= 60] or [125.0])}
    mc = [e for e in found['memcpy_dtod'] if e['args'].get('bytes', 0) >= 1 << 26]
    t['memcpy_dtod']['gbps'] = (statistics.median(e['args']['bytes'] / e['dur'] / 1e3 for e in mc)
                                if mc else 1700.0)
    meta = {k: d.get(k) for k in ('schemaVersion', 'deviceProperties', 'cuda_driver_version',
                                  'cuda_runtime_version', 'cupti_version', 'displayTimeUnit',
                                  'baseTimeNanoseconds')}
    ts0 = min(e['ts'] for e in d['traceEvents'] if e.get('ph') == 'X' and isinstance(e.get('ts'), float))
    meta['ts0'] = ts0
    meta['nccl_version'] = (d.get('distributedInfo') or {}).get('nccl_version', '2.28.9')
    return t, meta


# ---------------------------------------------------------------------------------------------------
# Faults

CAUSE = {'slow_gpu': 'gpu_slow', 'ramp': 'gpu_slow', 'intermittent': 'gpu_slow', 'spikes': None,
         'extra_work': 'extra_work', 'host_stall': 'host_side', 'slow_link': 'communication', 'none': None}


def parse_fault(spec):
    typ, _, rest = spec.partition(':')
    if typ not in CAUSE:
        raise SystemExit('unknown fault %r (one of %s)' % (typ, ', '.join(CAUSE)))
    f = {'type': typ, 'onset': 0, 'factor': 1.5, 'ramp': 10, 'period': 4, 'duty': 0.25,
         'stall_ms': 20.0, 'extra_ms': 8.0, 'n': 3, 'prob': 0.02, 'ranks': None, 'num': None}
    for kv in filter(None, rest.split(',')):
        k, _, v = kv.partition('=')
        if k not in f:
            raise SystemExit('fault %s: unknown parameter %r' % (typ, k))
        if k == 'ranks':
            f[k] = [int(x) for x in v.split('/') if x != '']
        elif k in ('onset', 'ramp', 'period', 'n', 'num'):
            f[k] = int(v)
        else:
            f[k] = float(v)
    return f


class Faults:
    def __init__(self, specs, world, steps, seed):
        rng = random.Random(seed * 31 + 7)
        self.list = []
        for spec in specs:
            f = parse_fault(spec)
            if f['type'] == 'none':
                continue
            if f['type'] == 'spikes':
                f['ranks'] = []
                f['spike_set'] = sorted((s, r) for s in range(f['onset'], steps) for r in range(world)
                                        if rng.random() < f['prob'])
            else:
                if f['ranks'] is None:
                    f['ranks'] = sorted(rng.sample(range(world), f['num'] or 1))
                bad = [r for r in f['ranks'] if not 0 <= r < world]
                if bad:
                    raise SystemExit('fault %s: rank(s) %s outside 0..%d' % (f['type'], bad, world - 1))
            self.list.append(f)
        self.spikes = {}
        for f in self.list:
            for s, r in f.get('spike_set', []):
                self.spikes[(r, s)] = self.spikes.get((r, s), 1.0) * f['factor']

    @staticmethod
    def intermittent_on(f, step):
        on = int(round(f['duty'] * f['period']))
        return (step - f['onset']) % f['period'] < on

    def compute_factor(self, r, s):
        x = self.spikes.get((r, s), 1.0)
        for f in self.list:
            if s < f['onset'] or r not in f['ranks']:
                continue
            if f['type'] == 'slow_gpu':
                x *= f['factor']
            elif f['type'] == 'ramp':
                x *= 1.0 + (f['factor'] - 1.0) * min(1.0, (s - f['onset'] + 1) / max(1, f['ramp']))
            elif f['type'] == 'intermittent' and self.intermittent_on(f, s):
                x *= f['factor']
        return x

    def host_stall_us(self, r, s):
        return sum(f['stall_ms'] * 1e3 for f in self.list
                   if f['type'] == 'host_stall' and s >= f['onset'] and r in f['ranks'])

    def extra_work(self, r, s):
        for f in self.list:
            if f['type'] == 'extra_work' and s >= f['onset'] and r in f['ranks']:
                return f['n'], f['extra_ms'] * 1e3
        return 0, 0.0

    def link_factor(self, s):
        x = 1.0
        for f in self.list:
            if f['type'] == 'slow_link' and s >= f['onset']:
                x = max(x, f['factor'])
        return x


# ---------------------------------------------------------------------------------------------------
# Event formatting (hand-built strings in the fixture's key order: ph, cat, name, pid, tid, ts, dur, args)

def fx(cat, jname, pid, tid, ts, dur, args):
    return ('{"ph": "X", "cat": "%s", "name": %s, "pid": %d, "tid": %d, "ts": %.3f, "dur": %.3f, '
            '"args": {%s}}' % (cat, jname, pid, tid, ts, dur, args))


def flow(ph, cat, fid, pid, tid, ts):
    if ph == 'f':
        return ('{"ph": "f", "id": %d, "pid": %d, "tid": %d, "ts": %.3f, "cat": "%s", "name": "%s", '
                '"bp": "e"}' % (fid, pid, tid, ts, cat, cat))
    return ('{"ph": "s", "id": %d, "pid": %d, "tid": %d, "ts": %.3f, "cat": "%s", "name": "%s"}'
            % (fid, pid, tid, ts, cat, cat))


CBID = {'cudaLaunchKernel': 211, 'cudaMemcpyAsync': 41, 'cudaMemsetAsync': 51, 'cudaStreamSynchronize': 131,
        'cudaEventRecord': 135, 'cudaStreamWaitEvent': 147, 'cudaEventRecordWithFlags': 370,
        'cuLaunchKernelEx': 652, 'cudaStreamIsCapturing': 317, 'cudaDeviceSynchronize': 165,
        'cudaEventQuery': 138}
J = json.dumps
COMPUTE_STREAM, NCCL_STREAM = 7, 17


# ---------------------------------------------------------------------------------------------------
# The simulation of one rank (a generator: it yields a collective index k when it needs that
# collective's end time, and is sent the end time back)

class Rank:
    def __init__(self, sim, r):
        self.sim, self.r = sim, r
        a = sim.args
        self.rng = random.Random(a.seed * 1000003 + r * 7919 + 1)
        self.gpu_const = math.exp(self.rng.gauss(0.0, a.gpu_noise))
        self.offset = 0.0 if a.clock_skew_us <= 0 else self.rng.gauss(0.0, a.clock_skew_us)
        self.ts0 = sim.ts0 + self.offset
        self.cpu_pid = 1000 + 73 * r
        self.main_tid = self.cpu_pid
        self.bwd_tid = self.cpu_pid + 21
        self.dev = r % a.gpus_per_node
        self.h = 0.0                       # host clock (true time, µs since the job's t0)
        self.comp_free = 0.0               # compute stream free at
        self.nccl_last = None              # index of the last NCCL collective launched
        self.nccl_iv = []                  # [start, end|None, k] of NCCL kernels, for interference
        self.my_end = {}                   # k -> this rank's end of collective k
        self.pending_nccl = []             # NCCL kernel events waiting for their end time
        self.queue = []                    # ends (float or ('n', k)) of launched GPU ops, launch order
        self.qhead = 0
        self.corr = 100 + r % 7
        self.ext = 1
        self.evidx = 0
        self.flow_id = 1
        self.buf = []
        self.step_factor = 1.0
        self.kfactor = 1.0
        self.stats = []                    # per step dict
        self.cur = None

    # -- helpers ---------------------------------------------------------------------------------
    def t(self, x):
        return self.ts0 + x

    def noise(self, sigma):
        return math.exp(self.rng.gauss(0.0, sigma)) if sigma > 0 else 1.0

    def hcost(self, us):
        return us * self.sim.args.host_scale * self.noise(0.12)

    def next_corr(self):
        self.corr += 1 + (self.rng.random() < 0.3) * self.rng.randint(1, 4)
        return self.corr

    def next_ext(self):
        self.ext += 1
        return self.ext

    def need_end(self, k):
        e = self.my_end.get(k)
        if e is None:
            E = yield k
            e = E + self.rng.uniform(0.0, self.sim.args.nccl_end_jitter_us)
            self.my_end[k] = e
        return e

    def cpu_op(self, tid, name, start, ext, cat='cpu_op', extra=''):
        a = '"External id": %d, "Record function id": 0%s, "Ev Idx": %d' % (ext, extra, self.evidx)
        self.evidx += 1
        self.buf.append(fx(cat, J(name), self.cpu_pid, tid, self.t(start), self.h - start, a))

    def runtime(self, tid, name, ext, dur, cat='cuda_runtime', flow_f=False):
        c = self.next_corr()
        ts = self.h
        self.buf.append(fx(cat, J(name), self.cpu_pid, tid, self.t(ts), dur,
                           '"External id": %d, "cbid": %d, "correlation": %d' % (ext, CBID[name], c)))
        if flow_f:
            self.buf.append(flow('f', 'ac2g', c, self.cpu_pid, tid, self.t(ts)))
        self.h += dur
        return c, ts

    # -- the GPU side ----------------------------------------------------------------------------
    def queue_wait(self):
        """Host blocks in a launch while --queue-depth ops are outstanding; returns the wait."""
        depth = self.sim.args.queue_depth
        if len(self.queue) - self.qhead < depth:
            return 0.0
        x = self.queue[self.qhead]
        self.qhead += 1
        if self.qhead > 4096:
            del self.queue[:self.qhead]
            self.qhead = 0
        if isinstance(x, tuple):
            x = yield from self.need_end(x[1])
        return max(0.0, x - self.h)

    def launch(self, tid, ext, key, dur_us, rt='cudaLaunchKernel', after=0.0, nbytes=None, kind='kernel',
               gname=None):
        """Launches a compute-stream op; returns (start, end) of the GPU op."""
        wait = yield from self.queue_wait()
        ldur = self.hcost(4.5) + wait
        c, lt = self.runtime(tid, rt, ext, ldur)
        ready = lt + wait + 0.5 * (ldur - wait)
        start = max(ready, self.comp_free, after)
        if ready > self.comp_free and ready >= after and self.comp_free > 0:
            self.cur['host_idle'] += ready - self.comp_free      # the queue had drained: GPU idle
        dur = dur_us * self.noise(self.sim.args.kernel_noise) * self.step_factor
        if kind == 'kernel':
            dur *= self.kfactor
            # interference with NCCL kernels overlapping [start, start + dur)
            extra = 0.0
            for iv in self.nccl_iv:
                if iv[0] >= start + dur:
                    continue
                if iv[1] is None:
                    iv[1] = yield from self.need_end(iv[2])
                ov = min(start + dur, iv[1]) - max(start, iv[0])
                if ov > 0:
                    extra += ov * self.sim.args.interference
            dur += extra
            self.cur['comp_intr'] += dur - extra
            self.nccl_iv = [iv for iv in self.nccl_iv if iv[1] is None or iv[1] > start]
        end = start + dur
        self.comp_free = end
        self.queue.append(end)
        tpl = self.sim.tpl[key]
        name = gname or tpl['jname']
        if kind == 'kernel':
            args = ('"External id": %d, "queued": 0, "device": %d, "context": 1, "stream": %d, '
                    '"correlation": %d, %s' % (ext, self.dev, COMPUTE_STREAM, c, tpl['static']))
        else:
            args = ('"External id": %d, "device": %d, "context": 1, "stream": %d, "correlation": %d, '
                    '"bytes": %d, "memory bandwidth (GB/s)": %s'
                    % (ext, self.dev, COMPUTE_STREAM, c, nbytes, repr(nbytes / (dur * 1e3))))
        self.buf.append(fx(kind, name, self.dev, COMPUTE_STREAM, self.t(start), dur, args))
        self.buf.append(flow('s', 'ac2g', c, self.cpu_pid, tid, self.t(lt)))
        self.buf.append(flow('f', 'ac2g', c, self.dev, COMPUTE_STREAM, self.t(start)))
        cur = self.cur
        cur['comp'] += dur
        if kind != 'kernel':
            cur['comp_intr'] += dur
        if cur['gpu_first'] is None:
            cur['gpu_first'] = start
        cur['gpu_last'] = end
        cur['kernels'].append((start, end))
        return start, end

    def op(self, tid, name, key, dur_us, pre=8.0, post=3.0, kind='kernel', nbytes=None, after=0.0,
           memset=False, extra=''):
        """A cpu_op that launches one GPU op (optionally preceded by a memset)."""
        s = self.h
        ext = self.next_ext()
        self.h += self.hcost(pre)
        if memset:
            yield from self.launch(tid, ext, 'memset', self.sim.tpl['memset']['base_us'],
                                   rt='cudaMemsetAsync', kind='gpu_memset', nbytes=256)
            self.h += self.hcost(3)
        rt = 'cudaMemcpyAsync' if kind == 'gpu_memcpy' else 'cudaLaunchKernel'
        se = yield from self.launch(tid, ext, key, dur_us, rt=rt, kind=kind, nbytes=nbytes, after=after)
        self.h += self.hcost(post)
        self.cpu_op(tid, name, s, ext, extra=extra)
        return se

    # -- NCCL ------------------------------------------------------------------------------------
    def allreduce(self, tid, step, b):
        sim, a = self.sim, self.sim.args
        k = step * len(sim.buckets) + b
        nel = sim.buckets[b]['nelems']
        s0 = self.h
        ext_c = self.next_ext()
        self.h += self.hcost(25)
        s1 = self.h
        ext = self.next_ext()
        self.h += self.hcost(2)
        self.runtime(tid, 'cudaStreamIsCapturing', ext, self.hcost(0.5), flow_f=True)
        self.runtime(tid, 'cudaEventRecordWithFlags', ext, self.hcost(1.5), flow_f=True)
        ev_ready = self.comp_free            # the event captures all compute work launched so far
        self.runtime(tid, 'cudaStreamWaitEvent', ext, self.hcost(3), flow_f=True)
        ua_s = self.h
        ua_ext = self.next_ext()
        self.h += self.hcost(30)
        wait = yield from self.queue_wait()
        ldur = self.hcost(10) + wait
        c, lt = self.runtime(tid, 'cuLaunchKernelEx', ext, ldur, cat='cuda_driver')
        self.buf.append(flow('s', 'ac2g', c, self.cpu_pid, tid, self.t(lt)))
        self.h += self.hcost(15)
        # user_annotation nccl:all_reduce
        ann = '"External id": %d, "Record function id": 0, "Ev Idx": %d' % (ua_ext, self.evidx)
        self.evidx += 1
        self.buf.append(fx('user_annotation', '"nccl:all_reduce"', self.cpu_pid, tid, self.t(ua_s),
                           self.h - ua_s, ann))
        self.runtime(tid, 'cudaEventRecord', ext, self.hcost(1), flow_f=True)
        ready = lt + wait + 0.5 * (ldur - wait)
        prev = 0.0
        if self.nccl_last is not None:
            prev = yield from self.need_end(self.nccl_last)
        start = max(ready, ev_ready, prev)
        sim.register_start(k, self.r, start)
        self.nccl_last = k
        self.nccl_iv.append([start, None, k])
        self.queue.append(('n', k))
        self.pending_nccl.append((k, start, c, ext, ua_ext, nel))
        pg = sim.pg_args
        seq = ', "Seq": %d' % (k + 1) if a.nccl_seq else ''
        self.h += self.hcost(4)
        self.cpu_op(tid, 'record_param_comms', s1, ext,
                    extra=', "Process Group Name": "0", "Global rank stride": 1, "Out msg nelems": %d, '
                          '"Process Group Ranks": %s, "Group size": %d, "Global rank start": 0%s, '
                          '"In msg nelems": %d, "Rank": %d, "In split size": "[]", "Out split size": "[]", '
                          '"dtype": "Float", "Collective name": "allreduce", "Process Group Description": '
                          '"default_pg"' % (nel, J(pg), sim.world, seq, nel, self.r))
        self.h += self.hcost(5)
        self.cpu_op(tid, 'c10d::allreduce_', s0, ext_c)
        return k

    def emit_nccl(self, item):
        k, start, c, ext, ua_ext, nel = item
        end = yield from self.need_end(k)
        sim = self.sim
        dur = end - start
        tpl = sim.tpl['nccl_allreduce']
        seq = ', "Seq": %d' % (k + 1) if sim.args.nccl_seq else ''
        args = ('"External id": %d, "queued": 0, "device": %d, "context": 1, "stream": %d, "correlation": %d, '
                '%s, "Collective name": "allreduce", "In msg nelems": %d, "Out msg nelems": %d, '
                '"Group size": %d, "dtype": "Float", "In split size": "[]", "Out split size": "[]", '
                '"Process Group Name": "0", "Process Group Description": "default_pg", '
                '"Process Group Ranks": %s%s'
                % (ext, self.dev, NCCL_STREAM, c, tpl['static'], nel, nel, sim.world, J(sim.pg_args), seq))
        self.buf.append(fx('kernel', tpl['jname'], self.dev, NCCL_STREAM, self.t(start), dur, args))
        self.buf.append(fx('gpu_user_annotation', '"nccl:all_reduce"', self.dev, NCCL_STREAM, self.t(start),
                           dur, '"External id": %d' % ua_ext))
        self.buf.append(flow('f', 'ac2g', c, self.dev, NCCL_STREAM, self.t(start)))
        st = self.stats[sim.step_of(k)]
        st['nccl'].append((k, start, end))

    # -- one training step ------------------------------------------------------------------------
    def step(self, s):
        sim, a, tpl = self.sim, self.sim.args, self.sim.tpl
        F = sim.faults
        self.step_factor = self.noise(a.step_noise) * self.gpu_const
        self.kfactor = F.compute_factor(self.r, s)
        cur = self.cur = {'step': s, 'comp': 0.0, 'comp_intr': 0.0, 'host_idle': 0.0, 'gpu_first': None, 'gpu_last': None,
                          'kernels': [], 'nccl': [], 'host_start': self.h, 'stall': 0.0, 'sync_wait': 0.0}
        self.stats.append(cur)
        M, W = self.main_tid, self.bwd_tid
        hs = sim.h_scale          # activation-sized ops scale with width
        ps = sim.p_scale          # parameter-sized ops scale with width^2
        step_start = self.h
        pstep_ext = self.next_ext()
        pstep_idx = self.evidx
        self.evidx += 1
        # data loading (and an injected host stall)
        stall = F.host_stall_us(self.r, s)
        ds = self.h
        dext = self.next_ext()
        self.h += self.hcost(60) + stall
        cur['stall'] = stall
        self.cpu_op(M, 'enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__', ds, dext,
                    cat='user_annotation')
        zs = self.h
        zext = self.next_ext()
        self.h += self.hcost(20)
        self.cpu_op(M, 'Optimizer.zero_grad#SGD.zero_grad', zs, zext, cat='user_annotation')
        # forward
        fs = self.h
        fext = self.next_ext()
        self.h += self.hcost(15)
        fwd_first = None
        fwd_flow = []
        for l in range(a.layers):
            ls = self.h
            lext = self.next_ext()
            self.h += self.hcost(10)
            fwd_flow.append((self.flow_id, self.h))
            self.buf.append(flow('s', 'fwdbwd', self.flow_id, self.cpu_pid, M, self.t(self.h)))
            self.flow_id += 1
            st, _ = yield from self.op(M, 'aten::addmm', 'fwd_gemm', tpl['fwd_gemm']['base_us'] * ps, pre=20)
            fwd_first = st if fwd_first is None else fwd_first
            self.h += self.hcost(3)
            self.cpu_op(M, 'aten::linear', ls, lext)
            _, fwd_last = yield from self.op(M, 'aten::gelu', 'gelu', tpl['gelu']['base_us'] * hs, pre=10)
        nx, xus = F.extra_work(self.r, s)
        for i in range(nx):
            _, fwd_last = yield from self.op(M, 'aten::mm', 'fwd_gemm', xus / nx, pre=25)
        self.h += self.hcost(10)
        self.cpu_op(M, 'DistributedDataParallel.forward', fs, fext, cat='user_annotation')
        gpu_ann = [('DistributedDataParallel.forward', fext, fwd_first, fwd_last)]
        # loss
        yield from self.op(M, 'aten::sub', 'sub', tpl['sub']['base_us'] * hs, pre=15)
        yield from self.op(M, 'aten::pow', 'pow', tpl['pow']['base_us'] * hs, pre=25)
        yield from self.op(M, 'aten::mean', 'mean_red', tpl['mean_red']['base_us'] * hs, pre=30, memset=True)
        yield from self.op(M, 'aten::fill_', 'fill', tpl['fill']['base_us'], pre=20)
        # backward, on the autograd thread
        self.h += self.hcost(40)
        bs = self.h
        yield from self.bwd_fn('MeanBackward0', [('aten::mul', 'mul_scalar', tpl['mul_scalar']['base_us'] * hs,
                                                   'kernel', None),
                                                  ('aten::copy_', 'memcpy_dtod', 1.3 + sim.act_bytes /
                                                   (tpl['memcpy_dtod']['gbps'] * 1e3), 'gpu_memcpy',
                                                   sim.act_bytes)])
        yield from self.bwd_fn('PowBackward0', [('aten::mul', 'aunary', tpl['aunary']['by_size']['act'] * hs,
                                                  'kernel', None),
                                                 ('aten::mul', 'binary', tpl['binary']['base_us'] * hs,
                                                  'kernel', None)])
        yield from self.bwd_fn('SubBackward0', [])
        launched = []
        for l in reversed(range(a.layers)):
            yield from self.bwd_fn('GeluBackward0', [('aten::gelu_backward', 'gelu_bwd',
                                                      tpl['gelu_bwd']['base_us'] * hs, 'kernel', None)])
            fid = fwd_flow[l][0]
            self.buf.append(flow('f', 'fwdbwd', fid, self.cpu_pid, W, self.t(self.h)))
            ops = []
            if l > 0:
                ops.append(('aten::mm', 'dgrad_gemm', tpl['dgrad_gemm']['base_us'] * ps, 'kernel', None))
            ops.append(('aten::mm', 'wgrad_gemm', tpl['wgrad_gemm']['base_us'] * ps, 'kernel', None))
            ops.append(('aten::sum', 'bias_red', tpl['bias_red']['base_us'] * hs, 'memset', None))
            yield from self.bwd_fn('AddmmBackward0', ops)
            yield from self.bwd_fn('torch::autograd::AccumulateGrad',
                                   [('aten::mul', 'aunary', tpl['aunary']['by_size']['small'], 'kernel', None)])
            yield from self.bwd_fn('TBackward0', [])
            b = sim.bucket_of_layer[l]
            tail = None
            if sim.buckets[b]['layers'][-1] == l and a.bucket_mode == 'interleaved':
                # the bucket's last gradient is ready: DDP's hook launches its AllReduce from inside
                # the AccumulateGrad function (as in the fixture)
                tail = (W, s, b, launched)
            yield from self.bwd_fn('torch::autograd::AccumulateGrad',
                                   [('aten::mul', 'aunary', tpl['aunary']['by_size']['big'] * ps, 'kernel', None)],
                                   tail)
        if a.bucket_mode == 'after':
            for b in range(len(sim.buckets)):
                launched.append((b, (yield from self.allreduce(W, s, b))))
        # DDP finalize: copy each bucket back to the grads once its allreduce is done
        for b, k in launched:
            end = yield from self.need_end(k)
            for nb in (sim.buckets[b]['bias_bytes'], sim.buckets[b]['weight_bytes']):
                bb = self.h
                ext = self.next_ext()
                self.h += self.hcost(4)
                self.runtime(W, 'cudaStreamWaitEvent', ext, self.hcost(1.5), flow_f=True)
                yield from self.op(W, 'aten::copy_', 'memcpy_dtod', 1.3 + nb / (tpl['memcpy_dtod']['gbps'] * 1e3),
                                   kind='gpu_memcpy', nbytes=nb, after=end)
                self.cpu_op(W, 'torch.distributed.ddp.reducer::copy_bucket_to_grad', bb, ext)
        # flush NCCL kernel events of this step
        while self.pending_nccl:
            yield from self.emit_nccl(self.pending_nccl.pop(0))
        self.h += self.hcost(30)
        # optimizer
        os_ = self.h
        oext = self.next_ext()
        self.h += self.hcost(40)
        fa = self.h
        faext = self.next_ext()
        self.h += self.hcost(20)
        ofirst = olast = None
        for i in range(sim.n_sgd):
            st, olast = yield from self.launch(M, faext, 'sgd', tpl['sgd']['base_us'] * max(0.08, sim.sgd_share[i]))
            ofirst = st if ofirst is None else ofirst
            self.h += self.hcost(3)
        self.cpu_op(M, 'aten::_foreach_add_', fa, faext)
        self.h += self.hcost(20)
        self.cpu_op(M, 'Optimizer.step#SGD.step', os_, oext, cat='user_annotation')
        gpu_ann.append(('Optimizer.step#SGD.step', oext, ofirst, olast))
        # per-step sync: loss.item()
        if a.sync == 'step':
            is_ = self.h
            iext = self.next_ext()
            self.h += self.hcost(8)
            ls_ = self.h
            lext = self.next_ext()
            self.h += self.hcost(4)
            _, mend = yield from self.launch(M, lext, 'memcpy_dtod', 1.5, rt='cudaMemcpyAsync', kind='gpu_memcpy',
                                             nbytes=4, gname='"Memcpy DtoH (Device -> Pageable)"')
            w = max(0.0, mend - self.h) + self.hcost(3)
            cur['sync_wait'] = w
            self.runtime(M, 'cudaStreamSynchronize', lext, w, flow_f=True)
            self.h += self.hcost(3)
            self.cpu_op(M, 'aten::_local_scalar_dense', ls_, lext)
            self.h += self.hcost(3)
            self.cpu_op(M, 'aten::item', is_, iext)
        self.h += self.hcost(30)
        if not a.no_step_markers:
            name = 'ProfilerStep#%d' % (s + a.first_step)
            self.buf.append(fx('user_annotation', J(name), self.cpu_pid, M, self.t(step_start),
                               self.h - step_start,
                               '"External id": %d, "Record function id": 0, "Ev Idx": %d' % (pstep_ext, pstep_idx)))
            gpu_ann.append((name, pstep_ext, cur['gpu_first'], cur['gpu_last']))
        for name, ext, g0, g1 in gpu_ann:
            if g0 is not None:
                self.buf.append(fx('gpu_user_annotation', J(name), self.dev, COMPUTE_STREAM, self.t(g0), g1 - g0,
                                   '"External id": %d' % ext))
        cur['host_end'] = self.h
        del cur['kernels']

    def bwd_fn(self, fn, ops, allreduce=None):
        """autograd::engine::evaluate_function: fn > fn > (aten op > launch)*"""
        W = self.bwd_tid
        s0 = self.h
        e0 = self.next_ext()
        seqno = ', "Sequence number": %d, "Fwd thread id": 1' % (100 + self.evidx % 50) \
            if not fn.startswith('torch::') else ''
        self.h += self.hcost(4)
        s1 = self.h
        e1 = self.next_ext()
        self.h += self.hcost(3)
        for name, key, dur, kind, nb in ops:
            if kind == 'memset':
                yield from self.op(W, name, key, dur, pre=12, memset=True)
            else:
                yield from self.op(W, name, key, dur, pre=8 if kind == 'kernel' else 6,
                                   kind=kind, nbytes=nb)
        self.h += self.hcost(3)
        self.cpu_op(W, fn, s1, e1, extra=seqno)
        if allreduce is not None:
            tid, step, b, launched = allreduce
            self.h += self.hcost(6)
            launched.append((b, (yield from self.allreduce(tid, step, b))))
        self.h += self.hcost(3)
        self.cpu_op(W, 'autograd::engine::evaluate_function: ' + fn, s0, e0, extra=seqno)

    def run(self):
        a = self.sim.args
        for s in range(a.steps):
            yield from self.step(s)
            self.sim.write(self, self.buf)
            self.buf = []
        # end of profiling: the host waits for the GPU
        last = self.comp_free
        if self.nccl_last is not None:
            last = max(last, (yield from self.need_end(self.nccl_last)))
        ext = self.next_ext()
        w = max(0.0, last - self.h) + 5.0
        self.runtime(self.main_tid, 'cudaDeviceSynchronize', ext, w, flow_f=True)
        self.end_time = self.h
        self.sim.write(self, self.buf)
        self.buf = []


# ---------------------------------------------------------------------------------------------------
# The job

class Sim:
    def __init__(self, args):
        self.args = a = args
        self.tpl, self.meta = load_templates(a.fixture)
        self.world = a.ranks
        self.ts0 = a.ts0 if a.ts0 is not None else self.meta['ts0']
        w = a.hidden / 8192.0
        self.h_scale, self.p_scale = w, w * w
        H = a.hidden
        self.act_bytes = 1024 * H * 4
        # DDP buckets: parameters in reverse order, a bucket closes once it reaches the cap
        cap = a.bucket_cap_mb * 1024 * 1024
        self.buckets, cur = [], None
        for l in reversed(range(a.layers)):
            if cur is None:
                cur = {'layers': [], 'nelems': 0, 'weight_bytes': 0, 'bias_bytes': 0}
            cur['layers'].append(l)
            cur['nelems'] += H * H + H
            cur['weight_bytes'] += H * H * 4
            cur['bias_bytes'] += H * 4
            if cur['nelems'] * 4 >= cap:
                self.buckets.append(cur)
                cur = None
        if cur is not None:
            self.buckets.append(cur)
        self.bucket_of_layer = {}
        for i, b in enumerate(self.buckets):
            b['bytes'] = b['nelems'] * 4
            for l in b['layers']:
                self.bucket_of_layer[l] = i
        # SGD: torch._foreach_add_ in ~21M-element chunks (the fixture: 13 kernels for 4 x 67M params,
        # the last one ~0.78 of the others)
        P = a.layers * (H * H + H)
        chunk = 21.0e6
        self.n_sgd = max(1, int(math.ceil(P / chunk)))
        self.sgd_share = [min(1.0, (P - i * chunk) / chunk) for i in range(self.n_sgd)]
        self.pg_args = '[' + ', '.join(str(i) for i in range(self.world)) + ']'
        self.faults = Faults(a.fault or [], self.world, a.steps, a.seed)
        self.starts = {}
        self.ends = {}
        self.coll_log = []
        self.files = {}
        self.bytes_written = 0

    def step_of(self, k):
        return k // len(self.buckets)

    def register_start(self, k, r, t):
        self.starts.setdefault(k, {})[r] = t

    def transfer_us(self, k):
        a = self.args
        b = self.buckets[k % len(self.buckets)]
        n = self.world
        rng = random.Random(a.seed * 7919 + k * 104729 + 17)
        bw = a.busbw_gbps * 1e3 / self.faults.link_factor(self.step_of(k))  # bytes per µs
        algo = 2.0 * (n - 1) / n * b['bytes'] / bw
        lat = a.nccl_latency_us * (1 + math.log2(max(2, n)) / 4)
        return (algo + lat) * math.exp(rng.gauss(0.0, a.nccl_noise))

    def resolve(self, k):
        e = self.ends.get(k)
        if e is not None:
            return e
        st = self.starts.get(k)
        if st is None or len(st) < self.world:
            return None
        last = max(st.values())
        xfer = self.transfer_us(k)
        e = self.ends[k] = last + xfer
        last_r = max(st, key=st.get)
        self.coll_log.append((k, last_r, last, xfer))
        del self.starts[k]
        return e

    # -- output ----------------------------------------------------------------------------------
    def path(self, r):
        ext = '.json' if self.args.plain else '.json.gz'
        return os.path.join(self.args.outdir, '%s_rank%d%s' % (self.args.name, r, ext))

    def open(self, rank):
        a, m = self.args, self.meta
        p = self.path(rank.r)
        f = open(p, 'wt') if a.plain else gzip.open(p, 'wt', compresslevel=a.compresslevel)
        head = ['"schemaVersion": %s' % J(m['schemaVersion'] or 1),
                '"deviceProperties": %s' % J(m['deviceProperties'] or [])]
        head.append('"trace_id": "%032X"' % random.Random(a.seed * 13 + rank.r).getrandbits(128))
        if not a.no_distributed_info:
            head.append('"distributedInfo": %s' % J({
                'backend': 'nccl', 'rank': rank.r, 'world_size': self.world, 'pg_count': 1,
                'pg_config': [{'pg_name': '0', 'pg_desc': 'default_pg', 'backend_config': 'cuda:nccl',
                               'pg_size': self.world, 'ranks': list(range(self.world))}],
                'nccl_version': m['nccl_version']}))
        for k in ('cuda_driver_version', 'cuda_runtime_version', 'cupti_version', 'displayTimeUnit'):
            if m.get(k) is not None:
                head.append('%s: %s' % (J(k), J(m[k])))
        head.append('"baseTimeNanoseconds": %d' % (m['baseTimeNanoseconds'] or 1790857026000000000))
        f.write('{\n  ' + ',\n  '.join(head) + ',\n  "traceEvents": [\n')
        self.files[rank.r] = [f, True]
        return f

    def write(self, rank, events):
        if not events:
            return
        ent = self.files.get(rank.r)
        if ent is None:
            self.open(rank)
            ent = self.files[rank.r]
        f, first = ent
        s = ('' if first else ',\n') + ',\n'.join(events)
        ent[1] = False
        f.write(s)
        self.bytes_written += len(s)

    def close(self, rank):
        f, first = self.files.pop(rank.r)
        t0 = rank.ts0
        ev = []
        mts = t0 + 70.0
        pid = rank.cpu_pid
        for (p, t, nm, a) in ([(pid, 0, 'process_name', {'name': 'python'}),
                               (pid, 0, 'process_labels', {'labels': 'CPU'}),
                               (pid, 0, 'process_sort_index', {'sort_index': pid})] +
                              sum([[(g, 0, 'process_name', {'name': 'python'}),
                                    (g, 0, 'process_labels', {'labels': 'GPU %d' % g}),
                                    (g, 0, 'process_sort_index', {'sort_index': 5000000 + g})]
                                   for g in range(self.args.gpus_per_node)], []) +
                              [(rank.dev, COMPUTE_STREAM, 'thread_name', {'name': 'stream %d ' % COMPUTE_STREAM}),
                               (rank.dev, COMPUTE_STREAM, 'thread_sort_index', {'sort_index': COMPUTE_STREAM}),
                               (rank.dev, NCCL_STREAM, 'thread_name', {'name': 'stream %d ' % NCCL_STREAM}),
                               (rank.dev, NCCL_STREAM, 'thread_sort_index', {'sort_index': NCCL_STREAM}),
                               (pid, rank.bwd_tid, 'thread_name',
                                {'name': 'thread %d (pt_autograd_%d)' % (rank.bwd_tid, rank.dev)}),
                               (pid, rank.bwd_tid, 'thread_sort_index', {'sort_index': rank.bwd_tid}),
                               (pid, pid, 'thread_name', {'name': 'thread %d (python)' % pid}),
                               (pid, pid, 'thread_sort_index', {'sort_index': pid})]):
            ev.append('{"name": "%s", "ph": "M", "ts": %.3f, "pid": %d, "tid": %d, "args": %s}'
                      % (nm, mts, p, t, J(a)))
        ev.append('{"ph": "X", "cat": "overhead", "name": "Activity Buffer Request", "pid": -1, "tid": 0, '
                  '"ts": %.3f, "dur": %.3f}' % (t0 + 300.0, 1750.0))
        ev.append('{"name": "process_sort_index", "ph": "M", "ts": %.3f, "pid": "Spans", "tid": 0, '
                  '"args": {"sort_index": 536870912}}' % t0)
        ev.append('{"ph": "X", "cat": "Trace", "ts": %.3f, "dur": %.3f, "pid": "Spans", "tid": "PyTorch Profiler", '
                  '"name": "PyTorch Profiler (0)", "args": {"Op count": 0}}' % (t0, rank.end_time))
        ev.append('{"name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g", "pid": "Traces", '
                  '"tid": "Trace PyTorch Profiler", "ts": %.3f}' % t0)
        ev.append('{"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": %.3f}'
                  % (t0 + rank.end_time + 1000.0))
        s = ('' if first else ',\n') + ',\n'.join(ev)
        f.write(s + '\n  ],\n  "traceName": %s\n}\n' % J(os.path.abspath(self.path(rank.r))))
        self.bytes_written += len(s)
        f.close()

    # -- driver ----------------------------------------------------------------------------------
    def run(self):
        n = self.world
        self.ranks = [Rank(self, r) for r in range(n)]
        gens = [rk.run() for rk in self.ranks]
        req = [None] * n
        active = set()
        for r in range(n):
            try:
                req[r] = next(gens[r])
                active.add(r)
            except StopIteration:
                self.close(self.ranks[r])
        while active:
            progressed = False
            for r in sorted(active):
                while True:
                    e = self.resolve(req[r])
                    if e is None:
                        break
                    progressed = True
                    try:
                        req[r] = gens[r].send(e)
                    except StopIteration:
                        active.discard(r)
                        self.close(self.ranks[r])
                        break
            if not progressed:
                raise RuntimeError('deadlock: ranks wait for %s' % {r: req[r] for r in active})

    # -- ground truth ----------------------------------------------------------------------------
    def truth(self, elapsed):
        a = self.args
        n, S = self.world, a.steps
        comp = [[st['comp'] for st in rk.stats] for rk in self.ranks]
        intr = [[st['comp_intr'] for st in rk.stats] for rk in self.ranks]
        medi = [statistics.median(intr[r][s] for r in range(n)) for s in range(S)]
        idle = [[st['host_idle'] for st in rk.stats] for rk in self.ranks]
        med = [statistics.median(comp[r][s] for r in range(n)) for s in range(S)]
        medeff = [statistics.median(comp[r][s] + idle[r][s] for r in range(n)) for s in range(S)]

        def rank_slowdown(r, steps, eff=False, intrinsic=False):
            if not steps:
                return None
            if intrinsic:
                return statistics.median(intr[r][s] / medi[s] for s in steps)
            if eff:
                return statistics.median((comp[r][s] + idle[r][s]) / medeff[s] for s in steps)
            return statistics.median(comp[r][s] / med[s] for s in steps)

        # job step time from rank 0's GPU (first compute kernel of a step to the next one's)
        gf = [st['gpu_first'] for st in self.ranks[0].stats]
        step_ms = [(gf[s + 1] - gf[s]) / 1e3 for s in range(S - 1)]
        faults = []
        for f in self.faults.list:
            typ = f['type']
            d = {'type': typ, 'params': {k: v for k, v in f.items() if k not in ('spike_set', 'type')},
                 'expected_cause': CAUSE[typ], 'slow_ranks': f['ranks'], 'onset_step': f['onset'],
                 'straggler_expected': typ != 'spikes', 'intermittent': typ in ('intermittent', 'spikes')}
            steps = list(range(min(f['onset'], S), S))
            if typ == 'intermittent':
                d['duty_fraction'] = int(round(f['duty'] * f['period'])) / f['period']
                d['slow_steps'] = [s for s in steps if Faults.intermittent_on(f, s)]
                steps_m = d['slow_steps']
            elif typ == 'spikes':
                d['spikes'] = [{'step': s, 'rank': r} for s, r in f['spike_set']]
                d['duty_fraction'] = f['prob']
                steps_m = []
            else:
                steps_m = steps
            if f['onset'] < S:
                d['onset_gpu_ts_us'] = {str(r): round(self.ranks[r].ts0 + self.ranks[r].stats[f['onset']]['gpu_first'], 3)
                                        for r in f['ranks']}
                d['onset_profiler_step'] = f['onset'] + a.first_step
                d['onset_host_ts_us'] = {str(r): round(self.ranks[r].ts0 + self.ranks[r].stats[f['onset']]['host_start'], 3)
                                         for r in f['ranks']}
                d['onset_gpu_ts_us_unskewed'] = {
                    str(r): round(self.ts0 + self.ranks[r].stats[f['onset']]['gpu_first'], 3) for r in f['ranks']}
            if typ == 'spikes':
                d['measured_spike_slowdown'] = [round(comp[r][s] / med[s], 4) for s, r in f['spike_set']]
                d['intrinsic_spike_slowdown'] = [round(intr[r][s] / medi[s], 4) for s, r in f['spike_set']]
            else:
                d['measured_compute_slowdown'] = {str(r): round(rank_slowdown(r, steps_m) or 1.0, 4)
                                                  for r in f['ranks']}
                d['intrinsic_compute_slowdown'] = {str(r): round(rank_slowdown(r, steps_m, intrinsic=True) or 1.0, 4)
                                                   for r in f['ranks']}
                d['measured_effective_slowdown'] = {str(r): round(rank_slowdown(r, steps_m, True) or 1.0, 4)
                                                    for r in f['ranks']}
            if typ == 'host_stall':
                base = [r for r in range(n) if r not in f['ranks']] or [0]
                idle_slow = statistics.median(idle[r][s] for r in f['ranks'] for s in steps) if steps else 0
                idle_base = statistics.median(idle[r][s] for r in base for s in steps) if steps else 0
                d['gpu_idle_from_host_us_median'] = {'slow': round(idle_slow, 1), 'others': round(idle_base, 1)}
                d['stall_hidden_by_queue'] = (idle_slow - idle_base) < 0.2 * f['stall_ms'] * 1e3
                d['straggler_expected'] = not d['stall_hidden_by_queue']
            if typ == 'slow_link':
                d['note'] = ('ring AllReduce: the slow link slows every rank\'s collectives alike; '
                             'no rank arrives late, so the rank is not identifiable from timing alone')
            faults.append(d)
        # last arrivers per collective (who kept the others waiting)
        last_count = [0] * n
        for k, lr, _, _ in self.coll_log:
            last_count[lr] += 1
        per_rank = []
        all_steps = list(range(S))
        for r, rk in enumerate(self.ranks):
            per_rank.append({
                'rank': r, 'clock_offset_us': round(rk.offset, 3), 'gpu_speed_factor': round(rk.gpu_const, 5),
                'compute_ms_median': round(statistics.median(comp[r]) / 1e3, 4),
                'compute_slowdown_median': round(rank_slowdown(r, all_steps), 4),
                'intrinsic_compute_ms_median': round(statistics.median(intr[r]) / 1e3, 4),
                'gpu_idle_from_host_ms_median': round(statistics.median(idle[r]) / 1e3, 4),
                'host_stall_ms_median': round(statistics.median(st['stall'] for st in rk.stats) / 1e3, 4),
                'last_arrivals': last_count[r], 'cpu_pid': rk.cpu_pid, 'device': rk.dev})
        slow = sorted({r for f in self.faults.list if f['type'] != 'spikes' for r in f['ranks']})
        return {
            'generator': 'tests/bench/ddp_tracegen.py', 'argv': sys.argv[1:], 'seed': a.seed,
            'world_size': n, 'steps': S, 'first_step_number': a.first_step, 'layers': a.layers,
            'hidden': a.hidden, 'bucket_mode': a.bucket_mode, 'sync': a.sync,
            'step_markers': not a.no_step_markers, 'distributed_info': not a.no_distributed_info,
            'model': {k: getattr(a, k) for k in (
                'busbw_gbps', 'nccl_latency_us', 'nccl_noise', 'nccl_end_jitter_us', 'interference', 'kernel_noise',
                'gpu_noise', 'step_noise', 'host_scale', 'clock_skew_us', 'queue_depth', 'bucket_cap_mb',
                'gpus_per_node')},
            'buckets': [{'index': i, 'layers': b['layers'], 'nelems': b['nelems'], 'bytes': b['bytes']}
                        for i, b in enumerate(self.buckets)],
            'collectives_per_step': len(self.buckets), 'collectives_total': len(self.coll_log),
            'time_base': {'ts_unit': 'us', 'relative_to': 'baseTimeNanoseconds', 'job_t0_ts_us': self.ts0,
                          'note': 'rank r writes ts = job_t0_ts_us + clock_offset_us[r] + true time'},
            'job_step_ms_median': round(statistics.median(step_ms), 4) if step_ms else None,
            'expected_stragglers': slow,
            'faults': faults, 'ranks': per_rank,
            'files': [os.path.basename(self.path(r)) for r in range(n)],
            'generation': {'seconds': round(elapsed, 2), 'mb_written_uncompressed': round(self.bytes_written / 1e6, 2),
                           'mb_on_disk': round(sum(os.path.getsize(self.path(r)) for r in range(n)) / 1e6, 2)},
        }


class Fmt(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    pass


def main(argv=None):
    p = argparse.ArgumentParser(
        description='Write multi-rank PyTorch-profiler (Kineto) traces of a simulated DDP job plus truth.json.',
        formatter_class=Fmt, epilog=__doc__.split('\n\n', 1)[1])
    g = p.add_argument_group('job')
    g.add_argument('-o', '--outdir', required=True, help='output directory (created)')
    g.add_argument('--name', default='ddp', help='file prefix: <name>_rank<R>.json.gz')
    g.add_argument('--ranks', type=int, default=8, help='world size')
    g.add_argument('--steps', type=int, default=40, help='profiled steps')
    g.add_argument('--seed', type=int, default=1, help='everything is deterministic given the seed')
    g.add_argument('--layers', type=int, default=4, help='Linear+GELU layers')
    g.add_argument('--hidden', type=int, default=8192,
                   help='layer width; GEMMs scale with (hidden/8192)^2, activations with hidden/8192')
    g.add_argument('--bucket-cap-mb', type=float, default=25.0, help='DDP bucket cap')
    g.add_argument('--bucket-mode', choices=['interleaved', 'after'], default='interleaved',
                   help='AllReduce each bucket as its grads are ready (interleaved) or all after backward')
    g.add_argument('--sync', choices=['step', 'none'], default='step',
                   help="'step': loss.item() each step (cudaStreamSynchronize); 'none': host runs ahead")
    g.add_argument('--queue-depth', type=int, default=1024,
                   help='outstanding GPU ops before a launch blocks the host')
    g.add_argument('--gpus-per-node', type=int, default=8, help='GPU pid/device = rank modulo this')
    g.add_argument('--first-step', type=int, default=5, help='number of the first ProfilerStep#N')
    g = p.add_argument_group('physics and noise')
    g.add_argument('--busbw-gbps', type=float, default=300.0, help='AllReduce bus bandwidth')
    g.add_argument('--nccl-latency-us', type=float, default=15.0,
                   help='collective latency; x (1 + log2(ranks)/4)')
    g.add_argument('--nccl-noise', type=float, default=0.01, help='lognormal sigma of transfer time')
    g.add_argument('--nccl-end-jitter-us', type=float, default=20.0,
                   help='a collective ends on each rank at the common end + U(0, this): the fixtures show '
                        'ends up to ~20-26 µs apart on one host')
    g.add_argument('--interference', type=float, default=0.25,
                   help='compute kernels are stretched by this x their overlap with NCCL kernels')
    g.add_argument('--kernel-noise', type=float, default=0.01, help='lognormal sigma per kernel')
    g.add_argument('--gpu-noise', type=float, default=0.005, help='lognormal sigma of a constant per-GPU speed')
    g.add_argument('--step-noise', type=float, default=0.005, help='lognormal sigma per rank and step')
    g.add_argument('--host-scale', type=float, default=1.0, help='multiplies all host (CPU) op costs')
    g.add_argument('--clock-skew-us', type=float, default=50.0, help='sigma of per-rank clock offsets (0: none)')
    g = p.add_argument_group('faults')
    g.add_argument('--fault', action='append', metavar='TYPE[:k=v,...]', help='see below; repeatable')
    g = p.add_argument_group('format')
    g.add_argument('--fixture', default=FIXTURE_DEFAULT, help='real trace to take kernel names/durations from')
    g.add_argument('--ts0', type=float, default=None, help='job start ts in µs; None: the fixture\'s first ts')
    g.add_argument('--no-step-markers', action='store_true', help='omit ProfilerStep#N annotations')
    g.add_argument('--no-distributed-info', action='store_true', help='omit distributedInfo')
    g.add_argument('--nccl-seq', action='store_true', help='add a "Seq" arg to NCCL kernels (fixtures lack it)')
    g.add_argument('--plain', action='store_true', help='write plain .json instead of .json.gz')
    g.add_argument('--compresslevel', type=int, default=1, help='gzip level')
    g.add_argument('-q', '--quiet', action='store_true', help='no summary line')
    a = p.parse_args(argv)
    if a.ranks < 2 or a.steps < 2 or a.layers < 1:
        p.error('need --ranks >= 2, --steps >= 2, --layers >= 1')
    os.makedirs(a.outdir, exist_ok=True)
    t0 = time.time()
    sim = Sim(a)
    sim.run()
    el = time.time() - t0
    tr = sim.truth(el)
    with open(os.path.join(a.outdir, 'truth.json'), 'w') as f:
        json.dump(tr, f, indent=1)
    if not a.quiet:
        g = tr['generation']
        print('%d ranks x %d steps -> %s: %.1f MB JSON (%.1f MB on disk) in %.1f s; job step %.2f ms; '
              'expected stragglers %s' % (a.ranks, a.steps, a.outdir, g['mb_written_uncompressed'], g['mb_on_disk'],
                                          el, tr['job_step_ms_median'] or 0, tr['expected_stragglers']))
    return 0


if __name__ == '__main__':
    sys.exit(main())
