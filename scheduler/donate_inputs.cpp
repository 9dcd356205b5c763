// Outputs folded into donated inputs (see donate_inputs.hpp).
#include "scheduler/donate_inputs.hpp"

#include <algorithm>

namespace hedra::sched {
namespace {

using poly::Buffer;
using poly::Kernel;
using poly::ProgramIR;
using poly::Statement;

// Distinct instances write distinct elements: every written axis is one counter, each counter
// at most once.
bool injective(const AffineMap& access) {
    if (access.in_rank() != access.out_rank()) return false;
    std::vector<bool> used(static_cast<std::size_t>(access.in_rank()), false);
    for (int o = 0; o < access.out_rank(); ++o) {
        int counter = -1;
        for (int i = 0; i < access.in_rank(); ++i)
            if (access.coeff(o, i) != 0) {
                if (counter >= 0) return false;
                counter = i;
            }
        if (counter < 0 || used[static_cast<std::size_t>(counter)]) return false;
        used[static_cast<std::size_t>(counter)] = true;
    }
    return true;
}

bool writes(const Statement& st, int b) {
    if (st.write_buffer == b) return true;
    return std::any_of(st.tuple_writes.begin(), st.tuple_writes.end(),
                       [&](const Statement::TupleWrite& w) { return w.buffer == b; });
}

bool reads(const Statement& st, int b) {
    return std::any_of(st.reads.begin(), st.reads.end(),
                       [&](const poly::Read& r) { return r.buffer == b; });
}

// The statements that write a buffer: plain Assigns of one kernel, each element for element
// (one value, or the pieces of a fuse, a later piece winning where they overlap).
struct Writer {
    int kernel = -1;
    std::vector<int> statements; // in program order
};

// The writers of buffer `b`, or none.
Writer writers_of(const ProgramIR& p, int b) {
    Writer w;
    for (std::size_t k = 0; k < p.kernels.size(); ++k)
        for (std::size_t s = 0; s < p.kernels[k].statements.size(); ++s)
            if (writes(p.kernels[k].statements[s], b)) {
                if (w.kernel >= 0 && w.kernel != static_cast<int>(k)) return {};
                w.kernel = static_cast<int>(k);
                w.statements.push_back(static_cast<int>(s));
            }
    if (w.kernel < 0 || poly::is_stream(p.kernels[static_cast<std::size_t>(w.kernel)])) return {};
    for (int s : w.statements) {
        const Statement& st =
            p.kernels[static_cast<std::size_t>(w.kernel)].statements[static_cast<std::size_t>(s)];
        if (st.kind != poly::StatementKind::Assign || !st.tuple_writes.empty() ||
            !st.write_indirect.empty() || !injective(st.write_access) || st.write_buffer != b)
            return {};
    }
    return w;
}

// Whether the writers may overwrite input `in`: the first of them alone reads `in`, only at the
// element it writes (the later ones, which overwrite some of its elements, run after it), no
// other statement of its kernel reads `in`, and no later kernel does.
bool dead_at_write(const ProgramIR& p, const Writer& w, int in) {
    for (std::size_t k = 0; k < p.kernels.size(); ++k)
        for (std::size_t s = 0; s < p.kernels[k].statements.size(); ++s) {
            const Statement& st = p.kernels[k].statements[s];
            if (!reads(st, in)) continue;
            if (static_cast<int>(k) < w.kernel) continue;
            if (static_cast<int>(k) > w.kernel || static_cast<int>(s) != w.statements.front())
                return false;
            for (const poly::Read& r : st.reads)
                if (r.buffer == in && (r.is_indirect() || !(r.access == st.write_access)))
                    return false;
        }
    return true;
}

// Whether the statement only copies buffer `b` into itself (after a fold: an output piece that
// keeps the donated input's elements).
bool copies_in_place(const Statement& st, int b) {
    return poly::is_copy(st) && st.write_buffer == b && st.reads[0].buffer == b &&
           st.reads[0].access == st.write_access;
}

// The buffers a kernel reads and those it writes.
struct KernelUse {
    std::vector<int> reads, writes;
    bool touches(int b) const {
        return std::find(reads.begin(), reads.end(), b) != reads.end() ||
               std::find(writes.begin(), writes.end(), b) != writes.end();
    }
};

KernelUse use_of(const Kernel& k) {
    KernelUse u;
    for (const Statement& st : k.statements) {
        u.writes.push_back(st.write_buffer);
        for (const Statement::TupleWrite& w : st.tuple_writes)
            u.writes.push_back(w.buffer);
        for (const poly::Read& r : st.reads)
            if (r.buffer >= 0) u.reads.push_back(r.buffer);
    }
    return u;
}

// Kernels after the writer that read `in` move to just before it where nothing in between
// writes what they read, or touches what they write: the input is then read before its
// overwrite. Returns false (and `kernels` may be partly reordered) when one cannot move.
bool hoist_readers(std::vector<Kernel>& kernels, int& writer, int in) {
    for (int k = writer + 1; k < static_cast<int>(kernels.size()); ++k) {
        const KernelUse moving = use_of(kernels[static_cast<std::size_t>(k)]);
        if (std::find(moving.reads.begin(), moving.reads.end(), in) == moving.reads.end()) continue;
        for (int between = writer; between < k; ++between) {
            const KernelUse other = use_of(kernels[static_cast<std::size_t>(between)]);
            for (int b : other.writes)
                if (moving.touches(b)) return false;
            for (int b : moving.writes)
                if (other.touches(b)) return false;
        }
        std::rotate(kernels.begin() + writer, kernels.begin() + k, kernels.begin() + k + 1);
        ++writer;
    }
    return true;
}

bool same_memory(const Buffer& a, const Buffer& b) {
    return a.dtype == b.dtype && a.sizes == b.sizes && !a.symbolic() && !b.symbolic() &&
           a.row_local == 0 && b.row_local == 0 && a.row_window == 0 && b.row_window == 0;
}

// Every use of buffer `from` becomes one of `to`, and `from` is removed (later buffers move
// down by one).
void fold_buffer(ProgramIR& p, int from, int to) {
    auto renumber = [&](int& b) {
        if (b == from) b = to;
        if (b > from) --b;
    };
    for (Kernel& k : p.kernels)
        for (Statement& st : k.statements) {
            renumber(st.write_buffer);
            for (Statement::TupleWrite& w : st.tuple_writes)
                renumber(w.buffer);
            for (poly::Read& r : st.reads)
                if (r.buffer >= 0) renumber(r.buffer);
        }
    for (int& b : p.outputs)
        renumber(b);
    for (int& b : p.inputs)
        renumber(b);
    p.buffers.erase(p.buffers.begin() + from);
}

} // namespace

int donate_inputs(ProgramIR& p, const std::vector<NodePtr>& donated) {
    // A scan's loop reads and writes what its statements do not show: nothing is donated.
    if (donated.empty() || poly::has_loops(p)) return 0;
    // The donated inputs' buffers, in donation order.
    std::vector<NodePtr> order;
    for (const NodePtr& n : donated)
        for (const Buffer& b : p.buffers)
            if (b.role == poly::BufferRole::Input && b.node == n) order.push_back(n);
    auto buffer_of = [&](const NodePtr& n) {
        for (std::size_t b = 0; b < p.buffers.size(); ++b)
            if (p.buffers[b].role == poly::BufferRole::Input && p.buffers[b].node == n)
                return static_cast<int>(b);
        return -1;
    };
    int folded = 0;
    for (std::size_t o = 0; o < p.outputs.size(); ++o) {
        const int out = p.outputs[o];
        if (p.buffers[static_cast<std::size_t>(out)].role != poly::BufferRole::Output) continue;
        const Writer w = writers_of(p, out);
        if (w.kernel < 0) continue;
        const Statement& st = p.kernels[static_cast<std::size_t>(w.kernel)]
                                  .statements[static_cast<std::size_t>(w.statements.front())];
        for (const NodePtr& n : order) {
            const int in = buffer_of(n);
            const Buffer& input = p.buffers[static_cast<std::size_t>(in)];
            if (input.donated || !same_memory(input, p.buffers[static_cast<std::size_t>(out)]) ||
                !reads(st, in))
                continue;
            std::vector<Kernel> order_tried = p.kernels;
            Writer moved = w;
            if (!hoist_readers(order_tried, moved.kernel, in)) continue;
            std::swap(p.kernels, order_tried);
            if (!dead_at_write(p, moved, in)) {
                std::swap(p.kernels, order_tried);
                continue;
            }
            p.buffers[static_cast<std::size_t>(in)].donated = true;
            fold_buffer(p, out, in);
            const int kept = in > out ? in - 1 : in;
            // A piece that keeps the input's elements has nothing left to do (a sweep of a
            // grid's interior writes only the interior).
            std::vector<Statement>& sts =
                p.kernels[static_cast<std::size_t>(moved.kernel)].statements;
            auto copy = [&](const Statement& x) { return copies_in_place(x, kept); };
            if (!std::all_of(sts.begin(), sts.end(), copy))
                sts.erase(std::remove_if(sts.begin(), sts.end(), copy), sts.end());
            ++folded;
            break;
        }
    }
    return folded;
}

} // namespace hedra::sched
