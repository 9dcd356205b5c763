// The peer of bench/jacobi: a plain OpenMP loop nest, compiled with -O3 -march=native -fopenmp
// (bench/CMakeLists.txt) but linked without -fopenmp, so its GOMP_* calls go to LLVM's libomp,
// the one OpenMP runtime of the process (hedra's kernels use it too).
#include "bench/jacobi_peer.hpp"

#include <cstring>

namespace hedra::bench {

void jacobi_peer(const float* input, float* result, float* scratch, long n, int sweeps,
                 int threads) {
    // Both buffers start as the input, so the boundary (never written) is right in either.
    std::memcpy(result, input, sizeof(float) * std::size_t(n * n));
    std::memcpy(scratch, input, sizeof(float) * std::size_t(n * n));
    // Ping-pong so that the last sweep writes `result`.
    float* bufs[2] = {sweeps % 2 ? scratch : result, sweeps % 2 ? result : scratch};
    for (int s = 0; s < sweeps; ++s)
        jacobi_peer_sweep(bufs[s % 2], bufs[(s + 1) % 2], n, threads);
}

void jacobi_peer_sweep(const float* input, float* output, long n, int threads) {
    const float* __restrict in = input;
    float* __restrict out = output;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (long i = 1; i < n - 1; ++i)
        for (long j = 1; j < n - 1; ++j)
            out[i * n + j] = (in[(i - 1) * n + j] + in[(i + 1) * n + j] + in[i * n + j - 1] +
                              in[i * n + j + 1]) *
                             0.25f;
}

} // namespace hedra::bench
