// Transform: validation messages, apply on indices and shapes, and inverse / compose /
// to_affine_map checked by applying them to every index of small random domains.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <set>

#include "core/transform.hpp"
#include "expect_error.hpp"

using namespace hedra;
using Index = std::vector<std::int64_t>;
using Pins = std::vector<std::optional<std::int64_t>>;

namespace {

// A valid transform of input rank n: some inputs pinned, the others used once (shuffled), plus
// up to two constant outputs.
Transform random_transform(std::mt19937& rng, int n, bool unit_scales) {
    std::uniform_int_distribution<int> coin(0, 3), val(-3, 3), scale(1, 3), off(-5, 5);
    Pins pins(n);
    std::vector<int> used;
    for (int a = 0; a < n; ++a) {
        if (coin(rng) == 0)
            pins[a] = val(rng);
        else
            used.push_back(a);
    }
    std::shuffle(used.begin(), used.end(), rng);
    std::vector<TransformAxis> outs;
    for (int a : used) {
        std::int64_t s = unit_scales ? 1 : scale(rng);
        if (coin(rng) < 2) s = -s;
        outs.push_back({a, s, off(rng)});
    }
    for (int c = coin(rng) % 3; c > 0; --c) {
        std::uniform_int_distribution<std::size_t> pos(0, outs.size());
        outs.insert(outs.begin() + static_cast<std::ptrdiff_t>(pos(rng)),
                    TransformAxis{-1, 1, off(rng)});
    }
    return Transform(n, outs, pins);
}

// Every index in [-r, r]^n (pins ignored).
std::vector<Index> box(int n, int r) {
    std::vector<Index> out{Index{}};
    for (int a = 0; a < n; ++a) {
        std::vector<Index> next;
        for (auto& i : out)
            for (int v = -r; v <= r; ++v) {
                next.push_back(i);
                next.back().push_back(v);
            }
        out = std::move(next);
    }
    return out;
}

bool satisfies_pins(const Transform& t, const Index& i) {
    for (int a = 0; a < t.input_rank(); ++a)
        if (t.input_pins()[a] && i[a] != *t.input_pins()[a]) return false;
    return true;
}

std::set<Index> indices(const Shape& s) {
    std::set<Index> out{Index{}};
    for (int a = 0; a < s.rank(); ++a) {
        std::set<Index> next;
        for (auto& i : out)
            for (std::int64_t k = 0; k < s[a].size; ++k) {
                Index j = i;
                j.push_back(s[a].index(k));
                next.insert(j);
            }
        out = std::move(next);
    }
    return out;
}

} // namespace

TEST_CASE("transform construction and printing") {
    Transform t(2, {{1, 1, 0}, {0, 2, 1}});
    CHECK(t.to_string() == "(i0, i1) -> (i1, 2*i0 + 1)");
    CHECK(t.input_rank() == 2);
    CHECK(t.output_rank() == 2);
    CHECK(t.apply({3, 5}) == Index{5, 7});
    CHECK(t.input_pins() == Pins{std::nullopt, std::nullopt});

    Transform drop(2, {{0, 1, 0}}, {std::nullopt, 3});
    CHECK(drop.to_string() == "(i0, i1=3) -> (i0)");
    CHECK(drop.apply({4, 3}) == Index{4});

    Transform add(1, {{-1, 1, 4}, {0, -1, 2}});
    CHECK(add.to_string() == "(i0) -> (4, -i0 + 2)");
    CHECK(add.apply({7}) == Index{4, -5});
    CHECK(Transform(1, {{-1, 0, 4}, {0, 1, 0}}) == Transform(1, {{-1, 1, 4}, {0, 1, 0}}));

    CHECK(Transform::identity(2).to_string() == "(i0, i1) -> (i0, i1)");
    CHECK(Transform::identity(0).apply(Index{}).empty());
    CHECK(Transform::permutation({2, 0, 1}).apply({10, 11, 12}) == Index{12, 10, 11});
    CHECK(Transform::shift({1, -2}).to_string() == "(i0, i1) -> (i0 + 1, i1 - 2)");
    CHECK(Transform::scaling({3, -1}).apply({2, 5}) == Index{6, -5});
}

TEST_CASE("transform validation errors name the transform and the axis") {
    CHECK_ERROR(Transform(1, {{0, 0, 1}}), "invalid transform (i0) -> (0*i0 + 1)", "output axis 0",
                "scale 0");
    CHECK_ERROR(Transform(2, {{0, 1, 0}, {0, 1, 0}}, {std::nullopt, 1}), "invalid transform",
                "(i0, i1=1) -> (i0, i0)", "input axis 0 is used twice", "output axes 0 and 1");
    CHECK_ERROR(Transform(2, {{0, 1, 0}}), "(i0, i1) -> (i0)", "input axis 1", "neither used",
                "pinned");
    CHECK_ERROR(Transform(1, {{0, 1, 0}}, {2}), "(i0=2) -> (i0)", "input axis 0 is pinned to 2",
                "output axis 0");
    CHECK_ERROR(Transform(1, {{1, 1, 0}}), "output axis 0 reads input axis 1", "input rank is 1");
    CHECK_ERROR(Transform(1, {{0, 1, 0}, {-2, 1, 0}}), "output axis 1 reads input axis -2");
    CHECK_ERROR(Transform(2, {{0, 1, 0}, {1, 1, 0}}, {std::nullopt}), "(i0, i1) -> (i0, i1)",
                "1 input pins given for input rank 2");
    CHECK_ERROR(Transform(-1, {}), "negative input rank");
    CHECK_ERROR(Transform::permutation({0, 0}), "input axis 0 is used twice");
    CHECK_ERROR(Transform::permutation({1, 2}), "reads input axis 2");
    CHECK_ERROR(Transform::scaling({1, 0}), "output axis 1", "scale 0");
}

TEST_CASE("transform apply errors") {
    Transform drop(2, {{0, 1, 0}}, {std::nullopt, 3});
    CHECK_ERROR(drop.apply({1}), "(i0, i1=3) -> (i0)", "index (1)", "expected rank 2");
    CHECK_ERROR(drop.apply({1, 2}), "index (1,2)", "input axis 1 is pinned to 3");
    CHECK_ERROR(drop.apply(Shape::of({5, 1})), "cannot apply transform (i0, i1=3) -> (i0)",
                "shape (5,1)", "input axis 1 has range {0}", "pinned to 3");
    CHECK_ERROR(drop.apply(Shape{range(5), range(3, 5)}), "input axis 1 has range [3,5)");
    CHECK_ERROR(drop.apply(Shape::of({5})), "shape (5)", "rank 1", "takes rank 2");
}

TEST_CASE("transform apply on shapes, by hand") {
    CHECK(Transform::scaling({-2}).apply(Shape{range(1, 4)}) == Shape{Range(-6, 2, 3)});
    CHECK(Transform::scaling({3}).apply(Shape{range(0, 8, 2)}) == Shape{Range(0, 6, 4)});
    CHECK(Transform::shift({1, -1}).apply(Shape{range(4), range(0, 9, 3)}) ==
          (Shape{range(1, 5), Range(-1, 3, 3)}));
    CHECK(Transform::scaling({-1}).apply(Shape{range(0, 10, 3)}) == Shape{Range(-9, 3, 4)});
    CHECK(Transform(2, {{0, 1, 0}}, {std::nullopt, 0}).apply(Shape::of({5, 1})) == Shape::of({5}));
    CHECK(Transform(1, {{-1, 1, 0}, {0, 1, 0}}).apply(Shape::of({5})) == Shape::of({1, 5}));
    CHECK(Transform::permutation({1, 0}).apply(Shape{range(2), range(3, 6)}) ==
          (Shape{range(3, 6), range(2)}));
    CHECK(Transform::scaling({-2}).apply(Shape{range(0)}) == Shape{range(0)});
}

TEST_CASE("transform apply on shapes matches the image of every index") {
    std::mt19937 rng(5);
    std::uniform_int_distribution<int> rank(0, 3), start(-3, 3), step(1, 3), size(0, 3);
    for (int trial = 0; trial < 400; ++trial) {
        Transform t = random_transform(rng, rank(rng), false);
        std::vector<Range> rs;
        for (int a = 0; a < t.input_rank(); ++a)
            rs.push_back(t.input_pins()[a] ? Range(*t.input_pins()[a], 1, 1)
                                           : Range(start(rng), step(rng), size(rng)));
        Shape s(rs);
        std::set<Index> image;
        for (auto& i : indices(s))
            image.insert(t.apply(i));
        CHECK_MESSAGE(indices(t.apply(s)) == image, t.to_string() << " on " << s.to_string());
    }
}

TEST_CASE("inverse undoes the transform") {
    std::mt19937 rng(6);
    std::uniform_int_distribution<int> rank(0, 4);
    for (int trial = 0; trial < 300; ++trial) {
        Transform t = random_transform(rng, rank(rng), true);
        Transform inv = t.inverse();
        CHECK(inv.input_rank() == t.output_rank());
        CHECK(inv.output_rank() == t.input_rank());
        CHECK(inv.inverse() == t);
        for (auto& i : box(t.input_rank(), 2)) {
            if (!satisfies_pins(t, i)) continue;
            Index j = t.apply(i);
            CHECK(inv.apply(j) == i);
            CHECK(t.apply(inv.apply(j)) == j);
        }
    }
    CHECK(Transform::shift({3}).inverse() == Transform::shift({-3}));
    CHECK(Transform(1, {{0, -1, 4}}).inverse().to_string() == "(i0) -> (-i0 + 4)");
    CHECK(Transform(2, {{0, 1, 0}}, {std::nullopt, 3}).inverse().to_string() == "(i0) -> (i0, 3)");
    CHECK(Transform(1, {{-1, 1, 7}, {0, 1, 0}}).inverse().to_string() == "(i0=7, i1) -> (i1)");
    CHECK_ERROR(Transform::scaling({1, 2}).inverse(), "cannot invert", "(i0, i1) -> (i0, 2*i1)",
                "output axis 1", "scale 2");
}

TEST_CASE("compose equals applying one transform after the other") {
    std::mt19937 rng(8);
    std::uniform_int_distribution<int> rank(0, 3), coin(0, 2);
    int composed_count = 0;
    for (int trial = 0; trial < 600; ++trial) {
        Transform inner = random_transform(rng, rank(rng), trial % 2 == 0);
        Transform outer0 = random_transform(rng, inner.output_rank(), trial % 3 == 0);
        auto domain = box(inner.input_rank(), 3);
        // Usually re-pin the outer transform to values the inner one reaches.
        Pins pins = outer0.input_pins();
        Index sample;
        for (auto& i : domain)
            if (satisfies_pins(inner, i) && coin(rng) == 0) sample = inner.apply(i);
        for (std::size_t b = 0; b < pins.size(); ++b)
            if (pins[b] && !sample.empty() && coin(rng) != 0) pins[b] = sample[b];
        Transform outer(outer0.input_rank(), outer0.outputs(), pins);

        std::optional<Transform> both;
        try {
            both = outer.compose(inner);
        } catch (const Error&) {
        }
        bool some_defined = false;
        for (auto& i : domain) {
            if (!satisfies_pins(inner, i)) continue;
            Index j = inner.apply(i);
            if (!satisfies_pins(outer, j)) {
                if (both) CHECK_THROWS_AS(both->apply(i), Error);
                continue;
            }
            some_defined = true;
            REQUIRE_MESSAGE(both.has_value(), outer.to_string() << " after " << inner.to_string());
            CHECK(both->apply(i) == outer.apply(j));
        }
        if (both) {
            ++composed_count;
            CHECK(both->input_rank() == inner.input_rank());
            CHECK(both->output_rank() == outer.output_rank());
        } else {
            CHECK_FALSE(some_defined); // it may only refuse when nothing composes
        }
    }
    CHECK(composed_count > 300);
}

TEST_CASE("compose by hand and its errors") {
    Transform swap = Transform::permutation({1, 0});
    CHECK(swap.compose(swap) == Transform::identity(2));
    CHECK(Transform::shift({2}).compose(Transform::scaling({3})).to_string() ==
          "(i0) -> (3*i0 + 2)");
    CHECK(Transform::scaling({3}).compose(Transform::shift({2})).to_string() ==
          "(i0) -> (3*i0 + 6)");
    // Add a unit axis, then drop it again.
    Transform add(1, {{-1, 1, 5}, {0, 1, 0}});
    Transform drop(2, {{1, 1, 0}}, {5, std::nullopt});
    CHECK(drop.compose(add) == Transform::identity(1));
    // Dropping an axis the inner transform computes pins the inner input.
    Transform pick(1, {}, {Pins::value_type(7)});
    CHECK(pick.compose(Transform::scaling({-1})).to_string() == "(i0=-7) -> ()");

    CHECK_ERROR(swap.compose(Transform::identity(3)), "cannot compose", "(i0, i1) -> (i1, i0)",
                "3 outputs", "expected 2");
    Transform drop_at_4(2, {{1, 1, 0}}, {4, std::nullopt});
    CHECK_ERROR(drop_at_4.compose(add), "cannot compose", "inner output axis 0", "constant 5",
                "pins it to 4");
    CHECK_ERROR(pick.compose(Transform::scaling({2})), "inner output axis 0", "never equals", "7");
}

TEST_CASE("to_affine_map applies like the transform") {
    std::mt19937 rng(9);
    std::uniform_int_distribution<int> rank(0, 3);
    for (int trial = 0; trial < 200; ++trial) {
        Transform t = random_transform(rng, rank(rng), false);
        AffineMap m = t.to_affine_map();
        CHECK(m.in_rank() == t.input_rank());
        CHECK(m.out_rank() == t.output_rank());
        for (auto& i : box(t.input_rank(), 2))
            if (satisfies_pins(t, i)) CHECK(m.apply(i) == t.apply(i));
    }
    CHECK(Transform(2, {{1, 1, 0}, {0, 2, 1}}).to_affine_map() ==
          AffineMap(2, 2, {0, 1, 2, 0}, {0, 1}));
    CHECK(Transform::identity(3).to_affine_map().is_identity());
}
