// Launch-bound microbenchmark: one host thread launches N empty kernels back to back and reports
// the launch rate. Run with and without CUDA_INJECTION64_PATH to price the collector per launch
// (tests/bench/collector_overhead.sh).
// usage: launch_bench [N=200000] [CHUNKS=1]. With CHUNKS > 1 the N launches are timed in that many
// chunks (each ends with a device synchronize) and "chunk_median_us" is the median chunk's time
// per launch: a stall of the process in one chunk (a page-fault burst, an interrupt storm) then
// does not move it. "per_launch_us" is always the whole run's.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void empty_kernel() {}

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
    std::sort(chunk_us.begin(), chunk_us.end());
    double median = chunks % 2 ? chunk_us[chunks / 2]
                               : (chunk_us[chunks / 2 - 1] + chunk_us[chunks / 2]) / 2;
    printf("{\"launches\":%d,\"seconds\":%.6f,\"per_launch_us\":%.4f,\"launches_per_s\":%.0f,"
           "\"chunks\":%d,\"chunk_median_us\":%.4f}\n",
           n, s, s * 1e6 / n, n / s, chunks, median);
    return 0;
}
