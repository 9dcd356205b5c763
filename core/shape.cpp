#include "core/shape.hpp"

#include "core/error.hpp"

namespace hedra {
namespace {

void check_rank(std::size_t rank) {
    if (rank > static_cast<std::size_t>(kMaxRank))
        throw Error("shape of rank " + std::to_string(rank) + " exceeds the maximum rank " +
                    std::to_string(kMaxRank) + "; merge axes with flatten or reshape");
}

// The element count must fit in 64 bits: every size computation relies on it.
void check_elements(const Shape& s) {
    std::int64_t n = 1;
    bool overflow = false;
    for (const Range& r : s.ranges()) {
        if (r.size == 0) return;
        overflow = overflow || __builtin_mul_overflow(n, r.size, &n);
    }
    if (overflow)
        throw Error("shape " + s.to_string() +
                    " has too many elements: their count overflows 64 bits");
}

} // namespace

Shape::Shape(std::initializer_list<Range> ranges) : ranges_(ranges) {
    check_rank(ranges_.size());
    check_elements(*this);
}
Shape::Shape(std::vector<Range> ranges) : ranges_(std::move(ranges)) {
    check_rank(ranges_.size());
    check_elements(*this);
}

Shape Shape::of(const std::vector<std::int64_t>& sizes) {
    std::vector<Range> rs;
    for (auto n : sizes) {
        if (n < 0) throw Error("Shape::of: size " + std::to_string(n) + " must not be negative");
        rs.push_back(range(n));
    }
    return Shape(std::move(rs));
}

std::vector<std::int64_t> Shape::sizes() const {
    std::vector<std::int64_t> s;
    for (auto& r : ranges_)
        s.push_back(r.size);
    return s;
}

std::int64_t Shape::size() const {
    std::int64_t n = 1;
    for (auto& r : ranges_)
        n *= r.size;
    return n;
}

bool Shape::contains(const std::vector<std::int64_t>& index) const {
    if (index.size() != ranges_.size()) return false;
    for (std::size_t i = 0; i < index.size(); ++i)
        if (!ranges_[i].contains(index[i])) return false;
    return true;
}

bool Shape::contains(const Shape& o) const {
    if (o.rank() != rank()) return false;
    if (o.empty()) return true;
    for (int i = 0; i < rank(); ++i)
        if (!ranges_[i].contains(o[i])) return false;
    return true;
}

std::string Shape::to_string() const {
    bool plain = true;
    for (auto& r : ranges_)
        plain = plain && r.start == 0 && (r.step == 1 || r.size <= 1);
    std::string s = "(";
    for (std::size_t i = 0; i < ranges_.size(); ++i) {
        if (i) s += plain ? "," : ", ";
        s += plain && !ranges_[i].is_dynamic() ? std::to_string(ranges_[i].size)
                                               : ranges_[i].to_string();
    }
    return s + ")";
}

Shape intersect(const Shape& a, const Shape& b) {
    HEDRA_INTERNAL_CHECK(a.rank() == b.rank(), "intersect of shapes of different rank");
    std::vector<Range> rs;
    for (int i = 0; i < a.rank(); ++i)
        rs.push_back(intersect(a[i], b[i]));
    return Shape(std::move(rs));
}

bool disjoint(const Shape& a, const Shape& b) {
    return intersect(a, b).empty();
}

} // namespace hedra
