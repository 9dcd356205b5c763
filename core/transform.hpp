// Transform: a per-axis invertible affine index map (Petalisp's transformation).
// Each output axis is `scale * in[input_axis] + offset` of exactly one input axis (scale != 0),
// or the constant `offset` (a new unit axis). An input axis not used by any output must be
// pinned to a value (a dropped unit axis). reshape(a, t) means result[t(i)] = a[i].
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/affine_map.hpp"
#include "core/shape.hpp"

namespace hedra {

struct TransformAxis {
    int input_axis = -1; // -1: constant output `offset`
    std::int64_t scale = 1;
    std::int64_t offset = 0;
    bool operator==(const TransformAxis&) const = default;
};

class Transform {
public:
    // Throws hedra::Error unless the transform is invertible as described above.
    Transform(int input_rank, std::vector<TransformAxis> outputs,
              std::vector<std::optional<std::int64_t>> input_pins = {});

    static Transform identity(int rank);
    // Output axis i is input axis perm[i] (a permutation of 0..rank-1).
    static Transform permutation(const std::vector<int>& perm);
    // out_i = in_i + offsets_i.
    static Transform shift(const std::vector<std::int64_t>& offsets);
    // out_i = scales_i * in_i (scales_i != 0; negative reverses).
    static Transform scaling(const std::vector<std::int64_t>& scales);

    int input_rank() const { return input_rank_; }
    int output_rank() const { return static_cast<int>(outputs_.size()); }
    const std::vector<TransformAxis>& outputs() const { return outputs_; }
    const std::vector<std::optional<std::int64_t>>& input_pins() const { return pins_; }

    // Throws hedra::Error if the index has the wrong rank or violates a pin.
    std::vector<std::int64_t> apply(const std::vector<std::int64_t>& index) const;
    // The image of a shape; throws hedra::Error if a pinned axis is not exactly {pin}.
    Shape apply(const Shape& shape) const;
    Transform inverse() const;
    // (this ∘ inner)(i) = this(inner(i)); throws on rank mismatch.
    Transform compose(const Transform& inner) const;

    // The same map as an AffineMap from input indices to output indices (pins are dropped:
    // the affine map ignores pinned input axes).
    AffineMap to_affine_map() const;

    bool operator==(const Transform&) const = default;
    std::string to_string() const; // "(i0, i1) -> (i1, 2*i0 + 1)"

private:
    int input_rank_;
    std::vector<TransformAxis> outputs_;
    std::vector<std::optional<std::int64_t>> pins_;
};

} // namespace hedra
