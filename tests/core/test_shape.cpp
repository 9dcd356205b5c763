// Shape: sizes, printing, membership, intersection, and its bad inputs.
#include <doctest/doctest.h>

#include <random>

#include "core/shape.hpp"
#include "expect_error.hpp"

using namespace hedra;

TEST_CASE("shape sizes") {
    Shape s = Shape::of({3, 4});
    CHECK(s == Shape{range(3), range(4)});
    CHECK(s.rank() == 2);
    CHECK(s.sizes() == std::vector<std::int64_t>{3, 4});
    CHECK(s.size() == 12);
    CHECK_FALSE(s.empty());
    CHECK(s[1] == range(4));

    Shape scalar;
    CHECK(scalar.rank() == 0);
    CHECK(scalar.size() == 1);
    CHECK_FALSE(scalar.empty());

    Shape strided{range(1, 3), range(0, 8, 2)};
    CHECK(strided.sizes() == std::vector<std::int64_t>{2, 4});
    CHECK(strided.size() == 8);
    CHECK(Shape{range(3), range(0)}.empty());
    CHECK(Shape::of({}).rank() == 0);
}

TEST_CASE("shape printing") {
    CHECK(Shape::of({3, 4}).to_string() == "(3,4)");
    CHECK(Shape().to_string() == "()");
    CHECK(Shape::of({5}).to_string() == "(5)");
    CHECK(Shape{range(1, 3), range(0, 8, 2)}.to_string() == "([1,3), [0,8):2)");
    CHECK(Shape{range(4), Range(2, 1, 1)}.to_string() == "([0,4), {2})");
    CHECK(Shape{range(4), Range(0, 1, 1)}.to_string() == "(4,1)");
    CHECK(Shape{range(7, 7), range(2)}.to_string() == "(0,2)"); // empty ranges are [0,0)
}

TEST_CASE("shape membership") {
    Shape s{range(1, 4), range(0, 9, 3)};
    CHECK(s.contains({1, 0}));
    CHECK(s.contains({3, 6}));
    CHECK_FALSE(s.contains({3, 5}));
    CHECK_FALSE(s.contains({0, 0}));
    CHECK_FALSE(s.contains({1}));
    CHECK(Shape().contains(std::vector<std::int64_t>{}));

    CHECK(s.contains(Shape{range(2, 3), range(3, 9, 6)}));
    CHECK_FALSE(s.contains(Shape{range(2, 5), range(3, 9, 6)}));
    CHECK_FALSE(s.contains(Shape{range(2, 3)}));                 // rank differs
    CHECK(s.contains(Shape{range(7, 9), range(0)}));             // empty
    CHECK_FALSE(s.contains(Shape{range(1, 4), range(0, 9, 2)})); // 2 not in the range
}

TEST_CASE("shape intersect and disjoint match enumeration") {
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> start(-4, 4), step(1, 3), size(0, 4);
    auto random_shape = [&] {
        return Shape{Range(start(rng), step(rng), size(rng)),
                     Range(start(rng), step(rng), size(rng))};
    };
    for (int trial = 0; trial < 500; ++trial) {
        Shape a = random_shape(), b = random_shape(), c = intersect(a, b);
        bool any = false;
        for (std::int64_t i = -6; i <= 20; ++i)
            for (std::int64_t j = -6; j <= 20; ++j) {
                bool both = a.contains({i, j}) && b.contains({i, j});
                CHECK(c.contains({i, j}) == both);
                any = any || both;
            }
        CHECK(disjoint(a, b) == !any);
        CHECK(a.contains(c));
        CHECK(b.contains(c));
    }
}

TEST_CASE("bad shapes throw") {
    CHECK_ERROR(Shape::of({3, -2}), "Shape::of", "size -2", "negative");
    std::vector<Range> nine(9, range(2));
    CHECK_ERROR(Shape(nine), "rank 9", "maximum rank 8");
    CHECK_ERROR((Shape{range(1), range(1), range(1), range(1), range(1), range(1), range(1),
                       range(1), range(1)}),
                "rank 9");
    CHECK_NOTHROW(Shape(std::vector<Range>(8, range(2))));
    CHECK_ERROR(intersect(Shape::of({2}), Shape::of({2, 2})), "internal error", "rank");
}
