// Seeded weight initialisation producing host arrays: PyTorch's default scheme for nn.Linear
// and nn.Conv2d (weight kaiming_uniform with a = sqrt(5), i.e. U(±1/sqrt(fan_in)); bias
// U(±1/sqrt(fan_in))), Kaiming-uniform for any gain, and Xavier (Glorot) uniform. The random
// numbers come from std::mt19937_64 (bit-identical on every standard library) turned into
// doubles by taking the top 53 bits, so a seed gives the same weights everywhere.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "core/host_array.hpp"

namespace hedra::nn {

class InitRng {
public:
    explicit InitRng(std::uint64_t seed) : engine_(seed) {}
    // A double in [lo, hi).
    double uniform(double lo, double hi);

private:
    std::mt19937_64 engine_;
};

// fan_in = product of sizes[1..] and fan_out = sizes[0] · product of sizes[2..], as PyTorch
// computes them for weights laid out (out, in, kernel...).
std::int64_t fan_in(const std::vector<std::int64_t>& weight_sizes);
std::int64_t fan_out(const std::vector<std::int64_t>& weight_sizes);

// Independent U(−bound, bound) values of the given sizes, filled in row-major order.
HostArray uniform(const std::vector<std::int64_t>& sizes, double bound, InitRng& rng,
                  DType dtype = DType::F32);

// Kaiming (He) uniform with leaky-ReLU slope `a`: bound = sqrt(6 / ((1 + a²) · fan_in)).
// a = sqrt(5) (the default) is PyTorch's nn.Linear/nn.Conv2d scheme: bound = 1/sqrt(fan_in).
HostArray kaiming_uniform(const std::vector<std::int64_t>& weight_sizes, InitRng& rng,
                          double a = 2.23606797749979, DType dtype = DType::F32);

// Xavier (Glorot) uniform: bound = gain · sqrt(6 / (fan_in + fan_out)).
HostArray xavier_uniform(const std::vector<std::int64_t>& weight_sizes, InitRng& rng,
                         double gain = 1.0, DType dtype = DType::F32);

// A bias of `size` values U(±1/sqrt(fan_in)), PyTorch's default for a layer with that fan-in.
HostArray bias_uniform(std::int64_t size, std::int64_t fan_in, InitRng& rng,
                       DType dtype = DType::F32);

} // namespace hedra::nn
