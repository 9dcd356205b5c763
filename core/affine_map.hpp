// AffineMap: a general integer affine map out = M * in + b, from Z^in_rank to Z^out_rank.
// view(a, s, m) reads a[m(j)] for j in s; the lazy graph also stores every access in counter
// space (j = start + step * k) as an AffineMap from result counters to input counters.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hedra {

class AffineMap {
public:
    AffineMap() = default;
    // matrix is out_rank x in_rank, row-major; offset has out_rank entries.
    AffineMap(int in_rank, int out_rank, std::vector<std::int64_t> matrix,
              std::vector<std::int64_t> offset);
    static AffineMap identity(int rank);
    // Output i reads input axes[i]; every entry is an input axis in [0, in_rank).
    static AffineMap projection(int in_rank, const std::vector<int>& axes);

    int in_rank() const { return in_rank_; }
    int out_rank() const { return out_rank_; }
    std::int64_t coeff(int out, int in) const { return matrix_[out * in_rank_ + in]; }
    std::int64_t offset(int out) const { return offset_[out]; }
    const std::vector<std::int64_t>& matrix() const { return matrix_; }
    const std::vector<std::int64_t>& offsets() const { return offset_; }

    std::vector<std::int64_t> apply(const std::vector<std::int64_t>& in) const;
    // (this ∘ inner)(x) = this(inner(x)); requires inner.out_rank() == in_rank().
    AffineMap compose(const AffineMap& inner) const;
    bool is_identity() const;

    bool operator==(const AffineMap&) const = default;
    std::string to_string() const; // "(d0, d1) -> (d1, 2*d0 + 1)"

private:
    int in_rank_ = 0;
    int out_rank_ = 0;
    std::vector<std::int64_t> matrix_;
    std::vector<std::int64_t> offset_;
};

} // namespace hedra
