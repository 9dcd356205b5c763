// The map template: one thread per point of an Assign statement's box, the box flattened
// (last counter fastest, so consecutive threads write consecutive elements of a row-major
// result) and walked grid-stride, so any size fits the grid limits. Consecutive Assigns of a
// kernel share one launch, the flat index running over their boxes one after the other, when
// no one reads what another writes, and pieces of one buffer write disjoint elements (a
// pooling gradient's strided pieces) or a later piece's elements form a box that an earlier
// piece tests and leaves to it (a pad's zeros around the interior, a Jacobi sweep's copy
// around the new interior: later wins, as when launched in order).
#include <algorithm>

#include "backends/cuda/cuda_kernels.hpp"

namespace hedra::backend::cuda {

namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = 1 << 20;

// The values o + a·i, 0 <= i < e, of one output row of a write whose row depends on one
// counter at most; false when the row mixes counters (no simple test then).
struct Progression {
    std::int64_t offset = 0, step = 0, count = 1;
};
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

bool in_progression(std::int64_t x, const Progression& p) {
    if (p.step == 0) return x == p.offset;
    std::int64_t d = x - p.offset;
    return d % p.step == 0 && d / p.step >= 0 && d / p.step < p.count;
}

// Whether two Assigns provably write disjoint elements: along some buffer axis their values
// never meet (each row a progression of at most 4096 terms, checked term by term).
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

// Whether `t` writes a product of progressions (each buffer axis walked by one counter at
// most, no counter on two axes), so whether it writes an element can be tested per axis.
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

// C condition: the element `s` writes at its counters i0.. is one that `t` (a box_write)
// writes too.
std::string covered_by(const poly::Statement& s, const poly::Statement& t) {
    std::string cond;
    for (int row = 0; row < s.write_access.out_rank(); ++row) {
        Progression p;
        row_progression(t, row, p);
        // d = (s's coordinate on this axis) - (t's first one there)
        std::string d;
        for (int c = 0; c < s.write_access.in_rank(); ++c)
            if (std::int64_t a = s.write_access.coeff(row, c); a != 0)
                d += (d.empty() ? "" : " + ") + (a == 1 ? "" : int_text(a) + " * ") + "i" +
                     std::to_string(c);
        std::int64_t shift = s.write_access.offset(row) - p.offset;
        if (d.empty())
            d = int_text(shift);
        else if (shift != 0)
            d += (shift > 0 ? " + " : " - ") + int_text(shift < 0 ? -shift : shift);
        d = "(" + d + ")";
        std::string term;
        if (p.step == 0)
            term = d + " == 0";
        else if (p.step == 1)
            term = d + " >= 0 && " + d + " < " + int_text(p.count);
        else
            term = d + " % " + int_text(p.step) + " == 0 && " + d + " / " + int_text(p.step) +
                   " >= 0 && " + d + " / " + int_text(p.step) + " < " + int_text(p.count);
        cond += (cond.empty() ? "" : " && ") + ("(" + term + ")");
    }
    return cond.empty() ? "true" : cond;
}

bool reads_buffer(const poly::Statement& st, int buffer) {
    for (const poly::Read& r : st.reads)
        if (r.buffer == buffer) return true;
    return false;
}

} // namespace

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

void emit_maps(SourceBuilder& b, int kernel, const std::vector<int>& statements) {
    const poly::Kernel& k = b.program.kernels.at(kernel);
    std::int64_t total = 0;
    for (int s : statements)
        total += product(k.statements.at(s).extents);
    if (total == 0) return;
    std::string body = "    const long hd_stride = (long)gridDim.x * blockDim.x;\n";
    body += "    for (long hd_flat = (long)blockIdx.x * blockDim.x + threadIdx.x; hd_flat < " +
            int_text(total) + "; hd_flat += hd_stride) {\n";
    KernelParams params;
    std::int64_t begin = 0;
    bool first = true;
    for (std::size_t j = 0; j < statements.size(); ++j) {
        const poly::Statement& st = k.statements.at(statements[j]);
        std::int64_t n = product(st.extents);
        if (n == 0) continue;
        std::string in = "        ";
        if (statements.size() > 1) {
            // This statement's part of the flat range.
            body +=
                in + (first ? "" : "} else ") + "if (hd_flat < " + int_text(begin + n) + ") {\n";
            in += "    ";
            body += in + "const long hd_p = hd_flat - " + int_text(begin) + ";\n";
        } else {
            body += in + "const long hd_p = hd_flat;\n";
        }
        std::vector<std::string> counters;
        for (std::size_t d = 0; d < st.extents.size(); ++d)
            counters.push_back("i" + std::to_string(d));
        print_unflatten("hd_p", st.extents, counters, in, body);
        // An element a later statement of the launch writes is left to it (later wins).
        std::string skip;
        for (std::size_t q = j + 1; q < statements.size(); ++q) {
            const poly::Statement& later = k.statements.at(statements[q]);
            if (!disjoint_writes(st, later))
                skip += (skip.empty() ? "" : " || ") + ("(" + covered_by(st, later) + ")");
        }
        if (!skip.empty()) {
            body += in + "if (!(" + skip + ")) {\n";
            in += "    ";
        }
        std::string value = print_value(b, st, in, "t", body);
        DType t = b.buffer_dtype(st.write_buffer);
        body += in + b.buffer_name(st.write_buffer) + "[" +
                linear_index(b, st.write_buffer, st.write_access) + "] = " + store_value(t, value) +
                ";\n";
        if (!skip.empty()) {
            in.resize(in.size() - 4);
            body += in + "}\n";
        }
        for (int buffer : statement_params(st).buffers)
            params.add(buffer, buffer == st.write_buffer);
        begin += n;
        first = false;
    }
    if (statements.size() > 1) body += "        }\n";
    body += "    }\n";
    CudaLaunch launch;
    launch.function = b.next_name(kernel);
    launch.strategy = "map";
    launch.kernel = kernel;
    std::int64_t threads = std::min<std::int64_t>(kThreads, ceil_div(total, 32) * 32);
    launch.block = {static_cast<unsigned>(threads), 1, 1};
    launch.grid = {static_cast<unsigned>(std::min(ceil_div(total, threads), kMaxBlocks)), 1, 1};
    launch.buffers = params.buffers;
    emit_kernel(b, launch.function, params, kThreads, body);
    b.launches.push_back(std::move(launch));
}

} // namespace hedra::backend::cuda
