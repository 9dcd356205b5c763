// A model as a training step needs it: named parameter values (host arrays) and a forward
// function from parameter arrays and an input batch to logits, plus the two MNIST models of
// the examples (an MLP of dense layers, and a CNN of convolutions and max pooling), initialised
// with PyTorch's default scheme from a seed.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/array.hpp"
#include "core/host_array.hpp"

namespace hedra::nn {

// logits (B, classes) from the parameters (in Model::params order) and x (B, example_shape...).
using ForwardFunction = std::function<Array(const std::vector<Array>& params, const Array& x)>;

struct Model {
    std::vector<std::string> names; // one per parameter, e.g. "fc0.weight"
    std::vector<HostArray> params;  // the current values
    ForwardFunction forward;
    std::vector<std::int64_t> example_shape; // one input example, e.g. {784} or {1, 28, 28}
};

// Dense layers sizes[0] -> sizes[1] -> ... -> sizes.back() with ReLU between them (none after
// the last). Parameters fc<i>.weight (out, in) and fc<i>.bias (out), as PyTorch's nn.Linear.
Model mlp(const std::vector<std::int64_t>& sizes, std::uint64_t seed);

// For 28×28 single-channel images: conv(1→c0, 5×5, pad 2) ReLU maxpool 2 → conv(c0→c1, 5×5,
// pad 2) ReLU maxpool 2 → linear(c1·7·7 → classes), the last layer contracting over (c, h, w)
// directly. Parameters conv0/conv1/fc (weight, bias) in PyTorch's layouts, except that fc.weight
// is (classes, c1, 7, 7) (PyTorch's (classes, c1·7·7) unflattened).
Model mnist_cnn(std::uint64_t seed, std::int64_t c0 = 16, std::int64_t c1 = 32,
                std::int64_t classes = 10);

} // namespace hedra::nn
