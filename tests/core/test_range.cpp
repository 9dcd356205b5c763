// Range: construction, normalization, printing, membership, and intersect/hull/disjoint checked
// against brute-force enumeration of many small random ranges.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>
#include <set>

#include "core/range.hpp"
#include "expect_error.hpp"

using namespace hedra;

namespace {

std::set<std::int64_t> elements(const Range& r) {
    std::set<std::int64_t> s;
    for (std::int64_t k = 0; k < r.size; ++k)
        s.insert(r.start + k * r.step);
    return s;
}

Range random_range(std::mt19937& rng) {
    std::uniform_int_distribution<int> start(-12, 12), step(1, 6), size(0, 7);
    return Range(start(rng), step(rng), size(rng));
}

} // namespace

TEST_CASE("range constructors") {
    CHECK(range(5) == Range(0, 1, 5));
    CHECK(range(2, 7) == Range(2, 1, 5));
    CHECK(range(1, 9, 2) == Range(1, 2, 4));
    CHECK(range(0, 10, 3) == Range(0, 3, 4)); // 0 3 6 9
    CHECK(range(0, 9, 3) == Range(0, 3, 3));  // 0 3 6
    CHECK(range(-4, -1) == Range(-4, 1, 3));
    CHECK(range(0).empty());
    CHECK(range(5, 3).size == 0);
    CHECK(range(-3).size == 0);
    Range r(3, 4, 5);
    CHECK(r.end() == 23);
    CHECK(r.last() == 19);
    CHECK(r.index(2) == 11);
    CHECK(r.counter(11) == 2);
}

TEST_CASE("range normalization: equal sets compare equal") {
    CHECK(Range(7, 5, 1) == range(7, 8));
    CHECK(Range(7, 5, 1).step == 1);
    CHECK(Range(7, 5, 0) == Range());
    CHECK(range(5, 5) == range(-2, -9, 3));
    CHECK(Range(0, 2, 3) != Range(0, 1, 3));
    CHECK(Range(0, 1, 3) != Range(1, 1, 3));
}

TEST_CASE("range printing") {
    CHECK(range(4).to_string() == "[0,4)");
    CHECK(range(1, 9, 2).to_string() == "[1,9):2");
    CHECK(Range(3, 1, 1).to_string() == "{3}");
    CHECK(range(0).to_string() == "[0,0)");
    CHECK(range(6, 2).to_string() == "[0,0)");
    CHECK(range(-3, 2).to_string() == "[-3,2)");
}

TEST_CASE("invalid ranges throw") {
    CHECK_ERROR(Range(0, 0, 3), "invalid range", "step 0");
    CHECK_ERROR(Range(0, -2, 3), "step -2");
    CHECK_ERROR(Range(0, 1, -1), "size -1", "negative");
    CHECK_ERROR(range(0, 5, 0), "invalid range [0,5)", "step 0");
    CHECK_THROWS_WITH_AS(range(2, 5, -1), doctest::Contains("at least 1"), Error);
}

TEST_CASE("range membership matches enumeration") {
    std::mt19937 rng(1);
    for (int trial = 0; trial < 400; ++trial) {
        Range a = random_range(rng), b = random_range(rng);
        auto ea = elements(a), eb = elements(b);
        for (std::int64_t i = -20; i <= 60; ++i)
            CHECK(a.contains(i) == (ea.count(i) == 1));
        bool subset = std::includes(ea.begin(), ea.end(), eb.begin(), eb.end());
        CHECK_MESSAGE(a.contains(b) == subset, a.to_string() << " contains " << b.to_string());
    }
}

TEST_CASE("intersect matches enumeration") {
    std::mt19937 rng(2);
    for (int trial = 0; trial < 3000; ++trial) {
        Range a = random_range(rng), b = random_range(rng);
        auto ea = elements(a), eb = elements(b);
        std::set<std::int64_t> common;
        std::set_intersection(ea.begin(), ea.end(), eb.begin(), eb.end(),
                              std::inserter(common, common.end()));
        Range c = intersect(a, b);
        CHECK_MESSAGE(elements(c) == common,
                      a.to_string() << " & " << b.to_string() << " gave " << c.to_string());
        CHECK(c == intersect(b, a));
        CHECK(disjoint(a, b) == common.empty());
    }
}

TEST_CASE("intersect with large steps and offsets") {
    CHECK(intersect(Range(1, 6, 100), Range(3, 10, 100)) == Range(13, 30, 20)); // 13 .. 583
    CHECK(intersect(range(0, 100, 4), range(2, 100, 4)).empty());
    CHECK(intersect(range(-50, 50, 7), range(-50, 50, 5)) == Range(-50, 35, 3));
}

TEST_CASE("hull matches the smallest enclosing progression") {
    std::mt19937 rng(3);
    for (int trial = 0; trial < 3000; ++trial) {
        Range a = random_range(rng), b = random_range(rng);
        auto all = elements(a);
        for (auto x : elements(b))
            all.insert(x);
        Range h = hull(a, b);
        if (all.empty()) {
            CHECK(h.empty());
            continue;
        }
        std::int64_t lo = *all.begin(), hi = *all.rbegin();
        // The largest step that every element agrees with, found by trying them all.
        std::int64_t best = 1;
        for (std::int64_t st = 1; st <= std::max<std::int64_t>(hi - lo, 1); ++st)
            if (std::all_of(all.begin(), all.end(), [&](auto x) { return (x - lo) % st == 0; }))
                best = st;
        Range expected = lo == hi ? Range(lo, 1, 1) : Range(lo, best, (hi - lo) / best + 1);
        CHECK_MESSAGE(h == expected, "hull of " << a.to_string() << " and " << b.to_string());
        CHECK(h == hull(b, a));
        CHECK(h.contains(a));
        CHECK(h.contains(b));
        bool is_union = elements(h) == all;
        CHECK(is_union == (a.size + b.size - intersect(a, b).size == h.size));
    }
}

TEST_CASE("ranges near the 64-bit limits: no arithmetic overflows") {
    const std::int64_t max = std::numeric_limits<std::int64_t>::max();
    const std::int64_t min = std::numeric_limits<std::int64_t>::min();
    // The end start + step*size must fit: then end(), last() and index(k) do too.
    CHECK(Range(max - 4, 2, 2).end() == max);
    CHECK(Range(max - 4, 2, 2).last() == max - 2);
    CHECK_ERROR(Range(max - 4, 2, 3), "invalid range", "overflows 64 bits");
    CHECK_ERROR(Range(0, std::int64_t{1} << 62, 2), "step 4611686018427387904", "overflows");
    CHECK_ERROR(Range(min, std::int64_t{1} << 40, std::int64_t{1} << 40), "overflows");
    CHECK(Range(min, 1, 0).empty()); // normalized to [0,0)
    CHECK(Range(max - 1, 7, 1).to_string() == "{9223372036854775806}");
    // range(start, end): the distance end - start itself does not fit in 64 bits.
    CHECK_ERROR(range(min, max), "invalid range", "size overflows 64 bits");
    CHECK(range(min, 0, std::int64_t{1} << 62) == Range(min, std::int64_t{1} << 62, 2));
    CHECK(range(-5, max - 5, max) == Range(-5, 1, 1));
    // {min, min + 2^62, ..., 2^62}: every element fits, the exclusive end 2^63 does not.
    CHECK_ERROR(range(min, max, std::int64_t{1} << 62), "overflows 64 bits");
    // intersect: the starts' difference and the steps' lcm do not fit (hand-computed results).
    CHECK(intersect(Range(min, 1, 2), Range(max - 2, 1, 2)).empty());
    const std::int64_t p = (std::int64_t{1} << 40) - 3, q = (std::int64_t{1} << 40) - 1;
    CHECK(intersect(Range(0, p, 3), Range(0, q, 3)) == Range(0, 1, 1)); // lcm ~ 2^80
    CHECK(intersect(Range(-(std::int64_t{1} << 62), std::int64_t{1} << 62, 2), Range(0, 1, 1)) ==
          Range(0, 1, 1));
    CHECK(intersect(Range(min, 3, 4), Range(min + 6, 1, 10)) == Range(min + 6, 3, 2));
    // hull: the distance between the ranges does not fit, or the hull's end does not.
    CHECK_ERROR(hull(Range(min, 1, 1), Range(max - 1, 1, 1)), "overflows 64 bits");
    CHECK_ERROR(
        hull(Range(-(std::int64_t{1} << 62), 1, 1), Range((std::int64_t{1} << 62) - 1, 1, 1)),
        "overflows 64 bits");
    CHECK(hull(Range(min, 1, 1), Range(-1, 1, 1)) == Range(min, max, 2));
    CHECK(hull(Range(max - 5, 1, 1), Range(max - 13, 4, 2)) == Range(max - 13, 4, 3));
}
