#include "core/range.hpp"

#include <algorithm>
#include <numeric>

#include "core/error.hpp"

namespace hedra {
namespace {

// Extended Euclid: returns g = gcd(a, b) and x with a*x == g (mod b).
std::int64_t ext_gcd(std::int64_t a, std::int64_t b, std::int64_t& x) {
    std::int64_t old_r = a, r = b, old_x = 1, cur_x = 0;
    while (r != 0) {
        std::int64_t q = old_r / r;
        std::int64_t t = old_r - q * r;
        old_r = r;
        r = t;
        t = old_x - q * cur_x;
        old_x = cur_x;
        cur_x = t;
    }
    x = old_x;
    return old_r;
}

std::int64_t floor_mod(std::int64_t a, std::int64_t m) {
    std::int64_t r = a % m;
    return r < 0 ? r + m : r;
}

} // namespace

Range::Range(std::int64_t start_, std::int64_t step_, std::int64_t size_)
    : start(start_), step(step_), size(size_) {
    if (step < 1)
        throw Error("invalid range: step " + std::to_string(step) + " must be at least 1");
    if (size < 0)
        throw Error("invalid range: size " + std::to_string(size) + " must not be negative");
    if (size <= 1) step = 1;
    if (size == 0) start = 0; // all empty ranges are one set: "[0,0)"
}

bool Range::contains(std::int64_t i) const {
    return size > 0 && i >= start && i <= last() && (i - start) % step == 0;
}

bool Range::contains(const Range& o) const {
    if (o.size == 0) return true;
    if (!contains(o.start) || !contains(o.last())) return false;
    return o.size == 1 || o.step % step == 0;
}

std::string Range::to_string() const {
    if (size == 1) return "{" + std::to_string(start) + "}";
    std::string s = "[" + std::to_string(start) + "," + std::to_string(end()) + ")";
    if (step != 1) s += ":" + std::to_string(step);
    return s;
}

Range range(std::int64_t end) { return range(0, end, 1); }

Range range(std::int64_t start, std::int64_t end, std::int64_t step) {
    if (step < 1)
        throw Error("invalid range [" + std::to_string(start) + "," + std::to_string(end) +
                    "): step " + std::to_string(step) + " must be at least 1");
    std::int64_t size = end > start ? (end - start + step - 1) / step : 0;
    return Range(start, step, size);
}

Range intersect(const Range& a, const Range& b) {
    if (a.empty() || b.empty()) return Range(0, 1, 0);
    // Solve a.start + a.step*i == b.start + b.step*j.
    std::int64_t x = 0;
    std::int64_t g = ext_gcd(a.step, b.step, x);
    std::int64_t diff = b.start - a.start;
    if (diff % g != 0) return Range(0, 1, 0);
    std::int64_t lcm = a.step / g * b.step;
    std::int64_t m = b.step / g;
    // i == x * diff/g (mod m)
    std::int64_t i0 = floor_mod(static_cast<std::int64_t>(
                                    (static_cast<__int128>(x) * (diff / g)) % m),
                                m);
    std::int64_t first = a.start + a.step * i0; // some common point, maybe below both starts
    std::int64_t lo = std::max(a.start, b.start), hi = std::min(a.last(), b.last());
    if (first < lo) first += ((lo - first + lcm - 1) / lcm) * lcm;
    else first -= ((first - lo) / lcm) * lcm;
    if (first > hi) return Range(0, 1, 0);
    return Range(first, lcm, (hi - first) / lcm + 1);
}

bool disjoint(const Range& a, const Range& b) { return intersect(a, b).empty(); }

Range hull(const Range& a, const Range& b) {
    if (a.empty()) return b;
    if (b.empty()) return a;
    std::int64_t lo = std::min(a.start, b.start), hi = std::max(a.last(), b.last());
    std::int64_t step = 0;
    for (std::int64_t d : {a.size > 1 ? a.step : 0, b.size > 1 ? b.step : 0,
                           a.start - lo, b.start - lo})
        step = std::gcd(step, d);
    if (step == 0) step = 1;
    return Range(lo, step, (hi - lo) / step + 1);
}

} // namespace hedra
