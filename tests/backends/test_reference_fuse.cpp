// Reference backend: fuse of block and interleaved strided pieces, overwrite (rightmost wins),
// stack along each axis, and pad, against hand values and naive loops.
#include <doctest/doctest.h>

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

} // namespace

TEST_CASE("reference: fuse of interleaved strided pieces") {
    Array even = array(std::vector<double>{0, 2, 4, 6}, Shape{range(0, 8, 2)});
    Array odd = array(std::vector<double>{1, 3, 5, 7}, Shape{range(1, 8, 2)});
    Array f = fuse({even, odd});
    CHECK(f.shape() == Shape::of({8}));
    check_values(ref(f), {8}, {0, 1, 2, 3, 4, 5, 6, 7});
    check_values(ref(fuse({odd, even})), {8}, {0, 1, 2, 3, 4, 5, 6, 7});

    // Three pieces of stride 3, shifted to start at 10.
    std::vector<Array> thirds;
    for (int r = 0; r < 3; ++r)
        thirds.push_back(full(Shape{range(10 + r, 16, 3)}, 100.0 + r, DType::F64));
    Array t = fuse(thirds);
    CHECK(t.shape() == Shape{range(10, 16)});
    check_values(ref(t), {6}, {100, 101, 102, 100, 101, 102});

    // 2D: four pieces interleaved on both axes; piece p holds 10*p + counter.
    std::vector<Array> pieces;
    for (int pr = 0; pr < 2; ++pr)
        for (int pc = 0; pc < 2; ++pc) {
            int p = 2 * pr + pc;
            std::vector<double> vals;
            for (int i = 0; i < 6; ++i)
                vals.push_back(10 * p + i);
            pieces.push_back(array(vals, Shape{range(pr, 4, 2), range(pc, 6, 2)}));
        }
    std::vector<double> expect;
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 6; ++j)
            expect.push_back(10 * (2 * (i % 2) + j % 2) + (i / 2) * 3 + j / 2);
    check_values(ref(fuse(pieces)), {4, 6}, expect);

    // Blocks.
    Array top = full(Shape{range(0, 2), range(0, 3)}, 1.0);
    Array bottom =
        array(std::vector<float>{4, 5, 6, 7, 8, 9, 10, 11, 12}, Shape{range(2, 5), range(0, 3)});
    check_values(ref(fuse({top, bottom})), {5, 3},
                 {1, 1, 1, 1, 1, 1, 4, 5, 6, 7, 8, 9, 10, 11, 12});
}

TEST_CASE("reference: overwrite lets the rightmost piece win") {
    Array base = zeros(Shape::of({6}));
    check_values(ref(overwrite({base, full(Shape{range(2, 4)}, 1.0)})), {6}, {0, 0, 1, 1, 0, 0});
    Array three = overwrite({base, full(Shape{range(1, 5)}, 1.0), full(Shape{range(3, 6)}, 2.0)});
    check_values(ref(three), {6}, {0, 1, 1, 2, 2, 2});
    Array under = overwrite({full(Shape{range(3, 6)}, 2.0), full(Shape{range(0, 4)}, 1.0)});
    check_values(ref(under), {6}, {1, 1, 1, 1, 2, 2});
    // Strided overwrite: every second element replaced.
    check_values(ref(overwrite({base, full(Shape{range(1, 6, 2)}, 5.0)})), {6}, {0, 5, 0, 5, 0, 5});

    std::vector<double> uv(16);
    for (int i = 0; i < 16; ++i)
        uv[i] = i;
    Array u = array(uv, Shape::of({4, 4}));
    Array inner = reshape(u, Shape{range(1, 3), range(1, 3)}) * -1;
    check_values(ref(overwrite({u, inner})), {4, 4},
                 {0, 1, 2, 3, 4, -5, -6, 7, 8, -9, -10, 11, 12, 13, 14, 15});
    Array other = u + 100;
    check_values(ref(overwrite({u, other})), {4, 4},
                 {100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115});
}

TEST_CASE("reference: stack along each axis") {
    std::vector<double> av{1, 2, 3, 4, 5, 6}, bv{-1, -2, -3, -4, -5, -6};
    Array a = array(av, Shape::of({2, 3})), b = array(bv, Shape::of({2, 3}));
    auto pick = [&](int p, int i, int j) { return (p == 0 ? av : bv)[i * 3 + j]; };
    std::vector<double> e0, e1, e2;
    for (int p = 0; p < 2; ++p)
        for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 3; ++j)
                e0.push_back(pick(p, i, j));
    for (int i = 0; i < 2; ++i)
        for (int p = 0; p < 2; ++p)
            for (int j = 0; j < 3; ++j)
                e1.push_back(pick(p, i, j));
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j)
            for (int p = 0; p < 2; ++p)
                e2.push_back(pick(p, i, j));
    check_values(ref(stack(0, {a, b})), {2, 2, 3}, e0);
    check_values(ref(stack(1, {a, b})), {2, 2, 3}, e1);
    check_values(ref(stack(2, {a, b})), {2, 3, 2}, e2);
    check_values(ref(stack(0, {a, b, a})), {3, 2, 3}, [&] {
        auto e = e0;
        e.insert(e.end(), av.begin(), av.end());
        return e;
    }());
    Array s = stack(0, {constant(1.0), constant(2.0), constant(3.0)});
    check_values(ref(s), {3}, {1, 2, 3});
}

TEST_CASE("reference: pad") {
    Array v = array(std::vector<double>{1, 2, 3}, Shape::of({3}));
    check_values(ref(pad(v, {{1, 2}}, 9.0)), {6}, {9, 1, 2, 3, 9, 9});
    Array m = array(std::vector<double>{1, 2, 3, 4}, Shape::of({2, 2}));
    check_values(ref(pad(m, {{1, 0}, {0, 1}})), {3, 3}, {0, 0, 0, 1, 2, 0, 3, 4, 0});
    check_values(ref(pad(m, {{0, 0}, {0, 0}})), {2, 2}, {1, 2, 3, 4});
}
