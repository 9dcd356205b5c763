// The decisions of partition() (partitioner.hpp): which nodes are materialized, how large an
// inlined expression may grow, which fuses are computed piece by piece, which small reductions
// are unrolled, which sums accumulate in f64, which maps join a sum's kernel as its epilogue;
// and the table of decisions HEDRA_DUMP writes after each step.
#include <algorithm>
#include <unordered_set>

#include "core/scalar_dag.hpp"
#include "scheduler/partitioner.hpp"

namespace hedra::sched::detail {

// One line per canonical node: what it is and what the steps so far decided for it.
std::string Partitioner::decisions() const {
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
        if (flag(unrolled_kernel_, i)) s += " unrolled-in-kernel";
        if (flag(wide_, i)) s += " wide-f64";
        if (int r = at(folded_into_, i); r >= 0) s += " epilogue-of=n" + std::to_string(r);
        if (int b = at(buffer_of_, i); b >= 0) s += " buffer=b" + std::to_string(b);
        if (int b = at(leaf_buffer_, i); b >= 0) s += " buffer=b" + std::to_string(b);
        s += "\n";
    }
    return s + std::to_string(ir_.kernels.size()) + " kernels, " +
           std::to_string(ir_.buffers.size()) + " buffers\n";
}

// Reductions, fuses and outputs are materialized; maps by the rule in partition.hpp,
// deciding consumers first so that "used by several kernels" is known.
void Partitioner::decide() {
    std::size_t n = g_.nodes.size();
    mat_.assign(n, false);
    std::vector<bool> expensive(n, false);
    for (std::size_t i = 0; i < n; ++i) {
        const CanonicalNode& c = g_.nodes[i];
        NodeKind k = c.node->kind;
        mat_[i] = c.output || (!c.leaf && (k == NodeKind::Reduce || k == NodeKind::Fuse ||
                                           k == NodeKind::Gather || k == NodeKind::Scatter ||
                                           k == NodeKind::Scan || k == NodeKind::ScanOutput));
        if (!inlinable_map(static_cast<int>(i))) continue;
        // Rows fused into one kernel keep a shared map in a row-local buffer, which costs
        // no pass over memory: then vector math is worth keeping too.
        bool e = has_transcendental(c.node->expr) ||
                 (options_.fuse_rows && has_vector_math(c.node->expr));
        for (int o : c.operands)
            e = e || (inlinable_map(o) && expensive[o]);
        expensive[i] = e;
    }
    // A gather reads its source at data-dependent rows and its indices as the values of that
    // read: both are buffers, never inlined expressions. A scatter's indices likewise (its
    // values may be inlined).
    for (std::size_t i = 0; i < n; ++i) {
        const CanonicalNode& c = g_.nodes[i];
        NodeKind k = c.node->kind;
        if (c.leaf || (k != NodeKind::Gather && k != NodeKind::Scatter)) continue;
        for (std::size_t j = k == NodeKind::Gather ? 0 : 1; j < c.operands.size(); ++j)
            mat_[c.operands[j]] = mat_[c.operands[j]] || !g_.nodes[c.operands[j]].leaf;
    }
    // A scan reads its operands whole, in every step: a map there is computed once (and once
    // for every scan that reads it, the forward one and its adjoint).
    for (std::size_t i = 0; i < n; ++i)
        if (!g_.nodes[i].leaf && g_.nodes[i].node->kind == NodeKind::Scan)
            for (int o : g_.nodes[i].operands)
                if (inlinable_map(o)) mat_[static_cast<std::size_t>(o)] = true;
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
            (expensive[j] || (r == kSeveral && feeds_contraction(static_cast<int>(j))))) {
            const int half = options_.half_operands ? widened_half(static_cast<int>(j)) : -1;
            if (half < 0)
                mat_[j] = true;
            else if (inlinable_map(half))
                mat_[half] = true;
        }
        root[j] = mat_[j] ? static_cast<int>(j) : r;
    }
}

// Whether node `j` is an operand of a product that a sum reduces (a contraction's operand:
// inlining a map there would keep the contraction from being a register-tiled product).
// A cheap map read by several kernels is otherwise recomputed in each (a bias add and a
// ReLU read by pooling and by the ReLU's gradient cost two passes over memory each).
bool Partitioner::feeds_contraction(int j) const {
    for (int u : cn(j).consumers) {
        if (!inlinable_map(u) || !has_product(cn(u).node->expr)) continue;
        for (int r : cn(u).consumers)
            if (kind(r) == NodeKind::Reduce && cn(r).node->reduce_op == ReduceOp::Sum) return true;
    }
    return false;
}

// The operand that map j widens to f32 when that is all it does and the operand is bf16 or
// f16 (PartitionOptions::half_operands); -1 otherwise.
int Partitioner::widened_half(int j) const {
    const ScalarExpr& e = cn(j).node->expr;
    if (!e || e->op != ScalarOp::Cast || e->dtype != DType::F32 ||
        e->args.at(0)->op != ScalarOp::Input)
        return -1;
    const int o = cn(j).operands.at(static_cast<std::size_t>(e->args[0]->ivalue));
    const DType d = cn(o).node->dtype;
    return d == DType::BF16 || d == DType::F16 ? o : -1;
}

bool Partitioner::has_product(const ScalarExpr& e) {
    for (const ScalarExpr& x : topological_order(e))
        if (x->op == ScalarOp::Mul && x->args[0]->op != ScalarOp::Const &&
            x->args[1]->op != ScalarOp::Const)
            return true;
    return false;
}

// Materialize the largest inlined operand of a map until its inlined tree fits the cap.
void Partitioner::cap_expressions() {
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

void Partitioner::materialize_costly_operands() {
    for (std::size_t j = 0; j < g_.nodes.size(); ++j) {
        int i = static_cast<int>(j);
        if (!inlinable_map(i) || mat_[j] || !feeds_contraction(i)) continue;
        const ScalarExpr& e = cn(i).node->expr;
        if (size_[j] > kMaxOperandNodes || has_vector_math(e) || has_transcendental(e))
            mat_[j] = true;
    }
}

// Kernels reading each node (its materialized consumers, or theirs through inlined maps) are
// found consumers first; the full-size buffers each inlined tree reads, operands first. Storing
// a map never adds kernels to the nodes below it (their reads of it become one kernel), so one
// pass in operand order decides every map.
void Partitioner::store_wide_shared_maps() {
    const std::size_t n = g_.nodes.size();
    constexpr std::size_t kCap = 16; // sets are only compared against small counts
    auto merge = [](std::vector<int>& into, const std::vector<int>& from) {
        for (int x : from) {
            if (into.size() >= kCap) return;
            auto at = std::lower_bound(into.begin(), into.end(), x);
            if (at == into.end() || *at != x) into.insert(at, x);
        }
    };
    std::vector<std::vector<int>> kernels(n);
    for (std::size_t j = n; j-- > 0;)
        for (int u : cn(static_cast<int>(j)).consumers) {
            if (mat_[static_cast<std::size_t>(u)])
                merge(kernels[j], {u});
            else
                merge(kernels[j], kernels[static_cast<std::size_t>(u)]);
        }
    std::vector<std::vector<int>> reads(n);
    for (std::size_t i = 0; i < n; ++i) {
        const int ii = static_cast<int>(i);
        if (!inlinable_map(ii) || mat_[i]) continue;
        const std::int64_t elements = cn(ii).node->shape.size();
        for (int o : cn(ii).operands) {
            if (inlinable_map(o) && !mat_[static_cast<std::size_t>(o)])
                merge(reads[i], reads[static_cast<std::size_t>(o)]);
            else if (kind(o) != NodeKind::Constant && kind(o) != NodeKind::Iota &&
                     cn(o).node->shape.size() >= elements)
                merge(reads[i], {o});
        }
        const auto k = static_cast<std::int64_t>(kernels[i].size()),
                   r = static_cast<std::int64_t>(reads[i].size());
        if (k >= 2 && (k - 1) * (r - 1) > kMaxSharedRereads) mat_[i] = true;
    }
}

// A fuse read only inside one materialized map's kernel, element for element, is not
// stored: that kernel computes the map once per piece (one statement per piece, in the
// fuse's order, so the later piece still wins). A pooling adjoint routed through a ReLU's
// gradient then costs one pass over memory instead of two.
void Partitioner::distribute_fuses() {
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
            int p = g_.find(g_.resolve(piece, AffineMap::identity(piece->shape.rank())).node.get());
            if (p >= 0) largest_piece = std::max(largest_piece, operand_size(p));
        }
        if (size_[m] + largest_piece * uses > options_.max_expression_nodes) continue;
        mat_[f] = false;
        distributed_[m] = static_cast<int>(f);
    }
}

// The materialized node whose kernel each node is inlined into (-1: several or none).
std::vector<int> Partitioner::roots() const {
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

void Partitioner::unroll_small_reductions() {
    std::size_t n = g_.nodes.size();
    unrolled_.assign(n, false);
    unrolled_kernel_.assign(n, false);
    std::vector<int> root = roots();
    for (std::size_t r = 0; r < n; ++r) {
        const CanonicalNode& rc = g_.nodes[r];
        // A half sum accumulates in f32 (a wide buffer), never as an unrolled half expression.
        if (kind(static_cast<int>(r)) != NodeKind::Reduce || !mat_[r] || rc.leaf ||
            rc.node->reduce_op == ReduceOp::Custom || !rc.node->tuple_exprs.empty() ||
            is_half(rc.node->dtype))
            continue;
        const Node& in = *rc.node->inputs.at(0);
        std::int64_t terms = 1;
        bool symbolic = false; // its terms are counted when the program runs
        for (int a : rc.node->axes) {
            terms *= in.shape[a].size;
            symbolic = symbolic || in.shape[a].is_dynamic();
        }
        if (symbolic || terms < 1 || terms > kMaxUnrolledTerms ||
            operand_size(rc.operands.at(0)) * terms > options_.max_expression_nodes)
            continue;
        // A gather or scatter reads its operands as buffers (decide()).
        bool indexed = false;
        for (int u : rc.consumers)
            indexed = indexed || kind(u) == NodeKind::Gather || kind(u) == NodeKind::Scatter;
        bool one_kernel = !rc.consumers.empty() && !rc.output && !indexed;
        const int r0 = one_kernel ? root[rc.consumers[0]] : -1;
        one_kernel = one_kernel && r0 >= 0 && r0 != static_cast<int>(r);
        for (int u : rc.consumers)
            one_kernel = one_kernel && root[u] == r0;
        if (one_kernel && !shared_by_pieces(r0, static_cast<int>(r))) {
            mat_[r] = false;
            unrolled_[r] = true;
        } else if (one_kernel ||
                   ((rc.node->reduce_op == ReduceOp::Max || rc.node->reduce_op == ReduceOp::Min) &&
                    !rc.node->keepdims)) {
            unrolled_kernel_[r] = true; // other sums stay contractions, however short
        }
    }
}

// Whether the inlined trees of at least two pieces of the fuse distributed into map `m`'s kernel
// read node `r`: each piece is a statement of its own, so each would recompute it.
bool Partitioner::shared_by_pieces(int m, int r) const {
    const int f = distributed_[static_cast<std::size_t>(m)];
    if (f < 0) return false;
    int reaching = 0, piece_number = 0;
    std::vector<int> seen_by(g_.nodes.size(), -1); // the last piece whose tree reached a node
    for (const NodePtr& piece : cn(f).node->inputs) {
        int p = g_.find(g_.resolve(piece, AffineMap::identity(piece->shape.rank())).node.get());
        std::vector<int> stack{p};
        bool reaches = false;
        while (!stack.empty() && !reaches) {
            const int x = stack.back();
            stack.pop_back();
            if (x < 0 || seen_by[static_cast<std::size_t>(x)] == piece_number) continue;
            seen_by[static_cast<std::size_t>(x)] = piece_number;
            reaches = x == r;
            if (inlinable_map(x) && !mat_[static_cast<std::size_t>(x)])
                for (int o : cn(x).operands)
                    stack.push_back(o);
        }
        reaching += reaches ? 1 : 0;
        ++piece_number;
    }
    return reaching >= 2;
}

// Whether every read of fuse `f` in the inlined tree of node `i` (read at `access`, counters
// of the kernel's root -> counters of i) is at the root's own counters; counts the reads.
bool Partitioner::reads_at(int i, const AffineMap& access, int f, int& uses) const {
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
void Partitioner::find_epilogues() {
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
        if (kind(r) != NodeKind::Reduce || cn(r).leaf || cn(r).node->reduce_op != ReduceOp::Sum ||
            !is_float(cn(r).node->dtype) || cn(r).node->shape.sizes() != mn.shape.sizes() ||
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
bool Partitioner::depends_on(int o, int r, std::vector<char>& seen) const {
    if (o == r || folded_into_[static_cast<std::size_t>(o)] == r) return true;
    if (o < r || seen[static_cast<std::size_t>(o)]) return false; // order is topological
    seen[static_cast<std::size_t>(o)] = 1;
    std::vector<int> operands;
    materialized_operands(o, operands);
    for (int p : operands)
        if (depends_on(p, r, seen)) return true;
    return false;
}

// A long f32 sum that is not a contraction (no product of two reads): it accumulates in an
// f64 buffer and is rounded once, so its error does not grow with its length. Memory-bound
// sums lose nothing by it; contractions keep f32 and sum in blocks (the register tile).
void Partitioner::find_wide_sums() {
    wide_.assign(g_.nodes.size(), false);
    for (std::size_t i = 0; i < g_.nodes.size(); ++i)
        wide_[i] = mat_[i] && wide_sum(static_cast<int>(i));
}

bool Partitioner::wide_sum(int i) const {
    const CanonicalNode& c = cn(i);
    const Node& n = *c.node;
    if (c.leaf || n.kind != NodeKind::Reduce || n.reduce_op != ReduceOp::Sum ||
        unrolled_[static_cast<std::size_t>(i)] || unrolled_kernel_[static_cast<std::size_t>(i)])
        return false;
    if (is_half(n.dtype)) return true; // accumulated in f32, rounded once (core/dtype.hpp)
    if (n.dtype != DType::F32) return false;
    std::int64_t extent = 1;
    for (int a : n.axes)
        extent *= n.inputs.at(0)->shape[a].size;
    int o = c.operands.at(0);
    bool product =
        inlinable_map(o) && !mat_[static_cast<std::size_t>(o)] && has_product(cn(o).node->expr);
    return extent >= kWideSumExtent && !product;
}

} // namespace hedra::sched::detail
