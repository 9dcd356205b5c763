// The contraction's shared-memory staging as gpu.stage laid it out (which reads, their hulls,
// pitches and load widths, double buffering): the staging loops (direct, or prefetched into
// registers; 16-byte global loads where aligned) and the register fragments the fold reads.
#include <cstdlib>

#include "backends/common/c_expr.hpp"
#include "backends/cuda/render/cuda_contraction.hpp"

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

std::string Contraction::local_offset(const std::string& index, const std::string& thread,
                                      std::int64_t threads, std::int64_t v) {
    if (v == 1) return thread + " + " + index + " * " + std::to_string(threads);
    std::string vs = std::to_string(v);
    return "(" + index + " / " + vs + ") * " + std::to_string(threads * v) + " + " + thread +
           " * " + vs + " + " + index + " % " + vs;
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
