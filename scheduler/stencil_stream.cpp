// Chains of stencil sweeps streamed over the rows (see stencil_stream.hpp).
#include "scheduler/stencil_stream.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>

namespace hedra::sched {
namespace {

using poly::Kernel;
using poly::Statement;

// The offset c of a row access i0 + c (the first counter with coefficient 1, no other
// counter), or nothing.
std::optional<std::int64_t> row_offset(const AffineMap& access) {
    if (access.out_rank() < 1 || access.in_rank() < 1 || access.coeff(0, 0) != 1)
        return std::nullopt;
    for (int k = 1; k < access.in_rank(); ++k)
        if (access.coeff(0, k) != 0) return std::nullopt;
    return access.offset(0);
}

// The one buffer every statement of `k` assigns at rows i0 + c, or -1.
int stage_buffer(const poly::ProgramIR& program, const Kernel& k) {
    if (k.statements.empty() || poly::is_stream(k)) return -1;
    int b = k.statements[0].write_buffer;
    for (const Statement& st : k.statements) {
        if (st.kind != poly::StatementKind::Assign || !st.tuple_writes.empty() ||
            st.write_buffer != b || !row_offset(st.write_access) || poly::has_indirect(st))
            return -1;
        for (const poly::Read& r : st.reads)
            if (r.buffer == b) return -1;
    }
    return program.buffers[static_cast<std::size_t>(b)].sizes.size() >= 2 ? b : -1;
}

// The row shift h that stage `next` (writing `to`) needs to follow stage `prev` (writing
// `from`), or nothing when they do not chain; `chain` holds the buffers written so far.
// readers[b]: the kernels that read buffer b; writers[b]: how many kernels write it.
std::optional<int> link(const poly::ProgramIR& program, const std::vector<Kernel>& kernels,
                        const std::vector<std::vector<std::size_t>>& readers,
                        const std::vector<int>& writers, std::size_t next, int from, int to,
                        const std::vector<int>& chain) {
    const poly::Buffer& a = program.buffers[static_cast<std::size_t>(from)];
    const poly::Buffer& b = program.buffers[static_cast<std::size_t>(to)];
    if (a.role != poly::BufferRole::Temporary || a.row_local > 0 || a.sizes != b.sizes ||
        std::find(program.outputs.begin(), program.outputs.end(), from) != program.outputs.end())
        return std::nullopt;
    for (std::size_t k : readers[static_cast<std::size_t>(from)])
        if (k != next) return std::nullopt;
    if (writers[static_cast<std::size_t>(from)] != 1) return std::nullopt;
    int shift = 0;
    bool reads_from = false;
    for (const Statement& st : kernels[next].statements) {
        std::int64_t row = *row_offset(st.write_access);
        for (const poly::Read& r : st.reads) {
            if (r.buffer < 0) continue;
            if (r.buffer != from) {
                if (std::find(chain.begin(), chain.end(), r.buffer) != chain.end())
                    return std::nullopt;
                continue;
            }
            std::optional<std::int64_t> c = row_offset(r.access);
            if (!c || std::llabs(*c - row) > kMaxStreamShift) return std::nullopt;
            shift = std::max(shift, static_cast<int>(std::llabs(*c - row)));
            reads_from = true;
        }
    }
    if (!reads_from) return std::nullopt;
    return shift;
}

int window_for(int shift) {
    int w = 1;
    while (w < 2 * shift + 1)
        w *= 2;
    return w;
}

// The bands a stream of `stages` stages over `rows` rows runs in: the most (a power of two, at
// most kMaxStreamBands) whose overlap, (bands - 1)(stages - 1)shift rows computed twice, stays
// within 1/32 of the stream's rows, with at least kMinBandRows rows per band; 0 for one band.
int band_count(std::int64_t rows, int stages, int shift) {
    const std::int64_t halo = std::int64_t{stages - 1} * shift;
    int bands = 1;
    while (bands * 2 <= kMaxStreamBands && (bands * 2 - 1) * halo * 32 <= rows &&
           rows / (bands * 2) >= kMinBandRows)
        bands *= 2;
    return bands > 1 ? bands : 0;
}

// `access` with a counter put before its first (it reads none of it).
AffineMap after_band(const AffineMap& access) {
    std::vector<int> axes(static_cast<std::size_t>(access.in_rank()));
    for (int k = 0; k < access.in_rank(); ++k)
        axes[static_cast<std::size_t>(k)] = k + 1;
    return access.compose(AffineMap::projection(access.in_rank() + 1, axes));
}

// `access` (over the banded counters) with the band, counter 0, put before its first output.
AffineMap to_band_window(const AffineMap& access) {
    const int in = access.in_rank(), out = access.out_rank();
    std::vector<std::int64_t> matrix(static_cast<std::size_t>(in) * (out + 1), 0);
    std::vector<std::int64_t> offsets(static_cast<std::size_t>(out) + 1, 0);
    matrix[0] = 1;
    for (int o = 0; o < out; ++o) {
        for (int k = 0; k < in; ++k)
            matrix[static_cast<std::size_t>((o + 1) * in + k)] = access.coeff(o, k);
        offsets[static_cast<std::size_t>(o) + 1] = access.offset(o);
    }
    return AffineMap(in, out + 1, std::move(matrix), std::move(offsets));
}

// Runs the stream `fused` (stages writing `chain`, the windows all but the last) in `bands`
// bands of rows: every statement gets the band as counter 0 and guards that keep its rows to
// the band's, widened by halo rows for the stages after it; each window gets a band axis, so
// a band's windows are its own and the band loop is parallel.
void band_stream(poly::ProgramIR& program, Kernel& fused, const std::vector<int>& chain, int shift,
                 int bands) {
    const int stages = static_cast<int>(chain.size());
    const std::int64_t rows = program.buffers[static_cast<std::size_t>(chain.back())].sizes[0];
    const std::int64_t band_rows = (rows + bands - 1) / bands;
    auto window = [&](int b) {
        return b >= 0 && std::find(chain.begin(), chain.end() - 1, b) != chain.end() - 1;
    };
    for (Statement& st : fused.statements) {
        const AffineMap row = after_band(st.write_access); // its output 0: the row written
        const std::int64_t halo = std::int64_t{stages - 1 - st.stream_stage} * shift;
        const int rank = row.in_rank();
        std::vector<std::int64_t> from(static_cast<std::size_t>(rank)),
            to(static_cast<std::size_t>(rank));
        for (int k = 0; k < rank; ++k) {
            from[static_cast<std::size_t>(k)] = row.coeff(0, k);
            to[static_cast<std::size_t>(k)] = -row.coeff(0, k);
        }
        from[0] -= band_rows; // row - band * band_rows + halo >= 0
        to[0] += band_rows;   // (band + 1) * band_rows + halo - 1 - row >= 0
        st.guards = {AffineMap(rank, 1, std::move(from), {row.offset(0) + halo}),
                     AffineMap(rank, 1, std::move(to), {band_rows + halo - 1 - row.offset(0)})};
        st.extents.insert(st.extents.begin(), bands);
        st.write_access = window(st.write_buffer) ? to_band_window(row) : row;
        for (poly::Read& r : st.reads) {
            r.access = after_band(r.access);
            if (window(r.buffer)) r.access = to_band_window(r.access);
        }
        st.stream_bands = bands;
    }
    for (int t = 0; t + 1 < stages; ++t) {
        poly::Buffer& b = program.buffers[static_cast<std::size_t>(chain[t])];
        b.sizes.insert(b.sizes.begin(), bands);
        b.window_bands = bands;
    }
}

} // namespace

void stream_stencils(poly::ProgramIR& program) {
    if (poly::has_loops(program)) return;   // a scan's loop reads what its statements do not show
    for (const Kernel& k : program.kernels) // a stream's rows and windows are static
        for (const Statement& st : k.statements)
            if (!st.param_bounds.empty()) return;
    std::vector<Kernel>& kernels = program.kernels;
    std::vector<std::vector<std::size_t>> readers(program.buffers.size());
    std::vector<int> writers(program.buffers.size(), 0);
    for (std::size_t k = 0; k < kernels.size(); ++k) {
        std::vector<bool> writes(program.buffers.size(), false);
        for (const Statement& st : kernels[k].statements) {
            writes[static_cast<std::size_t>(st.write_buffer)] = true;
            for (const Statement::TupleWrite& w : st.tuple_writes)
                writes[static_cast<std::size_t>(w.buffer)] = true;
            for (const poly::Read& r : st.reads)
                if (r.buffer >= 0) {
                    auto& v = readers[static_cast<std::size_t>(r.buffer)];
                    if (v.empty() || v.back() != k) v.push_back(k);
                }
        }
        for (std::size_t b = 0; b < writes.size(); ++b)
            writers[b] += writes[b] ? 1 : 0;
    }
    std::vector<Kernel> out;
    for (std::size_t i = 0; i < kernels.size();) {
        std::vector<int> chain;
        int shift = 0;
        std::size_t j = i;
        if (int b = stage_buffer(program, kernels[i]); b >= 0) {
            chain.push_back(b);
            while (j + 1 < kernels.size()) {
                int next = stage_buffer(program, kernels[j + 1]);
                if (next < 0 || std::find(chain.begin(), chain.end(), next) != chain.end()) break;
                std::optional<int> h =
                    link(program, kernels, readers, writers, j + 1, chain.back(), next, chain);
                if (!h) break;
                chain.push_back(next);
                shift = std::max(shift, *h);
                ++j;
            }
        }
        if (j == i) {
            out.push_back(std::move(kernels[i]));
            ++i;
            continue;
        }
        Kernel fused;
        for (std::size_t k = i; k <= j; ++k)
            for (Statement& st : kernels[k].statements) {
                st.stream_stage = static_cast<int>(k - i);
                st.stream_shift = shift;
                fused.statements.push_back(std::move(st));
            }
        for (std::size_t t = 0; t + 1 < chain.size(); ++t)
            program.buffers[static_cast<std::size_t>(chain[t])].row_window = window_for(shift);
        const std::int64_t rows = program.buffers[static_cast<std::size_t>(chain.back())].sizes[0];
        if (int bands = band_count(rows, static_cast<int>(chain.size()), shift); bands > 0)
            band_stream(program, fused, chain, shift, bands);
        out.push_back(std::move(fused));
        i = j + 1;
    }
    for (std::size_t k = 0; k < out.size(); ++k)
        out[k].name = "k" + std::to_string(k);
    kernels = std::move(out);
}

} // namespace hedra::sched
