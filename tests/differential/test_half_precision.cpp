// The half formats bf16 and f16 (core/dtype.hpp): the conversions against independent ones
// (GCC's _Float16, a nearest-neighbour search for bf16), and programs on every backend against
// loops written here that compute in f32 and round each result: maps bit for bit, sums within
// half an ulp of the format more than the rounding of an f64 sum, a matmul with f32
// accumulation, promotion, and storage through safetensors.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>

#include "core/half.hpp"
#include "differential.hpp"
#include "hedra.hpp"
#include "nn/io/safetensors.hpp"

using namespace hedra;

namespace {

// The bf16 nearest to x (ties to the even one), found by comparing the two neighbours in f64.
float bf16_nearest(float x) {
    if (std::isnan(x)) return x;
    const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
    const std::uint32_t low = u & 0xffff0000u, high = low + 0x10000u;
    if (std::isinf(x)) return x;
    const double a = std::bit_cast<float>(low);
    // Past the largest finite value the next step up is infinity, at 2^128 in the ordering.
    const double b = std::isinf(std::bit_cast<float>(high)) ? std::copysign(std::ldexp(1.0, 128), x)
                                                            : double(std::bit_cast<float>(high));
    const double dl = std::fabs(double(x) - a), dh = std::fabs(double(x) - b);
    if (dl < dh) return std::bit_cast<float>(low);
    if (dh < dl) return std::bit_cast<float>(high);
    return std::bit_cast<float>(((low >> 16) & 1u) ? high : low);
}

float f16_nearest(float x) {
    return static_cast<float>(static_cast<_Float16>(x)); // GCC's correctly rounded conversion
}

float round_to(DType t, float x) {
    return t == DType::BF16 ? bf16_nearest(x) : f16_nearest(x);
}

std::vector<float> random_floats(std::size_t n, unsigned seed, float scale) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> d(-scale, scale);
    std::vector<float> v(n);
    for (float& x : v)
        x = d(gen);
    return v;
}

std::vector<float> values_of(const HostArray& a) {
    std::vector<float> out;
    for (std::int64_t i = 0; i < a.size(); ++i)
        out.push_back(static_cast<float>(a.flat(i)));
    return out;
}

std::vector<std::string> all_backends() {
    std::vector<std::string> b = test::generating_backends();
    b.push_back("reference");
    return b;
}

} // namespace

TEST_CASE("half formats: conversions against independent ones") {
    // Every f16 and bf16 bit pattern converts to f32 and back unchanged (NaNs stay NaN).
    for (std::uint32_t h = 0; h < 0x10000u; ++h) {
        for (DType t : {DType::F16, DType::BF16}) {
            const float x = half_to_f32(t, static_cast<std::uint16_t>(h));
            if (std::isnan(x)) {
                CHECK(std::isnan(half_to_f32(t, f32_to_half(t, x))));
                continue;
            }
            if (f32_to_half(t, x) != h) FAIL_CHECK(dtype_name(t) << " pattern " << h);
        }
        const _Float16 g = std::bit_cast<_Float16>(static_cast<std::uint16_t>(h));
        if (!std::isnan(static_cast<float>(g)) &&
            half_to_f32(DType::F16, static_cast<std::uint16_t>(h)) != static_cast<float>(g))
            FAIL_CHECK("f16 pattern " << h << " reads differently from _Float16");
    }
    // Rounding of f32 values: random bit patterns over every exponent, ties, overflow,
    // subnormals.
    std::mt19937 gen(3);
    std::vector<float> xs = {0.0f,
                             -0.0f,
                             1.0f,
                             65504.0f,
                             65519.99f,
                             65520.0f,
                             1e30f,
                             -1e30f,
                             5.9604645e-8f,
                             2.9802322e-8f,
                             8.940697e-8f,
                             6.1035156e-5f,
                             6.103515e-5f,
                             1.00048828125f,
                             1.00146484375f,
                             std::bit_cast<float>(0x3f808000u),
                             std::bit_cast<float>(0x3f818000u),
                             std::bit_cast<float>(0x7f7fffffu),
                             std::bit_cast<float>(0x00000001u),
                             INFINITY,
                             -INFINITY};
    for (int i = 0; i < 200000; ++i)
        xs.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(gen())));
    int wrong = 0;
    for (float x : xs) {
        if (std::isnan(x)) continue;
        for (DType t : {DType::F16, DType::BF16}) {
            const float got = half_to_f32(t, f32_to_half(t, x)), want = round_to(t, x);
            if (std::bit_cast<std::uint32_t>(got) != std::bit_cast<std::uint32_t>(want) &&
                wrong++ < 5)
                FAIL_CHECK(dtype_name(t) << " of " << x << " (" << std::bit_cast<std::uint32_t>(x)
                                         << "): " << got << ", want " << want);
        }
    }
    CHECK(wrong == 0);
    CHECK(promote(DType::BF16, DType::F16) == DType::F32);
    CHECK(promote(DType::BF16, DType::F32) == DType::F32);
    CHECK(promote(DType::I64, DType::F16) == DType::F16);
    CHECK(parse_dtype("bf16") == DType::BF16);
}

TEST_CASE("half formats: maps, sums and a matmul on every backend against loops") {
    for (DType t : {DType::BF16, DType::F16}) {
        const std::int64_t m = 9, k = 37, n = 6;
        const std::vector<float> xv = random_floats(m * k, 1, 2.0f),
                                 yv = random_floats(m * k, 2, 2.0f),
                                 wv = random_floats(k * n, 3, 1.0f);
        Array x = cast(array(xv, Shape::of({m, k})), t), y = cast(array(yv, Shape::of({m, k})), t),
              w = cast(array(wv, Shape::of({k, n})), t);
        Array map = lazy([](auto a, auto b) { return tanh(a * b + 0.5f) - exp(a * 0.25f); }, x, y);
        Array row_sum = sum(x, {1});
        Array product = matmul(x, w);
        Array widened = x + array(yv, Shape::of({m, k})); // bf16 + f32 -> f32
        CHECK(map.dtype() == t);
        CHECK(widened.dtype() == DType::F32);
        // The expectation: f32 operations, each result rounded to the format.
        auto r = [&](float v) { return round_to(t, v); };
        std::vector<float> want_map, want_sum, want_product, want_widened;
        for (std::int64_t i = 0; i < m * k; ++i) {
            const float a = r(xv[i]), b = r(yv[i]);
            const float inner = r(r(a * b) + 0.5f);
            // tanh and exp computed as the kernels do (f32_math), each rounded to the format.
            const float th = r(static_cast<float>(
                compute(tanh(array(std::vector<float>{inner}, Shape::of({1})))).flat(0)));
            const float ex = r(static_cast<float>(
                compute(exp(array(std::vector<float>{r(a * 0.25f)}, Shape::of({1})))).flat(0)));
            want_map.push_back(r(th - ex));
            want_widened.push_back(a + yv[i]);
        }
        for (std::int64_t i = 0; i < m; ++i) {
            double s = 0;
            for (std::int64_t j = 0; j < k; ++j)
                s += r(xv[i * k + j]);
            want_sum.push_back(r(static_cast<float>(s)));
            for (std::int64_t c = 0; c < n; ++c) {
                double p = 0;
                for (std::int64_t j = 0; j < k; ++j)
                    p += double(r(xv[i * k + j])) * double(r(wv[j * n + c]));
                want_product.push_back(r(static_cast<float>(p)));
            }
        }
        for (const std::string& b : all_backends()) {
            INFO(dtype_name(t) << " on " << b);
            ComputeOptions o;
            o.backend = b;
            std::vector<HostArray> got = compute({map, row_sum, product, widened}, o);
            CHECK(got[0].dtype() == t);
            CHECK(values_of(got[0]) == want_map); // bit for bit
            CHECK(values_of(got[3]) == want_widened);
            // Sums: f32 accumulation in any order, against an f64 sum: within one ulp of the
            // format (2^-8 for bf16, 2^-11 for f16, relative).
            const double ulp = t == DType::BF16 ? 1.0 / 256 : 1.0 / 2048;
            const std::vector<float> s = values_of(got[1]), p = values_of(got[2]);
            for (std::size_t i = 0; i < want_sum.size(); ++i)
                CHECK(s[i] == doctest::Approx(want_sum[i]).epsilon(ulp).scale(1.0));
            for (std::size_t i = 0; i < want_product.size(); ++i)
                CHECK(p[i] == doctest::Approx(want_product[i]).epsilon(ulp).scale(1.0));
            for (float v : s) // every value is one of the format's
                CHECK(r(v) == v);
        }
    }
}

TEST_CASE("half formats: host arrays and safetensors keep the bits") {
    HostArray a({3}, DType::BF16);
    a.set_flat(0, 1.0 / 3.0);
    a.set_flat(1, -65504.0);
    a.set_flat(2, 1e-10);
    CHECK(a.bytes() == 6);
    CHECK(a.flat(0) == bf16_nearest(1.0f / 3.0f));
    HostArray h({2}, DType::F16);
    h.set_flat(0, 70000.0); // past the largest f16: infinity
    h.set_flat(1, 0.1);
    CHECK(std::isinf(h.flat(0)));
    CHECK(h.flat(1) == f16_nearest(0.1f));
    const std::string path = "test_half_precision.safetensors";
    nn::save_safetensors(path, {"a", "h"}, {a, h}, {});
    nn::SafetensorsFile f = nn::load_safetensors(path);
    REQUIRE(f.arrays.size() == 2);
    CHECK(f.arrays[0].dtype() == DType::BF16);
    CHECK(f.arrays[1].dtype() == DType::F16);
    CHECK(std::memcmp(f.arrays[0].raw(), a.raw(), a.bytes()) == 0);
    CHECK(std::memcmp(f.arrays[1].raw(), h.raw(), h.bytes()) == 0);
    std::remove(path.c_str());
}
