// Reference backend: arrays on shifted and strided shapes, reshape by transforms and by shapes,
// and general affine views (diagonals, windows, broadcasts), checked against hand values.
#include <doctest/doctest.h>

#include <optional>

#include "hedra.hpp"

using namespace hedra;

namespace {

HostArray ref(const Array& a) {
    ComputeOptions options;
    options.backend = "reference";
    return compute(a, options);
}

void check_values(const HostArray& h, const std::vector<std::int64_t>& sizes,
                  const std::vector<double>& expected) {
    REQUIRE(h.sizes() == sizes);
    auto got = h.to_doubles();
    REQUIRE(got.size() == expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("element " << i);
        CHECK(got[i] == doctest::Approx(expected[i]));
    }
}

// 0, 1, 2, ... n-1 as f64.
std::vector<double> iota_values(int n) {
    std::vector<double> v(n);
    for (int i = 0; i < n; ++i)
        v[i] = i;
    return v;
}

} // namespace

TEST_CASE("reference: arrays on shifted strided shapes") {
    std::vector<double> v{1, 2, 3, 4, 5, 6};
    Array a = array(v, Shape{range(1, 7, 2), range(3, 5)});
    CHECK(a.shape()[0] == range(1, 7, 2));
    check_values(ref(a), {3, 2}, v);
    // index along axis 0 is 1, 3, 5; along axis 1 it is 3, 4.
    Array b = a + index_components(a.shape(), 0) * 10 + index_components(a.shape(), 1) * 100;
    check_values(ref(b), {3, 2}, {311, 412, 333, 434, 355, 456});
}

TEST_CASE("reference: reshape by transforms") {
    Array a = array(iota_values(12), Shape::of({3, 4})); // a[i][j] = 4i + j

    Array t = reshape(a, Transform::permutation({1, 0}));
    CHECK(t.shape() == Shape::of({4, 3}));
    std::vector<double> e_t;
    for (int j = 0; j < 4; ++j)
        for (int i = 0; i < 3; ++i)
            e_t.push_back(4 * i + j);
    check_values(ref(t), {4, 3}, e_t);

    Array s = reshape(a, Transform::shift({10, -2}));
    CHECK(s.shape() == Shape{range(10, 13), range(-2, 2)});
    check_values(ref(s), {3, 4}, iota_values(12));

    // Reversal: index -i holds a[i]; counters run over -2, -1, 0.
    Array r = reshape(a, Transform::scaling({-1, 1}));
    CHECK(r.shape() == Shape{range(-2, 1), range(4)});
    check_values(ref(r), {3, 4}, {8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3});

    Array st = reshape(a, Transform::scaling({2, 1}));
    CHECK(st.shape() == Shape{range(0, 6, 2), range(4)});
    check_values(ref(st), {3, 4}, iota_values(12));

    // out = (in1, 5 - in0): shape ([0,4), [3,6)); out[c0][c1] = a[2 - c1][c0].
    Array g = reshape(a, Transform(2, {TransformAxis{1, 1, 0}, TransformAxis{0, -1, 5}}));
    CHECK(g.shape() == Shape{range(4), range(3, 6)});
    std::vector<double> e_g;
    for (int c0 = 0; c0 < 4; ++c0)
        for (int c1 = 0; c1 < 3; ++c1)
            e_g.push_back(4 * (2 - c1) + c0);
    check_values(ref(g), {4, 3}, e_g);

    Array v = array(std::vector<double>{1, 2, 3, 4}, Shape::of({4}));
    Array up = reshape(v, Transform(1, {TransformAxis{-1, 1, 7}, TransformAxis{0, 1, 0}}));
    CHECK(up.shape() == Shape{range(7, 8), range(4)});
    check_values(ref(up), {1, 4}, {1, 2, 3, 4});

    Array row = array(std::vector<double>{5, 6, 7, 8}, Shape::of({1, 4}));
    Array down = reshape(row, Transform(2, {TransformAxis{1, 1, 0}}, {0, std::nullopt}));
    CHECK(down.shape() == Shape::of({4}));
    check_values(ref(down), {4}, {5, 6, 7, 8});
}

TEST_CASE("reference: reshape by shapes") {
    Array v = array(iota_values(6), Shape::of({6}));
    check_values(ref(reshape(v, Shape{range(10, 16)})), {6}, iota_values(6));
    check_values(ref(reshape(v, Shape{range(1, 4)})), {3}, {1, 2, 3});
    check_values(ref(reshape(v, Shape{range(0, 6, 2)})), {3}, {0, 2, 4});
    check_values(ref(reshape(v, Shape{range(1, 6, 3)})), {2}, {1, 4});
    Array w = reshape(v, Shape{range(1, 4)});
    check_values(ref(reshape(w, Shape{range(2, 4)})), {2}, {2, 3});

    Array col = array(std::vector<double>{1, 2, 3}, Shape::of({3, 1}));
    check_values(ref(reshape(col, Shape::of({3, 4}))), {3, 4},
                 {1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3});
    Array q = array(std::vector<double>{1, 2, 3, 4}, Shape::of({4}));
    check_values(ref(reshape(q, Shape::of({2, 4}))), {2, 4}, {1, 2, 3, 4, 1, 2, 3, 4});

    Array m = array(iota_values(16), Shape::of({4, 4}));
    Array inner = reshape(m, Shape{range(1, 3), range(1, 3)});
    CHECK(inner.shape() == Shape{range(1, 3), range(1, 3)});
    check_values(ref(inner), {2, 2}, {5, 6, 9, 10});
    check_values(ref(broadcast_to(col, Shape::of({2, 3, 2}))), {2, 3, 2},
                 {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3});
}

TEST_CASE("reference: general affine views") {
    Array m = array(iota_values(9), Shape::of({3, 3})); // m[i][j] = 3i + j
    Array diag = view(m, Shape::of({3}), AffineMap(1, 2, {1, 1}, {0, 0}));
    check_values(ref(diag), {3}, {0, 4, 8});

    // j in [1,4) reads m[j-1][2].
    Array column = view(m, Shape{range(1, 4)}, AffineMap(1, 2, {1, 0}, {-1, 2}));
    check_values(ref(column), {3}, {2, 5, 8});

    Array v = array(std::vector<double>{7, 8, 9}, Shape::of({3}));
    check_values(ref(view(v, Shape::of({2, 3}), AffineMap(2, 1, {0, 1}, {0}))), {2, 3},
                 {7, 8, 9, 7, 8, 9});

    // Overlapping windows x[2i + k].
    Array x = array(iota_values(7), Shape::of({7}));
    check_values(ref(view(x, Shape::of({3, 3}), AffineMap(2, 1, {2, 1}, {0}))), {3, 3},
                 {0, 1, 2, 2, 3, 4, 4, 5, 6});

    // A strided result shape reads through indices, not counters.
    check_values(ref(view(x, Shape{range(0, 7, 3)}, AffineMap::identity(1))), {3}, {0, 3, 6});
    // A strided input is read by index: s holds 10, 11, 12 at indices 0, 2, 4.
    Array s = array(std::vector<double>{10, 11, 12}, Shape{range(0, 6, 2)});
    check_values(ref(view(s, Shape::of({3}), AffineMap(1, 1, {2}, {0}))), {3}, {10, 11, 12});
    check_values(ref(view(s, Shape::of({2}), AffineMap(1, 1, {-2}, {4}))), {2}, {12, 11});

    // A view of a view of a reshape.
    Array t = reshape(m, Transform::shift({1, 1}));                         // indices [1,4) x [1,4)
    Array anti = view(t, Shape::of({3}), AffineMap(1, 2, {1, -1}, {1, 3})); // t[i+1][3-i]
    Array twice = view(anti, Shape::of({2, 2}), AffineMap(2, 1, {1, 1}, {0}));
    check_values(ref(anti), {3}, {2, 4, 6});
    check_values(ref(twice), {2, 2}, {2, 4, 4, 6});
}
