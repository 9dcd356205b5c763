// The functions and operators added to the scalar language (sin, cos, erf, log1p, expm1,
// floor, ceil, round, %, bit operations, shifts): the reference backend against the C++
// standard library computed here, then every backend against the reference, bit for bit.
#include "differential/differential.hpp"

#include <cstdint>

using namespace hedra;
using test::check_differential;

TEST_CASE("math functions: the reference equals the C library, rounded once to f32") {
    std::vector<float> xs = {-3.7f, -2.5f, -1.5f, -0.5f, -0.0f, 0.25f, 0.5f, 1.5f, 2.5f, 7.0f};
    Array x = array(xs, Shape::of({static_cast<std::int64_t>(xs.size())}));
    auto r = compute(std::vector<Array>{sin(x), cos(x), erf(x), log1p(abs(x)), expm1(x), floor(x),
                                        ceil(x), round(x), x % 1.5f},
                     test::on_backend("reference"));
    for (std::size_t i = 0; i < xs.size(); ++i) {
        double v = xs[i];
        CAPTURE(v);
        auto f32 = [](double d) { return static_cast<double>(static_cast<float>(d)); };
        CHECK(test::flat_values(r[0])[i] == f32(std::sin(v)));
        CHECK(test::flat_values(r[1])[i] == f32(std::cos(v)));
        CHECK(test::flat_values(r[2])[i] == f32(std::erf(v)));
        CHECK(test::flat_values(r[3])[i] == f32(std::log1p(std::fabs(v))));
        CHECK(test::flat_values(r[4])[i] == f32(std::expm1(v)));
        CHECK(test::flat_values(r[5])[i] == std::floor(v));
        CHECK(test::flat_values(r[6])[i] == std::ceil(v));
        CHECK(test::flat_values(r[8])[i] == std::fmod(v, 1.5));
    }
    // Half to even, as NumPy and PyTorch round.
    CHECK(test::flat_values(r[7]) == std::vector<double>{-4, -2, -2, -0.0, -0.0, 0, 0, 2, 2, 7});
}

TEST_CASE("integer %, bit operations and shifts: the reference equals C++ on the bits") {
    std::vector<std::int32_t> av = {7, -7, 7, -7, 0, INT32_MIN, INT32_MIN, 123456789, -1, 5};
    std::vector<std::int32_t> bv = {3, 3, -3, -3, 5, -1, 0, 0, 31, 33};
    Array a = array(av, Shape::of({10})), b = array(bv, Shape::of({10}));
    auto r = compute(std::vector<Array>{a % b, a & b, a | b, a ^ b, a << b, a >> b},
                     test::on_backend("reference"));
    for (std::size_t i = 0; i < av.size(); ++i) {
        std::int64_t x = av[i], y = bv[i];
        CAPTURE(x);
        CAPTURE(y);
        std::int64_t mod = y == 0 ? x : y == -1 ? 0 : x % y;
        CHECK(test::flat_values(r[0])[i] == static_cast<double>(mod));
        CHECK(test::flat_values(r[1])[i] == static_cast<double>(x & y));
        CHECK(test::flat_values(r[2])[i] == static_cast<double>(x | y));
        CHECK(test::flat_values(r[3])[i] == static_cast<double>(x ^ y));
        std::int32_t shl =
            y < 0 || y >= 32 ? 0 : static_cast<std::int32_t>(static_cast<std::uint32_t>(x) << y);
        std::int32_t shr = y < 0 || y >= 32 ? (x < 0 ? -1 : 0) : static_cast<std::int32_t>(x) >> y;
        CHECK(test::flat_values(r[4])[i] == static_cast<double>(shl));
        CHECK(test::flat_values(r[5])[i] == static_cast<double>(shr));
        // The division rule holds: a == (a / b) * b + a % b.
        CHECK(static_cast<std::int32_t>(
                  static_cast<std::uint32_t>((y == 0    ? 0
                                              : y == -1 ? -static_cast<std::uint32_t>(x)
                                                        : x / y) *
                                                 y +
                                             mod)) == static_cast<std::int32_t>(x));
    }
    Array c = array(std::vector<std::int64_t>{1, 2}, Shape::of({2}));
    auto big = compute(std::vector<Array>{c << 62, c << 64, (c << 63) >> 63},
                       test::on_backend("reference"));
    CHECK(test::flat_values(big[0]) ==
          std::vector<double>{4611686018427387904.0, -9223372036854775808.0});
    CHECK(test::flat_values(big[1]) == std::vector<double>{0, 0});
    CHECK(test::flat_values(big[2]) == std::vector<double>{-1, 0});
}

TEST_CASE("differential: math functions and integer operations") {
    Array x = test::random_array(Shape::of({6, 9}), 21);
    Array y = test::random_array(Shape::of({9}), 22);
    check_differential({sin(x * 4.0f), cos(x) - sin(y), erf(x * 2.0f), log1p(abs(x)), expm1(x),
                        floor(x * 3.0f), ceil(x * 3.0f), round(x * 4.0f), (x * 7.0f) % (y + 2.0f),
                        cast(x, DType::F64) % 0.25});
    auto av = test::random_ints(64, 23, -2147483647, 2147483647);
    auto bv = test::random_ints(64, 24, -3, 40);
    Array a = array(av, Shape::of({8, 8})), b = array(bv, Shape::of({8, 8}));
    check_differential({a % b, a & b, a | b, a ^ b, a << b, a >> b, (a >> 16) & 0xffff,
                        cast(a, DType::I64) << cast(b, DType::I64), (a > 0) ^ (b > 3)});
}

TEST_CASE("bit operations need integer operands") {
    Array x = array(std::vector<float>{1.5f}, Shape::of({1}));
    CHECK_THROWS_WITH_AS((void)(x & 1), doctest::Contains("'bitand' needs integer operands"),
                         Error);
    Array t = array(std::vector<bool>{true}, Shape::of({1}));
    CHECK_THROWS_WITH_AS((void)(t << t), doctest::Contains("'shl' needs integer operands"), Error);
}
