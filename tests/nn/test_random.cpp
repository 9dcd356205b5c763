// The in-graph generator (nn/random.hpp) against a plain SplitMix64, and dropout
// (nn/layers.hpp): the fraction kept, the mean preserved, masks per seed, the gradient, and a
// compiled program that takes a new seed per call.
#include "nn/random.hpp"

#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "nn/layers.hpp"
#include "nn_layer_testing.hpp"

using namespace hedra;
using namespace hedra::nn;
using namespace hedra::nn::test;

namespace {

// The (i + 1)-th output of SplitMix64 started from `seed`.
std::uint64_t splitmix64(std::uint64_t seed, std::uint64_t i) {
    std::uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

Array seed_of(std::int64_t s) {
    return array(std::vector<std::int64_t>{s}, Shape{});
}

std::vector<std::int64_t> bits_of(const Array& a) {
    auto v = compute(a, reference_backend()).values<std::int64_t>();
    return {v.begin(), v.end()};
}

// 1 where dropout kept the element of an all-ones input, else 0.
std::vector<int> mask_of(const std::vector<double>& y) {
    std::vector<int> m;
    for (double v : y)
        m.push_back(v != 0.0);
    return m;
}

} // namespace

TEST_CASE("nn random_bits: SplitMix64 of the row-major position, on any index space") {
    for (std::int64_t seed : {std::int64_t{0}, std::int64_t{42}, std::int64_t{-7}}) {
        INFO("seed " << seed);
        auto bits = bits_of(random_bits(Shape::of({3, 4, 5}), seed_of(seed)));
        REQUIRE(bits.size() == 60);
        for (std::size_t i = 0; i < bits.size(); ++i)
            CHECK(static_cast<std::uint64_t>(bits[i]) ==
                  splitmix64(static_cast<std::uint64_t>(seed), i));
    }
    Shape strided{range(2, 8, 2), range(-1, 1)};
    Array shifted = random_bits(strided, array(std::vector<std::int32_t>{9}, Shape{}));
    CHECK(shifted.shape() == strided);
    auto bits = bits_of(shifted);
    for (std::size_t i = 0; i < bits.size(); ++i)
        CHECK(static_cast<std::uint64_t>(bits[i]) == splitmix64(9, i));
    CHECK(static_cast<std::uint64_t>(bits_of(random_bits(Shape{}, seed_of(5)))[0]) ==
          splitmix64(5, 0));
}

TEST_CASE("nn random_uniform: [0, 1) from the top bits, f32 and f64") {
    auto u64 = evaluate(random_uniform(Shape::of({1000}), seed_of(3), DType::F64));
    auto u32 = evaluate(random_uniform(Shape::of({1000}), seed_of(3), DType::F32));
    double mean = 0.0;
    for (std::size_t i = 0; i < u64.size(); ++i) {
        CHECK(u64[i] == static_cast<double>(splitmix64(3, i) >> 11) * 0x1.0p-53);
        CHECK(u32[i] == static_cast<double>(splitmix64(3, i) >> 40) * 0x1.0p-24);
        CHECK((u32[i] >= 0.0 && u32[i] < 1.0));
        mean += u64[i] / 1000;
    }
    CHECK(std::abs(mean - 0.5) < 0.05);
}

TEST_CASE("nn dropout: keeps 1 - p of 10^4 elements, scaled so that the mean is preserved") {
    const std::int64_t n = 10000;
    for (double p : {0.1, 0.5, 0.8}) {
        INFO("p " << p);
        auto y = evaluate(dropout(ones(Shape::of({100, n / 100}), DType::F64), p, seed_of(11)));
        double kept = 0.0, mean = 0.0;
        for (double v : y) {
            CHECK((v == 0.0 || std::abs(v - 1.0 / (1.0 - p)) < 1e-12));
            kept += v != 0.0;
            mean += v / n;
        }
        // Binomial: the fraction kept has standard deviation sqrt(p(1-p)/n) <= 0.005.
        CHECK(std::abs(kept / n - (1.0 - p)) < 0.02);
        CHECK(std::abs(mean - 1.0) < 0.02 / (1.0 - p));
    }
}

TEST_CASE("nn dropout: the same seed gives the same mask, another seed another") {
    Array x = ones(Shape::of({50, 40}), DType::F64);
    auto a = mask_of(evaluate(dropout(x, 0.5, seed_of(1))));
    auto b = mask_of(evaluate(dropout(x, 0.5, seed_of(1))));
    auto c = mask_of(evaluate(dropout(x, 0.5, seed_of(2))));
    CHECK(a == b);
    int differ = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        differ += a[i] != c[i];
    CHECK(differ > 800); // about half of the 2000 elements
    // The mask is the generator's: kept where the top 53 bits are >= p·2^53.
    for (std::size_t i = 0; i < a.size(); ++i)
        CHECK(a[i] == ((splitmix64(1, i) >> 11) >= (1ULL << 52)));
}

TEST_CASE("nn dropout: the gradient is the mask times 1 / (1 - p)") {
    Array x = array(random_values(6 * 7, 3), Shape::of({6, 7}));
    Array u = array(random_values(6 * 7, 4), Shape::of({6, 7}));
    const double p = 0.3;
    auto y = evaluate(dropout(x, p, seed_of(8)));
    auto g = evaluate(grad(sum(dropout(x, p, seed_of(8)) * u), x));
    auto xv = evaluate(x), uv = evaluate(u);
    int kept = 0;
    for (std::size_t i = 0; i < y.size(); ++i) {
        const bool keep = y[i] != 0.0;
        kept += keep;
        CHECK(g[i] == doctest::Approx(keep ? uv[i] / (1.0 - p) : 0.0));
        CHECK(y[i] == doctest::Approx(keep ? xv[i] / (1.0 - p) : 0.0));
    }
    CHECK((kept > 0 && kept < 42));
    GradientCheckOptions o;
    o.compute = reference_backend();
    auto r = check_gradient([](const auto& in) { return dropout(in[0], 0.3, seed_of(8)); }, {x}, o);
    CHECK_MESSAGE(r.ok, r.to_string());
}

TEST_CASE("nn dropout: identity when not training or p == 0, zeros when p == 1") {
    Array x = array(random_values(12, 5), Shape::of({3, 4}));
    CHECK(dropout(x, 0.5, seed_of(1), false).node() == x.node());
    CHECK(dropout(x, 0.5, Array(), false).node() == x.node());
    CHECK(dropout(x, 0.0, seed_of(1)).node() == x.node());
    check_close(evaluate(dropout(x, 1.0, seed_of(1))), std::vector<double>(12, 0.0));
}

TEST_CASE("nn dropout: a compiled program takes a new seed per call") {
    Array seed = placeholder(Shape{}, DType::I64, "seed");
    Array x = ones(Shape::of({30, 30}));
    CompiledProgram step = compile({dropout(x, 0.5, seed)}, {seed}, reference_backend());
    auto run = [&](std::int64_t s) {
        return mask_of(step({HostArray::from(std::vector<std::int64_t>{s}, {})})[0].to_doubles());
    };
    auto a = run(1), b = run(2), c = run(1);
    CHECK(a == c);
    CHECK(a != b);
    CHECK(a == mask_of(evaluate(dropout(x, 0.5, seed_of(1)))));
}

TEST_CASE("nn dropout and random_bits: bad p, x or seed throw hedra::Error") {
    auto message = [](auto f) {
        try {
            f();
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    Array x = zeros(Shape::of({4}));
    CHECK(message([&] { dropout(x, 1.5, seed_of(1)); }).find("dropout: p must lie in [0, 1]") == 0);
    CHECK(message([&] {
              dropout(x, -0.1, seed_of(1), false);
          }).find("dropout: p must lie in [0, 1]") == 0);
    CHECK(message([&] {
              dropout(zeros(Shape::of({4}), DType::I32), 0.5, seed_of(1));
          }).find("dropout: x must be a float array") == 0);
    std::string m = message([&] { dropout(x, 0.5, Array()); });
    CHECK(m.find("dropout: seed must be a rank-0 integer array") == 0);
    CHECK(m.find("an empty array") != std::string::npos);
    CHECK(message([&] {
              dropout(x, 0.5, constant(1.0));
          }).find("dropout: seed must be a rank-0 integer array") == 0);
    CHECK(message([&] {
              random_bits(Shape::of({2}), zeros(Shape::of({1}), DType::I64));
          }).find("random_bits: seed must be a rank-0 integer array") == 0);
    CHECK(message([&] {
              random_uniform(Shape::of({2}), seed_of(1), DType::I32);
          }).find("random_uniform: dtype must be f32 or f64") == 0);
}
