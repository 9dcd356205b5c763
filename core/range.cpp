#include "core/range.hpp"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <numeric>
#include <vector>

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
    __int128 end = start + static_cast<__int128>(step) * size; // at most 2^126 in magnitude
    if (end > INT64_MAX)
        throw Error("invalid range: start " + std::to_string(start) + ", step " +
                    std::to_string(step) + ", size " + std::to_string(size) +
                    ": its end start + step*size overflows 64 bits");
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
    if (param >= 0) return param_name(param) + "<=" + std::to_string(size);
    if (size == 1) return "{" + std::to_string(start) + "}";
    std::string s = "[" + std::to_string(start) + "," + std::to_string(end()) + ")";
    if (step != 1) s += ":" + std::to_string(step);
    return s;
}

namespace {

struct ParamNames {
    std::mutex mutex;
    std::vector<std::string> names; // never shrinks: a parameter's number is stable
};

ParamNames& param_names() {
    static ParamNames* table = new ParamNames; // outlives static destructors that print ranges
    return *table;
}

} // namespace

Range dynamic(const std::string& name, std::int64_t max) {
    if (name.empty()) throw Error("dynamic: a symbolic extent needs a name, e.g. \"batch\"");
    if (max < 1)
        throw Error("dynamic: the maximum of '" + name + "' is " + std::to_string(max) +
                    "; give the largest value it will take (at least 1)");
    ParamNames& t = param_names();
    std::lock_guard<std::mutex> lock(t.mutex);
    int id = -1;
    for (std::size_t i = 0; i < t.names.size(); ++i)
        if (t.names[i] == name) id = static_cast<int>(i);
    if (id < 0) {
        id = static_cast<int>(t.names.size());
        t.names.push_back(name);
    }
    Range r(0, 1, max);
    r.param = id;
    return r;
}

const std::string& param_name(int param) {
    ParamNames& t = param_names();
    std::lock_guard<std::mutex> lock(t.mutex);
    return t.names.at(static_cast<std::size_t>(param));
}

Range range(std::int64_t end) {
    return range(0, end, 1);
}

Range range(std::int64_t start, std::int64_t end, std::int64_t step) {
    if (step < 1)
        throw Error("invalid range [" + std::to_string(start) + "," + std::to_string(end) +
                    "): step " + std::to_string(step) + " must be at least 1");
    // In 128 bits: end - start + step - 1 can overflow int64 for far-apart bounds.
    __int128 span = static_cast<__int128>(end) - start;
    __int128 size = span > 0 ? (span + step - 1) / step : 0;
    if (size > INT64_MAX)
        throw Error("invalid range [" + std::to_string(start) + "," + std::to_string(end) +
                    "): its size overflows 64 bits");
    return Range(start, step, static_cast<std::int64_t>(size));
}

Range intersect(const Range& a, const Range& b) {
    if (a == b) return a;
    if (a.empty() || b.empty()) return Range(0, 1, 0);
    // Solve a.start + a.step*i == b.start + b.step*j, in 128 bits: the difference of the starts
    // and the lcm of the steps can overflow int64 (the points found lie in both ranges, so the
    // result fits again).
    using Wide = __int128;
    std::int64_t x = 0;
    std::int64_t g = ext_gcd(a.step, b.step, x);
    Wide diff = static_cast<Wide>(b.start) - a.start;
    if (diff % g != 0) return Range(0, 1, 0);
    Wide lcm = static_cast<Wide>(a.step / g) * b.step;
    std::int64_t m = b.step / g;
    // i == x * diff/g (mod m); x and diff/g reduced mod m first so that the product fits
    Wide i0 = (static_cast<Wide>(floor_mod(x, m)) *
               floor_mod(static_cast<std::int64_t>((diff / g) % m), m)) %
              m;
    Wide first = a.start + a.step * i0; // some common point, maybe below both starts
    Wide lo = std::max(a.start, b.start), hi = std::min(a.last(), b.last());
    if (first < lo)
        first += ((lo - first + lcm - 1) / lcm) * lcm;
    else
        first -= ((first - lo) / lcm) * lcm;
    if (first > hi) return Range(0, 1, 0);
    auto size = static_cast<std::int64_t>((hi - first) / lcm + 1);
    // size 1 when lcm does not fit: two common points would be lcm apart
    return Range(static_cast<std::int64_t>(first), size > 1 ? static_cast<std::int64_t>(lcm) : 1,
                 size);
}

bool disjoint(const Range& a, const Range& b) {
    return intersect(a, b).empty();
}

Range hull(const Range& a, const Range& b) {
    if (a == b) return a;
    if (a.empty()) return b;
    if (b.empty()) return a;
    // Distances from lo in unsigned 64 bits: they can exceed INT64_MAX (then the Range
    // constructor rejects the hull, whose end does not fit).
    std::int64_t lo = std::min(a.start, b.start), hi = std::max(a.last(), b.last());
    auto from_lo = [&](std::int64_t v) {
        return static_cast<std::uint64_t>(v) - static_cast<std::uint64_t>(lo);
    };
    std::uint64_t step = 0;
    for (std::uint64_t d :
         {a.size > 1 ? static_cast<std::uint64_t>(a.step) : 0,
          b.size > 1 ? static_cast<std::uint64_t>(b.step) : 0, from_lo(a.start), from_lo(b.start)})
        step = std::gcd(step, d);
    if (step == 0) step = 1;
    std::uint64_t size = from_lo(hi) / step + 1;
    if (step > static_cast<std::uint64_t>(INT64_MAX) ||
        size > static_cast<std::uint64_t>(INT64_MAX))
        throw Error("the hull of the ranges " + a.to_string() + " and " + b.to_string() +
                    " has a step or size that overflows 64 bits");
    return Range(lo, static_cast<std::int64_t>(step), static_cast<std::int64_t>(size));
}

} // namespace hedra
