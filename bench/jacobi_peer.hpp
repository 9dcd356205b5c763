// The plain-OpenMP Jacobi loop bench/jacobi compares hedra against (jacobi_peer.cpp).
#pragma once

namespace hedra::bench {

// `sweeps` 5-point Jacobi sweeps of the n×n row-major `input` (boundary kept) into `result`;
// `scratch` is a second n×n buffer.
void jacobi_peer(const float* input, float* result, float* scratch, long n, int sweeps,
                 int threads);
// One sweep of `input` into the interior of `output` (its boundary left as it is).
void jacobi_peer_sweep(const float* input, float* output, long n, int threads);

} // namespace hedra::bench
