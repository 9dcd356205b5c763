// A scan's kernels (partitioner.hpp): its operands staged into buffers of their own shape where
// they are not already, the first carries copied into row 0 of the stacked carries, and one
// loop kernel (poly::ScanLoop) whose kernels are the body partitioned as a program of its own.
// The body's placeholders and outputs become StepSlices of the stacked buffers; its
// temporaries, temporaries of this program.
#include <algorithm>

#include "core/error.hpp"
#include "core/scan.hpp"
#include "scheduler/partitioner.hpp"

namespace hedra::sched::detail {
namespace {

// Rewrites every buffer index of `k` (its loop's kernels and slices included) through `map`.
void remap_kernel(Kernel& k, const std::vector<int>& map) {
    auto at = [&](int b) { return b < 0 ? b : map.at(static_cast<std::size_t>(b)); };
    for (Statement& st : k.statements) {
        st.write_buffer = at(st.write_buffer);
        for (Statement::TupleWrite& w : st.tuple_writes)
            w.buffer = at(w.buffer);
        for (Read& r : st.reads)
            r.buffer = at(r.buffer);
    }
    if (!k.loop) return;
    auto loop = std::make_shared<poly::ScanLoop>(*k.loop);
    for (Kernel& inner : loop->kernels)
        remap_kernel(inner, map);
    for (int& b : loop->slices)
        b = at(b);
    for (int& b : loop->touched)
        b = at(b);
    std::sort(loop->touched.begin(), loop->touched.end());
    k.loop = std::move(loop);
}

void rename_kernel(Kernel& k, const std::string& prefix, int& next_statement) {
    k.name = prefix + k.name;
    for (Statement& st : k.statements)
        st.name = "S" + std::to_string(next_statement++);
    if (!k.loop) return;
    auto loop = std::make_shared<poly::ScanLoop>(*k.loop);
    for (Kernel& inner : loop->kernels)
        rename_kernel(inner, prefix, next_statement);
    k.loop = std::move(loop);
}

void collect_touched(const Kernel& k, std::vector<int>& out) {
    poly::for_each_statement(k, [&](const Statement& st) {
        out.push_back(st.write_buffer);
        for (const Statement::TupleWrite& w : st.tuple_writes)
            out.push_back(w.buffer);
        for (const Read& r : st.reads)
            if (r.buffer >= 0) out.push_back(r.buffer);
    });
    if (k.loop) out.insert(out.end(), k.loop->touched.begin(), k.loop->touched.end());
}

// The counter a row of `m` reads with coefficient 1 and no offset, or -1.
int single_counter(const AffineMap& m, int row) {
    int c = -1;
    for (int i = 0; i < m.in_rank(); ++i) {
        if (m.coeff(row, i) == 0) continue;
        if (m.coeff(row, i) != 1 || c >= 0) return -1;
        c = i;
    }
    return m.offset(row) == 0 ? c : -1;
}

// Whether every read of matrix `b` by the body's kernels is a contraction's operand that runs
// along its contiguous axis over the reduced counter (x·Wᵀ): read transposed, the loop's
// contraction gets a row-major operand and packs nothing per step.
bool read_transposed(const std::vector<Kernel>& kernels, int b) {
    int reads = 0;
    for (const Kernel& k : kernels) {
        if (k.loop) {
            for (int t : k.loop->touched)
                if (t == b) return false;
            continue;
        }
        for (const Statement& st : k.statements) {
            for (const Read& r : st.reads) {
                if (r.buffer != b) continue;
                if (st.kind != StatementKind::Update || r.is_indirect() || r.access.out_rank() != 2)
                    return false;
                const int inner = single_counter(r.access, 1), outer = single_counter(r.access, 0);
                auto reduced = [&](int c) {
                    return std::find(st.reduction_dims.begin(), st.reduction_dims.end(), c) !=
                           st.reduction_dims.end();
                };
                if (inner < 0 || outer < 0 || !reduced(inner) || reduced(outer)) return false;
                ++reads;
            }
            if (st.write_buffer == b) return false;
        }
    }
    return reads > 0;
}

AffineMap swap_rows(const AffineMap& m) {
    std::vector<std::int64_t> matrix;
    for (int o : {1, 0})
        for (int i = 0; i < m.in_rank(); ++i)
            matrix.push_back(m.coeff(o, i));
    return AffineMap(m.in_rank(), 2, std::move(matrix), {m.offset(1), m.offset(0)});
}

void transpose_reads(std::vector<Kernel>& kernels, int b) {
    for (Kernel& k : kernels)
        for (Statement& st : k.statements)
            for (Read& r : st.reads)
                if (r.buffer == b) r.access = swap_rows(r.access);
}

} // namespace

// The buffer holding operand `in` of a scan, whole and in its own counters; a staging kernel
// copies it into a temporary when it is a view, a constant or an inlined map.
int Partitioner::scan_operand(const NodePtr& in) {
    const int rank = in->shape.rank();
    const AffineMap id = AffineMap::identity(rank);
    CanonicalGraph::Use use = g_.resolve(in, id);
    const int j = g_.find(use.node.get());
    HEDRA_INTERNAL_CHECK(j >= 0, "partition: a scan operand outside the canonical graph");
    int b = leaf_buffer_[static_cast<std::size_t>(j)];
    if (b < 0 && kind(j) != NodeKind::Constant && kind(j) != NodeKind::Iota)
        b = buffer_of_[static_cast<std::size_t>(j)];
    if (b >= 0 && use.access == id &&
        ir_.buffers[static_cast<std::size_t>(b)].sizes == in->shape.sizes())
        return b;
    const int staged = add_buffer(in, BufferRole::Temporary);
    Kernel k;
    k.name = "k" + std::to_string(ir_.kernels.size());
    ReadList reads;
    ScalarExpr v = inline_use(in, id, reads);
    k.statements.push_back(statement(StatementKind::Assign, *in, staged, id, v, std::move(reads)));
    ir_.kernels.push_back(std::move(k));
    return staged;
}

void Partitioner::scan_kernels(int i) {
    const NodePtr& node = cn(i).node;
    const ScanBody& b = *node->body;
    if (b.reverse && b.steps.is_dynamic())
        throw Error("compile: a reverse scan over a symbolic number of steps (" +
                    b.steps.to_string() + ", scan created at " + location_string(node->loc) +
                    ") is not supported; give the scan a static length");
    // The components the graph reads; the others get buffers of their own here.
    std::vector<int> comp(static_cast<std::size_t>(b.components()), -1);
    for (int u : cn(i).consumers)
        if (kind(u) == NodeKind::ScanOutput)
            comp[static_cast<std::size_t>(cn(u).node->component)] =
                buffer_of_[static_cast<std::size_t>(u)];
    std::vector<int> window(static_cast<std::size_t>(b.carries), 0);
    for (int c = 0; c < b.components(); ++c) {
        if (comp[static_cast<std::size_t>(c)] >= 0) continue;
        NodePtr out = hedra::detail::scan_output(node, c, node->loc);
        if (b.component_kind(c) == ScanBody::Component::Ys) continue; // not computed
        const int buf = add_buffer(out, BufferRole::Temporary);
        if (b.component_kind(c) == ScanBody::Component::States) {
            // Nobody reads the carries of every step: two rows, this step's and the next's.
            Buffer& s = ir_.buffers[static_cast<std::size_t>(buf)];
            s.sizes[0] = std::min<std::int64_t>(2, s.sizes[0]);
            if (!s.params.empty()) s.params[0] = -1;
            window[static_cast<std::size_t>(c)] = 2;
        }
        comp[static_cast<std::size_t>(c)] = buf;
    }
    std::vector<int> operand;
    for (std::size_t k = static_cast<std::size_t>(b.carries); k < node->inputs.size(); ++k)
        operand.push_back(scan_operand(node->inputs[k]));
    // The first carries, into the row of the stacked carries the first step reads.
    for (int c = 0; c < b.carries; ++c) {
        const NodePtr& init = node->inputs[static_cast<std::size_t>(c)];
        const int rank = init->shape.rank();
        const std::int64_t row =
            b.reverse && window[static_cast<std::size_t>(c)] == 0 ? b.steps.size - 1 : 0;
        std::vector<std::int64_t> m(static_cast<std::size_t>((rank + 1) * rank), 0);
        std::vector<std::int64_t> off(static_cast<std::size_t>(rank + 1), 0);
        off[0] = row;
        for (int d = 0; d < rank; ++d)
            m[static_cast<std::size_t>((d + 1) * rank + d)] = 1;
        Kernel k;
        k.name = "k" + std::to_string(ir_.kernels.size());
        ReadList reads;
        AffineMap id = AffineMap::identity(rank);
        ScalarExpr v = inline_use(init, id, reads);
        k.statements.push_back(statement(
            StatementKind::Assign, *init, comp[static_cast<std::size_t>(c)],
            AffineMap(rank, rank + 1, std::move(m), std::move(off)), v, std::move(reads)));
        ir_.kernels.push_back(std::move(k));
    }

    // The body as a program: its carries and the ys the graph reads.
    std::vector<NodePtr> outs(b.outputs.begin(), b.outputs.begin() + b.carries);
    std::vector<int> used_ys;
    for (int y = 0; y < b.ys(); ++y)
        if (comp[static_cast<std::size_t>(b.carries + y)] >= 0) {
            outs.push_back(b.outputs[static_cast<std::size_t>(b.carries + y)]);
            used_ys.push_back(y);
        }
    ProgramIR body = sched::partition(outs, b.params, options_);
    for (std::size_t p = 0; p < body.params.size(); ++p) {
        Range r = range(body.param_max[p]);
        r.param = body.params[p];
        note_param(r);
    }
    if (b.steps.is_dynamic()) note_param(b.steps);

    auto loop = std::make_shared<poly::ScanLoop>();
    loop->steps = b.steps.size;
    loop->param = b.steps.param;
    loop->reverse = b.reverse;
    auto slice = [&](int body_buffer, int parent, int shift, int edge, int rows) {
        Buffer s = body.buffers[static_cast<std::size_t>(body_buffer)];
        s.role = BufferRole::Temporary;
        s.slice = {parent, shift, edge, rows};
        s.row_local = 0;
        s.row_window = 0;
        s.donated = false;
        const int at = static_cast<int>(ir_.buffers.size());
        s.name = "b" + std::to_string(at);
        ir_.buffers.push_back(std::move(s));
        loop->slices.push_back(at);
        loop->touched.push_back(at);
        loop->touched.push_back(parent);
        if (edge >= 0) loop->touched.push_back(edge);
        return at;
    };
    // A closed-over matrix the step contracts along its rows (x·Wᵀ) is transposed once, before
    // the loop.
    for (int bi : body.inputs) {
        const NodePtr& p = body.buffers[static_cast<std::size_t>(bi)].node;
        const auto k =
            static_cast<int>(std::find(b.params.begin(), b.params.end(), p) - b.params.begin());
        if (k < b.carries + b.xs || k >= static_cast<int>(b.params.size())) continue;
        const int from = operand[static_cast<std::size_t>(k - b.carries)];
        const Buffer w = ir_.buffers[static_cast<std::size_t>(from)];
        if (w.sizes.size() != 2 || w.symbolic() || !read_transposed(body.kernels, bi)) continue;
        const int t = add_buffer(p, BufferRole::Temporary);
        Buffer& wt = ir_.buffers[static_cast<std::size_t>(t)];
        wt.sizes = {w.sizes[1], w.sizes[0]};
        wt.dtype = w.dtype;
        Statement st;
        st.name = "S" + std::to_string(next_statement_++);
        st.extents = wt.sizes;
        st.write_buffer = t;
        st.write_access = AffineMap::identity(2);
        st.reads.push_back({from, swap_rows(AffineMap::identity(2))});
        st.value = scalar_input(0, wt.dtype);
        Kernel copy;
        copy.name = "k" + std::to_string(ir_.kernels.size());
        copy.statements.push_back(std::move(st));
        ir_.kernels.push_back(std::move(copy));
        transpose_reads(body.kernels, bi);
        operand[static_cast<std::size_t>(k - b.carries)] = t;
    }
    std::vector<int> map(body.buffers.size(), -1);
    for (int bi : body.inputs) {
        const NodePtr& p = body.buffers[static_cast<std::size_t>(bi)].node;
        const auto it = std::find(b.params.begin(), b.params.end(), p);
        HEDRA_INTERNAL_CHECK(it != b.params.end(),
                             "partition: a scan body input is not a parameter");
        const int k = static_cast<int>(it - b.params.begin());
        if (k < b.carries)
            map[static_cast<std::size_t>(bi)] = slice(bi, comp[static_cast<std::size_t>(k)], 0, -1,
                                                      window[static_cast<std::size_t>(k)]);
        else if (k < b.carries + b.xs)
            map[static_cast<std::size_t>(bi)] =
                slice(bi, operand[static_cast<std::size_t>(k - b.carries)], 0, -1, 0);
        else
            map[static_cast<std::size_t>(bi)] = operand[static_cast<std::size_t>(k - b.carries)];
    }
    std::vector<std::pair<int, int>> copies; // (from, to): an output written twice
    for (std::size_t o = 0; o < body.outputs.size(); ++o) {
        const int bo = body.outputs[o];
        int dest;
        if (static_cast<int>(o) < b.carries) {
            const int w = window[o];
            dest = slice(bo, comp[o],
                         w           ? 1
                         : b.reverse ? -1
                                     : 1,
                         comp[static_cast<std::size_t>(b.carries + b.ys()) + o], w);
        } else {
            const int y = used_ys[o - static_cast<std::size_t>(b.carries)];
            dest = slice(bo, comp[static_cast<std::size_t>(b.carries + y)], 0, -1, 0);
        }
        if (map[static_cast<std::size_t>(bo)] < 0)
            map[static_cast<std::size_t>(bo)] = dest;
        else
            copies.emplace_back(map[static_cast<std::size_t>(bo)], dest);
    }
    for (std::size_t bi = 0; bi < body.buffers.size(); ++bi) {
        if (map[bi] >= 0) continue;
        Buffer t = body.buffers[bi];
        HEDRA_INTERNAL_CHECK(t.role == BufferRole::Temporary, "partition: a scan body buffer left");
        const int at = static_cast<int>(ir_.buffers.size());
        t.name = "b" + std::to_string(at);
        ir_.buffers.push_back(std::move(t));
        map[bi] = at;
    }
    // Slices of a scan inside the body point into buffers that have moved too.
    for (std::size_t bi = 0; bi < body.buffers.size(); ++bi) {
        const poly::StepSlice& inner = body.buffers[bi].slice;
        if (inner.parent < 0) continue;
        poly::StepSlice& moved = ir_.buffers[static_cast<std::size_t>(map[bi])].slice;
        moved.parent = map[static_cast<std::size_t>(inner.parent)];
        if (inner.edge >= 0) moved.edge = map[static_cast<std::size_t>(inner.edge)];
    }
    const std::string prefix = "k" + std::to_string(ir_.kernels.size()) + "_";
    for (Kernel& k : body.kernels) {
        remap_kernel(k, map);
        rename_kernel(k, prefix, next_statement_);
        loop->kernels.push_back(std::move(k));
    }
    for (const auto& [from, to] : copies) {
        const Buffer& f = ir_.buffers[static_cast<std::size_t>(from)];
        const int rank = static_cast<int>(f.sizes.size());
        Statement st;
        st.name = "S" + std::to_string(next_statement_++);
        st.extents = f.sizes;
        st.write_buffer = to;
        st.write_access = AffineMap::identity(rank);
        st.reads.push_back({from, AffineMap::identity(rank)});
        st.value = scalar_input(0, f.dtype);
        Kernel k;
        k.name = prefix + "copy" + std::to_string(loop->kernels.size());
        k.statements.push_back(std::move(st));
        loop->kernels.push_back(std::move(k));
    }
    for (const Kernel& k : loop->kernels)
        collect_touched(k, loop->touched);
    std::sort(loop->touched.begin(), loop->touched.end());
    loop->touched.erase(std::unique(loop->touched.begin(), loop->touched.end()),
                        loop->touched.end());
    Kernel k;
    k.name = "k" + std::to_string(ir_.kernels.size());
    k.loop = std::move(loop);
    ir_.kernels.push_back(std::move(k));
}

} // namespace hedra::sched::detail
