// Collectives as nodes of the graph: an all-reduce over a group of ranks (processes under
// mpirun, threads of one process in tests) is an array like any other, so a tensor-parallel
// layer, its gradient and the update are one graph and one compiled program. Where a program
// has collectives, compile() cuts it at them (core/collective_program.hpp): the pieces between
// two collectives are ordinary programs, and the run starts each collective on the group as
// soon as the piece that makes its operand is done.
//
// Megatron-LM's pair: all_reduce sums partial results (a row-parallel product) in the forward
// pass and passes the gradient through unchanged; copy_to_group is the identity in the forward
// pass and sums the gradient over the group in the backward pass (a column-parallel product's
// input, replicated on every rank, whose gradient each rank knows only in part). Every rank
// computes the same loss from the same replicated values.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/array.hpp"
#include "core/host_array.hpp"
#include "core/source_location.hpp"

namespace hedra {

// The ranks a collective spans; distributed::collective_group adapts a Communicator.
class CollectiveGroup {
public:
    virtual ~CollectiveGroup() = default;
    virtual int rank() const = 0;
    virtual int size() const = 0;
    virtual std::string describe() const = 0; // "tp (in-process, rank 1 of 2)"
    // `data` combined element-wise over every rank's `data` (op Sum or Max), in place; equal on
    // every rank bit for bit. Every rank calls it in the same order with the same sizes.
    virtual void all_reduce_in_place(HostArray& data, CollectiveOp op) = 0;
};

// The element-wise sum (or max) of `x` over the ranks of `group`.
Array all_reduce(const Array& x, std::shared_ptr<CollectiveGroup> group,
                 CollectiveOp op = CollectiveOp::Sum,
                 SourceLocation loc = SourceLocation::current());
// `x` itself, whose gradient is summed over the ranks of `group`.
Array copy_to_group(const Array& x, std::shared_ptr<CollectiveGroup> group,
                    SourceLocation loc = SourceLocation::current());

// Whether a Collective node (a copy_to_group too) is reachable from `outputs` (not behind memos).
bool has_collectives(const std::vector<NodePtr>& outputs);

} // namespace hedra
