// The example's data and initial parameters, in plain C++ (the consumer links no hedra):
// Fashion-MNIST's first training examples in file order, pixels / 255, read through `gzip -dc`
// (or deterministic synthetic data where the files are absent), and He-uniform weights from a
// fixed LCG. tests/aot feeds the JIT's step the same, to compare losses bit for bit.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace mlp_data {

inline constexpr std::int64_t kPixels = 784, kClasses = 10;
inline const std::vector<std::int64_t> kLayers = {784, 300, 100, 10};

struct Examples {
    std::vector<float> images;   // (count, 784)
    std::vector<int32_t> labels; // (count)
    std::int64_t count = 0;
    bool synthetic = false;
};

// A linear congruential generator's next value in [0, 1).
inline double uniform(std::uint64_t& state) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 11) / 9007199254740992.0;
}

// The first `bytes` bytes of a gzip file after skipping `skip`; empty when it cannot be read.
inline std::vector<unsigned char> gunzip_prefix(const std::string& path, std::size_t skip,
                                                std::size_t bytes) {
    std::FILE* probe = std::fopen(path.c_str(), "rb");
    if (!probe) return {};
    std::fclose(probe);
    std::FILE* in = popen(("gzip -dc '" + path + "' 2>/dev/null").c_str(), "r");
    if (!in) return {};
    std::vector<unsigned char> out(skip + bytes);
    const std::size_t got = std::fread(out.data(), 1, out.size(), in);
    pclose(in);
    if (got != out.size()) return {};
    return std::vector<unsigned char>(out.begin() + static_cast<std::ptrdiff_t>(skip), out.end());
}

inline Examples load(std::int64_t count, const std::string& directory, bool synthetic) {
    Examples e;
    e.count = count;
    const auto n = static_cast<std::size_t>(count);
    std::vector<unsigned char> pixels, labels;
    if (!synthetic) {
        pixels = gunzip_prefix(directory + "/train-images-idx3-ubyte.gz", 16, n * kPixels);
        labels = gunzip_prefix(directory + "/train-labels-idx1-ubyte.gz", 8, n);
    }
    e.synthetic = pixels.empty() || labels.empty();
    std::uint64_t state = 7;
    for (std::size_t i = 0; i < n * kPixels; ++i)
        e.images.push_back(e.synthetic ? static_cast<float>(uniform(state))
                                       : static_cast<float>(pixels[i]) / 255.0f);
    for (std::size_t i = 0; i < n; ++i)
        e.labels.push_back(e.synthetic ? static_cast<int32_t>(uniform(state) * kClasses)
                                       : static_cast<int32_t>(labels[i]));
    return e;
}

// Weights (out, in) uniform in ±sqrt(6 / in), biases zero: fc0.weight, fc0.bias, fc1.weight, ...
inline std::vector<std::vector<float>> initial_params() {
    std::vector<std::vector<float>> params;
    std::uint64_t state = 42;
    for (std::size_t l = 0; l + 1 < kLayers.size(); ++l) {
        const double bound = std::sqrt(6.0 / static_cast<double>(kLayers[l]));
        std::vector<float> w(static_cast<std::size_t>(kLayers[l] * kLayers[l + 1]));
        for (float& v : w)
            v = static_cast<float>((2 * uniform(state) - 1) * bound);
        params.push_back(std::move(w));
        params.push_back(std::vector<float>(static_cast<std::size_t>(kLayers[l + 1]), 0.0f));
    }
    return params;
}

} // namespace mlp_data
