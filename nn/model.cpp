// The MLP and CNN builders of model.hpp: parameters drawn layer by layer (weight, then bias)
// from one seeded generator, and forward functions made of nn layers.
#include "nn/model.hpp"

#include <string>

#include "core/error.hpp"
#include "core/library.hpp"
#include "nn/init.hpp"
#include "nn/layers.hpp"

namespace hedra::nn {

namespace {

// PyTorch's default init of a layer: weight kaiming_uniform(a = sqrt(5)), bias U(±1/sqrt(fan_in)).
void add_layer(Model& m, const std::string& name, const std::vector<std::int64_t>& weight_sizes,
               InitRng& rng) {
    m.names.push_back(name + ".weight");
    m.params.push_back(kaiming_uniform(weight_sizes, rng));
    m.names.push_back(name + ".bias");
    m.params.push_back(bias_uniform(weight_sizes[0], fan_in(weight_sizes), rng));
}

} // namespace

Model mlp(const std::vector<std::int64_t>& sizes, std::uint64_t seed) {
    if (sizes.size() < 2)
        throw Error("mlp: need at least an input and an output size, got " +
                    std::to_string(sizes.size()) + " sizes");
    for (std::int64_t s : sizes)
        if (s <= 0) throw Error("mlp: layer sizes must be positive, got " + std::to_string(s));
    Model m;
    InitRng rng(seed);
    for (std::size_t i = 0; i + 1 < sizes.size(); ++i)
        add_layer(m, "fc" + std::to_string(i), {sizes[i + 1], sizes[i]}, rng);
    const std::size_t layers = sizes.size() - 1;
    m.forward = [layers](const std::vector<Array>& p, const Array& x) {
        Array h = x;
        for (std::size_t i = 0; i < layers; ++i) {
            h = linear(h, p[2 * i], p[2 * i + 1]);
            if (i + 1 < layers) h = relu(h);
        }
        return h;
    };
    m.example_shape = {sizes[0]};
    return m;
}

Model mnist_cnn(std::uint64_t seed, std::int64_t c0, std::int64_t c1, std::int64_t classes) {
    if (c0 <= 0 || c1 <= 0 || classes <= 0)
        throw Error("mnist_cnn: channels and classes must be positive, got " + std::to_string(c0) +
                    ", " + std::to_string(c1) + " and " + std::to_string(classes));
    Model m;
    InitRng rng(seed);
    add_layer(m, "conv0", {c0, 1, 5, 5}, rng);
    add_layer(m, "conv1", {c1, c0, 5, 5}, rng);
    add_layer(m, "fc", {classes, c1, 7, 7}, rng);
    m.forward = [](const std::vector<Array>& p, const Array& x) {
        Array h = maxpool2d(relu(conv2d(x, p[0], p[1], 1, 2)), 2);
        h = maxpool2d(relu(conv2d(h, p[2], p[3], 1, 2)), 2);
        return linear(h, p[4], p[5]);
    };
    m.example_shape = {1, 28, 28};
    return m;
}

} // namespace hedra::nn
