// Library functions evaluated on the reference backend against naive loops: flatten and
// unflatten (row-major), transpose, mean, where/relu, matmul on shifted and strided ranges and
// on integers and booleans, reversed views composed with other views, and stack.
#include <doctest/doctest.h>

#include "hedra.hpp"

using namespace hedra;

namespace {

HostArray ref(const Array& a) {
    ComputeOptions o;
    o.backend = "reference";
    return compute(a, o);
}

std::vector<float> iota_values(std::size_t n, float scale = 1.0f, float shift = 0.0f) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = scale * static_cast<float>(i) + shift;
    return v;
}

void check_values(const HostArray& h, const std::vector<std::int64_t>& sizes,
                  const std::vector<double>& expected) {
    REQUIRE(h.sizes() == sizes);
    auto got = h.to_doubles();
    REQUIRE(got.size() == expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("element " << i);
        CHECK(got[i] == doctest::Approx(expected[i]).epsilon(1e-6));
    }
}

} // namespace

TEST_CASE("library values: flatten is row-major and unflatten inverts it") {
    auto v = iota_values(24);
    Array a = array(v, Shape::of({2, 3, 4}));
    std::vector<double> flat(v.begin(), v.end()); // row-major order is the data order
    check_values(ref(flatten(a)), {24}, flat);
    check_values(ref(flatten(a, 1, 2)), {2, 12}, flat);
    check_values(ref(flatten(a, 0, 1)), {6, 4}, flat);
    check_values(ref(unflatten(flatten(a), 0, {4, 6})), {4, 6}, flat);
    check_values(ref(unflatten(array(v, Shape::of({24})), 0, {2, 3, 4})), {2, 3, 4}, flat);
    // flatten of a transposed array: element [i][j] of t is a[j][i].
    Array m = array(iota_values(6), Shape::of({2, 3}));
    check_values(ref(flatten(transpose(m))), {6}, {0, 3, 1, 4, 2, 5});
}

TEST_CASE("library values: transpose with a permutation") {
    auto v = iota_values(24);
    Array a = array(v, Shape::of({2, 3, 4}));
    std::vector<double> want;
    for (int j = 0; j < 3; ++j)         // result axis 0 = input axis 1
        for (int k = 0; k < 4; ++k)     // result axis 1 = input axis 2
            for (int i = 0; i < 2; ++i) // result axis 2 = input axis 0
                want.push_back(v[(i * 3 + j) * 4 + k]);
    check_values(ref(transpose(a, {1, 2, 0})), {3, 4, 2}, want);
}

TEST_CASE("library values: mean, where and relu") {
    Array a = array(std::vector<std::int32_t>{1, 2, 3, 4, 5, 7}, Shape::of({2, 3}));
    check_values(ref(mean(a, {1})), {2}, {2.0, 16.0 / 3.0});
    check_values(ref(mean(a)), {}, {22.0 / 6.0});
    Array f = array(std::vector<float>{-1.5f, 0.0f, 2.0f, -3.0f}, Shape::of({4}));
    check_values(ref(relu(f)), {4}, {0, 0, 2, 0});
    check_values(ref(where(f < 0, -f, f * 10)), {4}, {1.5, 0, 20, 3});
}

TEST_CASE("library values: matmul on shifted and strided ranges") {
    auto va = iota_values(6, 0.5f, -1.0f), vb = iota_values(6, 1.0f, -3.0f);
    Array a = array(va, Shape{range(1, 3), range(0, 6, 2)}); // 2x3, k on a stride-2 range
    Array b2 = array(std::vector<float>(vb.begin(), vb.begin() + 6), Shape{range(5, 8), range(2)});
    std::vector<double> want;
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) {
            double s = 0;
            for (int k = 0; k < 3; ++k)
                s += double(va[i * 3 + k]) * double(vb[k * 2 + j]);
            want.push_back(s);
        }
    Array c = matmul(a, b2);
    CHECK(c.shape() == Shape{range(1, 3), range(2)});
    check_values(ref(c), {2, 2}, want);
}

TEST_CASE("library values: integer and boolean matmul") {
    std::vector<std::int32_t> a{1, -2, 3, 4, 5, -6}, b{7, 8, -9, 10, 11, 12};
    Array c = matmul(array(a, Shape::of({2, 3})), array(b, Shape::of({3, 2})));
    CHECK(c.dtype() == DType::I32);
    check_values(ref(c), {2, 2},
                 {1 * 7 + -2 * -9 + 3 * 11, 1 * 8 + -2 * 10 + 3 * 12, 4 * 7 + 5 * -9 + -6 * 11,
                  4 * 8 + 5 * 10 + -6 * 12});
    std::vector<bool> p{true, false, false, false}, q{false, true, false, false};
    // p = [[1,0],[0,0]], q = [[0,1],[0,0]]: p.q = [[0,1],[0,0]], q.p = 0.
    check_values(ref(matmul(array(p, Shape::of({2, 2})), array(q, Shape::of({2, 2})))), {2, 2},
                 {0, 1, 0, 0});
    check_values(ref(matmul(array(q, Shape::of({2, 2})), array(p, Shape::of({2, 2})))), {2, 2},
                 {0, 0, 0, 0});
}

TEST_CASE("library values: a reversed view composed with a window and a shift") {
    auto v = iota_values(6);
    Array x = array(v, Shape::of({6}));
    Array r = reshape(x, Transform::scaling({-1}));                      // indices -5..0
    Array w = view(r, Shape::of({4, 3}), AffineMap(2, 1, {1, 1}, {-5})); // windows of r
    Array s = reshape(w, Transform::shift({10, 0}));
    std::vector<double> want;
    for (int i = 0; i < 4; ++i)
        for (int k = 0; k < 3; ++k)
            want.push_back(v[5 - (i + k)]); // r[j] = x[-j]
    check_values(ref(s), {4, 3}, want);
    CHECK(s.node()->kind == NodeKind::View);
    CHECK(s.node()->inputs.at(0) == x.node());
}

TEST_CASE("library values: stack and rebase") {
    Array a = array(std::vector<float>{1, 2, 3}, Shape{range(2, 5)});
    Array b = array(std::vector<float>{4, 5, 6}, Shape{range(2, 5)});
    check_values(ref(stack(1, {a, b})), {3, 2}, {1, 4, 2, 5, 3, 6});
    check_values(ref(rebase(pad(a, {{1, 0}}, 9.0))), {4}, {9, 1, 2, 3});
}
