// Partitioner: the state and steps of partition() (partition.hpp), shared by the files that
// implement them: partition.cpp (run, buffers, building kernels by inlining definitions) and
// partition_decisions.cpp (what is materialized, capped, distributed, unrolled, widened or
// folded as an epilogue, and the table HEDRA_DUMP shows after each step). Internal to the
// scheduler.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "polyhedral/kernel_ir.hpp"
#include "scheduler/canonicalize.hpp"
#include "scheduler/partition.hpp"

namespace hedra::sched::detail {

using poly::Buffer;
using poly::BufferRole;
using poly::Kernel;
using poly::ProgramIR;
using poly::Read;
using poly::Statement;
using poly::StatementKind;

// The reads of one statement, deduplicated: Input(k) of the value is reads[k].
struct ReadList {
    std::vector<Read> reads;
    ScalarExpr read(int buffer, const AffineMap& access, DType dtype) {
        Read r{buffer, access};
        for (std::size_t k = 0; k < reads.size(); ++k)
            if (reads[k] == r) return scalar_input(static_cast<int>(k), dtype);
        reads.push_back(std::move(r));
        return scalar_input(static_cast<int>(reads.size() - 1), dtype);
    }
};

class Partitioner {
public:
    Partitioner(const CanonicalGraph& g, const PartitionOptions& o) : g_(g), options_(o) {}

    ProgramIR run(const std::vector<NodePtr>& placeholders);

private:
    void split_reductions();

    void stream();

    void in_place_pieces();
    void fuse_rows();

    void make_kernels();

    std::string decisions() const;

private:
    const CanonicalNode& cn(int i) const { return g_.nodes[static_cast<std::size_t>(i)]; }
    NodeKind kind(int i) const { return cn(i).node->kind; }
    bool inlinable_map(int i) const { return !cn(i).leaf && kind(i) == NodeKind::Map; }

    void decide();

    bool feeds_contraction(int j) const;
    int widened_half(int j) const;

    static bool has_product(const ScalarExpr& e);

    std::int64_t operand_size(int o) const { return inlinable_map(o) && !mat_[o] ? size_[o] : 1; }

    void cap_expressions();

    // An operand of a contraction is read once per column of the other operand; inlined, a map
    // is recomputed that many times (a GELU or a layer norm feeding a projection: 128 to 512
    // times per element), so past a few operations, or with any math function, it is stored
    // once. (With several kernels reading it, decide() stores it already.)
    static constexpr std::int64_t kMaxOperandNodes = 5;
    void materialize_costly_operands();

    // A cheap map read by several kernels is recomputed in each; when its inlined tree reads
    // many buffers, each recomputation is a pass over all of them: a residual stream
    // x + f(x) + g(...) inlined layer after layer read every earlier layer's output in every
    // later layer's kernels (quadratic in the depth). Stored, it costs one write and one read
    // per kernel: with K kernels reading it and R full-size buffers in its tree, it is stored
    // when (K - 1)(R - 1) > kMaxSharedRereads.
    static constexpr std::int64_t kMaxSharedRereads = 2;
    void store_wide_shared_maps();

    void distribute_fuses();

    std::vector<int> roots() const;

    // A reduction of at most kMaxUnrolledTerms terms per result (a 2x2 pooling window's tie
    // count) read only inside one other kernel is unrolled into the statements reading it: its
    // window is read there anyway, and a pass over memory is saved. A max or min that stays stored
    // (a 2x2 max pool read by the next layer and by its adjoint) is one Assign of its unrolled
    // terms in its kernel: the loops then run over the results (the innermost along a row,
    // vectorized) instead of ending in a loop of 2 over the window.
    // One read by several pieces of a fuse distributed into the kernel (the four positions of a
    // pooling window routing its gradient, each sharing the window's tie count) stays stored,
    // as one Assign of its terms: unrolled, each piece would evaluate the window again.
    static constexpr std::int64_t kMaxUnrolledTerms = 4;
    void unroll_small_reductions();
    bool shared_by_pieces(int m, int r) const;

    ScalarExpr unrolled_reduction(int i, const AffineMap& access, ReadList& reads);
    void append_epilogues(int i, Kernel& k);

    bool reads_at(int i, const AffineMap& access, int f, int& uses) const;

    void find_epilogues();

    bool depends_on(int o, int r, std::vector<char>& seen) const;

    void make_in_order(int i);

    void materialized_operands(int i, std::vector<int>& out) const;

    void latest_operand(int i, int& latest, bool& ok) const;

    void find_wide_sums();
    bool wide_sum(int i) const;
    static constexpr std::int64_t kWideSumExtent = 8192;

    void note_param(const Range& r);

    int add_buffer(const NodePtr& node, BufferRole role);
    int add_buffer(const NodePtr& node, BufferRole role, DType dtype);

    void make_buffers();

    ScalarExpr inline_use(const NodePtr& node, const AffineMap& access, ReadList& reads);

    ScalarExpr expand(int i, const AffineMap& access, ReadList& reads);

    Statement statement(StatementKind k, const Node& domain, int write, AffineMap write_access,
                        const ScalarExpr& value, ReadList reads);

    void make_kernel(int i);

    void tuple_reduction(int i, Kernel& k);
    // A scan's staging kernels, first-carry copies and loop (partition_scan.cpp).
    void scan_kernels(int i);
    int scan_operand(const NodePtr& in);
    Statement gather_statement(int i);
    void scatter_statements(int i, Kernel& k);
    // The buffer holding node `node` read at `access` (after views), which must have one.
    int buffer_read(const NodePtr& node, const AffineMap& access, ReadList& reads);

    const CanonicalGraph& g_;
    PartitionOptions options_;
    const std::vector<NodePtr>* placeholders_ = nullptr;
    ProgramIR ir_;
    std::vector<bool> mat_;
    std::vector<int> distributed_; // per map: the fuse computed piece by piece in its kernel
    std::vector<std::vector<int>> epilogues_of_; // per sum: the maps appended to its kernel
    std::vector<bool> unrolled_;                 // per reduction: unrolled into its readers
    std::vector<bool> unrolled_kernel_;          // per reduction: one Assign of its terms
    std::vector<int> folded_into_;               // per map: the sum whose kernel computes it, or -1
    std::vector<bool> made_;                     // per node: make_in_order has visited it
    struct PieceRead {
        int fuse = -1;
        NodePtr piece;
        AffineMap to_fused; // piece counters -> fuse counters
    } piece_of_;            // while building a distributed map's statement for one piece
    std::vector<std::int64_t> size_;
    std::vector<int> leaf_buffer_; // per graph node: its Input buffer (leaves)
    std::vector<int> buffer_of_;   // per graph node: the buffer its kernel writes
    std::vector<bool> wide_;       // per sum: accumulated wider, f64 or f32 (wide_sum)
    std::vector<int> wide_buffer_; // per wide sum: its f64 accumulator
    int next_statement_ = 0;
};

} // namespace hedra::sched::detail
