"""Intervals for the median of paired ratios, shared by the tests/gpu/ reports (noise_report.py,
after_report.py): a distribution-free one from order statistics and a bootstrap one."""
import math
import random
import statistics as st


def median_ci(xs, level=0.95):
    """Distribution-free interval for the median: order statistics k and n-k+1, the largest k
    whose two-sided binomial tail stays within 1 - level (None when n is too small)."""
    xs, n = sorted(xs), len(xs)
    best = None
    for k in range(1, n // 2 + 1):
        tail = sum(math.comb(n, i) for i in range(k)) / 2 ** n
        if 2 * tail <= 1 - level:
            best = k
    return (xs[best - 1], xs[n - best]) if best else None


def boot_ci(xs, level=0.95, n=10000):
    """Bootstrap interval for the median: n resamples with a fixed seed (None for no data)."""
    if not xs:
        return None
    rnd = random.Random(1)
    meds = sorted(st.median(rnd.choices(xs, k=len(xs))) for _ in range(n))
    return meds[int(n * (1 - level) / 2)], meds[int(n * (1 + level) / 2) - 1]


def fmt_ci(ci):
    return f"[{ci[0]:.4f}, {ci[1]:.4f}]" if ci else "[n too small]"
