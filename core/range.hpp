// Range: the index set {start + k*step : 0 <= k < size}, step >= 1, size >= 0.
// Normalized so that equal sets compare equal: a range of size <= 1 has step 1.
// Internally hedra iterates over the counter k; `index(k)` maps it back.
// The constructor also checks that start + step*size fits in 64 bits, so end(), last() and
// index(k) for 0 <= k <= size never overflow.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace hedra {

struct Range {
    std::int64_t start = 0;
    std::int64_t step = 1;
    std::int64_t size = 0;
    // A symbolic extent (see `dynamic`): -1 for a constant size; else the parameter whose value,
    // bound when a compiled program is called, is the extent, and `size` its declared maximum.
    // Such a range is always [0, value) with step 1.
    int param = -1;

    Range() = default;
    // Throws hedra::Error if step < 1, size < 0, or start + step*size overflows int64.
    Range(std::int64_t start, std::int64_t step, std::int64_t size);

    std::int64_t end() const { return start + step * size; } // exclusive
    std::int64_t last() const { return start + step * (size - 1); }
    std::int64_t index(std::int64_t counter) const { return start + step * counter; }
    // counter of `index` (precondition: contains(index)).
    std::int64_t counter(std::int64_t index) const { return (index - start) / step; }
    bool empty() const { return size == 0; }
    bool contains(std::int64_t index) const;
    bool contains(const Range& other) const; // as sets
    bool operator==(const Range&) const = default;

    bool is_dynamic() const { return param >= 0; }

    // "[0,4)", "[1,9):2", "{3}" for a single index, "[0,0)" when empty, "batch<=256" dynamic.
    std::string to_string() const;
};

// A symbolic extent: the axis [0, n) where n is named `name` and bound when a compiled program
// is called (1 <= n <= max), e.g. placeholder({dynamic("batch", 256), 784}). Ranges of the same
// name share one value: two inputs with a "batch" axis must agree on it.
Range dynamic(const std::string& name, std::int64_t max);
// The name of parameter `param` (Range::param).
const std::string& param_name(int param);

// range(end) = [0,end); range(start, end); range(start, end, step); end is exclusive.
Range range(std::int64_t end);
Range range(std::int64_t start, std::int64_t end, std::int64_t step = 1);

// The intersection of two ranges (an arithmetic progression again, possibly empty).
Range intersect(const Range& a, const Range& b);
bool disjoint(const Range& a, const Range& b);
// The smallest range containing both (as sets); equal to their union iff sizes add up.
Range hull(const Range& a, const Range& b);

} // namespace hedra
