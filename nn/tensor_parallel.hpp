// Megatron-LM's tensor-parallel layers over a group of ranks (core/collective.hpp): a
// column-parallel linear holds rows [r·O/n, (r+1)·O/n) of the weight (O, C) and gives its slice
// of the output features from the whole input, replicated on every rank (its gradient is summed
// over the group); a row-parallel linear holds columns [r·C/n, (r+1)·C/n) and sums the partial
// products over the group (one all-reduce), adding the bias once after the sum. A column-parallel
// layer followed by a row-parallel one (an MLP, attention with its heads split) costs one
// all-reduce in the forward pass and one in the backward.
#pragma once

#include <cstdint>
#include <memory>

#include "core/array.hpp"
#include "core/collective.hpp"
#include "core/source_location.hpp"

namespace hedra::nn {

// linear(x, w_shard, b_shard) on x (..., C) replicated over `group`: (..., O / n).
Array column_parallel_linear(const Array& x, const Array& w_shard, const Array& b_shard,
                             const std::shared_ptr<CollectiveGroup>& group,
                             SourceLocation loc = SourceLocation::current());
// The sum over `group` of linear(x_shard, w_shard) on x_shard (..., C / n) and w_shard
// (O, C / n), plus b (O) or an empty Array: (..., O), replicated.
Array row_parallel_linear(const Array& x_shard, const Array& w_shard, const Array& b,
                          const std::shared_ptr<CollectiveGroup>& group,
                          SourceLocation loc = SourceLocation::current());

// Megatron's vocabulary-parallel pair: each rank holds rows [offset, offset + V/n) of the token
// embedding (the vocabulary padded to a multiple of n). The embedding looks up the rows it holds
// (zeros for the others) and sums over the group; the cross-entropy of logits_shard (..., V/n),
// this rank's columns of the logits, takes the softmax over every rank's columns with an
// all-reduce max (its shift, no gradient) and two all-reduce sums (the exponentials, the
// target's logit), never gathering the logits. Columns at or past `vocab` are padding, left
// out of the softmax. The loss is the mean over `labels`, equal on every rank.
Array vocab_parallel_embedding(const Array& indices, const Array& table_shard, std::int64_t offset,
                               const std::shared_ptr<CollectiveGroup>& group,
                               SourceLocation loc = SourceLocation::current());
Array vocab_parallel_cross_entropy(const Array& logits_shard, const Array& labels,
                                   std::int64_t offset, std::int64_t vocab,
                                   const std::shared_ptr<CollectiveGroup>& group,
                                   SourceLocation loc = SourceLocation::current());

// Rows [rank·n/parts, (rank+1)·n/parts) of axis `axis` of `a` (n its extent; parts must divide
// it), as a new array: a rank's shard of a parameter.
HostArray shard_rows(const HostArray& a, int axis, int parts, int rank);
// The shards concatenated along `axis` again.
HostArray unshard_rows(const std::vector<HostArray>& shards, int axis);

} // namespace hedra::nn
