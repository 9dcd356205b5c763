// Internal to nn/: how a layer reads its operands from one index space. A layer's result axes
// and reduced axes form a 0-based space; each operand is a view of that space through an
// IndexMap, which honours the operand's own range starts and steps. Also the small helpers the
// layer files share (0-based copies of shapes, the call site in error messages).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/affine_map.hpp"
#include "core/array.hpp"
#include "core/error.hpp"
#include "core/library.hpp"

namespace hedra::nn::detail {

// An affine map from a 0-based space of rank `space_rank` to the indices of an array of shape
// `target`: target axis `row` reads counter Σ coeff·j (+ shift), i.e. index
// start + step·(Σ coeff·j + shift).
class IndexMap {
public:
    IndexMap(int space_rank, const Shape& target)
        : space_rank_(space_rank), target_(target),
          matrix_(static_cast<std::size_t>(space_rank * target.rank()), 0),
          offset_(static_cast<std::size_t>(target.rank()), 0) {
        for (int r = 0; r < target.rank(); ++r)
            offset_[r] = target[r].start;
    }
    IndexMap& read(int row, int space_axis, std::int64_t coeff = 1) {
        matrix_[row * space_rank_ + space_axis] += coeff * target_[row].step;
        return *this;
    }
    IndexMap& shift(int row, std::int64_t counters) {
        offset_[row] += counters * target_[row].step;
        return *this;
    }
    AffineMap map() const { return AffineMap(space_rank_, target_.rank(), matrix_, offset_); }

private:
    int space_rank_;
    Shape target_;
    std::vector<std::int64_t> matrix_, offset_;
};

// " (called at file.cpp:12)", the suffix of every nn error message.
inline std::string at(SourceLocation loc) {
    return " (called at " + location_string(loc) + ")";
}

// An array (n...) with a trailing axis of size 1, (n..., 1), so that it broadcasts along the
// last axis of a (n..., k) array.
inline Array as_column(const Array& v) {
    std::vector<TransformAxis> axes;
    for (int d = 0; d < v.rank(); ++d)
        axes.push_back(TransformAxis{d, 1, 0});
    axes.push_back(TransformAxis{-1, 1, 0});
    return reshape(v, Transform(v.rank(), axes));
}

// `a` itself when every axis is already [0, n) with step 1, else rebase(a).
inline Array zero_based(const Array& a) {
    for (const Range& r : a.shape().ranges())
        if (r.start != 0 || r.step != 1) return rebase(a);
    return a;
}

} // namespace hedra::nn::detail
