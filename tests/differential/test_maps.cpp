// Differential: elementwise maps with broadcasting, on shifted and strided shapes, integer
// semantics (wrapping, x/0), bools, selects, casts and transcendental functions.
#include "differential/differential.hpp"

using namespace hedra;
using test::check_differential;

TEST_CASE("differential: broadcasting float maps, odd sizes") {
    for (std::int64_t n : {1, 7, 33, 1000}) {
        CAPTURE(n);
        Array a = test::random_array(Shape::of({7, 1}), 1);
        Array b = test::random_array(Shape::of({1, n}), 2);
        Array c = test::random_array(Shape::of({n}), 3);
        check_differential({a * b + c, exp(a - b) / (1.0f + abs(c)), sigmoid(a * c) - tanh(b),
                            sqrt(abs(a + c)) + log(abs(b) + 1.0f), pow(abs(a), b)});
    }
}

TEST_CASE("differential: integer maps wrap and divide like the reference") {
    auto av = test::random_ints(64, 4, -2147483647, 2147483647);
    auto bv = test::random_ints(64, 5, -3, 3);
    Array a = array(av, Shape::of({8, 8}));
    Array b = array(bv, Shape::of({8, 8}));
    check_differential(
        {a + b * a, a / b, a * a - b, minimum(a, b), maximum(a, b * 7), pow(b, b + 2), -a, abs(a)});
    Array i64 = cast(a, DType::I64);
    check_differential({i64 * i64 + cast(b, DType::I64), i64 / cast(b, DType::I64)});
}

TEST_CASE("differential: bools, selects and casts") {
    Array x = test::random_array(Shape::of({5, 9}), 6);
    Array y = test::random_array(Shape::of({9}), 7);
    Array big = x * 3e9f;
    check_differential({x < y, where(x < y, x, y * 2.0f), cast(x * 100.0f, DType::I32),
                        cast(big, DType::I32), cast(x > 0.0f, DType::F32) + cast(y, DType::F64),
                        (x > 0.0f) == (y < 0.0f), relu(x) - maximum(x, 0.0f)});
}

TEST_CASE("differential: shifted and strided shapes, index components") {
    Shape s{range(1, 20, 3), range(-2, 3)};
    Array a = array(test::random_values(7 * 5, 8), s);
    Array i0 = index_components(s, 0), i1 = index_components(s, 1);
    check_differential({a * cast(i0, DType::F32) + cast(i1, DType::F32), i0 * 10 + i1,
                        reshape(a, Transform::permutation({1, 0})) + 1.0f,
                        reshape(a, Transform::scaling({-1, 2}))});
    Shape wide{range(3, 1003)};
    check_differential({index_components(wide, 0) * 3 - 7});
}
