// Tensor-parallel linear layers and parameter shards (see tensor_parallel.hpp).
#include "nn/tensor_parallel.hpp"

#include <cstring>
#include <limits>

#include "ad/grad.hpp"
#include "core/error.hpp"
#include "core/library.hpp"
#include "core/shape.hpp"
#include "nn/index_space.hpp"
#include "nn/layers.hpp"
#include "nn/transformer.hpp"

namespace hedra::nn {

Array column_parallel_linear(const Array& x, const Array& w_shard, const Array& b_shard,
                             const std::shared_ptr<CollectiveGroup>& group, SourceLocation loc) {
    return linear(group ? copy_to_group(x, group, loc) : x, w_shard, b_shard, loc);
}

Array row_parallel_linear(const Array& x_shard, const Array& w_shard, const Array& b,
                          const std::shared_ptr<CollectiveGroup>& group, SourceLocation loc) {
    Array partial = linear(x_shard, w_shard, Array(), loc);
    Array sum = group ? all_reduce(partial, group, CollectiveOp::Sum, loc) : partial;
    return b.valid() ? sum + b : sum;
}

Array vocab_parallel_embedding(const Array& indices, const Array& table_shard, std::int64_t offset,
                               const std::shared_ptr<CollectiveGroup>& group, SourceLocation loc) {
    if (!is_integer(indices.dtype()))
        throw Error("vocab_parallel_embedding: indices must be integers, got " +
                    indices.describe());
    // embedding() gives a zero row for an index outside this rank's rows.
    Array local = embedding(indices - offset, table_shard, loc);
    return group ? all_reduce(local, group, CollectiveOp::Sum, loc) : local;
}

Array vocab_parallel_cross_entropy(const Array& logits_shard, const Array& labels,
                                   std::int64_t offset, std::int64_t vocab,
                                   const std::shared_ptr<CollectiveGroup>& group,
                                   SourceLocation loc) {
    const char* op = "vocab_parallel_cross_entropy";
    if (logits_shard.rank() < 1 || !is_float(logits_shard.dtype()) || !is_integer(labels.dtype()) ||
        labels.rank() != logits_shard.rank() - 1)
        throw Error(std::string(op) + ": logits (..., V/n) of floats and integer labels (...) " +
                    "expected, got " + logits_shard.describe() + " and " + labels.describe());
    const int last = logits_shard.rank() - 1;
    auto reduce = [&](const Array& a, CollectiveOp o) {
        return group ? all_reduce(a, group, o, loc) : a;
    };
    Array column = index_components(logits_shard.shape(), last, loc) + offset;
    Array logits = where(column < vocab, logits_shard, -std::numeric_limits<double>::infinity());
    Array shift = stop_gradient(reduce(max(logits, {last}, true, loc), CollectiveOp::Max), loc);
    Array total = reduce(sum(exp(logits - shift, loc), {last}, true, loc), CollectiveOp::Sum);
    Array label = detail::as_column(detail::zero_based(labels));
    Array target =
        reduce(sum(where(column == label, logits, 0.0), {last}, true, loc), CollectiveOp::Sum);
    Array per_position = log(total, loc) + shift - target; // (..., 1)
    Array summed = sum(per_position, {}, false, loc);
    for (const Range& r : labels.shape().ranges())
        if (r.is_dynamic()) return summed / element_count(labels, {}, loc);
    return summed / static_cast<double>(labels.size());
}

namespace {

// The bytes of one index of `axis` and the count of outer indices.
void split_sizes(const std::vector<std::int64_t>& sizes, int axis, std::size_t item,
                 std::int64_t& outer, std::size_t& inner_bytes) {
    outer = 1;
    for (int i = 0; i < axis; ++i)
        outer *= sizes[static_cast<std::size_t>(i)];
    inner_bytes = item;
    for (std::size_t i = static_cast<std::size_t>(axis) + 1; i < sizes.size(); ++i)
        inner_bytes *= static_cast<std::size_t>(sizes[i]);
}

} // namespace

HostArray shard_rows(const HostArray& a, int axis, int parts, int rank) {
    if (axis < 0 || axis >= a.rank() || parts < 1 || rank < 0 || rank >= parts ||
        a.sizes()[static_cast<std::size_t>(axis)] % parts != 0)
        throw Error("shard_rows: cannot cut axis " + std::to_string(axis) + " of an array of " +
                    "shape " + Shape::of(a.sizes()).to_string() + " into " + std::to_string(parts) +
                    " equal parts and take part " + std::to_string(rank) +
                    "; the parts must divide the axis");
    std::vector<std::int64_t> sizes = a.sizes();
    const std::int64_t n = sizes[static_cast<std::size_t>(axis)], part = n / parts;
    sizes[static_cast<std::size_t>(axis)] = part;
    HostArray out(sizes, a.dtype());
    std::int64_t outer = 0;
    std::size_t inner = 0;
    split_sizes(a.sizes(), axis, dtype_size(a.dtype()), outer, inner);
    const auto* src = static_cast<const unsigned char*>(a.raw());
    auto* dst = static_cast<unsigned char*>(out.raw_mutable());
    for (std::int64_t o = 0; o < outer; ++o)
        std::memcpy(dst + static_cast<std::size_t>(o * part) * inner,
                    src + static_cast<std::size_t>(o * n + rank * part) * inner,
                    static_cast<std::size_t>(part) * inner);
    return out;
}

HostArray unshard_rows(const std::vector<HostArray>& shards, int axis) {
    if (shards.empty()) throw Error("unshard_rows: no shards given");
    const HostArray& first = shards[0];
    if (axis < 0 || axis >= first.rank())
        throw Error("unshard_rows: axis " + std::to_string(axis) + " of shards of shape " +
                    Shape::of(first.sizes()).to_string());
    for (const HostArray& s : shards)
        if (s.sizes() != first.sizes() || s.dtype() != first.dtype())
            throw Error("unshard_rows: shards of shapes " + Shape::of(first.sizes()).to_string() +
                        " and " + Shape::of(s.sizes()).to_string() + " differ; every shard " +
                        "must have the same shape and dtype");
    std::vector<std::int64_t> sizes = first.sizes();
    const std::int64_t part = sizes[static_cast<std::size_t>(axis)];
    const std::int64_t n = part * static_cast<std::int64_t>(shards.size());
    sizes[static_cast<std::size_t>(axis)] = n;
    HostArray out(sizes, first.dtype());
    std::int64_t outer = 0;
    std::size_t inner = 0;
    split_sizes(sizes, axis, dtype_size(first.dtype()), outer, inner);
    auto* dst = static_cast<unsigned char*>(out.raw_mutable());
    for (std::size_t r = 0; r < shards.size(); ++r) {
        const auto* src = static_cast<const unsigned char*>(shards[r].raw());
        for (std::int64_t o = 0; o < outer; ++o)
            std::memcpy(
                dst + static_cast<std::size_t>(o * n + static_cast<std::int64_t>(r) * part) * inner,
                src + static_cast<std::size_t>(o * part) * inner,
                static_cast<std::size_t>(part) * inner);
    }
    return out;
}

} // namespace hedra::nn
