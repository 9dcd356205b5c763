// partition: the canonical graph -> kernel IR, in the steps Partitioner::run lists (each a member
// function below): decide what is materialized, cap the inlined expression size, the fuses,
// small reductions, wide sums and epilogues, create buffers, then build one kernel per
// materialized node by inlining its definition. See partition.hpp for the rules.
#include "scheduler/partition.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_set>

#include "core/dump.hpp"
#include "core/error.hpp"
#include "core/scalar_dag.hpp"
#include "scheduler/canonicalize.hpp"
#include "scheduler/narrow_domains.hpp"
#include "scheduler/row_fusion.hpp"
#include "scheduler/split_reduction.hpp"
#include "scheduler/stencil_stream.hpp"

namespace hedra::sched {

namespace {

using poly::Buffer;
using poly::BufferRole;
using poly::Kernel;
using poly::ProgramIR;
using poly::Read;
using poly::Statement;
using poly::StatementKind;

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
    default:
        return scalar_const(lowest ? -INFINITY : INFINITY, t);
    }
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

std::string describe_placeholder(const Node& n) {
    std::string s = "placeholder ";
    if (!n.name.empty()) s += "'" + n.name + "' ";
    return s + std::string(dtype_name(n.dtype)) + " " + n.shape.to_string() + " created at " +
           location_string(n.loc);
}

class Partitioner {
public:
    Partitioner(const CanonicalGraph& g, const PartitionOptions& o) : g_(g), options_(o) {}

    // The steps in order; each is timed (HEDRA_TIME_PASSES) and, with HEDRA_DUMP, followed by
    // the table of decisions so far (partition-<step>.txt), so the files' differences show
    // what each step decided. lower.cpp's pass list names the same steps.
    ProgramIR run(const std::vector<NodePtr>& placeholders) {
        placeholders_ = &placeholders;
        struct Step {
            const char* name;
            void (Partitioner::*run)();
        };
        static constexpr Step kSteps[] = {
            {"partition.decide", &Partitioner::decide},
            {"partition.cap-expressions", &Partitioner::cap_expressions},
            {"partition.distribute-fuses", &Partitioner::distribute_fuses},
            {"partition.unroll-reductions", &Partitioner::unroll_small_reductions},
            {"partition.wide-sums", &Partitioner::find_wide_sums},
            {"partition.epilogues", &Partitioner::find_epilogues},
            {"partition.buffers", &Partitioner::make_buffers},
            {"partition.kernels", &Partitioner::make_kernels},
            {"partition.fuse-rows", &Partitioner::fuse_rows},
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

private:
    void split_reductions() {
        if (options_.split_reductions) split_outer_reductions(ir_);
    }

    void stream() {
        if (options_.stream_stencils) stream_stencils(ir_);
    }

    void fuse_rows() {
        if (options_.fuse_rows) fuse_row_kernels(ir_);
    }

    void make_kernels() {
        made_.assign(g_.nodes.size(), false);
        for (std::size_t i = 0; i < g_.nodes.size(); ++i)
            if (mat_[i] && folded_into_[i] < 0) make_in_order(static_cast<int>(i));
        for (int o : g_.outputs)
            ir_.outputs.push_back(buffer_of_[static_cast<std::size_t>(o)]);
    }

    // One line per canonical node: what it is and what the steps so far decided for it.
    std::string decisions() const {
        auto at = [](const std::vector<int>& v, std::size_t i) { return i < v.size() ? v[i] : -1; };
        auto flag = [](const std::vector<bool>& v, std::size_t i) { return i < v.size() && v[i]; };
        std::string s;
        for (std::size_t i = 0; i < g_.nodes.size(); ++i) {
            const CanonicalNode& c = g_.nodes[i];
            s += "n" + std::to_string(i) + " " + node_kind_name(c.node->kind) + " " +
                 c.node->shape.to_string() + ":";
            if (c.leaf) s += " leaf";
            if (c.output) s += " output";
            if (!c.leaf) s += flag(mat_, i) ? " materialized" : " inlined";
            if (i < size_.size() && inlinable_map(static_cast<int>(i)))
                s += " size=" + std::to_string(size_[i]);
            if (int f = at(distributed_, i); f >= 0) s += " distributes=n" + std::to_string(f);
            if (flag(unrolled_, i)) s += " unrolled";
            if (flag(wide_, i)) s += " wide-f64";
            if (int r = at(folded_into_, i); r >= 0) s += " epilogue-of=n" + std::to_string(r);
            if (int b = at(buffer_of_, i); b >= 0) s += " buffer=b" + std::to_string(b);
            if (int b = at(leaf_buffer_, i); b >= 0) s += " buffer=b" + std::to_string(b);
            s += "\n";
        }
        return s + std::to_string(ir_.kernels.size()) + " kernels, " +
               std::to_string(ir_.buffers.size()) + " buffers\n";
    }

private:
    const CanonicalNode& cn(int i) const { return g_.nodes[static_cast<std::size_t>(i)]; }
    NodeKind kind(int i) const { return cn(i).node->kind; }
    bool inlinable_map(int i) const { return !cn(i).leaf && kind(i) == NodeKind::Map; }

    // Reductions, fuses and outputs are materialized; maps by the rule in partition.hpp,
    // deciding consumers first so that "used by several kernels" is known.
    void decide() {
        std::size_t n = g_.nodes.size();
        mat_.assign(n, false);
        std::vector<bool> expensive(n, false);
        for (std::size_t i = 0; i < n; ++i) {
            const CanonicalNode& c = g_.nodes[i];
            NodeKind k = c.node->kind;
            mat_[i] = c.output || (!c.leaf && (k == NodeKind::Reduce || k == NodeKind::Fuse));
            if (!inlinable_map(static_cast<int>(i))) continue;
            // Rows fused into one kernel keep a shared map in a row-local buffer, which costs
            // no pass over memory: then vector math is worth keeping too.
            bool e = has_transcendental(c.node->expr) ||
                     (options_.fuse_rows && has_vector_math(c.node->expr));
            for (int o : c.operands)
                e = e || (inlinable_map(o) && expensive[o]);
            expensive[i] = e;
        }
        constexpr int kNone = -1, kSeveral = -2;
        std::vector<int> root(n, kNone);
        for (std::size_t j = n; j-- > 0;) {
            const CanonicalNode& c = g_.nodes[j];
            int r = kNone;
            for (int u : c.consumers) {
                int ru = mat_[u] ? u : root[u];
                r = r == kNone || r == ru ? ru : kSeveral;
            }
            if (!mat_[j] && inlinable_map(static_cast<int>(j)) && c.consumers.size() > 1 &&
                (expensive[j] || (r == kSeveral && feeds_contraction(static_cast<int>(j)))))
                mat_[j] = true;
            root[j] = mat_[j] ? static_cast<int>(j) : r;
        }
    }

    // Whether node `j` is an operand of a product that a sum reduces (a contraction's operand:
    // inlining a map there would keep the contraction from being a register-tiled product).
    // A cheap map read by several kernels is otherwise recomputed in each (a bias add and a
    // ReLU read by pooling and by the ReLU's gradient cost two passes over memory each).
    bool feeds_contraction(int j) const {
        for (int u : cn(j).consumers) {
            if (!inlinable_map(u) || !has_product(cn(u).node->expr)) continue;
            for (int r : cn(u).consumers)
                if (kind(r) == NodeKind::Reduce && cn(r).node->reduce_op == ReduceOp::Sum)
                    return true;
        }
        return false;
    }

    static bool has_product(const ScalarExpr& e) {
        for (const ScalarExpr& x : topological_order(e))
            if (x->op == ScalarOp::Mul && x->args[0]->op != ScalarOp::Const &&
                x->args[1]->op != ScalarOp::Const)
                return true;
        return false;
    }

    std::int64_t operand_size(int o) const { return inlinable_map(o) && !mat_[o] ? size_[o] : 1; }

    // Materialize the largest inlined operand of a map until its inlined tree fits the cap.
    void cap_expressions() {
        size_.assign(g_.nodes.size(), 1);
        for (std::size_t i = 0; i < g_.nodes.size(); ++i) {
            if (!inlinable_map(static_cast<int>(i))) continue;
            const CanonicalNode& c = g_.nodes[i];
            while (true) {
                std::vector<std::int64_t> sizes;
                for (int o : c.operands)
                    sizes.push_back(operand_size(o));
                size_[i] = expression_size(c.node->expr, sizes);
                if (size_[i] <= options_.max_expression_nodes) break;
                int largest = -1;
                for (std::size_t k = 0; k < sizes.size(); ++k)
                    if (sizes[k] > 1 && (largest < 0 || sizes[k] > sizes[largest]))
                        largest = static_cast<int>(k);
                if (largest < 0) break;
                mat_[c.operands[largest]] = true;
            }
        }
        materialize_costly_operands();
    }

    // An operand of a contraction is read once per column of the other operand; inlined, a map
    // is recomputed that many times (a GELU or a layer norm feeding a projection: 128 to 512
    // times per element), so past a few operations, or with any math function, it is stored
    // once. (With several kernels reading it, decide() stores it already.)
    static constexpr std::int64_t kMaxOperandNodes = 5;
    void materialize_costly_operands() {
        for (std::size_t j = 0; j < g_.nodes.size(); ++j) {
            int i = static_cast<int>(j);
            if (!inlinable_map(i) || mat_[j] || !feeds_contraction(i)) continue;
            const ScalarExpr& e = cn(i).node->expr;
            if (size_[j] > kMaxOperandNodes || has_vector_math(e) || has_transcendental(e))
                mat_[j] = true;
        }
    }

    // A fuse read only inside one materialized map's kernel, element for element, is not
    // stored: that kernel computes the map once per piece (one statement per piece, in the
    // fuse's order, so the later piece still wins). A pooling adjoint routed through a ReLU's
    // gradient then costs one pass over memory instead of two.
    void distribute_fuses() {
        std::size_t n = g_.nodes.size();
        distributed_.assign(n, -1);
        std::vector<int> root = roots();
        for (std::size_t f = 0; f < n; ++f) {
            const CanonicalNode& fc = g_.nodes[f];
            if (kind(static_cast<int>(f)) != NodeKind::Fuse || !mat_[f] || fc.leaf || fc.output ||
                fc.consumers.empty())
                continue;
            int m = root[fc.consumers[0]];
            if (m < 0 || !inlinable_map(m) || distributed_[m] >= 0) continue;
            bool inside = true;
            for (int u : fc.consumers)
                inside = inside && (u == m || (inlinable_map(u) && root[u] == m));
            if (!inside || cn(m).node->shape.sizes() != fc.node->shape.sizes()) continue;
            int uses = 0;
            AffineMap id = AffineMap::identity(cn(m).node->shape.rank());
            if (!reads_at(m, id, static_cast<int>(f), uses) ||
                uses != static_cast<int>(fc.consumers.size()))
                continue;
            // Pieces are inlined where the fuse was read: keep the statements capped.
            std::int64_t largest_piece = 1;
            for (const NodePtr& piece : fc.node->inputs) {
                int p =
                    g_.find(g_.resolve(piece, AffineMap::identity(piece->shape.rank())).node.get());
                if (p >= 0) largest_piece = std::max(largest_piece, operand_size(p));
            }
            if (size_[m] + largest_piece * uses > options_.max_expression_nodes) continue;
            mat_[f] = false;
            distributed_[m] = static_cast<int>(f);
        }
    }

    // The materialized node whose kernel each node is inlined into (-1: several or none).
    std::vector<int> roots() const {
        std::size_t n = g_.nodes.size();
        std::vector<int> root(n, -1);
        for (std::size_t j = n; j-- > 0;) {
            if (mat_[j]) {
                root[j] = static_cast<int>(j);
                continue;
            }
            int r = -2;
            for (int u : g_.nodes[j].consumers) {
                int ru = root[u];
                r = r == -2 || r == ru ? ru : -1;
            }
            root[j] = r == -2 ? -1 : r;
        }
        return root;
    }

    // A reduction of at most kMaxUnrolledTerms terms per result (a 2x2 pooling window's tie
    // count) read only inside one other kernel is unrolled into the statements reading it: its
    // window is read there anyway, and a pass over memory is saved.
    static constexpr std::int64_t kMaxUnrolledTerms = 4;
    void unroll_small_reductions() {
        std::size_t n = g_.nodes.size();
        unrolled_.assign(n, false);
        std::vector<int> root = roots();
        for (std::size_t r = 0; r < n; ++r) {
            const CanonicalNode& rc = g_.nodes[r];
            if (kind(static_cast<int>(r)) != NodeKind::Reduce || !mat_[r] || rc.leaf || rc.output ||
                rc.consumers.empty() || rc.node->reduce_op == ReduceOp::Custom)
                continue;
            const Node& in = *rc.node->inputs.at(0);
            std::int64_t terms = 1;
            bool symbolic = false; // its terms are counted when the program runs
            for (int a : rc.node->axes) {
                terms *= in.shape[a].size;
                symbolic = symbolic || in.shape[a].is_dynamic();
            }
            if (symbolic || terms < 1 || terms > kMaxUnrolledTerms) continue;
            int r0 = root[rc.consumers[0]];
            bool one_kernel = r0 >= 0 && r0 != static_cast<int>(r);
            for (int u : rc.consumers)
                one_kernel = one_kernel && root[u] == r0;
            if (!one_kernel ||
                operand_size(rc.operands.at(0)) * terms > options_.max_expression_nodes)
                continue;
            mat_[r] = false;
            unrolled_[r] = true;
        }
    }

    // The value of unrolled reduction `i` at `access` (statement counters -> its counters):
    // the identity combined with each term in the reduction's order.
    ScalarExpr unrolled_reduction(int i, const AffineMap& access, ReadList& reads) {
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

    // Whether every read of fuse `f` in the inlined tree of node `i` (read at `access`, counters
    // of the kernel's root -> counters of i) is at the root's own counters; counts the reads.
    bool reads_at(int i, const AffineMap& access, int f, int& uses) const {
        const Node& node = *cn(i).node;
        for (std::size_t k = 0; k < node.inputs.size(); ++k) {
            int o = cn(i).operands[k];
            CanonicalGraph::Use use = g_.resolve(node.inputs[k], access);
            if (o == f) {
                ++uses;
                if (!(use.access == AffineMap::identity(access.in_rank()))) return false;
            } else if (inlinable_map(o) && !mat_[o] && !reads_at(o, use.access, f, uses)) {
                return false;
            }
        }
        return true;
    }

    // Maps that become the epilogue of a sum's kernel (partition.hpp): materialized, not
    // distributed, reading the sum once at its own counters over the same counter box, and
    // reading nothing else that is computed after the sum. With max_epilogues > 1, up to that
    // many maps join: more maps of the sum, and maps whose latest operand is already an
    // epilogue of the sum, when they read the sum and its epilogues only at the same element
    // and nothing else computed after the sum (SGD momentum: v' = mu v + g, then
    // w' = w - lr v'; Adam: m', v', then w').
    void find_epilogues() {
        std::size_t n = g_.nodes.size();
        epilogues_of_.assign(n, {});
        folded_into_.assign(n, -1);
        if (!options_.epilogues) return;
        for (std::size_t m = 0; m < n; ++m) {
            if (!mat_[m] || !inlinable_map(static_cast<int>(m)) || distributed_[m] >= 0) continue;
            const Node& mn = *cn(static_cast<int>(m)).node;
            // The sum: the latest materialized operand in the map's inlined tree, or the sum
            // whose epilogue that operand is.
            int latest = -1;
            bool ok = true;
            latest_operand(static_cast<int>(m), latest, ok);
            if (!ok || latest < 0) continue;
            int r = folded_into_[static_cast<std::size_t>(latest)] >= 0
                        ? folded_into_[static_cast<std::size_t>(latest)]
                        : latest;
            std::vector<int> operands;
            if (options_.max_epilogues > 1) materialized_operands(static_cast<int>(m), operands);
            if (r == latest && kind(r) != NodeKind::Reduce) {
                // The latest operand may be one that does not depend on the sum (Adam's
                // beta2^t): the chain's sum is then the latest whose epilogue it reads.
                for (int o : operands)
                    if (int f = folded_into_[static_cast<std::size_t>(o)]; f >= 0)
                        r = r == latest ? f : std::max(r, f);
            }
            bool chained = r != latest;
            std::vector<int>& epilogues = epilogues_of_[static_cast<std::size_t>(r)];
            // A wide sum's rounding to f32 is the first statement of its chain.
            const int rounding = wide_[static_cast<std::size_t>(r)] ? 1 : 0;
            if (kind(r) != NodeKind::Reduce || cn(r).leaf ||
                cn(r).node->reduce_op != ReduceOp::Sum || !is_float(cn(r).node->dtype) ||
                cn(r).node->shape.sizes() != mn.shape.sizes() ||
                static_cast<int>(epilogues.size()) + rounding >= options_.max_epilogues)
                continue;
            AffineMap id = AffineMap::identity(mn.shape.rank());
            int uses = 0;
            // One epilogue (the openmp register tile's) reads the sum once; in a chain the sum
            // and the earlier epilogues are read any number of times (Adam's g and g * g).
            bool single = options_.max_epilogues == 1;
            if (!reads_at(static_cast<int>(m), id, r, uses) || (single && uses != 1) ||
                (!chained && uses == 0))
                continue;
            if (chained) {
                // Everything else it reads can be computed before the sum's kernel runs: it
                // comes before the sum, or does not depend on it (make_in_order hoists it).
                std::vector<char> seen(g_.nodes.size(), 0);
                for (int o : operands)
                    ok = ok && (o <= r || folded_into_[static_cast<std::size_t>(o)] == r ||
                                !depends_on(o, r, seen));
                for (int e : epilogues) {
                    int e_uses = 0;
                    ok = ok && reads_at(static_cast<int>(m), id, e, e_uses);
                }
                if (!ok) continue;
            }
            epilogues.push_back(static_cast<int>(m));
            folded_into_[m] = r;
        }
    }

    // Whether node `o` reads the sum `r` or one of its epilogues, directly or through others
    // (`seen`: nodes already found not to, so a shared subgraph is walked once).
    bool depends_on(int o, int r, std::vector<char>& seen) const {
        if (o == r || folded_into_[static_cast<std::size_t>(o)] == r) return true;
        if (o < r || seen[static_cast<std::size_t>(o)]) return false; // order is topological
        seen[static_cast<std::size_t>(o)] = 1;
        std::vector<int> operands;
        materialized_operands(o, operands);
        for (int p : operands)
            if (depends_on(p, r, seen)) return true;
        return false;
    }

    // Makes the kernels `i` needs, then its own: nodes in order, except that an operand of a
    // sum's epilogue that comes after the sum (Adam's bias correction beta2^t) is made before
    // the sum's kernel (find_epilogues checked that it does not depend on the sum).
    void make_in_order(int i) {
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
    void materialized_operands(int i, std::vector<int>& out) const {
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
    void latest_operand(int i, int& latest, bool& ok) const {
        for (int o : cn(i).operands) {
            if (inlinable_map(o) && !mat_[o]) {
                latest_operand(o, latest, ok);
            } else if (!cn(o).leaf && kind(o) != NodeKind::Constant && kind(o) != NodeKind::Iota) {
                if (!mat_[o]) ok = false;
                latest = std::max(latest, o);
            }
        }
    }

    // A long f32 sum that is not a contraction (no product of two reads): it accumulates in an
    // f64 buffer and is rounded once, so its error does not grow with its length. Memory-bound
    // sums lose nothing by it; contractions keep f32 and sum in blocks (the register tile).
    void find_wide_sums() {
        wide_.assign(g_.nodes.size(), false);
        for (std::size_t i = 0; i < g_.nodes.size(); ++i)
            wide_[i] = mat_[i] && wide_sum(static_cast<int>(i));
    }
    bool wide_sum(int i) const {
        const CanonicalNode& c = cn(i);
        const Node& n = *c.node;
        if (c.leaf || n.kind != NodeKind::Reduce || n.reduce_op != ReduceOp::Sum ||
            n.dtype != DType::F32 || unrolled_[static_cast<std::size_t>(i)])
            return false;
        std::int64_t extent = 1;
        for (int a : n.axes)
            extent *= n.inputs.at(0)->shape[a].size;
        int o = c.operands.at(0);
        bool product =
            inlinable_map(o) && !mat_[static_cast<std::size_t>(o)] && has_product(cn(o).node->expr);
        return extent >= kWideSumExtent && !product;
    }
    static constexpr std::int64_t kWideSumExtent = 8192;

    // A symbolic extent the program depends on, with the smallest maximum declared for it.
    void note_param(const Range& r) {
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

    int add_buffer(const NodePtr& node, BufferRole role) {
        return add_buffer(node, role, node->dtype);
    }
    int add_buffer(const NodePtr& node, BufferRole role, DType dtype) {
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

    void make_buffers() {
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
            if (mat_[i])
                buffer_of_[i] =
                    add_buffer(g_.nodes[i].node,
                               g_.nodes[i].output ? BufferRole::Output : BufferRole::Temporary);
        wide_buffer_.assign(n, -1);
        for (std::size_t i = 0; i < n; ++i)
            if (wide_[i])
                wide_buffer_[i] = add_buffer(g_.nodes[i].node, BufferRole::Temporary, DType::F64);
    }

    // The value of `node` read at `access` (statement counters -> node counters).
    ScalarExpr inline_use(const NodePtr& node, const AffineMap& access, ReadList& reads) {
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
    ScalarExpr expand(int i, const AffineMap& access, ReadList& reads) {
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
    Statement statement(StatementKind k, const Node& domain, int write, AffineMap write_access,
                        const ScalarExpr& value, ReadList reads) {
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
        s.value =
            share_common_subexpressions(fold_constants(cast_to(value, ir_.buffers[write].dtype)));
        s.reads = std::move(reads.reads);
        return s;
    }

    void make_kernel(int i) {
        const CanonicalNode& c = cn(i);
        const Node& n = *c.node;
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
                ScalarExpr total = r.read(wide, id, DType::F64);
                k.statements.push_back(
                    statement(StatementKind::Assign, n, w, id, total, std::move(r)));
            }
            for (int m : epilogues_of_[static_cast<std::size_t>(i)]) {
                ReadList epi_reads;
                const Node& mn = *cn(m).node;
                ScalarExpr v = expand(m, AffineMap::identity(mn.shape.rank()), epi_reads);
                k.statements.push_back(
                    statement(StatementKind::Assign, mn, buffer_of_[static_cast<std::size_t>(m)],
                              AffineMap::identity(mn.shape.rank()), v, std::move(epi_reads)));
            }
        } else if (n.kind == NodeKind::Fuse) {
            for (const NodePtr& piece : n.inputs) {
                ReadList reads;
                AffineMap piece_id = AffineMap::identity(piece->shape.rank());
                ScalarExpr v = inline_use(piece, piece_id, reads);
                k.statements.push_back(statement(StatementKind::Assign, *piece, w,
                                                 piece_access(piece->shape, n.shape), v,
                                                 std::move(reads)));
            }
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

    // A component of a reduction of several arrays (reduce_multiple_value): its kernel keeps
    // every component's accumulator (this node's buffer for its own, temporaries for the
    // others), initializes them, then runs one Assign over the inputs' domain that reads all
    // accumulators and writes all of them (Statement::tuple_writes). Components used together
    // are each computed by a kernel of their own.
    void tuple_reduction(int i, Kernel& k) {
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
        Statement u = statement(StatementKind::Assign, *n.inputs[0], acc[0], to_out, values[0],
                                std::move(reads));
        for (std::size_t j = 1; j < size; ++j)
            u.tuple_writes.push_back({acc[j], values[j]});
        u.tuple_combiners = n.tuple_exprs;
        k.statements.push_back(std::move(u));
    }

    const CanonicalGraph& g_;
    PartitionOptions options_;
    const std::vector<NodePtr>* placeholders_ = nullptr;
    ProgramIR ir_;
    std::vector<bool> mat_;
    std::vector<int> distributed_; // per map: the fuse computed piece by piece in its kernel
    std::vector<std::vector<int>> epilogues_of_; // per sum: the maps appended to its kernel
    std::vector<bool> unrolled_;                 // per reduction: unrolled into its readers
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
    std::vector<bool> wide_;       // per sum: accumulated in f64 (wide_sum)
    std::vector<int> wide_buffer_; // per wide sum: its f64 accumulator
    int next_statement_ = 0;
};

} // namespace

ProgramIR partition(const std::vector<NodePtr>& outputs, const std::vector<NodePtr>& placeholders,
                    const PartitionOptions& options) {
    CanonicalGraph g = [&] {
        dump::PassTimer timer("canonicalize");
        return canonicalize(outputs);
    }();
    ProgramIR program = Partitioner(g, options).run(placeholders);
    if (options.narrow) {
        dump::PassTimer timer("narrow-domains");
        narrow_domains(program);
    }
    return program;
}

} // namespace hedra::sched
