// Helpers for the nn tests that train on real data: the backend to train with (the default one,
// or "openmp" while the default is still the reference interpreter, which is far too slow for
// hundreds of steps), and Fashion-MNIST loaded once, or nothing when it is not installed.
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <optional>
#include <string>

#include "backends/openmp/openmp_backend.hpp"
#include "core/compute.hpp"
#include "core/error.hpp"
#include "hedra.hpp"
#include "nn/mnist_dataset.hpp"

namespace hedra::nn::test {

inline ComputeOptions training_backend() {
    static const std::string name = [] {
        bool known = false;
        for (const std::string& n : backend_names())
            known = known || n == "openmp";
        if (!known)
            register_backend("openmp", [] { return std::make_shared<backend::OpenMPBackend>(); });
        const std::string d = default_backend_name();
        return d == "reference" ? std::string("openmp") : d;
    }();
    ComputeOptions o;
    o.backend = name;
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
