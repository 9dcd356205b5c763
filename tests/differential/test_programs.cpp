// Differential: whole programs: Jacobi sweeps with overwrite, softmax, fuse and stack of
// strided pieces, pad, and iota-built masks.
#include "differential/differential.hpp"

using namespace hedra;
using test::check_differential;
using test::Compare;

namespace {

// One 5-point Jacobi sweep on the interior of u, boundary kept (overwrite).
Array jacobi_sweep(const Array& u) {
    std::int64_t n = u.shape()[0].size, m = u.shape()[1].size;
    Shape interior{range(1, n - 1), range(1, m - 1)};
    auto shifted = [&](std::int64_t di, std::int64_t dj) {
        return view(u, interior, AffineMap(2, 2, {1, 0, 0, 1}, {di, dj}));
    };
    Array next = (shifted(-1, 0) + shifted(1, 0) + shifted(0, -1) + shifted(0, 1)) * 0.25f;
    return overwrite({u, next});
}

} // namespace

TEST_CASE("differential: Jacobi sweeps with overwrite are exact") {
    for (std::int64_t n : {3, 7, 33}) {
        CAPTURE(n);
        Array u = test::random_array(Shape::of({n, n + 2}), 31);
        for (int sweep = 0; sweep < 4; ++sweep)
            u = jacobi_sweep(u);
        check_differential({u});
    }
}

TEST_CASE("differential: softmax over the last axis") {
    for (std::int64_t n : {1, 7, 1000}) {
        CAPTURE(n);
        Array x = test::random_array(Shape::of({7, n}), 32) * 5.0f;
        Array shifted = x - max(x, {1}, true);
        Array e = exp(shifted);
        check_differential({e / sum(e, {1}, true)}, Compare::Tolerance);
    }
}

TEST_CASE("differential: fuse, stack, pad") {
    Array x = test::random_array(Shape::of({8, 5}), 33);
    Array even = reshape(x, Shape{range(0, 8, 2), range(5)});
    Array odd = reshape(x, Shape{range(1, 8, 2), range(5)});
    check_differential({fuse({odd * 2.0f, even + 1.0f}), stack(0, {x, x * 3.0f}),
                        stack(1, {x, -x, x + 1.0f}), pad(x, {{1, 2}, {0, 3}})});
}

TEST_CASE("differential: causal mask from index components") {
    Shape s = Shape::of({9, 9});
    Array i = index_components(s, 0), j = index_components(s, 1);
    Array scores = test::random_array(s, 34);
    Array masked = where(j <= i, scores, -1e9f);
    check_differential({masked, j <= i, sum(cast(j <= i, DType::I32), {1})});
}

TEST_CASE("differential: empty arrays and reductions over empty axes") {
    Array x = array(std::vector<float>{}, Shape::of({0, 4}));
    Array y = test::random_array(Shape::of({3, 4}), 35);
    check_differential({sum(x, {0}), x * 2.0f, max(sum(x, {0}) + y, {0})});
}
