// Kernels fused row by row (see row_fusion.hpp).
#include "scheduler/row_fusion.hpp"

#include <algorithm>
#include <set>

namespace hedra::sched {
namespace {

using poly::Kernel;
using poly::Statement;

// Whether rows 0..r-1 of `access` are exactly counters 0..r-1.
bool leading_identity(const AffineMap& access, int r) {
    if (access.out_rank() < r || access.in_rank() < r) return false;
    for (int d = 0; d < r; ++d) {
        if (access.offset(d) != 0) return false;
        for (int k = 0; k < access.in_rank(); ++k)
            if (access.coeff(d, k) != (k == d ? 1 : 0)) return false;
    }
    return true;
}

// Whether a read of `program`'s buffer is fine inside a row-fused kernel: row-private, a scalar,
// or, in an assignment, a broadcast small enough to stay in cache (a bias row).
bool row_read(const poly::ProgramIR& program, const Statement& st, const poly::Read& rd, int r) {
    if (rd.buffer < 0 || leading_identity(rd.access, r)) return true;
    const poly::Buffer& b = program.buffers.at(static_cast<std::size_t>(rd.buffer));
    std::int64_t elements = 1;
    for (std::int64_t s : b.sizes)
        elements *= s;
    return elements == 1 || (st.kind == poly::StatementKind::Assign && elements <= kMaxRowElements);
}

// The row counters two kernels share: the largest r for which every statement qualifies
// (row_fusion.hpp), or 0.
int shared_rows(const poly::ProgramIR& program, const Kernel& a, const Kernel& b) {
    std::vector<const Statement*> all;
    for (const Kernel* k : {&a, &b})
        for (const Statement& st : k->statements)
            all.push_back(&st);
    if (all.empty()) return 0;
    int r = static_cast<int>(all[0]->extents.size());
    for (const Statement* st : all) {
        if (!st->tuple_writes.empty()) return 0;
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
                ok = ok && row_read(program, *st, rd, r);
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

} // namespace

void fuse_row_kernels(poly::ProgramIR& program) {
    std::vector<Kernel> fused;
    for (Kernel& k : program.kernels) {
        if (!fused.empty() && !k.statements.empty() && !fused.back().statements.empty() &&
            independent_writes(fused.back(), k) && shared_rows(program, fused.back(), k) >= 1) {
            for (Statement& st : k.statements)
                fused.back().statements.push_back(std::move(st));
            continue;
        }
        fused.push_back(std::move(k));
    }
    for (std::size_t i = 0; i < fused.size(); ++i)
        fused[i].name = "k" + std::to_string(i);
    program.kernels = std::move(fused);
}

} // namespace hedra::sched
