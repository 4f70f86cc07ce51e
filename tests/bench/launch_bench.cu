// Launch-bound microbenchmark: one host thread launches N empty kernels back to back and reports
// the launch rate. Run with and without CUDA_INJECTION64_PATH to price the collector per launch
// (tests/bench/collector_overhead.sh).
// usage: launch_bench [N=200000] [CHUNKS=1]. With CHUNKS > 1 the N launches are timed in that many
// chunks (each ends with a device synchronize) and "chunk_median_us" is the median chunk's time
// per launch: a stall of the process in one chunk (a page-fault burst, an interrupt storm) then
// does not move it. "per_launch_us" is always the whole run's. "thread_cpu_us" is the launching
// thread's CPU time per launch (getrusage RUSAGE_THREAD, user + system) and "proc_cpu_us" the
// whole process's (other threads included: CUPTI's, a collector's flush thread): host noise that
// only delays the thread (another process on its CPU) moves these less than wall time.
// "late_chunk_median_us": the median of the second half's chunks (after a kernel-tracing window
// that a CUPTI client opened and closed early in the run: cupti_floor.c FLOOR_WINDOW_MS).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sys/resource.h>
#include <vector>

__global__ void empty_kernel() {}

static double
cpu_s(int who)
{
    struct rusage ru;
    getrusage(who, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 200000;
    int chunks = argc > 2 ? atoi(argv[2]) : 1;
    if (n <= 0 || chunks <= 0 || chunks > n) {
        fprintf(stderr, "usage: launch_bench [N>0] [CHUNKS in 1..N]\n");
        return 2;
    }
    if (cudaFree(0) != cudaSuccess) {
        fprintf(stderr, "no CUDA device\n");
        return 1;
    }
    for (int i = 0; i < 2000; i++)
        empty_kernel<<<1, 32>>>();
    if (cudaDeviceSynchronize() != cudaSuccess)
        return 1;
    std::vector<double> chunk_us;
    double thread0 = cpu_s(RUSAGE_THREAD), proc0 = cpu_s(RUSAGE_SELF);
    auto t0 = std::chrono::steady_clock::now();
    for (int c = 0; c < chunks; c++) {
        int from = (int)((long long)n * c / chunks), to = (int)((long long)n * (c + 1) / chunks);
        auto c0 = std::chrono::steady_clock::now();
        for (int i = from; i < to; i++)
            empty_kernel<<<1, 32>>>();
        if (cudaDeviceSynchronize() != cudaSuccess || cudaGetLastError() != cudaSuccess)
            return 1;
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
        chunk_us.push_back(s * 1e6 / (to - from));
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double thread_s = cpu_s(RUSAGE_THREAD) - thread0, proc_s = cpu_s(RUSAGE_SELF) - proc0;
    std::vector<double> late(chunk_us.begin() + chunks / 2, chunk_us.end());
    std::sort(late.begin(), late.end());
    double late_median = late[late.size() / 2];
    std::sort(chunk_us.begin(), chunk_us.end());
    double median = chunks % 2 ? chunk_us[chunks / 2]
                               : (chunk_us[chunks / 2 - 1] + chunk_us[chunks / 2]) / 2;
    printf("{\"launches\":%d,\"seconds\":%.6f,\"per_launch_us\":%.4f,\"launches_per_s\":%.0f,"
           "\"chunks\":%d,\"chunk_median_us\":%.4f,\"thread_cpu_us\":%.4f,\"proc_cpu_us\":%.4f,\"late_chunk_median_us\":%.4f}\n",
           n, s, s * 1e6 / n, n / s, chunks, median, thread_s * 1e6 / n, proc_s * 1e6 / n,
           late_median);
    return 0;
}
