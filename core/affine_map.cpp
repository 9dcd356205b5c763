// AffineMap: integer affine maps out = M * in + b, the general access of `view` and the form in
// which the lazy graph stores every access (in counter space). Composition is exact integer
// matrix arithmetic.
#include "core/affine_map.hpp"

#include "core/error.hpp"

namespace hedra {
namespace {

// "2*d0", "-d1", "d2"; coefficient != 0.
std::string term(std::int64_t c, const std::string& var) {
    if (c == 1) return var;
    if (c == -1) return "-" + var;
    return std::to_string(c) + "*" + var;
}

} // namespace

AffineMap::AffineMap(int in_rank, int out_rank, std::vector<std::int64_t> matrix,
                     std::vector<std::int64_t> offset)
    : in_rank_(in_rank), out_rank_(out_rank), matrix_(std::move(matrix)),
      offset_(std::move(offset)) {
    if (in_rank < 0 || out_rank < 0)
        throw Error("affine map with negative rank: " + std::to_string(in_rank) + " -> " +
                    std::to_string(out_rank));
    if (matrix_.size() != static_cast<std::size_t>(in_rank) * static_cast<std::size_t>(out_rank))
        throw Error("affine map " + std::to_string(in_rank) + " -> " + std::to_string(out_rank) +
                    ": the matrix has " + std::to_string(matrix_.size()) + " entries, expected " +
                    std::to_string(in_rank * out_rank));
    if (offset_.size() != static_cast<std::size_t>(out_rank))
        throw Error("affine map " + std::to_string(in_rank) + " -> " + std::to_string(out_rank) +
                    ": the offset has " + std::to_string(offset_.size()) + " entries, expected " +
                    std::to_string(out_rank));
}

AffineMap AffineMap::identity(int rank) {
    if (rank < 0) throw Error("identity affine map of negative rank " + std::to_string(rank));
    std::vector<std::int64_t> m(static_cast<std::size_t>(rank) * rank, 0);
    for (int i = 0; i < rank; ++i)
        m[i * rank + i] = 1;
    return AffineMap(rank, rank, std::move(m), std::vector<std::int64_t>(rank, 0));
}

AffineMap AffineMap::projection(int in_rank, const std::vector<int>& axes) {
    if (in_rank < 0)
        throw Error("projection affine map of negative rank " + std::to_string(in_rank));
    int out_rank = static_cast<int>(axes.size());
    std::vector<std::int64_t> m(static_cast<std::size_t>(out_rank) * in_rank, 0);
    for (int i = 0; i < out_rank; ++i) {
        if (axes[i] < 0 || axes[i] >= in_rank)
            throw Error("projection affine map: output " + std::to_string(i) + " reads axis " +
                        std::to_string(axes[i]) + ", but the input rank is " +
                        std::to_string(in_rank));
        m[i * in_rank + axes[i]] = 1;
    }
    return AffineMap(in_rank, out_rank, std::move(m), std::vector<std::int64_t>(out_rank, 0));
}

std::vector<std::int64_t> AffineMap::apply(const std::vector<std::int64_t>& in) const {
    if (in.size() != static_cast<std::size_t>(in_rank_))
        throw Error("affine map " + to_string() + " applied to an index of rank " +
                    std::to_string(in.size()) + ", expected rank " + std::to_string(in_rank_));
    std::vector<std::int64_t> out(offset_);
    for (int o = 0; o < out_rank_; ++o)
        for (int i = 0; i < in_rank_; ++i)
            out[o] += coeff(o, i) * in[i];
    return out;
}

AffineMap AffineMap::compose(const AffineMap& inner) const {
    if (inner.out_rank_ != in_rank_)
        throw Error("cannot compose affine map " + to_string() + " with " + inner.to_string() +
                    ": the inner map has " + std::to_string(inner.out_rank_) +
                    " outputs, expected " + std::to_string(in_rank_));
    int n = inner.in_rank_;
    std::vector<std::int64_t> m(static_cast<std::size_t>(out_rank_) * n, 0);
    std::vector<std::int64_t> b(offset_);
    for (int o = 0; o < out_rank_; ++o)
        for (int k = 0; k < in_rank_; ++k) {
            std::int64_t c = coeff(o, k);
            if (c == 0) continue;
            for (int i = 0; i < n; ++i)
                m[o * n + i] += c * inner.coeff(k, i);
            b[o] += c * inner.offset(k);
        }
    return AffineMap(n, out_rank_, std::move(m), std::move(b));
}

bool AffineMap::is_identity() const {
    return *this == identity(in_rank_);
}

std::string AffineMap::to_string() const {
    std::string s = "(";
    for (int i = 0; i < in_rank_; ++i)
        s += (i ? ", d" : "d") + std::to_string(i);
    s += ") -> (";
    for (int o = 0; o < out_rank_; ++o) {
        if (o) s += ", ";
        std::string row;
        for (int i = 0; i < in_rank_; ++i) {
            std::int64_t c = coeff(o, i);
            if (c == 0) continue;
            if (row.empty())
                row = term(c, "d" + std::to_string(i));
            else if (c < 0)
                row += " - " + term(-c, "d" + std::to_string(i));
            else
                row += " + " + term(c, "d" + std::to_string(i));
        }
        std::int64_t b = offset(o);
        if (row.empty())
            row = std::to_string(b);
        else if (b > 0)
            row += " + " + std::to_string(b);
        else if (b < 0)
            row += " - " + std::to_string(-b);
        s += row;
    }
    return s + ")";
}

} // namespace hedra
