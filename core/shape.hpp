// Shape: a tuple of ranges, rank 0 up to kMaxRank. Arrays are defined on shapes, not only on
// [0,n) boxes.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/range.hpp"

namespace hedra {

inline constexpr int kMaxRank = 8;

class Shape {
public:
    Shape() = default; // rank 0: one element
    Shape(std::initializer_list<Range> ranges);
    explicit Shape(std::vector<Range> ranges);
    // Shape::of({3, 4}) == Shape{range(3), range(4)}.
    static Shape of(const std::vector<std::int64_t>& sizes);

    int rank() const { return static_cast<int>(ranges_.size()); }
    const Range& operator[](int axis) const { return ranges_.at(axis); }
    const std::vector<Range>& ranges() const { return ranges_; }
    std::vector<std::int64_t> sizes() const;
    std::int64_t size() const; // number of elements
    bool empty() const { return size() == 0; }
    bool contains(const std::vector<std::int64_t>& index) const;
    bool contains(const Shape& other) const; // as sets of indices, same rank
    bool operator==(const Shape&) const = default;

    // "(3,4)" when every axis is [0,n) with step 1, otherwise "([1,3), [0,8):2)".
    std::string to_string() const;

private:
    std::vector<Range> ranges_;
};

Shape intersect(const Shape& a, const Shape& b); // same rank
bool disjoint(const Shape& a, const Shape& b);

} // namespace hedra
