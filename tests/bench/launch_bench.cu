// Launch-bound microbenchmark: one host thread launches N empty kernels back to back and reports
// the launch rate. Run with and without CUDA_INJECTION64_PATH to price the collector per launch
// (tests/bench/collector_overhead.sh).
#include <cstdio>
#include <cstdlib>
#include <chrono>

__global__ void empty_kernel() {}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 200000;
    if (cudaFree(0) != cudaSuccess) {
        fprintf(stderr, "no CUDA device\n");
        return 1;
    }
    for (int i = 0; i < 2000; i++)
        empty_kernel<<<1, 32>>>();
    if (cudaDeviceSynchronize() != cudaSuccess)
        return 1;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; i++)
        empty_kernel<<<1, 32>>>();
    if (cudaDeviceSynchronize() != cudaSuccess || cudaGetLastError() != cudaSuccess)
        return 1;
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    printf("{\"launches\":%d,\"seconds\":%.6f,\"per_launch_us\":%.4f,\"launches_per_s\":%.0f}\n",
           n, s, s * 1e6 / n, n / s);
    return 0;
}
