// Helpers for the nn tests that train on real data: the backend to train with (the default one,
// or "openmp" where the default is the reference interpreter, which is far too slow for hundreds
// of steps), and Fashion-MNIST loaded once, or nothing when it is not installed.
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <optional>
#include <string>

#include "core/compute.hpp"
#include "core/error.hpp"
#include "hedra.hpp"
#include "nn/io/mnist_dataset.hpp"

namespace hedra::nn::test {

inline ComputeOptions training_backend() {
    const std::string d = default_backend_name();
    ComputeOptions o;
    o.backend = d == "reference" ? std::string("openmp") : d;
    return o;
}

// Fashion-MNIST from Debian's dataset-fashion-mnist, or nullptr (with a message) when missing.
inline const MnistDataset* fashion_mnist() {
    static const std::optional<MnistDataset> data = []() -> std::optional<MnistDataset> {
        if (!std::filesystem::exists(kDefaultMnistDirectory)) return std::nullopt;
        try {
            return load_mnist(kDefaultMnistDirectory);
        } catch (const Error&) {
            return std::nullopt;
        }
    }();
    if (!data) MESSAGE("skipped: Fashion-MNIST is not installed in " << kDefaultMnistDirectory);
    return data ? &*data : nullptr;
}

} // namespace hedra::nn::test
