// The contraction's shared-memory staging (cuda_contraction.hpp): which reads are staged and
// in what layout (counter-major for the operands along M or N), double buffering, the staging
// loops (direct, or prefetched into registers; 16-byte global loads where aligned) and the
// register fragments the fold reads.
#include <cstdlib>

#include "backends/common/c_expr.hpp"
#include "backends/cuda/cuda_contraction.hpp"

namespace hedra::backend::cuda {

std::string lin(const std::vector<std::pair<std::int64_t, std::string>>& terms,
                std::int64_t constant) {
    std::string s;
    for (const auto& [k, v] : terms) {
        if (k == 0) continue;
        if (!s.empty()) s += " + ";
        s += (k == 1 ? "" : "(" + std::to_string(k) + ") * ") + "(" + v + ")";
    }
    if (constant != 0 || s.empty()) s += (s.empty() ? "" : " + ") + std::to_string(constant);
    return s;
}

void Contraction::stage(std::size_t limit) {
    std::size_t used = 0;
    for (std::size_t q = 0; q < u_.reads.size(); ++q) {
        const poly::Read& r = u_.reads[q];
        if (r.buffer < 0 || r.access.out_rank() == 0) continue;
        if (depends(r, m_) && depends(r, n_)) continue; // no reuse across the block
        Staged s;
        s.read = static_cast<int>(q);
        int rank = r.access.out_rank();
        for (int row = 0; row < rank; ++row) {
            std::int64_t h = 1;
            for (std::size_t c = 0; c < tile_.size(); ++c)
                h += std::llabs(r.access.coeff(row, int(c))) * (tile_[c] - 1);
            s.hull.push_back(h);
        }
        find_vector_axis(r, s);
        find_load_width(r, s);
        // Shared layout: the buffer's axes in order, the vector axis moved innermost.
        std::vector<int> order;
        for (int row = 0; row < rank; ++row)
            if (row != s.vector_row) order.push_back(row);
        if (s.vector_row >= 0) order.push_back(s.vector_row);
        std::int64_t inner = s.hull[static_cast<std::size_t>(order.back())], padded = inner;
        if (s.vector_row >= 0) {
            // 16-byte rows; a pitch of 4 mod 32 words keeps the transposed stores of the
            // staging loop (consecutive threads walk the other axis) free of bank conflicts.
            padded = (inner + 3) / 4 * 4;
            if (rank >= 2 && padded % 32 == 0) padded += 4;
        } else if (rank >= 2 && inner % 2 == 0) {
            ++padded; // odd row pitch: no bank conflicts
        }
        s.pitch.assign(s.hull.size(), 1);
        std::int64_t stride = padded;
        for (std::size_t k = order.size() - 1; k-- > 0;) {
            s.pitch[static_cast<std::size_t>(order[k])] = stride;
            stride *= s.hull[static_cast<std::size_t>(order[k])];
        }
        s.elements = product(s.hull);
        s.stored = stride;
        std::size_t bytes =
            static_cast<std::size_t>(s.stored) * dtype_size(b_.buffer_dtype(r.buffer));
        if (used + bytes > limit) continue;
        used += bytes;
        s.name = "hd_s" + std::to_string(staged_.size());
        staged_.push_back(std::move(s));
    }
    // Double buffering (one __syncthreads per chunk; the next chunk's global loads are in
    // flight while this one is folded) when twice the staged bytes fit and the prefetched
    // elements fit in a few registers per thread.
    std::int64_t registers = 0;
    for (const Staged& st : staged_)
        registers += ceil_div(st.elements / st.load_width, threads()) * st.load_width;
    double_ = !staged_.empty() && 2 * used <= limit && registers <= 32;
    shared_bytes_ = used * (double_ ? 2 : 1);
}

std::string Contraction::local_offset(const std::string& index, const std::string& thread,
                                      std::int64_t threads, std::int64_t v) {
    if (v == 1) return thread + " + " + index + " * " + std::to_string(threads);
    std::string vs = std::to_string(v);
    return "(" + index + " / " + vs + ") * " + std::to_string(threads * v) + " + " + thread +
           " * " + vs + " + " + index + " % " + vs;
}

void Contraction::find_vector_axis(const poly::Read& r, Staged& s) const {
    int v = depends(r, m_) ? m_ : n_;
    if (depends(r, m_) == depends(r, n_)) return;
    int found = -1;
    for (int row = 0; row < r.access.out_rank(); ++row) {
        if (r.access.coeff(row, v) == 0) continue;
        if (found >= 0 || r.access.coeff(row, v) != 1) return;
        for (std::size_t c = 0; c < tile_.size(); ++c)
            if (int(c) != v && tile_[c] > 1 && r.access.coeff(row, int(c)) != 0) return;
        found = row;
    }
    s.vector_counter = v;
    s.vector_row = found;
}

std::int64_t Contraction::padded_extent(int c) const {
    return is_z(c) ? f_.extents[c] : ceil_div(f_.extents[c], tile_[c]) * tile_[c];
}

void Contraction::find_load_width(const poly::Read& r, Staged& s) const {
    const std::vector<std::int64_t>& sizes = b_.buffer_sizes(r.buffer);
    int rank = r.access.out_rank();
    s.in_bounds = true;
    for (int row = 0; row < rank; ++row) {
        std::int64_t lo = r.access.offset(row), hi = lo;
        for (std::size_t c = 0; c < tile_.size(); ++c) {
            std::int64_t a = r.access.coeff(row, int(c)), top = padded_extent(int(c)) - 1;
            (a > 0 ? hi : lo) += a * top;
        }
        s.in_bounds = s.in_bounds && lo >= 0 && hi < sizes[static_cast<std::size_t>(row)];
    }
    DType dt = b_.buffer_dtype(r.buffer);
    int last = rank - 1;
    bool aligned = s.in_bounds && (dt == DType::F32 || dt == DType::I32) &&
                   s.hull.back() % 4 == 0 && r.access.offset(last) % 4 == 0 &&
                   (rank == 1 || sizes.back() % 4 == 0);
    for (std::size_t c = 0; c < tile_.size() && aligned; ++c) {
        std::int64_t a = r.access.coeff(last, int(c));
        aligned = a >= 0 && (a * (is_z(int(c)) ? 1 : tile_[c])) % 4 == 0;
    }
    s.load_width = aligned ? 4 : 1;
}

bool Contraction::contiguous_in_shared(const Staged& s) const {
    // The four elements of a 16-byte load are adjacent in shared memory, and every group
    // starts on a 16-byte boundary: the other axes' pitches and the buffer (one of two when
    // double buffered) are multiples of four elements.
    if (s.load_width != 4 || s.pitch.back() != 1 || s.stored % 4 != 0) return false;
    for (std::size_t row = 0; row + 1 < s.pitch.size(); ++row)
        if (s.pitch[row] % 4 != 0) return false;
    return true;
}

void Contraction::print_fragment(const Staged& s, const std::string& in, std::string& out) const {
    const poly::Read& r = u_.reads[s.read];
    DType dt = b_.buffer_dtype(r.buffer);
    bool is_m = s.vector_counter == m_;
    std::int64_t per = is_m ? t_.tm : t_.tn, threads = is_m ? t_.ty() : t_.tx();
    std::int64_t v = vector_width(per);
    std::string st = c_storage_type(dt), f = fragment_name(s);
    std::string base = shared_offset(s, s.vector_counter);
    out += in + st + " " + f + "[" + std::to_string(per) + "];\n";
    out += in + "#pragma unroll\n" + in + "for (int hd_g = 0; hd_g < " + std::to_string(per / v) +
           "; ++hd_g) {\n";
    std::string at = base + " + hd_g * " + std::to_string(threads * v) + " + " +
                     (is_m ? "hd_ty" : "hd_tx") + " * " + std::to_string(v);
    std::string vt = dt == DType::F32 ? "float" : dt == DType::I32 ? "int" : "";
    const char* lanes[] = {"x", "y", "z", "w"};
    if (v > 1 && !vt.empty()) {
        std::string vec = vt + std::to_string(v);
        out += in + "    const " + vec + " hd_w = *reinterpret_cast<const " + vec + "*>(&" +
               shared_array(s, "hd_buf") + "[" + at + "]);\n";
        for (std::int64_t k = 0; k < v; ++k)
            out += in + "    " + f + "[hd_g * " + std::to_string(v) + " + " + std::to_string(k) +
                   "] = hd_w." + lanes[k] + ";\n";
    } else {
        for (std::int64_t k = 0; k < v; ++k)
            out += in + "    " + f + "[hd_g * " + std::to_string(v) + " + " + std::to_string(k) +
                   "] = " + shared_array(s, "hd_buf") + "[" + at + " + " + std::to_string(k) +
                   "];\n";
    }
    out += in + "}\n";
}

std::string Contraction::shared_offset(const Staged& s, int skip) const {
    const poly::Read& r = u_.reads[s.read];
    std::vector<std::pair<std::int64_t, std::string>> terms;
    std::int64_t constant = 0;
    for (std::size_t c = 0; c < tile_.size(); ++c) {
        std::int64_t k = 0;
        for (int row = 0; row < r.access.out_rank(); ++row) {
            std::int64_t a = r.access.coeff(row, int(c));
            k += s.pitch[row] * a;
            if (a < 0) constant += s.pitch[row] * -a * (tile_[c] - 1);
        }
        if (tile_[c] > 1 && int(c) != skip) terms.push_back({k, local_[c]});
    }
    return lin(terms, constant);
}

std::string Contraction::shared_read(const Staged& s) const {
    const poly::Read& r = u_.reads[s.read];
    std::string e =
        s.vector_row >= 0
            ? fragment_name(s) + "[" + (s.vector_counter == m_ ? "hd_tm" : "hd_tn") + "]"
            : shared_array(s, "hd_buf") + "[" + shared_offset(s, -1) + "]";
    return b_.buffer_dtype(r.buffer) == DType::Bool ? "(" + e + " != 0)" : e;
}

void Contraction::print_stage(const Staged& s, StageMode mode, const std::string& target,
                              const std::string& in, std::string& out) const {
    const poly::Read& r = u_.reads[s.read];
    const std::vector<std::int64_t>& sizes = b_.buffer_sizes(r.buffer);
    int rank = r.access.out_rank();
    std::int64_t w = s.load_width, groups = s.elements / w;
    std::string in2 = in + "    ", cond, global, place;
    if (mode == StageMode::Direct) {
        out += in + "for (int hd_e = hd_tid; hd_e < " + std::to_string(groups) +
               "; hd_e += " + std::to_string(threads()) + ") {\n";
    } else {
        out += in + "#pragma unroll\n" + in + "for (int hd_i = 0; hd_i < " +
               std::to_string(ceil_div(groups, threads())) + "; ++hd_i) {\n";
        out += in2 + "const int hd_e = hd_tid + hd_i * " + std::to_string(threads()) + ";\n";
        if (groups % threads() != 0)
            out += in2 + "if (hd_e >= " + std::to_string(groups) + ") break;\n";
    }
    out += in2 + "int hd_h = hd_e;\n";
    std::int64_t stride = 1;
    for (int row = rank - 1; row >= 0; --row) {
        std::string h = "hd_h" + std::to_string(row), p = "hd_p" + std::to_string(row);
        std::int64_t extent = row == rank - 1 ? s.hull[row] / w : s.hull[row];
        out += in2 + "const int " + h + " = hd_h % " + std::to_string(extent) +
               (row == rank - 1 && w > 1 ? " * " + std::to_string(w) : "") +
               "; hd_h /= " + std::to_string(extent) + ";\n";
        place += std::string(place.empty() ? "" : " + ") + h + " * " + std::to_string(s.pitch[row]);
        if (mode == StageMode::Store) continue;
        std::string origin = int_text(r.access.offset(row));
        for (std::size_t c = 0; c < tile_.size(); ++c) {
            std::int64_t a = r.access.coeff(row, int(c));
            if (a != 0) origin += " + " + int_text(a) + " * " + base(int(c), a < 0);
        }
        out += in2 + "const " + index_type() + " " + p + " = " + origin + " + " + h + ";\n";
        cond += std::string(cond.empty() ? "" : " && ") + p + " >= " + int_text(0) + " && " + p +
                " < " + int_text(sizes[row]);
        global += std::string(global.empty() ? "" : " + ") + p + " * " + int_text(stride);
        stride *= sizes[row];
    }
    out += in2 + "(void)hd_h;\n";
    std::string st = c_storage_type(b_.buffer_dtype(r.buffer)), regs = registers_name(s);
    std::string at = b_.buffer_name(r.buffer) + "[" + global + "]";
    if (w == 1) {
        std::string value = s.in_bounds ? at : "(" + cond + ") ? " + at + " : (" + st + ")0";
        if (mode == StageMode::Direct)
            out += in2 + target + "[" + place + "] = " + value + ";\n";
        else if (mode == StageMode::Load)
            out += in2 + regs + "[hd_i] = " + value + ";\n";
        else
            out += in2 + target + "[" + place + "] = " + regs + "[hd_i];\n";
    } else {
        // Four consecutive elements of the buffer's last axis: one 16-byte load; in shared
        // memory they are pitch[last] apart (1, or a row of the transposed layout).
        std::string vec = st == "float" ? "float4" : "int4";
        const char* lanes[] = {"x", "y", "z", "w"};
        std::string step = std::to_string(s.pitch[static_cast<std::size_t>(rank - 1)]);
        if (mode != StageMode::Store)
            out += in2 + "const " + vec + " hd_v = *reinterpret_cast<const " + vec + "*>(&" + at +
                   ");\n";
        if (mode != StageMode::Load && contiguous_in_shared(s)) {
            // Stored as loaded: one 16-byte store (four scalar ones hit the same banks when
            // consecutive threads are 4 words apart).
            std::string value = "hd_v";
            if (mode == StageMode::Store)
                value = vec + "{" + regs + "[hd_i * 4], " + regs + "[hd_i * 4 + 1], " + regs +
                        "[hd_i * 4 + 2], " + regs + "[hd_i * 4 + 3]}";
            out += in2 + "*reinterpret_cast<" + vec + "*>(&" + target + "[" + place +
                   "]) = " + value + ";\n";
            out += in + "}\n";
            return;
        }
        for (int j = 0; j < 4; ++j) {
            std::string lane = "hd_v." + std::string(lanes[j]);
            std::string reg = regs + "[hd_i * 4 + " + std::to_string(j) + "]";
            std::string dst = target + "[" + place + " + " + std::to_string(j) + " * " + step + "]";
            if (mode == StageMode::Direct)
                out += in2 + dst + " = " + lane + ";\n";
            else if (mode == StageMode::Load)
                out += in2 + reg + " = " + lane + ";\n";
            else
                out += in2 + dst + " = " + reg + ";\n";
        }
    }
    out += in + "}\n";
}

} // namespace hedra::backend::cuda
