// Small API rules a new user meets first: reshape dropping unit axes, lazy over any number of
// operands, every library function recording its caller, and the documented numeric rules
// (i32 wraps, f32 0/0 is NaN, integer x/0 == 0) on every backend.
#include "differential/differential.hpp"

#include <cstdint>
#include <limits>

#include "nn/layers.hpp"

using namespace hedra;
using test::check_differential;

namespace {

bool created_here(const Array& a, std::uint_least32_t line) {
    const SourceLocation& loc = a.node()->loc;
    return std::string(loc.file_name()).find("test_api_rules.cpp") != std::string::npos &&
           loc.line() == line;
}

} // namespace

TEST_CASE("reshape by a Shape drops unit axes") {
    Array a = array(std::vector<float>{1, 2, 3, 4, 5}, Shape::of({5, 1}));
    Array b = reshape(a, Shape::of({5}));
    CHECK(b.shape() == Shape::of({5}));
    Array c = array(std::vector<float>{7, 8, 9}, Shape{range(2, 3), range(3), range(-1, 0)});
    Array d = reshape(c, Shape::of({3}));
    Array e = reshape(c, Shape::of({1, 3})); // (1,3,1): a unit axis is kept where it fits
    check_differential({b, d, e});
    CHECK(test::flat_values(compute(d)) == std::vector<double>{7, 8, 9});
}

TEST_CASE("reshape by a Shape: dropping an axis of size other than 1 is an error") {
    Array a = array(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape::of({2, 3}));
    CHECK_THROWS_WITH_AS(reshape(a, Shape::of({6})),
                         doctest::Contains("only unit axes can be dropped"), Error);
}

TEST_CASE("lazy takes any number of operands") {
    std::vector<Array> x;
    for (int i = 0; i < 7; ++i)
        x.push_back(array(std::vector<float>{1.0f + i, 2.0f * i}, Shape::of({2})));
    Array y = lazy([](auto a, auto b, auto c, auto d, auto e, auto f,
                      auto g) { return a + b * c - d / e + f * g; },
                   x[0], x[1], x[2], x[3], x[4], x[5], x[6]);
    Array z = lazy([](auto a, auto k, auto b) { return a * k + b; }, x[0], 3, x[1]);
    auto r = compute(std::vector<Array>{y, z});
    for (std::int64_t i = 0; i < 2; ++i) {
        float a[7];
        for (int k = 0; k < 7; ++k)
            a[k] = i == 0 ? 1.0f + k : 2.0f * k;
        CHECK(r[0].flat(i) == doctest::Approx(a[0] + a[1] * a[2] - a[3] / a[4] + a[5] * a[6]));
        CHECK(r[1].flat(i) == doctest::Approx(a[0] * 3 + a[1]));
    }
    check_differential({y, z});
}

TEST_CASE("library functions record their caller") {
    Array x = array(std::vector<float>{0.125f, -3.5f, 2.25f}, Shape::of({3}));
    Array s = sum(x);
    CHECK(created_here(s, __LINE__ - 1));
    Array m = mean(x * 1.5f);
    CHECK(created_here(m, __LINE__ - 1));
    Array mx = max(x + 0.5f);
    CHECK(created_here(mx, __LINE__ - 1));
    Array mn = min(x - 0.5f);
    CHECK(created_here(mn, __LINE__ - 1));
    Array t = tanh(x * 0.75f);
    CHECK(created_here(t, __LINE__ - 1));
    Array n = -x;
    CHECK(created_here(n, __LINE__ - 1));
    Array c = cast(x, DType::F64);
    CHECK(created_here(c, __LINE__ - 1));
    Array w = where(x > 0.0f, x, 0.0f);
    CHECK(created_here(w, __LINE__ - 1));
    Array l = lazy([](auto v) { return v * v + 3.0f; }, x);
    CHECK(created_here(l, __LINE__ - 1));
    Array sm = nn::softmax(x * 2.5f, 0);
    CHECK(created_here(sm, __LINE__ - 1));
    // ... and an error about them names the caller's line.
    Array bad = sum(array(std::vector<float>{1, 2, 3, 4}, Shape::of({2, 2})), {1});
    const auto bad_line = __LINE__ - 1;
    try {
        (void)(bad + array(std::vector<float>{1, 2, 3}, Shape::of({3})));
        FAIL("no error");
    } catch (const Error& e) {
        CHECK(std::string(e.what()).find("test_api_rules.cpp:" + std::to_string(bad_line)) !=
              std::string::npos);
    }
}

TEST_CASE("numeric rules: i32 wraps, f32 0/0 is NaN, integer x/0 is 0, on every backend") {
    Array big =
        array(std::vector<std::int32_t>{2147483647, -2147483647 - 1, 65536, 7}, Shape::of({4}));
    Array zero_i = array(std::vector<std::int32_t>{0, 0, 0, 0}, Shape::of({4}));
    Array f = array(std::vector<float>{0.0f, 1.0f, -1.0f, 0.0f}, Shape::of({4}));
    Array zero_f = array(std::vector<float>{0.0f, 0.0f, 0.0f, 0.0f}, Shape::of({4}));
    std::vector<Array> outs = {big + 1, big * big, -big, big / zero_i, big % zero_i, f / zero_f};
    check_differential(outs);
    auto r = compute(outs, test::on_backend("reference"));
    CHECK(test::flat_values(r[0]) == std::vector<double>{-2147483648.0, -2147483647.0, 65537, 8});
    CHECK(test::flat_values(r[1]) == std::vector<double>{1, 0, 0, 49});
    CHECK(test::flat_values(r[2]) == std::vector<double>{-2147483647.0, -2147483648.0, -65536, -7});
    CHECK(test::flat_values(r[3]) == std::vector<double>{0, 0, 0, 0});
    CHECK(test::flat_values(r[4]) == std::vector<double>{2147483647.0, -2147483648.0, 65536, 7});
    std::vector<double> q = test::flat_values(r[5]);
    CHECK(std::isnan(q[0]));
    CHECK(q[1] == std::numeric_limits<double>::infinity());
    CHECK(q[2] == -std::numeric_limits<double>::infinity());
    CHECK(std::isnan(q[3]));
    CHECK(r[5].to_string().find("nan") != std::string::npos);
    CHECK(r[5].to_string().find("-nan") == std::string::npos);
}

TEST_CASE("argmax and argmin: NumPy's rules (first of ties, NaN wins), on every backend") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> v = {3, 1, 3, -2, 0.5f, 0.5f, -2, 7, nan, 2, nan, -9, 4, 4, 4, 4};
    Array a = array(v, Shape::of({4, 4}));
    std::vector<Array> outs = {argmax(a, 1), argmin(a, 1), argmax(a, 0), argmin(a, -2, true),
                               argmax(cast(a * 10.0f, DType::I32), 1)};
    check_differential(outs);
    auto r = compute(outs, test::on_backend("reference"));
    // Naive loops with NumPy's semantics.
    auto arg = [&](int row, bool largest) {
        int best = 0;
        for (int j = 1; j < 4; ++j) {
            float x = v[row * 4 + j], b = v[row * 4 + best];
            if (std::isnan(b)) break;
            if (std::isnan(x) || (largest ? x > b : x < b)) best = j;
        }
        return static_cast<double>(best);
    };
    for (int i = 0; i < 4; ++i) {
        CAPTURE(i);
        CHECK(r[0].flat(i) == arg(i, true));
        CHECK(r[1].flat(i) == arg(i, false));
    }
    CHECK(test::flat_values(r[0]) == std::vector<double>{0, 3, 0, 0});
    CHECK(test::flat_values(r[1]) == std::vector<double>{3, 2, 0, 0});
    CHECK(test::flat_values(r[2]) == std::vector<double>{2, 3, 2, 1});
    CHECK(r[3].sizes() == std::vector<std::int64_t>{1, 4});
    CHECK(test::flat_values(r[3]) == std::vector<double>{2, 1, 2, 2});
    // A shifted axis gives index values, as index_components does.
    Array s = array(std::vector<float>{1, 5, 2}, Shape{range(10, 13)});
    CHECK(compute(argmax(s, 0)).flat(0) == 11);
    CHECK_THROWS_WITH_AS(argmax(array(std::vector<float>{}, Shape::of({2, 0})), 1),
                         doctest::Contains("argmax: axis 1 of shape (2,0) is empty"), Error);
}
