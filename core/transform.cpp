// Transform: per-axis invertible affine index maps (permute, shift, stride, reverse, add or drop
// unit axes), as `reshape(a, t)` takes them. The constructor checks invertibility; inverse and
// compose are exact (they throw rather than round when no integer transform exists).
#include "core/transform.hpp"

#include <cstdlib>

#include "core/error.hpp"

namespace hedra {
namespace {

using Pins = std::vector<std::optional<std::int64_t>>;

std::string affine_term(std::int64_t scale, const std::string& var, std::int64_t offset) {
    std::string s = scale == 1 ? var : scale == -1 ? "-" + var : std::to_string(scale) + "*" + var;
    if (offset > 0) s += " + " + std::to_string(offset);
    if (offset < 0) s += " - " + std::to_string(-offset);
    return s;
}

// Printable even for the invalid transforms the constructor rejects.
std::string describe(int input_rank, const std::vector<TransformAxis>& outputs, const Pins& pins) {
    std::string s = "(";
    for (int i = 0; i < input_rank; ++i) {
        if (i) s += ", ";
        s += "i" + std::to_string(i);
        if (static_cast<std::size_t>(i) < pins.size() && pins[i])
            s += "=" + std::to_string(*pins[i]);
    }
    s += ") -> (";
    for (std::size_t k = 0; k < outputs.size(); ++k) {
        if (k) s += ", ";
        const TransformAxis& o = outputs[k];
        s += o.input_axis < 0 ? std::to_string(o.offset)
                              : affine_term(o.scale, "i" + std::to_string(o.input_axis), o.offset);
    }
    return s + ")";
}

std::string index_string(const std::vector<std::int64_t>& index) {
    std::string s = "(";
    for (std::size_t i = 0; i < index.size(); ++i)
        s += (i ? "," : "") + std::to_string(index[i]);
    return s + ")";
}

} // namespace

Transform::Transform(int input_rank, std::vector<TransformAxis> outputs, Pins input_pins)
    : input_rank_(input_rank), outputs_(std::move(outputs)), pins_(std::move(input_pins)) {
    auto fail = [&](const std::string& why) {
        return Error("invalid transform " + describe(input_rank_, outputs_, pins_) + ": " + why);
    };
    if (input_rank_ < 0) throw fail("negative input rank " + std::to_string(input_rank_));
    if (pins_.empty()) pins_.resize(static_cast<std::size_t>(input_rank_));
    if (pins_.size() != static_cast<std::size_t>(input_rank_))
        throw fail(std::to_string(pins_.size()) + " input pins given for input rank " +
                   std::to_string(input_rank_));
    std::vector<int> used_by(static_cast<std::size_t>(input_rank_), -1);
    for (std::size_t k = 0; k < outputs_.size(); ++k) {
        TransformAxis& o = outputs_[k];
        std::string out = "output axis " + std::to_string(k);
        if (o.input_axis < -1 || o.input_axis >= input_rank_)
            throw fail(out + " reads input axis " + std::to_string(o.input_axis) +
                       ", but the input rank is " + std::to_string(input_rank_));
        if (o.input_axis == -1) {
            o.scale = 1; // unused by a constant axis; normalized so that == compares maps
            continue;
        }
        std::string in = "input axis " + std::to_string(o.input_axis);
        if (o.scale == 0) throw fail(out + " has scale 0 on " + in + "; it is not invertible");
        if (used_by[o.input_axis] >= 0)
            throw fail(in + " is used twice, by output axes " +
                       std::to_string(used_by[o.input_axis]) + " and " + std::to_string(k));
        if (pins_[o.input_axis])
            throw fail(in + " is pinned to " + std::to_string(*pins_[o.input_axis]) +
                       " and also used by " + out);
        used_by[o.input_axis] = static_cast<int>(k);
    }
    for (int a = 0; a < input_rank_; ++a)
        if (used_by[a] < 0 && !pins_[a])
            throw fail("input axis " + std::to_string(a) +
                       " is neither used by an output nor pinned; pin it to drop a unit axis");
}

Transform Transform::identity(int rank) {
    std::vector<TransformAxis> outs;
    for (int i = 0; i < rank; ++i)
        outs.push_back({i, 1, 0});
    return Transform(rank, std::move(outs));
}

Transform Transform::permutation(const std::vector<int>& perm) {
    std::vector<TransformAxis> outs;
    for (int p : perm)
        outs.push_back({p, 1, 0});
    return Transform(static_cast<int>(perm.size()), std::move(outs));
}

Transform Transform::shift(const std::vector<std::int64_t>& offsets) {
    std::vector<TransformAxis> outs;
    for (std::size_t i = 0; i < offsets.size(); ++i)
        outs.push_back({static_cast<int>(i), 1, offsets[i]});
    return Transform(static_cast<int>(offsets.size()), std::move(outs));
}

Transform Transform::scaling(const std::vector<std::int64_t>& scales) {
    std::vector<TransformAxis> outs;
    for (std::size_t i = 0; i < scales.size(); ++i)
        outs.push_back({static_cast<int>(i), scales[i], 0});
    return Transform(static_cast<int>(scales.size()), std::move(outs));
}

std::vector<std::int64_t> Transform::apply(const std::vector<std::int64_t>& index) const {
    if (index.size() != static_cast<std::size_t>(input_rank_))
        throw Error("transform " + to_string() + " applied to index " + index_string(index) +
                    " of rank " + std::to_string(index.size()) + ", expected rank " +
                    std::to_string(input_rank_));
    for (int a = 0; a < input_rank_; ++a)
        if (pins_[a] && index[a] != *pins_[a])
            throw Error("transform " + to_string() + " applied to index " + index_string(index) +
                        ": input axis " + std::to_string(a) + " is pinned to " +
                        std::to_string(*pins_[a]));
    std::vector<std::int64_t> out;
    for (auto& o : outputs_)
        out.push_back(o.input_axis < 0 ? o.offset : o.scale * index[o.input_axis] + o.offset);
    return out;
}

Shape Transform::apply(const Shape& shape) const {
    auto fail = [&](const std::string& why) {
        return Error("cannot apply transform " + to_string() + " to shape " + shape.to_string() +
                     ": " + why);
    };
    if (shape.rank() != input_rank_)
        throw fail("the shape has rank " + std::to_string(shape.rank()) +
                   ", the transform takes rank " + std::to_string(input_rank_));
    for (int a = 0; a < input_rank_; ++a)
        if (pins_[a] && shape[a] != Range(*pins_[a], 1, 1))
            throw fail("input axis " + std::to_string(a) + " has range " + shape[a].to_string() +
                       " but is pinned to " + std::to_string(*pins_[a]));
    std::vector<Range> rs;
    for (auto& o : outputs_) {
        if (o.input_axis < 0) {
            rs.emplace_back(o.offset, 1, 1);
            continue;
        }
        const Range& r = shape[o.input_axis];
        if (r.empty()) {
            rs.emplace_back();
            continue;
        }
        std::int64_t first = o.scale * (o.scale > 0 ? r.start : r.last()) + o.offset;
        rs.emplace_back(first, std::abs(o.scale) * r.step, r.size);
    }
    return Shape(std::move(rs));
}

Transform Transform::inverse() const {
    std::vector<TransformAxis> outs(static_cast<std::size_t>(input_rank_));
    Pins pins(outputs_.size());
    for (int a = 0; a < input_rank_; ++a)
        if (pins_[a]) outs[a] = {-1, 1, *pins_[a]};
    for (std::size_t k = 0; k < outputs_.size(); ++k) {
        const TransformAxis& o = outputs_[k];
        if (o.input_axis < 0) {
            pins[k] = o.offset;
            continue;
        }
        if (o.scale != 1 && o.scale != -1)
            throw Error("cannot invert transform " + to_string() + ": output axis " +
                        std::to_string(k) + " has scale " + std::to_string(o.scale) +
                        ", whose inverse is not integral; use a view with the forward map");
        // out = s*i + off with s = +-1, so i = s*out - s*off.
        outs[o.input_axis] = {static_cast<int>(k), o.scale, -o.scale * o.offset};
    }
    return Transform(output_rank(), std::move(outs), std::move(pins));
}

Transform Transform::compose(const Transform& inner) const {
    auto fail = [&](const std::string& why) {
        return Error("cannot compose transform " + to_string() + " with inner transform " +
                     inner.to_string() + ": " + why);
    };
    if (inner.output_rank() != input_rank_)
        throw fail("the inner transform has " + std::to_string(inner.output_rank()) +
                   " outputs, expected " + std::to_string(input_rank_));
    Pins pins = inner.pins_;
    for (int b = 0; b < input_rank_; ++b) {
        if (!pins_[b]) continue;
        const TransformAxis& o = inner.outputs_[b];
        std::int64_t p = *pins_[b];
        if (o.input_axis < 0) {
            if (o.offset != p)
                throw fail("inner output axis " + std::to_string(b) + " is the constant " +
                           std::to_string(o.offset) + " but the outer transform pins it to " +
                           std::to_string(p));
            continue;
        }
        if ((p - o.offset) % o.scale != 0)
            throw fail("inner output axis " + std::to_string(b) + " never equals its pin " +
                       std::to_string(p));
        pins[o.input_axis] = (p - o.offset) / o.scale;
    }
    std::vector<TransformAxis> outs;
    for (auto& o : outputs_) {
        if (o.input_axis < 0) {
            outs.push_back({-1, 1, o.offset});
            continue;
        }
        const TransformAxis& i = inner.outputs_[o.input_axis];
        if (i.input_axis < 0)
            outs.push_back({-1, 1, o.scale * i.offset + o.offset});
        else
            outs.push_back({i.input_axis, o.scale * i.scale, o.scale * i.offset + o.offset});
    }
    return Transform(inner.input_rank_, std::move(outs), std::move(pins));
}

AffineMap Transform::to_affine_map() const {
    std::vector<std::int64_t> m(outputs_.size() * static_cast<std::size_t>(input_rank_), 0);
    std::vector<std::int64_t> b;
    for (std::size_t k = 0; k < outputs_.size(); ++k) {
        const TransformAxis& o = outputs_[k];
        if (o.input_axis >= 0) m[k * input_rank_ + o.input_axis] = o.scale;
        b.push_back(o.offset);
    }
    return AffineMap(input_rank_, output_rank(), std::move(m), std::move(b));
}

std::string Transform::to_string() const {
    return describe(input_rank_, outputs_, pins_);
}

} // namespace hedra
