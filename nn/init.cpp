// Seeded initialisers (init.hpp). Values are drawn in row-major order, one engine call each.
#include "nn/init.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"

namespace hedra::nn {

namespace {

std::string sizes_string(const std::vector<std::int64_t>& sizes) {
    std::string s = "(";
    for (std::size_t i = 0; i < sizes.size(); ++i)
        s += (i ? "," : "") + std::to_string(sizes[i]);
    return s + ")";
}

void check_weight_sizes(const char* op, const std::vector<std::int64_t>& sizes) {
    if (sizes.size() < 2)
        throw Error(std::string(op) + ": a weight needs at least 2 axes (out, in, ...), got " +
                    sizes_string(sizes));
    for (std::int64_t s : sizes)
        if (s <= 0)
            throw Error(std::string(op) + ": weight sizes must be positive, got " +
                        sizes_string(sizes));
}

} // namespace

double InitRng::uniform(double lo, double hi) {
    const double unit = static_cast<double>(engine_() >> 11) * 0x1.0p-53;
    return lo + (hi - lo) * unit;
}

std::int64_t fan_in(const std::vector<std::int64_t>& weight_sizes) {
    check_weight_sizes("fan_in", weight_sizes);
    std::int64_t f = 1;
    for (std::size_t i = 1; i < weight_sizes.size(); ++i)
        f *= weight_sizes[i];
    return f;
}

std::int64_t fan_out(const std::vector<std::int64_t>& weight_sizes) {
    check_weight_sizes("fan_out", weight_sizes);
    std::int64_t f = weight_sizes[0];
    for (std::size_t i = 2; i < weight_sizes.size(); ++i)
        f *= weight_sizes[i];
    return f;
}

HostArray uniform(const std::vector<std::int64_t>& sizes, double bound, InitRng& rng, DType dtype) {
    if (!is_float(dtype))
        throw Error("uniform: initial values must be f32 or f64, got " +
                    std::string(dtype_name(dtype)));
    if (!(bound >= 0.0) || !std::isfinite(bound))
        throw Error("uniform: bound must be finite and >= 0, got " + std::to_string(bound));
    HostArray out(sizes, dtype);
    for (std::int64_t i = 0; i < out.size(); ++i)
        out.set_flat(i, rng.uniform(-bound, bound));
    return out;
}

HostArray kaiming_uniform(const std::vector<std::int64_t>& weight_sizes, InitRng& rng, double a,
                          DType dtype) {
    const double bound =
        std::sqrt(6.0 / ((1.0 + a * a) * static_cast<double>(fan_in(weight_sizes))));
    return uniform(weight_sizes, bound, rng, dtype);
}

HostArray xavier_uniform(const std::vector<std::int64_t>& weight_sizes, InitRng& rng, double gain,
                         DType dtype) {
    const double fans = static_cast<double>(fan_in(weight_sizes) + fan_out(weight_sizes));
    return uniform(weight_sizes, gain * std::sqrt(6.0 / fans), rng, dtype);
}

HostArray bias_uniform(std::int64_t size, std::int64_t fan_in, InitRng& rng, DType dtype) {
    if (size < 0 || fan_in <= 0)
        throw Error("bias_uniform: need size >= 0 and fan_in > 0, got size " +
                    std::to_string(size) + " and fan_in " + std::to_string(fan_in));
    return uniform({size}, 1.0 / std::sqrt(static_cast<double>(fan_in)), rng, dtype);
}

} // namespace hedra::nn
