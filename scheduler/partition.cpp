// partition: the canonical graph -> kernel IR, in the steps Partitioner::run lists: decide what
// is materialized, cap the inlined expression size, the fuses, small reductions, wide sums and
// epilogues (partition_decisions.cpp), create buffers, then build one kernel per materialized
// node by inlining its definition (here). See partition.hpp for the rules.
#include "scheduler/partition.hpp"

#include "scheduler/partitioner.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_set>

#include "core/dump.hpp"
#include "core/error.hpp"
#include "core/scalar_dag.hpp"
#include "scheduler/canonicalize.hpp"
#include "scheduler/donate_inputs.hpp"
#include "scheduler/in_place_pieces.hpp"
#include "scheduler/merge_scans.hpp"
#include "scheduler/narrow_domains.hpp"
#include "scheduler/row_fusion.hpp"
#include "scheduler/split_reduction.hpp"
#include "scheduler/stencil_stream.hpp"

namespace hedra::sched::detail {
namespace {

// The accumulator of a wide sum: f64 for f32, f32 for the half formats.
DType wide_dtype(DType t) {
    return is_half(t) ? DType::F32 : DType::F64;
}

ScalarExpr cast_to(const ScalarExpr& e, DType t) {
    return e->dtype == t ? e : scalar_cast(e, t);
}

ScalarExpr extreme(DType t, bool lowest) {
    switch (t) {
    case DType::Bool:
        return scalar_const(lowest ? 0.0 : 1.0, t);
    case DType::I32:
        return scalar_const_int(lowest ? std::numeric_limits<std::int32_t>::min()
                                       : std::numeric_limits<std::int32_t>::max(),
                                t);
    case DType::I64:
        return scalar_const_int(lowest ? std::numeric_limits<std::int64_t>::min()
                                       : std::numeric_limits<std::int64_t>::max(),
                                t);
    case DType::F32:
    case DType::F64:
    case DType::BF16:
    case DType::F16:
        return scalar_const(lowest ? -INFINITY : INFINITY, t);
    }
    internal_error("extreme: unknown dtype");
}

ScalarExpr reduce_identity(const Node& r) {
    switch (r.reduce_op) {
    case ReduceOp::Sum:
        return scalar_const(0.0, r.dtype);
    case ReduceOp::Prod:
        return scalar_const(1.0, r.dtype);
    case ReduceOp::Max:
        return extreme(r.dtype, true);
    case ReduceOp::Min:
        return extreme(r.dtype, false);
    case ReduceOp::And:
        return scalar_const(1.0, r.dtype);
    case ReduceOp::Or:
        return scalar_const(0.0, r.dtype);
    case ReduceOp::Custom:
        return cast_to(r.identity, r.dtype);
    }
    return nullptr;
}

std::vector<std::int64_t> sizes_of(const Node& n) {
    return n.shape.sizes();
}

// Piece counters -> fused counters, axis by axis: exact because every piece range lies on the
// fused range's lattice (index = start + step*k, counter = (index - start) / step).
AffineMap piece_access(const Shape& piece, const Shape& fused) {
    int r = fused.rank();
    std::vector<std::int64_t> m(static_cast<std::size_t>(r * r), 0), off(r, 0);
    for (int d = 0; d < r; ++d) {
        const Range& p = piece[d];
        const Range& f = fused[d];
        if (p.size == 0) continue;
        HEDRA_INTERNAL_CHECK((p.start - f.start) % f.step == 0, "partition: piece off lattice");
        off[d] = (p.start - f.start) / f.step;
        if (p.size == 1) continue;
        HEDRA_INTERNAL_CHECK(p.step % f.step == 0, "partition: piece step off lattice");
        m[static_cast<std::size_t>(d * r + d)] = p.step / f.step;
    }
    return AffineMap(r, r, std::move(m), std::move(off));
}

// Input counters -> result counters of a reduction: reduced axes dropped (or pinned to 0).
AffineMap reduce_write_access(const Node& r, int in_rank) {
    std::unordered_set<int> reduced(r.axes.begin(), r.axes.end());
    std::vector<std::int64_t> m;
    int out = 0;
    for (int d = 0; d < in_rank; ++d) {
        if (reduced.count(d) && !r.keepdims) continue;
        std::vector<std::int64_t> row(static_cast<std::size_t>(in_rank), 0);
        if (!reduced.count(d)) row[static_cast<std::size_t>(d)] = 1;
        m.insert(m.end(), row.begin(), row.end());
        ++out;
    }
    return AffineMap(in_rank, out, std::move(m), std::vector<std::int64_t>(out, 0));
}

std::string describe_placeholder(const Node& n) {
    std::string s = "placeholder ";
    if (!n.name.empty()) s += "'" + n.name + "' ";
    return s + std::string(dtype_name(n.dtype)) + " " + n.shape.to_string() + " created at " +
           location_string(n.loc);
}

} // namespace

// The steps in order; each is timed (HEDRA_TIME_PASSES) and, with HEDRA_DUMP, followed by
// the table of decisions so far (partition-<step>.txt), so the files' differences show
// what each step decided. lower.cpp's pass list names the same steps.
ProgramIR Partitioner::run(const std::vector<NodePtr>& placeholders) {
    placeholders_ = &placeholders;
    struct Step {
        const char* name;
        void (Partitioner::*run)();
    };
    static constexpr Step kSteps[] = {
        {"partition.decide", &Partitioner::decide},
        {"partition.cap-expressions", &Partitioner::cap_expressions},
        {"partition.store-shared-maps", &Partitioner::store_wide_shared_maps},
        {"partition.distribute-fuses", &Partitioner::distribute_fuses},
        {"partition.unroll-reductions", &Partitioner::unroll_small_reductions},
        {"partition.wide-sums", &Partitioner::find_wide_sums},
        {"partition.epilogues", &Partitioner::find_epilogues},
        {"partition.buffers", &Partitioner::make_buffers},
        {"partition.kernels", &Partitioner::make_kernels},
        {"partition.fuse-rows", &Partitioner::fuse_rows},
        {"partition.in-place-pieces", &Partitioner::in_place_pieces},
        {"partition.split-reductions", &Partitioner::split_reductions},
        {"partition.stream-stencils", &Partitioner::stream},
    };
    for (const Step& step : kSteps) {
        {
            dump::PassTimer timer(step.name);
            (this->*step.run)();
        }
        if (dump::enabled()) dump::write_stage(step.name, "txt", decisions());
    }
    return std::move(ir_);
}

void Partitioner::split_reductions() {
    if (options_.split_reductions) split_outer_reductions(ir_);
}

void Partitioner::stream() {
    if (options_.stream_stencils) stream_stencils(ir_);
}

void Partitioner::in_place_pieces() {
    write_pieces_in_place(ir_);
}

void Partitioner::fuse_rows() {
    if (options_.fuse_rows) fuse_row_kernels(ir_);
}

void Partitioner::make_kernels() {
    made_.assign(g_.nodes.size(), false);
    // A scan's components are written by its loop.
    for (std::size_t i = 0; i < g_.nodes.size(); ++i)
        if (!g_.nodes[i].leaf && g_.nodes[i].node->kind == NodeKind::ScanOutput)
            folded_into_[i] = g_.nodes[i].operands.at(0);
    for (std::size_t i = 0; i < g_.nodes.size(); ++i)
        if (mat_[i] && folded_into_[i] < 0) make_in_order(static_cast<int>(i));
    for (int o : g_.outputs)
        ir_.outputs.push_back(buffer_of_[static_cast<std::size_t>(o)]);
}

// The value of unrolled reduction `i` at `access` (statement counters -> its counters):
// the identity combined with each term in the reduction's order.
ScalarExpr Partitioner::unrolled_reduction(int i, const AffineMap& access, ReadList& reads) {
    const Node& r = *cn(i).node;
    const NodePtr& in = r.inputs.at(0);
    const int in_rank = in->shape.rank();
    std::vector<bool> reduced(static_cast<std::size_t>(in_rank), false);
    for (int a : r.axes)
        reduced[static_cast<std::size_t>(a)] = true;
    std::vector<std::int64_t> k(static_cast<std::size_t>(in_rank), 0);
    ScalarExpr acc = reduce_identity(r);
    ScalarOp op = r.reduce_op == ReduceOp::Sum    ? ScalarOp::Add
                  : r.reduce_op == ReduceOp::Prod ? ScalarOp::Mul
                  : r.reduce_op == ReduceOp::Max  ? ScalarOp::Max
                  : r.reduce_op == ReduceOp::Min  ? ScalarOp::Min
                  : r.reduce_op == ReduceOp::And  ? ScalarOp::And
                                                  : ScalarOp::Or;
    while (true) {
        // Input counters: a reduced axis pinned to its term, the others the result's.
        std::vector<std::int64_t> m;
        std::vector<std::int64_t> off;
        int j = 0;
        for (int d = 0; d < in_rank; ++d) {
            std::vector<std::int64_t> row(static_cast<std::size_t>(access.in_rank()), 0);
            if (reduced[static_cast<std::size_t>(d)]) {
                off.push_back(k[static_cast<std::size_t>(d)]);
                if (r.keepdims) ++j;
            } else {
                for (int c = 0; c < access.in_rank(); ++c)
                    row[static_cast<std::size_t>(c)] = access.coeff(j, c);
                off.push_back(access.offset(j));
                ++j;
            }
            m.insert(m.end(), row.begin(), row.end());
        }
        AffineMap to_input(access.in_rank(), in_rank, std::move(m), std::move(off));
        acc = scalar_binary(op, acc, cast_to(inline_use(in, to_input, reads), r.dtype));
        int d = in_rank - 1; // the next term, the last reduced axis fastest
        for (; d >= 0; --d) {
            if (!reduced[static_cast<std::size_t>(d)]) continue;
            if (++k[static_cast<std::size_t>(d)] < in->shape[d].size) break;
            k[static_cast<std::size_t>(d)] = 0;
        }
        if (d < 0) return acc;
    }
}

// Makes the kernels `i` needs, then its own: nodes in order, except that an operand of a
// sum's epilogue that comes after the sum (Adam's bias correction beta2^t) is made before
// the sum's kernel (find_epilogues checked that it does not depend on the sum).
void Partitioner::make_in_order(int i) {
    if (made_[static_cast<std::size_t>(i)]) return;
    made_[static_cast<std::size_t>(i)] = true;
    std::vector<int> needs;
    materialized_operands(i, needs);
    for (int e : epilogues_of_[static_cast<std::size_t>(i)])
        materialized_operands(e, needs);
    for (int d : needs) {
        int k = folded_into_[static_cast<std::size_t>(d)] >= 0
                    ? folded_into_[static_cast<std::size_t>(d)]
                    : d;
        if (k != i) make_in_order(k);
    }
    if (mat_[static_cast<std::size_t>(i)] && folded_into_[static_cast<std::size_t>(i)] < 0)
        make_kernel(i);
}

// The operands of `i`'s inlined tree that other kernels compute (or an unrolled reduction,
// whose own operands are reached through it); not leaves, constants or index components.
void Partitioner::materialized_operands(int i, std::vector<int>& out) const {
    for (int o : cn(i).operands) {
        if (inlinable_map(o) && !mat_[o])
            materialized_operands(o, out);
        else if (!cn(o).leaf && kind(o) != NodeKind::Constant && kind(o) != NodeKind::Iota)
            out.push_back(o);
    }
}

// The largest materialized (or leaf) operand index read by the inlined tree of `i`; `ok`
// turns false if two distinct operands share that index's kernel position (never) or the
// tree reads a fuse being distributed.
void Partitioner::latest_operand(int i, int& latest, bool& ok) const {
    for (int o : cn(i).operands) {
        if (inlinable_map(o) && !mat_[o]) {
            latest_operand(o, latest, ok);
        } else if (!cn(o).leaf && kind(o) != NodeKind::Constant && kind(o) != NodeKind::Iota) {
            if (!mat_[o]) ok = false;
            latest = std::max(latest, o);
        }
    }
}

// A symbolic extent the program depends on, with the smallest maximum declared for it.
void Partitioner::note_param(const Range& r) {
    int at = ir_.param_index(r.param);
    if (at < 0) {
        auto pos = std::lower_bound(ir_.params.begin(), ir_.params.end(), r.param);
        at = static_cast<int>(pos - ir_.params.begin());
        ir_.params.insert(pos, r.param);
        ir_.param_max.insert(ir_.param_max.begin() + at, r.size);
    }
    std::int64_t& max = ir_.param_max[static_cast<std::size_t>(at)];
    max = std::min(max, r.size);
}

int Partitioner::add_buffer(const NodePtr& node, BufferRole role) {
    return add_buffer(node, role, node->dtype);
}

int Partitioner::add_buffer(const NodePtr& node, BufferRole role, DType dtype) {
    int b = static_cast<int>(ir_.buffers.size());
    ir_.buffers.push_back({"b" + std::to_string(b), dtype, sizes_of(*node), role, node});
    for (int d = 0; d < node->shape.rank(); ++d)
        if (node->shape[d].is_dynamic()) {
            std::vector<int>& params = ir_.buffers.back().params;
            params.resize(static_cast<std::size_t>(node->shape.rank()), -1);
            params[static_cast<std::size_t>(d)] = node->shape[d].param;
            note_param(node->shape[d]);
        }
    if (role == BufferRole::Input) ir_.inputs.push_back(b);
    return b;
}

void Partitioner::make_buffers() {
    const std::vector<NodePtr>& placeholders = *placeholders_;
    std::size_t n = g_.nodes.size();
    leaf_buffer_.assign(n, -1);
    buffer_of_.assign(n, -1);
    std::unordered_set<const Node*> listed;
    for (const NodePtr& p : placeholders) {
        HEDRA_INTERNAL_CHECK(p != nullptr, "partition: null placeholder");
        if (p->kind != NodeKind::Placeholder)
            throw Error("compile: an input is a " + std::string(node_kind_name(p->kind)) +
                        " created at " + location_string(p->loc) + ", not a placeholder");
        if (!listed.insert(p.get()).second)
            throw Error("compile: " + describe_placeholder(*p) + " is listed twice");
        int b = add_buffer(p, BufferRole::Input);
        int i = g_.find(p.get());
        if (i >= 0) leaf_buffer_[i] = b;
    }
    for (std::size_t i = 0; i < n; ++i) {
        const CanonicalNode& c = g_.nodes[i];
        if (!c.leaf || leaf_buffer_[i] >= 0) continue;
        if (c.node->kind == NodeKind::Placeholder)
            throw Error("compile: " + describe_placeholder(*c.node) +
                        " is needed by the outputs but not listed among the placeholders");
        leaf_buffer_[i] = add_buffer(c.node, BufferRole::Input);
    }
    for (std::size_t i = 0; i < n; ++i)
        if (mat_[i] && g_.nodes[i].node->kind != NodeKind::Scan)
            buffer_of_[i] = add_buffer(
                g_.nodes[i].node, g_.nodes[i].output ? BufferRole::Output : BufferRole::Temporary);
    wide_buffer_.assign(n, -1);
    for (std::size_t i = 0; i < n; ++i)
        if (wide_[i])
            wide_buffer_[i] = add_buffer(g_.nodes[i].node, BufferRole::Temporary,
                                         wide_dtype(g_.nodes[i].node->dtype));
}

// The value of `node` read at `access` (statement counters -> node counters).
ScalarExpr Partitioner::inline_use(const NodePtr& node, const AffineMap& access, ReadList& reads) {
    CanonicalGraph::Use use = g_.resolve(node, access);
    int i = g_.find(use.node.get());
    HEDRA_INTERNAL_CHECK(i >= 0, "partition: a use outside the canonical graph");
    NodeKind k = kind(i);
    if (i == piece_of_.fuse) {
        // In a distributed map's statement for one piece: the piece's value, whose counters
        // are the statement's (reads_at checked the access).
        HEDRA_INTERNAL_CHECK(use.access == piece_of_.to_fused, "partition: distributed read");
        const NodePtr& piece = piece_of_.piece;
        return inline_use(piece, AffineMap::identity(piece->shape.rank()), reads);
    }
    if (leaf_buffer_[i] >= 0) return reads.read(leaf_buffer_[i], use.access, use.node->dtype);
    if (buffer_of_[i] >= 0 && k != NodeKind::Constant && k != NodeKind::Iota)
        return reads.read(buffer_of_[i], use.access, use.node->dtype);
    return expand(i, use.access, reads);
}

// The definition of an inlined node (map, constant, iota) at `access`.
ScalarExpr Partitioner::expand(int i, const AffineMap& access, ReadList& reads) {
    const Node& n = *cn(i).node;
    switch (n.kind) {
    case NodeKind::Constant:
        return n.expr;
    case NodeKind::Iota: {
        const Range& r = n.shape[n.axis];
        int in = access.in_rank();
        std::vector<std::int64_t> row(static_cast<std::size_t>(in));
        for (int j = 0; j < in; ++j)
            row[j] = r.step * access.coeff(n.axis, j);
        AffineMap index(in, 1, std::move(row), {r.start + r.step * access.offset(n.axis)});
        return reads.read(-1, index, n.dtype);
    }
    case NodeKind::Reduce:
        HEDRA_INTERNAL_CHECK(unrolled_[static_cast<std::size_t>(i)],
                             "partition: inlining a reduction that is not unrolled");
        return unrolled_reduction(i, access, reads);
    case NodeKind::Map: {
        std::vector<ScalarExpr> args;
        for (const NodePtr& in : n.inputs)
            args.push_back(inline_use(in, access, reads));
        return substitute_inputs(n.expr, args);
    }
    default:
        internal_error("partition: cannot inline a " + std::string(node_kind_name(n.kind)));
    }
}

// A statement over the counters of `domain`'s shape.
Statement Partitioner::statement(StatementKind k, const Node& domain, int write,
                                 AffineMap write_access, const ScalarExpr& value, ReadList reads) {
    Statement s;
    s.name = "S" + std::to_string(next_statement_++);
    s.kind = k;
    s.extents = sizes_of(domain);
    const int rank = domain.shape.rank();
    for (int d = 0; d < rank; ++d)
        if (domain.shape[d].is_dynamic()) {
            s.param_bounds.push_back({AffineMap::projection(rank, {d}), domain.shape[d].param});
            note_param(domain.shape[d]);
        }
    s.write_buffer = write;
    s.write_access = std::move(write_access);
    // Inlined producers may compute a value their consumer computes too: merged once more.
    s.value = share_common_subexpressions(fold_constants(cast_to(value, ir_.buffers[write].dtype)));
    s.reads = std::move(reads.reads);
    return s;
}

// The maps that joined reduction i's kernel as its epilogues, in order.
void Partitioner::append_epilogues(int i, Kernel& k) {
    for (int m : epilogues_of_[static_cast<std::size_t>(i)]) {
        ReadList epi_reads;
        const Node& mn = *cn(m).node;
        ScalarExpr v = expand(m, AffineMap::identity(mn.shape.rank()), epi_reads);
        k.statements.push_back(
            statement(StatementKind::Assign, mn, buffer_of_[static_cast<std::size_t>(m)],
                      AffineMap::identity(mn.shape.rank()), v, std::move(epi_reads)));
    }
}

void Partitioner::make_kernel(int i) {
    const CanonicalNode& c = cn(i);
    const Node& n = *c.node;
    if (!c.leaf && n.kind == NodeKind::Scan) return scan_kernels(i);
    int w = buffer_of_[i];
    Kernel k;
    k.name = "k" + std::to_string(ir_.kernels.size());
    AffineMap id = AffineMap::identity(n.shape.rank());
    if (c.leaf) {
        ReadList reads;
        ScalarExpr v = reads.read(leaf_buffer_[i], id, n.dtype);
        k.statements.push_back(statement(StatementKind::Assign, n, w, id, v, std::move(reads)));
    } else if (n.kind == NodeKind::Reduce && !n.tuple_exprs.empty()) {
        tuple_reduction(i, k);
    } else if (n.kind == NodeKind::Reduce && unrolled_kernel_[static_cast<std::size_t>(i)]) {
        ReadList reads;
        ScalarExpr v = unrolled_reduction(i, id, reads);
        k.statements.push_back(statement(StatementKind::Assign, n, w, id, v, std::move(reads)));
        append_epilogues(i, k);
    } else if (n.kind == NodeKind::Reduce) {
        const Node& in = *n.inputs.at(0);
        const int wide = wide_buffer_[static_cast<std::size_t>(i)];
        const int acc = wide >= 0 ? wide : w;
        k.statements.push_back(
            statement(StatementKind::Assign, n, acc, id, reduce_identity(n), {}));
        ReadList reads;
        AffineMap in_id = AffineMap::identity(in.shape.rank());
        ScalarExpr v = inline_use(n.inputs[0], in_id, reads);
        Statement u = statement(StatementKind::Update, in, acc,
                                reduce_write_access(n, in.shape.rank()), v, reads);
        u.reduce_op = n.reduce_op;
        if (n.reduce_op == ReduceOp::Custom) u.combiner = n.expr;
        u.reduction_dims = n.axes;
        k.statements.push_back(std::move(u));
        if (wide >= 0) { // rounded once, into the sum's own buffer
            ReadList r;
            ScalarExpr total = r.read(wide, id, wide_dtype(n.dtype));
            k.statements.push_back(statement(StatementKind::Assign, n, w, id, total, std::move(r)));
        }
        append_epilogues(i, k);
    } else if (n.kind == NodeKind::Fuse) {
        for (const NodePtr& piece : n.inputs) {
            ReadList reads;
            AffineMap piece_id = AffineMap::identity(piece->shape.rank());
            ScalarExpr v = inline_use(piece, piece_id, reads);
            k.statements.push_back(statement(StatementKind::Assign, *piece, w,
                                             piece_access(piece->shape, n.shape), v,
                                             std::move(reads)));
        }
    } else if (n.kind == NodeKind::Gather) {
        k.statements.push_back(gather_statement(i));
    } else if (n.kind == NodeKind::Scatter) {
        scatter_statements(i, k);
    } else if (distributed_[static_cast<std::size_t>(i)] >= 0) {
        int f = distributed_[static_cast<std::size_t>(i)];
        const Node& fn = *cn(f).node;
        for (const NodePtr& piece : fn.inputs) {
            ReadList reads;
            AffineMap to_fused = piece_access(piece->shape, fn.shape);
            piece_of_ = {f, piece, to_fused};
            ScalarExpr v = expand(i, to_fused, reads);
            piece_of_ = {};
            k.statements.push_back(
                statement(StatementKind::Assign, *piece, w, to_fused, v, std::move(reads)));
        }
    } else {
        ReadList reads;
        ScalarExpr v = n.kind == NodeKind::View ? inline_use(n.inputs.at(0), n.access, reads)
                                                : expand(i, id, reads);
        k.statements.push_back(statement(StatementKind::Assign, n, w, id, v, std::move(reads)));
    }
    ir_.kernels.push_back(std::move(k));
}

namespace {

// The access of take's indices from its result's counters (p, q, r): q, the `q` counters from
// axis `a` of `rank`.
AffineMap indices_access(int rank, int a, int q) {
    std::vector<std::int64_t> m(static_cast<std::size_t>(q * rank), 0);
    for (int d = 0; d < q; ++d)
        m[static_cast<std::size_t>(d * rank + a + d)] = 1;
    return AffineMap(rank, q, std::move(m), std::vector<std::int64_t>(static_cast<std::size_t>(q)));
}

// The access of the taken-from array (`target_rank` axes) from the counters (p, q, r) and,
// after them, the index value v: (p, v, r).
AffineMap indexed_access(int rank, int a, int q, int target_rank) {
    std::vector<std::int64_t> m(static_cast<std::size_t>(target_rank * (rank + 1)), 0);
    for (int d = 0; d < target_rank; ++d) {
        int column = d < a ? d : d == a ? rank : d + q - 1;
        m[static_cast<std::size_t>(d * (rank + 1) + column)] = 1;
    }
    return AffineMap(rank + 1, target_rank, std::move(m),
                     std::vector<std::int64_t>(static_cast<std::size_t>(target_rank)));
}

} // namespace

int Partitioner::buffer_read(const NodePtr& node, const AffineMap& access, ReadList& reads) {
    CanonicalGraph::Use use = g_.resolve(node, access);
    int j = g_.find(use.node.get());
    HEDRA_INTERNAL_CHECK(j >= 0, "partition: a gather operand outside the canonical graph");
    int b = leaf_buffer_[j] >= 0 ? leaf_buffer_[j] : buffer_of_[j];
    HEDRA_INTERNAL_CHECK(b >= 0, "partition: a gather operand without a buffer");
    return static_cast<int>(reads.read(b, use.access, use.node->dtype)->ivalue); // Input(k)
}

// result(p, q, r) = src(p, clamp(indices(q)), r), with q the indices' counters: the indices
// are read first, then src through an access whose input after the counters is their value.
Statement Partitioner::gather_statement(int i) {
    const Node& n = *cn(i).node;
    const NodePtr& src = n.inputs.at(0);
    const NodePtr& idx = n.inputs.at(1);
    const int rank = n.shape.rank(), a = n.axis, q = idx->shape.rank();
    ReadList reads;
    int k_idx = buffer_read(idx, indices_access(rank, a, q), reads);
    int k_src = buffer_read(src, indexed_access(rank, a, q, src->shape.rank()), reads);
    Read& r = reads.reads[static_cast<std::size_t>(k_src)];
    r.indirect = {k_idx};
    r.indirect_extent = {src->shape[a].size};
    ScalarExpr v = scalar_input(k_src, src->dtype);
    return statement(StatementKind::Assign, n, buffer_of_[static_cast<std::size_t>(i)],
                     AffineMap::identity(rank), v, std::move(reads));
}

// Zeros, then an update over the values' counters (p, q, r) that adds values(p, q, r) at
// (p, clamp(indices(q)), r): its write access takes the index value as an input after the
// counters, and its q counters are the reduced ones.
void Partitioner::scatter_statements(int i, Kernel& k) {
    const Node& n = *cn(i).node;
    const NodePtr& values = n.inputs.at(0);
    const NodePtr& idx = n.inputs.at(1);
    const int rank = values->shape.rank(), a = n.axis, q = idx->shape.rank();
    const int w = buffer_of_[static_cast<std::size_t>(i)];
    AffineMap id = AffineMap::identity(n.shape.rank());
    k.statements.push_back(statement(StatementKind::Assign, n, w, id,
                                     cast_to(scalar_const(0.0, DType::F64), n.dtype), {}));
    ReadList reads;
    ScalarExpr v = inline_use(values, AffineMap::identity(rank), reads);
    int k_idx = buffer_read(idx, indices_access(rank, a, q), reads);
    Statement u = statement(StatementKind::Update, *values, w,
                            indexed_access(rank, a, q, n.shape.rank()), v, std::move(reads));
    u.reduce_op = ReduceOp::Sum;
    for (int d = 0; d < q; ++d)
        u.reduction_dims.push_back(a + d);
    u.write_indirect = {k_idx};
    u.write_indirect_extent = {n.shape[a].size};
    k.statements.push_back(std::move(u));
}

// A component of a reduction of several arrays (reduce_multiple_value): its kernel keeps
// every component's accumulator (this node's buffer for its own, temporaries for the
// others), initializes them, then runs one Assign over the inputs' domain that reads all
// accumulators and writes all of them (Statement::tuple_writes). Components used together
// are each computed by a kernel of their own.
void Partitioner::tuple_reduction(int i, Kernel& k) {
    const Node& n = *cn(i).node;
    const std::size_t size = n.tuple_exprs.size();
    const int in_rank = n.inputs.at(0)->shape.rank();
    AffineMap id = AffineMap::identity(n.shape.rank());
    AffineMap to_out = reduce_write_access(n, in_rank);
    std::vector<int> acc(size);
    for (std::size_t j = 0; j < size; ++j)
        acc[j] = static_cast<int>(j) == n.component
                     ? buffer_of_[static_cast<std::size_t>(i)]
                     : add_buffer(cn(i).node, BufferRole::Temporary, n.tuple_exprs[j]->dtype);
    for (std::size_t j = 0; j < size; ++j)
        k.statements.push_back(
            statement(StatementKind::Assign, n, acc[j], id, n.tuple_identities[j], {}));
    ReadList reads;
    std::vector<ScalarExpr> args;
    for (std::size_t m = 0; m < size; ++m)
        args.push_back(reads.read(acc[m], to_out, n.tuple_exprs[m]->dtype));
    AffineMap in_id = AffineMap::identity(in_rank);
    for (std::size_t m = 0; m < size; ++m)
        args.push_back(inline_use(n.inputs[m], in_id, reads));
    std::vector<ScalarExpr> values;
    for (const ScalarExpr& e : n.tuple_exprs)
        values.push_back(fold_constants(substitute_inputs(e, args)));
    values = share_common_subexpressions(values); // the components' common parts, once
    Statement u =
        statement(StatementKind::Assign, *n.inputs[0], acc[0], to_out, values[0], std::move(reads));
    for (std::size_t j = 1; j < size; ++j)
        u.tuple_writes.push_back({acc[j], values[j]});
    u.tuple_combiners = n.tuple_exprs;
    k.statements.push_back(std::move(u));
}

} // namespace hedra::sched::detail

namespace hedra::sched {

poly::ProgramIR partition(const std::vector<NodePtr>& outputs,
                          const std::vector<NodePtr>& placeholders, const PartitionOptions& options,
                          const std::vector<NodePtr>& donated) {
    const std::vector<NodePtr> merged = [&] {
        dump::PassTimer timer("merge-scans");
        return merge_scans(outputs);
    }();
    CanonicalGraph g = [&] {
        dump::PassTimer timer("canonicalize");
        return canonicalize(merged);
    }();
    poly::ProgramIR program = detail::Partitioner(g, options).run(placeholders);
    if (options.narrow) {
        dump::PassTimer timer("narrow-domains");
        narrow_domains(program);
    }
    {
        dump::PassTimer timer("donate-inputs");
        donate_inputs(program, donated);
    }
    return program;
}

} // namespace hedra::sched
