#!/usr/bin/env python3
"""ddp_tracegen_check.py — tests the trace generator tests/bench/ddp_tracegen.py itself.

For each setting it generates a small job into a temporary directory (or checks --dir), then
  format:  compares the generated rank-0 trace with a real fixture field by field: top-level keys,
           distributedInfo keys, event kinds (ph, cat), the keys of each kind, the arg-key sets of each
           kind, the NCCL kernel and record_param_comms arg names, the form of timestamps (float µs with
           at most 3 decimals, same magnitude as the fixture's, relative to baseTimeNanoseconds), that
           every (pid, tid) used has thread/process metadata, that every ac2g s/f pair links a launch to
           a GPU op at the op's ts;
  physics: collective instances (k-th NCCL kernel of each rank) end together on all ranks (after
           removing the clock offsets recorded in truth.json); the last arriver's NCCL kernel is the
           shortest; each GPU stream is serial (NCCL stream included); no GPU op starts before its
           launch; with --sync step the host's cudaStreamSynchronize ends after the GPU work; the
           ProfilerStep count; the injected slowdown is what truth.json measured.
Exit status 0 when every check passes.  Standard library only.
"""
import argparse
import collections
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, 'ddp_tracegen.py')
FIXTURE = os.path.join(HERE, '..', 'fixtures', 'kineto-h200x2', 'fixture_baseline_rank0.json.gz')

SETTINGS = [
    ('fixture_like', ['--ranks', '2', '--steps', '20', '--no-step-markers']),
    ('baseline', ['--ranks', '8', '--steps', '12']),
    ('exact_ends', ['--ranks', '8', '--steps', '8', '--nccl-end-jitter-us', '0', '--clock-skew-us', '500']),
    ('slow_gpu_after_plain', ['--ranks', '8', '--steps', '12', '--bucket-mode', 'after', '--plain',
                              '--no-step-markers', '--no-distributed-info', '--fault', 'slow_gpu:ranks=3,factor=1.3,onset=4']),
    ('host_stall_sync', ['--ranks', '4', '--steps', '12', '--fault', 'host_stall:ranks=2,stall_ms=5,onset=3']),
    ('host_stall_runahead', ['--ranks', '4', '--steps', '24', '--sync', 'none',
                             '--fault', 'host_stall:ranks=2,stall_ms=5,onset=3']),
    ('host_stall_runahead_big', ['--ranks', '4', '--steps', '24', '--sync', 'none',
                                 '--fault', 'host_stall:ranks=2,stall_ms=60,onset=3']),
    ('intermittent_spikes_seq', ['--ranks', '8', '--steps', '16', '--nccl-seq', '--fault',
                                 'intermittent:ranks=5,factor=1.5,period=4,duty=0.25,onset=2',
                                 '--fault', 'spikes:prob=0.05,factor=1.4']),
    ('ramp_kslow_small_buckets', ['--ranks', '8', '--steps', '16', '--layers', '8', '--hidden', '2048',
                                  '--fault', 'ramp:num=2,factor=1.4,ramp=8,onset=4']),
    ('slow_link', ['--ranks', '4', '--steps', '10', '--fault', 'slow_link:ranks=1,factor=3,onset=5']),
    ('extra_work_skew', ['--ranks', '4', '--steps', '10', '--clock-skew-us', '2000',
                         '--fault', 'extra_work:ranks=0,extra_ms=8,n=3']),
]


def load(path):
    op = gzip.open if path.endswith('.gz') else open
    with op(path, 'rt') as f:
        return json.load(f)


class Report:
    def __init__(self):
        self.fails = []
        self.lines = []

    def ok(self, cond, what):
        self.lines.append(('ok  ' if cond else 'FAIL') + ' ' + what)
        if not cond:
            self.fails.append(what)
        return cond


def kinds(ev):
    k = collections.defaultdict(lambda: {'keys': set(), 'args': set(), 'n': 0})
    for e in ev:
        d = k[(e.get('ph'), e.get('cat'))]
        d['n'] += 1
        d['keys'].add(tuple(sorted(e.keys())))
        if 'args' in e:
            d['args'].add(frozenset(e['args'].keys()))
    return k


def decimals(x):
    s = repr(x)
    return len(s.split('.')[1]) if '.' in s and 'e' not in s else 0


def nesting_errors(d, eps=0.005):
    by = collections.defaultdict(list)
    for e in d['traceEvents']:
        if e.get('ph') == 'X' and e.get('cat') in ('cpu_op', 'user_annotation', 'cuda_runtime', 'cuda_driver'):
            by[(e['pid'], e['tid'])].append((e['ts'], -e['dur'], e['ts'] + e['dur']))
    bad = 0
    for evs in by.values():
        evs.sort()
        stack = []
        for ts, _, end in evs:
            while stack and stack[-1] <= ts + eps:
                stack.pop()
            if stack and end > stack[-1] + eps:
                bad += 1
            stack.append(end)
    return bad


def check_format(rep, gen, fix, truth):
    gk, fk = set(gen.keys()), set(fix.keys())
    if not truth['distributed_info']:
        fk.discard('distributedInfo')
    rep.ok(gk == fk, 'top-level keys equal the fixture\'s (%d keys; extra %s, missing %s)'
           % (len(gk), sorted(gk - fk), sorted(fk - gk)))
    if truth['distributed_info']:
        di = gen['distributedInfo']
        rep.ok(set(di) == set(fix['distributedInfo']) and
               set(di['pg_config'][0]) == set(fix['distributedInfo']['pg_config'][0]) and
               di['world_size'] == truth['world_size'] and di['rank'] == 0,
               'distributedInfo keys equal, rank 0, world_size %d' % truth['world_size'])
    rep.ok(isinstance(gen['baseTimeNanoseconds'], int), 'baseTimeNanoseconds is an integer')
    G, F = kinds(gen['traceEvents']), kinds(fix['traceEvents'])
    rep.ok(set(G) == set(F), 'event kinds (ph, cat) equal: %d kinds (extra %s, missing %s)'
           % (len(G), sorted(set(G) - set(F), key=str), sorted(set(F) - set(G), key=str)))
    bad = [k for k in G if k in F and not G[k]['keys'] <= F[k]['keys']]
    rep.ok(not bad, 'per kind, event keys are among the fixture\'s key sets (%d kinds compared)%s'
           % (len(set(G) & set(F)), '; differ: %s' % bad if bad else ''))
    seq = {'Seq'}
    bad = []
    for k in G:
        if k not in F:
            continue
        fa = F[k]['args']
        for a in G[k]['args']:
            if a not in fa and (a - seq) not in fa:
                bad.append((k, sorted(a)))
    rep.ok(not bad, 'per kind, every arg-key set is one the fixture has (Seq optional)%s'
           % ('; not in fixture: %s' % bad[:3] if bad else ''))
    def nccl_args(ev):
        return set().union(*[set(e['args']) for e in ev if e.get('cat') == 'kernel' and e['name'].startswith('nccl')])
    def rpc_args(ev):
        return set().union(*[set(e['args']) for e in ev if e.get('name') == 'record_param_comms'])
    ga, fa = nccl_args(gen['traceEvents']), nccl_args(fix['traceEvents'])
    rep.ok(ga - seq == fa, 'NCCL kernel arg names equal the fixture\'s (%d names%s)'
           % (len(fa), ', + Seq' if 'Seq' in ga else ''))
    ga, fa = rpc_args(gen['traceEvents']), rpc_args(fix['traceEvents'])
    rep.ok(ga - seq == fa, 'record_param_comms arg names equal the fixture\'s (%d names)' % len(fa))
    # timestamps
    X = [e for e in gen['traceEvents'] if e.get('ph') in ('X', 'f', 's', 'i', 'M')]
    tsok = all(isinstance(e['ts'], float) and decimals(e['ts']) <= 3 for e in X)
    dok = all(isinstance(e['dur'], float) and decimals(e['dur']) <= 3 and e['dur'] >= 0
              for e in X if e['ph'] == 'X')
    fts = [e['ts'] for e in fix['traceEvents'] if e.get('ph') == 'X']
    gts = [e['ts'] for e in X if e['ph'] == 'X']
    mag = 0.5 < min(gts) / min(fts) < 2
    rep.ok(tsok and dok and mag, 'ts/dur are float µs with <= 3 decimals, dur >= 0, ts of the fixture\'s '
           'magnitude (%.3f vs %.3f)' % (min(gts), min(fts)))
    # metadata for every (pid, tid) used
    named = {(e['pid'], e['tid']) for e in gen['traceEvents'] if e.get('ph') == 'M' and e['name'] == 'thread_name'}
    procs = {e['pid'] for e in gen['traceEvents'] if e.get('ph') == 'M' and e['name'] == 'process_labels'}
    used = {(e['pid'], e['tid']) for e in gen['traceEvents'] if e.get('ph') == 'X' and isinstance(e['pid'], int)
            and e['pid'] >= 0}
    rep.ok(used <= named and {p for p, _ in used} <= procs,
           'every (pid, tid) with events has thread_name and process_labels metadata (%d threads/streams)' % len(used))
    # CPU events on a thread nest (contained or disjoint), as in a real trace
    rep.ok(nesting_errors(gen) == 0, 'CPU events of each thread nest properly (fixture: %d errors, generated: %d)'
           % (nesting_errors(fix), nesting_errors(gen)))
    # flows: s at a launch, f at the GPU op with the op's ts
    gpu = {}
    launch = {}
    for e in gen['traceEvents']:
        if e.get('ph') != 'X' or 'args' not in e:
            continue
        c = e['args'].get('correlation')
        if c is None:
            continue
        if e['cat'] in ('kernel', 'gpu_memcpy', 'gpu_memset'):
            gpu[c] = e
        elif e['cat'] in ('cuda_runtime', 'cuda_driver'):
            launch[c] = e
    fl = collections.defaultdict(dict)
    for e in gen['traceEvents']:
        if e.get('cat') == 'ac2g':
            fl[e['id']][e['ph'] + ('g' if e['pid'] < 100 else 'c')] = e
    pairs = bad = 0
    for i, d in fl.items():
        if 'sc' in d:
            pairs += 1
            g, l = gpu.get(i), launch.get(i)
            if not (g and l and 'fg' in d and d['fg']['ts'] == g['ts'] and d['sc']['ts'] == l['ts']
                    and g['args']['External id'] == l['args']['External id']):
                bad += 1
    rep.ok(pairs == len(gpu) and bad == 0,
           'ac2g flows: %d launch->GPU pairs for %d GPU ops, %d inconsistent' % (pairs, len(gpu), bad))


def check_physics(rep, paths, truth, tol_us):
    n = truth['world_size']
    if 'model' in truth:     # generated: the model's own spread of ends (+ 3 decimals of rounding)
        tol_us = truth['model']['nccl_end_jitter_us'] + 0.01
    off = [r['clock_offset_us'] for r in truth['ranks']]
    nccl = []
    launches_bad = launches = 0
    serial_bad = 0
    sync_bad = sync_n = 0
    psteps = []
    for r, path in enumerate(paths):       # one rank at a time: memory stays small
        ev = load(path)['traceEvents']
        rt = {}
        streams = collections.defaultdict(list)
        for e in ev:
            if e.get('ph') != 'X' or 'args' not in e:
                continue
            c = e['args'].get('correlation')
            if e['cat'] in ('cuda_runtime', 'cuda_driver') and c is not None:
                rt[c] = e
            elif e['cat'] in ('kernel', 'gpu_memcpy', 'gpu_memset'):
                streams[e['tid']].append(e)
        for e in (x for s in streams.values() for x in s):
            launches += 1
            l = rt.get(e['args']['correlation'])
            if l is None or e['ts'] < l['ts']:
                launches_bad += 1
        for tid, s in streams.items():
            s.sort(key=lambda e: e['ts'])
            for a, b in zip(s, s[1:]):
                if b['ts'] < a['ts'] + a['dur'] - 0.005:   # ts ~4.4e12 µs: float64 step ~0.001
                    serial_bad += 1
        k = [e for e in streams[17] if e['name'].startswith('nccl')]
        nccl.append([(e['ts'] - off[r], e['ts'] + e['dur'] - off[r], e['dur']) for e in k])
        # host waits for the GPU at the per-step sync
        dtoh = sorted((e for e in streams[7] if 'DtoH' in e['name']), key=lambda e: e['ts'])
        syn = sorted((e for e in ev if e.get('name') == 'cudaStreamSynchronize'), key=lambda e: e['ts'])
        for m, s in zip(dtoh, syn):
            sync_n += 1
            if s['ts'] + s['dur'] < m['ts'] + m['dur'] - 0.005:
                sync_bad += 1
        psteps.append(sum(1 for e in ev if e.get('cat') == 'user_annotation' and e['name'].startswith('ProfilerStep#')))
    counts = {len(x) for x in nccl}
    rep.ok(len(counts) == 1, 'every rank has the same number of NCCL kernels (%s)' % sorted(counts))
    K = min(counts)
    spread_max = spread_raw = 0.0
    last_short = strict = 0
    wait_ratio = []
    for k in range(K):
        ends = [nccl[r][k][1] for r in range(n)]
        spread_max = max(spread_max, max(ends) - min(ends))
        raw = [nccl[r][k][1] + off[r] for r in range(n)]
        spread_raw = max(spread_raw, max(raw) - min(raw))
        starts = [nccl[r][k][0] for r in range(n)]
        durs = [nccl[r][k][2] for r in range(n)]
        last = max(range(n), key=lambda r: starts[r])
        short = min(range(n), key=lambda r: durs[r])
        if short == last:
            strict += 1
        if short == last or starts[short] >= starts[last] - tol_us:
            last_short += 1
        wait_ratio.append(max(durs) / min(durs))
    rep.ok(spread_max <= tol_us, 'collective instances end together: max end spread over ranks %.2f µs '
           '(tolerance %.2f; %.1f µs before removing the clock offsets) over %d instances x %d ranks'
           % (spread_max, tol_us, spread_raw, K, n))
    rep.ok(last_short == K, 'the last arriver\'s NCCL kernel is the shortest in %d/%d instances (strictly: %d/%d; '
           'else the shortest arrived within %.0f µs of the last); longest/shortest NCCL kernel per instance: '
           'median %.2f, max %.2f' % (last_short, K, strict, K, tol_us, sorted(wait_ratio)[K // 2], max(wait_ratio)))
    rep.ok(serial_bad == 0, 'each GPU stream is serial, NCCL stream included (%d overlaps)' % serial_bad)
    rep.ok(launches_bad == 0, 'no GPU op starts before its launch call (%d ops checked, %d bad)' % (launches, launches_bad))
    if truth['sync'] == 'step':
        rep.ok(sync_n > 0 and sync_bad == 0, 'host cudaStreamSynchronize ends after the step\'s DtoH copy '
               '(%d syncs, %d bad)' % (sync_n, sync_bad))
    want = truth['steps'] if truth['step_markers'] else 0
    rep.ok(all(p == want for p in psteps), 'ProfilerStep#N annotations per rank = %d' % want)
    rep.ok(K == truth['collectives_per_step'] * truth['steps'], 'NCCL kernels per rank = buckets x steps = %d' % K)
    return nccl


def check_truth(rep, nccl, truth):
    n = truth['world_size']
    for f in truth['faults']:
        t = f['type']
        p = f['params']
        if t in ('slow_gpu', 'intermittent'):
            for r, v in f['intrinsic_compute_slowdown'].items():
                m = f['measured_compute_slowdown'][r]
                rep.ok(abs(v - p['factor']) / p['factor'] < 0.03,
                       '%s: compute slowdown of rank %s: intrinsic %.3f (injected %.2f); with NCCL interference, '
                       'as the trace\'s kernel time shows: %.3f' % (t, r, v, p['factor'], m))
        if t == 'ramp':
            for r, v in f['measured_compute_slowdown'].items():
                rep.ok(1.0 < v <= p['factor'] * 1.05,
                       'ramp: median compute slowdown of rank %s after onset = %.3f (ramp to %.2f)' % (r, v, p['factor']))
        if t == 'extra_work':
            for r, v in f['measured_compute_slowdown'].items():
                rep.ok(v > 1.1, 'extra_work: measured compute slowdown of rank %s = %.3f (+%.0f ms/step)'
                       % (r, v, p['extra_ms']))
        if t in ('slow_gpu', 'extra_work', 'ramp'):
            # the slow rank arrives last at (almost) every collective after the onset
            per = truth['collectives_per_step']
            ks = range(f['onset_step'] * per, len(nccl[0]))
            if t == 'ramp':
                ks = range((f['onset_step'] + p['ramp']) * per, len(nccl[0]))
            if truth['bucket_mode'] == 'after':
                # back-to-back buckets: only the first of a step is gated by compute, the others by the
                # previous collective's end (common to all ranks)
                ks = [k for k in ks if k % per == 0]
            lasts = collections.Counter(max(range(n), key=lambda r: nccl[r][k][0]) for k in ks)
            got = sum(lasts[r] for r in f['slow_ranks'])
            rep.ok(got >= 0.9 * len(ks), '%s: a slow rank %s is the last arriver in %d/%d collectives after onset'
                   % (t, f['slow_ranks'], got, len(ks)))
        if t == 'spikes':
            v = f['measured_spike_slowdown']
            rep.ok(not f['straggler_expected'], 'spikes: %d single-step spikes over %d ranks, measured slowdown '
                   'median %.3f; no straggler expected' % (len(v), len({s['rank'] for s in f['spikes']}),
                                                          sorted(v)[len(v) // 2] if v else 0))
        if t == 'host_stall':
            rep.ok(True, 'host_stall %.0f ms (sync %s): GPU idle from host, median per step: slow rank %.0f µs, '
                   'others %.0f µs -> hidden by the queue: %s'
                   % (p['stall_ms'], truth['sync'], f['gpu_idle_from_host_us_median']['slow'],
                      f['gpu_idle_from_host_us_median']['others'], f['stall_hidden_by_queue']))
        if t == 'slow_link':
            per = truth['collectives_per_step']
            on = f['onset_step'] * per
            before = sorted(nccl[0][k][2] for k in range(0, on))
            after = sorted(min(nccl[r][k][2] for r in range(n)) for k in range(on, len(nccl[0])))
            rep.ok(after[len(after) // 2] > 2 * before[len(before) // 2],
                   'slow_link x%.0f: shortest NCCL kernel median %.0f µs after onset vs %.0f before'
                   % (p['factor'], after[len(after) // 2], before[len(before) // 2]))


def step_stats(d):
    ev = d['traceEvents']
    k = [e for e in ev if e.get('cat') == 'kernel']
    fw = sorted(e['ts'] for e in ev if e.get('cat') == 'gpu_user_annotation'
                and e['name'] == 'DistributedDataParallel.forward')
    S = len(fw)
    nccl = sorted(e['dur'] for e in k if e['name'].startswith('nccl'))
    steps = sorted(b - a for a, b in zip(fw, fw[1:]))
    return {'kernels/step': len(k) / S,
            'memcpy+memset/step': sum(1 for e in ev if e.get('cat') in ('gpu_memcpy', 'gpu_memset')) / S,
            'NCCL kernels/step': len(nccl) / S, 'NCCL min us': nccl[0], 'step ms': steps[len(steps) // 2] / 1e3}


def check_realism(rep, gen, fix):
    """A job shaped like the fixture's (2 ranks, 4 x 8192, no fault): per-step numbers within 10 %."""
    g, f = step_stats(gen), step_stats(fix)
    for key in f:
        rep.ok(abs(g[key] - f[key]) <= 0.10 * f[key] + 1.0,
               'like the fixture (2 ranks, 4 x 8192): %s %.2f (fixture %.2f)' % (key, g[key], f[key]))


def check_dir(rep, d, truth, fixture, tol):
    paths = [os.path.join(d, f) for f in truth['files']]
    gen0, fix = load(paths[0]), load(fixture)
    check_format(rep, gen0, fix, truth)
    if (truth['world_size'], truth['layers'], truth['hidden'], truth['faults']) == (2, 4, 8192, []):
        check_realism(rep, gen0, fix)
    nccl = check_physics(rep, paths, truth, tol)
    check_truth(rep, nccl, truth)


def run_one(name, gen_args, outdir, fixture, tol, keep):
    rep = Report()
    d = os.path.join(outdir, name)
    cmd = [sys.executable, GEN, '-o', d, '-q', '--name', name] + gen_args
    subprocess.run(cmd, check=True)
    truth = json.load(open(os.path.join(d, 'truth.json')))
    check_dir(rep, d, truth, fixture, tol)
    print('== %s: %s (%d ranks x %d steps, %s, sync %s; %.1f MB, %.2f s)'
          % (name, ' '.join(gen_args), truth['world_size'], truth['steps'], truth['bucket_mode'], truth['sync'],
             truth['generation']['mb_on_disk'], truth['generation']['seconds']))
    for l in rep.lines:
        print('   ' + l)
    if not keep:
        shutil.rmtree(d)
    return rep.fails


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--fixture', default=FIXTURE)
    p.add_argument('--only', action='append', help='run only the named setting(s): %s'
                   % ', '.join(n for n, _ in SETTINGS))
    p.add_argument('--tol-us', type=float, default=30.0,
                   help='tolerance of "end together" and of "last arriver" (the generator spreads ends over '
                        '20 µs by default; the real fixtures over up to 26 µs)')
    p.add_argument('--real', action='store_true',
                   help='run the physics checks on the real fixture pairs instead (are the assumptions true?)')
    p.add_argument('--outdir', help='where to generate (default: a temporary directory)')
    p.add_argument('--keep', action='store_true', help='keep the generated traces')
    p.add_argument('--dir', help='check this existing generator output (with its truth.json) instead')
    a = p.parse_args()
    if a.real:
        fails = 0
        fx = os.path.dirname(a.fixture)
        for case in ('baseline', 'rank0slow'):
            rep = Report()
            paths = [os.path.join(fx, 'fixture_%s_rank%d.json.gz' % (case, r)) for r in (0, 1)]
            truth = {'world_size': 2, 'ranks': [{'clock_offset_us': 0.0}] * 2, 'sync': 'none',
                     'step_markers': False, 'steps': 20, 'collectives_per_step': 4}
            check_physics(rep, paths, truth, a.tol_us)
            print('== real fixture_%s (2 ranks, one host: one clock)' % case)
            for l in rep.lines:
                print('   ' + l)
            fails += len(rep.fails)
        print('\n%d failure(s)' % fails)
        return 1 if fails else 0
    if a.dir:
        rep = Report()
        truth = json.load(open(os.path.join(a.dir, 'truth.json')))
        check_dir(rep, a.dir, truth, a.fixture, a.tol_us)
        print('== %s (%d ranks x %d steps)' % (a.dir, truth['world_size'], truth['steps']))
        for l in rep.lines:
            print('   ' + l)
        print('\n%d failure(s)' % len(rep.fails))
        return 1 if rep.fails else 0
    out = a.outdir or tempfile.mkdtemp(prefix='tracegen_check_')
    fails = []
    for name, args in SETTINGS:
        if a.only and name not in a.only:
            continue
        fails += ['%s: %s' % (name, f) for f in run_one(name, args, out, a.fixture, a.tol_us, a.keep)]
    if not a.outdir and not a.keep:
        shutil.rmtree(out, ignore_errors=True)
    print('\n%d failure(s)' % len(fails))
    for f in fails:
        print('  ' + f)
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
