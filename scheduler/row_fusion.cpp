// Kernels fused row by row (see row_fusion.hpp).
#include "scheduler/row_fusion.hpp"

#include <algorithm>
#include <initializer_list>
#include <set>

namespace hedra::sched {

bool leading_identity(const AffineMap& access, int r) {
    if (access.out_rank() < r || access.in_rank() < r) return false;
    for (int d = 0; d < r; ++d) {
        if (access.offset(d) != 0) return false;
        for (int k = 0; k < access.in_rank(); ++k)
            if (access.coeff(d, k) != (k == d ? 1 : 0)) return false;
    }
    return true;
}

namespace {

using poly::Kernel;
using poly::Statement;

// Whether a read of `program`'s buffer is fine inside a row-fused kernel: row-private, a scalar,
// or, in an assignment, a broadcast small enough to stay in cache (a bias row).
bool row_read(const poly::ProgramIR& program, const Statement& st, const poly::Read& rd, int r,
              const std::set<int>& written) {
    if (rd.buffer < 0 || leading_identity(rd.access, r)) return true;
    // Another row of a buffer the kernel writes: rows are no longer independent.
    if (written.count(rd.buffer)) return false;
    const poly::Buffer& b = program.buffers.at(static_cast<std::size_t>(rd.buffer));
    std::int64_t elements = 1;
    for (std::int64_t s : b.sizes)
        elements *= s;
    return elements == 1 || (st.kind == poly::StatementKind::Assign && elements <= kMaxRowElements);
}

// The row counters the kernels' statements share: the largest r for which every statement
// qualifies (row_fusion.hpp), or 0.
int shared_rows(const poly::ProgramIR& program, std::initializer_list<const Kernel*> kernels) {
    std::vector<const Statement*> all;
    for (const Kernel* k : kernels)
        for (const Statement& st : k->statements)
            all.push_back(&st);
    if (all.empty()) return 0;
    std::set<int> written;
    for (const Statement* st : all)
        written.insert(st->write_buffer);
    int r = static_cast<int>(all[0]->extents.size());
    for (const Statement* st : all) {
        if (!st->tuple_writes.empty() || !st->write_indirect.empty()) return 0;
        r = std::min<int>(r, static_cast<int>(st->extents.size()));
    }
    for (; r >= 1; --r) {
        bool ok = true;
        for (const Statement* st : all) {
            ok = ok && leading_identity(st->write_access, r);
            for (int d = 0; d < r; ++d)
                ok = ok && st->extents[d] == all[0]->extents[d];
            std::int64_t rest = 1;
            for (std::size_t d = static_cast<std::size_t>(r); d < st->extents.size(); ++d)
                rest *= st->extents[d];
            ok = ok && rest <= kMaxRowElements;
            for (const poly::Read& rd : st->reads)
                ok = ok && row_read(program, *st, rd, r, written);
            if (!ok) break;
        }
        if (ok) return r;
    }
    return 0;
}

bool independent_writes(const Kernel& a, const Kernel& b) {
    std::set<int> touched_by_a;
    for (const Statement& st : a.statements) {
        touched_by_a.insert(st.write_buffer);
        for (const poly::Read& rd : st.reads)
            touched_by_a.insert(rd.buffer);
    }
    return std::none_of(b.statements.begin(), b.statements.end(),
                        [&](const Statement& st) { return touched_by_a.count(st.write_buffer); });
}

// Every access of `buffer` in `kernel` at the row counters; false if the kernel writes it in a
// tuple step (row kernels have none) or reads it anywhere else.
bool row_private(const Kernel& kernel, int buffer, int r) {
    for (const Statement& st : kernel.statements) {
        if (st.write_buffer == buffer && !leading_identity(st.write_access, r)) return false;
        for (const Statement::TupleWrite& w : st.tuple_writes)
            if (w.buffer == buffer) return false;
        for (const poly::Read& rd : st.reads)
            if (rd.buffer == buffer && !leading_identity(rd.access, r)) return false;
    }
    return true;
}

bool touches(const Kernel& kernel, int buffer) {
    for (const Statement& st : kernel.statements) {
        if (st.write_buffer == buffer) return true;
        for (const Statement::TupleWrite& w : st.tuple_writes)
            if (w.buffer == buffer) return true;
        for (const poly::Read& rd : st.reads)
            if (rd.buffer == buffer) return true;
    }
    return false;
}

// Temporaries that only one row kernel touches, at its row counters, become row-local.
void contract_row_temporaries(poly::ProgramIR& program) {
    const std::vector<bool> in_loop = poly::loop_buffers(program);
    for (std::size_t b = 0; b < program.buffers.size(); ++b) {
        poly::Buffer& buf = program.buffers[b];
        if (buf.role != poly::BufferRole::Temporary || in_loop[b]) continue;
        const Kernel* only = nullptr;
        int users = 0;
        for (const Kernel& k : program.kernels)
            if (touches(k, static_cast<int>(b))) {
                only = &k;
                ++users;
            }
        if (users != 1) continue;
        // The row schedule (direct_schedule.hpp) takes kernels with a reduction step.
        bool update =
            std::any_of(only->statements.begin(), only->statements.end(),
                        [](const Statement& st) { return st.kind == poly::StatementKind::Update; });
        if (only->statements.size() < 2 || !update) continue;
        int r = shared_rows(program, {only});
        if (r < 1 || static_cast<int>(buf.sizes.size()) < r) continue;
        const std::vector<std::int64_t>& rows = only->statements[0].extents;
        std::size_t row_bytes = dtype_size(buf.dtype);
        bool same_rows = true;
        for (int d = 0; d < static_cast<int>(buf.sizes.size()); ++d) {
            if (d < r)
                same_rows = same_rows && buf.sizes[d] == rows[d];
            else
                row_bytes *= static_cast<std::size_t>(buf.sizes[d]);
        }
        if (same_rows && row_bytes <= kMaxRowLocalBytes &&
            row_private(*only, static_cast<int>(b), r))
            buf.row_local = r;
    }
}

} // namespace

void fuse_row_kernels(poly::ProgramIR& program) {
    std::vector<Kernel> fused;
    for (Kernel& k : program.kernels) {
        if (!fused.empty() && !k.statements.empty() && !fused.back().statements.empty() &&
            independent_writes(fused.back(), k) && shared_rows(program, {&fused.back(), &k}) >= 1) {
            for (Statement& st : k.statements)
                fused.back().statements.push_back(std::move(st));
            continue;
        }
        fused.push_back(std::move(k));
    }
    for (std::size_t i = 0; i < fused.size(); ++i)
        fused[i].name = "k" + std::to_string(i);
    program.kernels = std::move(fused);
    contract_row_temporaries(program);
}

} // namespace hedra::sched
