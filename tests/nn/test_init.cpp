// Initialisers (nn/init.hpp): fans as PyTorch computes them, bounds, moments of the uniform
// draws, determinism per seed, and the models' parameter shapes (nn/model.hpp).
#include "nn/init.hpp"

#include <doctest/doctest.h>

#include <cmath>

#include "core/error.hpp"
#include "nn/model.hpp"

using namespace hedra;
using namespace hedra::nn;

namespace {

double max_abs(const HostArray& a) {
    double m = 0.0;
    for (double v : a.to_doubles())
        m = std::max(m, std::abs(v));
    return m;
}

double mean_square(const HostArray& a) {
    double s = 0.0;
    for (double v : a.to_doubles())
        s += v * v;
    return s / static_cast<double>(a.size());
}

} // namespace

TEST_CASE("nn init: fan_in and fan_out of dense and convolution weights") {
    CHECK(fan_in({300, 784}) == 784);
    CHECK(fan_out({300, 784}) == 300);
    CHECK(fan_in({16, 1, 5, 5}) == 25);
    CHECK(fan_out({16, 1, 5, 5}) == 400);
    CHECK_THROWS_AS(fan_in({5}), Error);
}

TEST_CASE("nn init: kaiming_uniform with a = sqrt(5) is U(±1/sqrt(fan_in)), as pytorch's") {
    InitRng rng(7);
    HostArray w = kaiming_uniform({300, 784}, rng);
    CHECK(w.dtype() == DType::F32);
    CHECK(w.sizes() == std::vector<std::int64_t>{300, 784});
    const double bound = 1.0 / std::sqrt(784.0);
    CHECK(max_abs(w) <= bound);
    CHECK(max_abs(w) > 0.99 * bound);
    // The variance of U(-b, b) is b²/3; 235200 draws pin it to well under 1%.
    CHECK(mean_square(w) == doctest::Approx(bound * bound / 3).epsilon(0.01));
    // Slope a = 0 (ReLU gain): bound sqrt(6 / fan_in).
    HostArray he = kaiming_uniform({64, 100}, rng, 0.0, DType::F64);
    CHECK(he.dtype() == DType::F64);
    CHECK(max_abs(he) <= std::sqrt(6.0 / 100.0));
    CHECK(max_abs(he) > 0.95 * std::sqrt(6.0 / 100.0));
}

TEST_CASE("nn init: xavier_uniform and bias_uniform bounds") {
    InitRng rng(3);
    HostArray w = xavier_uniform({50, 200}, rng);
    const double bound = std::sqrt(6.0 / 250.0);
    CHECK(max_abs(w) <= bound);
    CHECK(max_abs(w) > 0.99 * bound);
    HostArray g = xavier_uniform({50, 200}, rng, 2.0);
    CHECK(max_abs(g) <= 2 * bound);
    CHECK(max_abs(g) > 1.9 * bound);
    HostArray b = bias_uniform(1000, 25, rng);
    CHECK(b.sizes() == std::vector<std::int64_t>{1000});
    CHECK(max_abs(b) <= 0.2);
    CHECK(max_abs(b) > 0.19);
}

TEST_CASE("nn init: a seed gives the same values, another seed different ones") {
    InitRng a(42), b(42), c(43);
    auto va = kaiming_uniform({10, 10}, a).to_doubles();
    CHECK(va == kaiming_uniform({10, 10}, b).to_doubles());
    CHECK(va != kaiming_uniform({10, 10}, c).to_doubles());
    // The first draw of mt19937_64 seeded with 42 is fixed by the standard.
    InitRng d(42);
    std::mt19937_64 engine(42);
    CHECK(d.uniform(0.0, 1.0) == static_cast<double>(engine() >> 11) * 0x1.0p-53);
}

TEST_CASE("nn models: parameter names and shapes of the mlp and the cnn") {
    Model m = mlp({784, 300, 100, 10}, 0);
    CHECK(m.names == std::vector<std::string>{"fc0.weight", "fc0.bias", "fc1.weight", "fc1.bias",
                                              "fc2.weight", "fc2.bias"});
    CHECK(m.params[0].sizes() == std::vector<std::int64_t>{300, 784});
    CHECK(m.params[5].sizes() == std::vector<std::int64_t>{10});
    CHECK(m.example_shape == std::vector<std::int64_t>{784});
    CHECK(max_abs(m.params[2]) <= 1.0 / std::sqrt(300.0));
    CHECK(mlp({784, 300, 100, 10}, 0).params[4].to_doubles() == m.params[4].to_doubles());
    CHECK(mlp({784, 300, 100, 10}, 1).params[4].to_doubles() != m.params[4].to_doubles());
    Model c = mnist_cnn(0);
    CHECK(c.names == std::vector<std::string>{"conv0.weight", "conv0.bias", "conv1.weight",
                                              "conv1.bias", "fc.weight", "fc.bias"});
    CHECK(c.params[0].sizes() == std::vector<std::int64_t>{16, 1, 5, 5});
    CHECK(c.params[2].sizes() == std::vector<std::int64_t>{32, 16, 5, 5});
    CHECK(c.params[4].sizes() == std::vector<std::int64_t>{10, 32, 7, 7});
    CHECK(max_abs(c.params[4]) <= 1.0 / std::sqrt(32.0 * 49.0));
    CHECK(c.example_shape == std::vector<std::int64_t>{1, 28, 28});
    CHECK_THROWS_AS(mlp({784}, 0), Error);
}
