// The kernel forms the GPU mapping recognizes (see kernel_forms.hpp).
#include "scheduler/kernel_forms.hpp"

#include <algorithm>

namespace hedra::sched {

namespace {

// Row r of m is the constant `at`.
bool pinned_row(const AffineMap& m, int r, std::int64_t at = 0) {
    for (int c = 0; c < m.in_rank(); ++c)
        if (m.coeff(r, c) != 0) return false;
    return m.offset(r) == at;
}

int gemm_score(const ReductionForm& f, int m, int n) {
    bool a = false, b = false;
    for (const poly::Read& r : f.update->reads) {
        if (r.buffer < 0) continue;
        a = a || (!depends(r, m) && depends(r, n));
        b = b || (!depends(r, n) && depends(r, m));
    }
    return int(a) + int(b);
}

bool reads_buffer(const poly::Statement& st, int buffer) {
    for (const poly::Read& r : st.reads)
        if (r.buffer == buffer) return true;
    return false;
}

bool in_progression(std::int64_t x, const Progression& p) {
    if (p.step == 0) return x == p.offset;
    std::int64_t d = x - p.offset;
    return d % p.step == 0 && d / p.step >= 0 && d / p.step < p.count;
}

} // namespace

bool depends(const poly::Read& r, int counter) {
    for (int row = 0; row < r.access.out_rank(); ++row)
        if (r.access.coeff(row, counter) != 0) return true;
    return false;
}

std::optional<ReductionForm> reduction_form(const poly::ProgramIR& program,
                                            const poly::Kernel& kernel) {
    if (kernel.statements.size() < 2) return std::nullopt;
    const poly::Statement& init = kernel.statements[0];
    const poly::Statement& u = kernel.statements[1];
    // A scatter's update adds into data-dependent elements: the general path's.
    if (init.kind != poly::StatementKind::Assign || u.kind != poly::StatementKind::Update ||
        init.write_buffer != u.write_buffer || !init.reads.empty() || poly::has_indirect(kernel))
        return std::nullopt;
    const poly::Buffer& w = program.buffers.at(u.write_buffer);
    int rank = static_cast<int>(w.sizes.size());
    // The init covers a box of the buffer: its counters in order, each shifted by an offset
    // (a sum written into the interior of a padded buffer); the update writes the same box.
    if (init.extents.size() != w.sizes.size() || init.write_access.in_rank() != rank ||
        init.write_access.out_rank() != rank || u.write_access.out_rank() != rank)
        return std::nullopt;
    for (int r = 0; r < rank; ++r) {
        for (int c = 0; c < rank; ++c)
            if (init.write_access.coeff(r, c) != (r == c ? 1 : 0)) return std::nullopt;
        std::int64_t o = init.write_access.offset(r);
        if (o < 0 || o + init.extents[r] > w.sizes[r]) return std::nullopt;
    }
    for (const poly::Read& r : u.reads)
        if (r.buffer == u.write_buffer) return std::nullopt;
    ReductionForm f;
    f.init = &init;
    f.update = &u;
    f.extents = u.extents;
    int n = static_cast<int>(u.extents.size());
    f.out_stride.assign(static_cast<std::size_t>(n), 0);
    std::vector<int> uses(static_cast<std::size_t>(n), 0);
    std::int64_t stride = 1;
    for (int r = rank - 1; r >= 0; --r) {
        std::int64_t o = init.write_access.offset(r);
        f.result_offset += o * stride;
        f.whole = f.whole && o == 0 && init.extents[r] == w.sizes[r];
        if (pinned_row(u.write_access, r, o)) {
            if (init.extents[r] != 1) return std::nullopt;
        } else {
            int counter = -1;
            for (int c = 0; c < n; ++c) {
                std::int64_t k = u.write_access.coeff(r, c);
                if (k == 0) continue;
                if (k != 1 || counter >= 0) return std::nullopt;
                counter = c;
            }
            if (counter < 0 || u.write_access.offset(r) != o ||
                u.extents[counter] != init.extents[r])
                return std::nullopt;
            f.out_stride[counter] = stride;
            ++uses[counter];
        }
        stride *= w.sizes[r];
    }
    for (int c = 0; c < n; ++c) {
        bool reduced = std::find(u.reduction_dims.begin(), u.reduction_dims.end(), c) !=
                       u.reduction_dims.end();
        if (uses[c] > 1 || (reduced && uses[c]) || (!reduced && !uses[c])) return std::nullopt;
        (reduced ? f.reductions : f.outputs).push_back(c);
        (reduced ? f.reduction_size : f.num_outputs) *= u.extents[c];
    }
    for (std::size_t s = 2; s < kernel.statements.size(); ++s) {
        const poly::Statement& e = kernel.statements[s];
        if (!f.whole) return std::nullopt; // epilogues are over the whole result
        if (e.kind != poly::StatementKind::Assign || e.extents != w.sizes ||
            !e.write_access.is_identity() || e.write_buffer == u.write_buffer)
            return std::nullopt;
        for (const poly::Read& r : e.reads) {
            if (r.buffer == u.write_buffer && !r.access.is_identity()) return std::nullopt;
            // An earlier epilogue's result, at the same element: the same thread wrote it
            // just before (a chain, partition_options for a GPU). Anything else is not ready.
            for (std::size_t o = 0; o < kernel.statements.size(); ++o) {
                const poly::Statement& other = kernel.statements[o];
                bool earlier = o >= 2 && o < s && r.access.is_identity();
                if (r.buffer >= 0 && r.buffer == other.write_buffer &&
                    other.write_buffer != u.write_buffer && !earlier)
                    return std::nullopt;
            }
        }
        f.epilogues.push_back(static_cast<int>(s));
    }
    return f;
}

std::optional<TupleReductionForm> tuple_reduction_form(const poly::ProgramIR& program,
                                                       const poly::Kernel& kernel) {
    const std::size_t n = kernel.statements.size();
    if (n < 3) return std::nullopt;
    const poly::Statement& u = kernel.statements.back();
    const std::size_t k = 1 + u.tuple_writes.size();
    if (u.kind != poly::StatementKind::Assign || u.tuple_writes.empty() || n != k + 1 ||
        u.tuple_combiners.size() != k || u.reads.size() < k || poly::has_indirect(kernel))
        return std::nullopt;
    TupleReductionForm f;
    f.step = &u;
    f.buffers.push_back(u.write_buffer);
    for (const poly::Statement::TupleWrite& w : u.tuple_writes)
        f.buffers.push_back(w.buffer);
    const std::vector<std::int64_t>& sizes = program.buffers.at(u.write_buffer).sizes;
    const int rank = static_cast<int>(sizes.size());
    for (std::size_t j = 0; j < k; ++j) {
        const poly::Statement& init = kernel.statements[j];
        // Each accumulator: initialized whole with a constant, read by the step where written.
        if (init.kind != poly::StatementKind::Assign || !init.reads.empty() ||
            init.write_buffer != f.buffers[j] || !init.tuple_writes.empty() ||
            program.buffers.at(f.buffers[j]).sizes != sizes || init.extents != sizes ||
            !init.write_access.is_identity() || u.reads[j].buffer != f.buffers[j] ||
            !(u.reads[j].access == u.write_access))
            return std::nullopt;
        f.inits.push_back(&init);
    }
    // Every result axis is one step counter (or pinned to 0, a kept axis); the others reduce.
    const int counters = static_cast<int>(u.extents.size());
    if (u.write_access.out_rank() != rank || u.write_access.in_rank() != counters)
        return std::nullopt;
    std::vector<int> row_of(static_cast<std::size_t>(counters), -1);
    for (int r = 0; r < rank; ++r) {
        if (u.write_access.offset(r) != 0) return std::nullopt;
        int found = -1;
        for (int c = 0; c < counters; ++c) {
            std::int64_t coeff = u.write_access.coeff(r, c);
            if (coeff == 0) continue;
            if (coeff != 1 || found >= 0 || row_of[c] >= 0) return std::nullopt;
            found = c;
        }
        if (found < 0 ? sizes[r] != 1 : u.extents[found] != sizes[r]) return std::nullopt;
        if (found >= 0) row_of[found] = r;
    }
    for (int c = 0; c < counters; ++c) {
        bool reduced = row_of[c] < 0;
        (reduced ? f.reductions : f.outputs).push_back(c);
        (reduced ? f.reduction_size : f.num_outputs) *= u.extents[c];
    }
    return f;
}

std::optional<std::array<int, 2>> contraction_members(const ReductionForm& f) {
    if (f.num_outputs == 0 || f.reduction_size < 4) return std::nullopt;
    int n = -1;
    for (int c : f.outputs)
        if (f.extents[c] > 1 && (n < 0 || f.out_stride[c] < f.out_stride[n])) n = c;
    if (n < 0) return std::nullopt;
    int m = -1, best = 0;
    for (int c : f.outputs) {
        if (c == n || f.extents[c] <= 1) continue;
        int score = gemm_score(f, c, n);
        if (score > best ||
            (score == best && m >= 0 && score > 0 && f.extents[c] >= f.extents[m])) {
            best = score;
            m = c;
        }
    }
    if (m < 0 || best == 0 || f.extents[m] * f.extents[n] < 64) return std::nullopt;
    return std::array<int, 2>{m, n};
}

bool all_assigns(const poly::Kernel& kernel) {
    for (const poly::Statement& st : kernel.statements) {
        if (st.kind != poly::StatementKind::Assign) return false;
        for (const poly::Read& r : st.reads)
            if (r.buffer == st.write_buffer) return false;
    }
    return true;
}

bool row_progression(const poly::Statement& st, int row, Progression& p) {
    const AffineMap& w = st.write_access;
    p = {w.offset(row), 0, 1};
    for (int c = 0; c < w.in_rank(); ++c) {
        std::int64_t a = w.coeff(row, c);
        if (a == 0 || st.extents[static_cast<std::size_t>(c)] == 1) continue;
        if (p.step != 0) return false;
        p.step = a;
        p.count = st.extents[static_cast<std::size_t>(c)];
    }
    return true;
}

bool disjoint_writes(const poly::Statement& s, const poly::Statement& t) {
    if (s.write_buffer != t.write_buffer) return true;
    for (int row = 0; row < s.write_access.out_rank(); ++row) {
        Progression a, b;
        if (!row_progression(s, row, a) || !row_progression(t, row, b)) continue;
        if (a.count > 4096) continue;
        bool meet = false;
        for (std::int64_t i = 0; i < a.count && !meet; ++i)
            meet = in_progression(a.offset + a.step * i, b);
        if (!meet) return true;
    }
    return false;
}

bool box_write(const poly::Statement& t) {
    std::vector<bool> used(t.extents.size(), false);
    for (int row = 0; row < t.write_access.out_rank(); ++row) {
        Progression p;
        if (!row_progression(t, row, p)) return false;
        for (int c = 0; c < t.write_access.in_rank(); ++c)
            if (t.write_access.coeff(row, c) != 0 && t.extents[static_cast<std::size_t>(c)] > 1) {
                if (used[static_cast<std::size_t>(c)]) return false;
                used[static_cast<std::size_t>(c)] = true;
            }
    }
    return true;
}

std::vector<std::vector<int>> map_launch_groups(const poly::Kernel& kernel) {
    std::vector<std::vector<int>> groups;
    for (std::size_t s = 0; s < kernel.statements.size(); ++s) {
        const poly::Statement& st = kernel.statements[s];
        bool joins = !groups.empty();
        for (std::size_t k = 0; joins && k < groups.back().size(); ++k) {
            const poly::Statement& other =
                kernel.statements[static_cast<std::size_t>(groups.back()[k])];
            joins = (disjoint_writes(other, st) || box_write(st)) &&
                    !reads_buffer(st, other.write_buffer) && !reads_buffer(other, st.write_buffer);
        }
        if (joins)
            groups.back().push_back(static_cast<int>(s));
        else
            groups.push_back({static_cast<int>(s)});
    }
    return groups;
}

} // namespace hedra::sched
