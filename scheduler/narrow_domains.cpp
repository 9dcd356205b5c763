// Shrinks the domains of statements that write parts of temporaries no one reads (see the
// header).
#include "scheduler/narrow_domains.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>

namespace hedra::sched {
namespace {

using poly::Statement;

struct Box {
    std::vector<std::int64_t> lo, hi; // inclusive, per buffer axis
    bool any = false;
};

// An indirect read's index inputs (after the counters) span their whole clamped range.
void include_read(Box& box, const Statement& st, const poly::Read& read) {
    const AffineMap& access = read.access;
    const std::size_t counters = st.extents.size();
    for (std::int64_t e : st.extents)
        if (e <= 0) return;
    int rank = access.out_rank();
    if (!box.any) {
        box.lo.assign(static_cast<std::size_t>(rank), INT64_MAX);
        box.hi.assign(static_cast<std::size_t>(rank), INT64_MIN);
        box.any = true;
    }
    for (int a = 0; a < rank; ++a) {
        std::int64_t lo = access.offset(a), hi = access.offset(a);
        for (int d = 0; d < access.in_rank(); ++d) {
            const std::size_t c = static_cast<std::size_t>(d);
            std::int64_t extent =
                c < counters ? st.extents[c] : read.indirect_extent.at(c - counters);
            std::int64_t span = access.coeff(a, d) * (extent - 1);
            (span < 0 ? lo : hi) += span;
        }
        box.lo[a] = std::min(box.lo[a], lo);
        box.hi[a] = std::max(box.hi[a], hi);
    }
}

// Per counter of `st`: the shift and the new extent that keep its writes inside `box`, or
// nothing when a write row is not a constant or one counter with coefficient 1.
std::optional<std::vector<std::pair<std::int64_t, std::int64_t>>> restriction(const Statement& st,
                                                                              const Box& box) {
    if (!st.write_indirect.empty()) return std::nullopt; // writes anywhere along its axis
    std::vector<std::pair<std::int64_t, std::int64_t>> out;
    for (std::int64_t e : st.extents)
        out.emplace_back(0, e);
    const AffineMap& w = st.write_access;
    std::vector<bool> seen(st.extents.size(), false);
    for (int a = 0; a < w.out_rank(); ++a) {
        int counter = -1;
        for (int d = 0; d < w.in_rank(); ++d) {
            if (w.coeff(a, d) == 0) continue;
            if (w.coeff(a, d) != 1 || counter >= 0) return std::nullopt;
            counter = d;
        }
        std::int64_t off = w.offset(a);
        if (counter < 0) {
            if (off < box.lo[a] || off > box.hi[a]) out.assign(out.size(), {0, 0});
            continue;
        }
        if (seen[counter]) return std::nullopt;
        seen[counter] = true;
        auto& [shift, extent] = out[counter];
        std::int64_t first = std::max<std::int64_t>(0, box.lo[a] - off);
        std::int64_t last = std::min(extent - 1, box.hi[a] - off);
        shift = first;
        extent = std::max<std::int64_t>(0, last - first + 1);
    }
    return out;
}

// `m` with counter d replaced by d + shift[d] (an indirect read's index inputs unchanged).
AffineMap shifted(const AffineMap& m, const std::vector<std::pair<std::int64_t, std::int64_t>>& r) {
    std::vector<std::int64_t> matrix, offset;
    for (int a = 0; a < m.out_rank(); ++a) {
        std::int64_t off = m.offset(a);
        for (int d = 0; d < m.in_rank(); ++d) {
            matrix.push_back(m.coeff(a, d));
            if (static_cast<std::size_t>(d) < r.size()) off += m.coeff(a, d) * r[d].first;
        }
        offset.push_back(off);
    }
    return AffineMap(m.in_rank(), m.out_rank(), std::move(matrix), std::move(offset));
}

} // namespace

void narrow_domains(poly::ProgramIR& program) {
    std::vector<Box> read(program.buffers.size());
    for (const poly::Kernel& k : program.kernels)
        for (const Statement& st : k.statements)
            for (const poly::Read& r : st.reads)
                if (r.buffer >= 0) include_read(read[r.buffer], st, r);
    // A scan's loop reads its buffers whole, through rows its statements do not show.
    const std::vector<bool> in_loop = poly::loop_buffers(program);
    for (poly::Kernel& k : program.kernels) {
        if (k.statements.empty()) continue;
        int b = k.statements[0].write_buffer;
        const poly::Buffer& buffer = program.buffers[b];
        if (buffer.role != poly::BufferRole::Temporary || !read[b].any ||
            in_loop[static_cast<std::size_t>(b)])
            continue;
        bool smaller = false;
        for (std::size_t a = 0; a < buffer.sizes.size(); ++a)
            smaller = smaller || read[b].lo[a] > 0 || read[b].hi[a] < buffer.sizes[a] - 1;
        if (!smaller) continue;
        std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> plans;
        for (const Statement& st : k.statements) {
            auto r = st.write_buffer == b ? restriction(st, read[b]) : std::nullopt;
            if (!r) break;
            plans.push_back(std::move(*r));
        }
        if (plans.size() != k.statements.size()) continue;
        std::vector<Statement> kept;
        for (std::size_t s = 0; s < k.statements.size(); ++s) {
            Statement st = std::move(k.statements[s]);
            const auto& r = plans[s];
            bool empty = false;
            for (std::size_t d = 0; d < st.extents.size(); ++d) {
                st.extents[d] = r[d].second;
                empty = empty || r[d].second == 0;
            }
            if (empty) continue;
            st.write_access = shifted(st.write_access, r);
            for (poly::Read& rd : st.reads)
                rd.access = shifted(rd.access, r);
            for (poly::ParamBound& pb : st.param_bounds)
                pb.expr = shifted(pb.expr, r);
            kept.push_back(std::move(st));
        }
        k.statements = std::move(kept);
    }
    std::erase_if(program.kernels,
                  [](const poly::Kernel& k) { return k.statements.empty() && !k.loop; });
}

} // namespace hedra::sched
