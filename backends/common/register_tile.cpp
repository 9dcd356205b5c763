// Register-tiled contraction micro-kernels (see register_tile.hpp).
#include "backends/common/register_tile.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <unordered_map>
#include <vector>

#include "backends/common/c_access.hpp"
#include "backends/common/c_expr.hpp"
#include "core/scalar_dag.hpp"
#include "scheduler/ast_access.hpp"
#include "scheduler/contraction_schedule.hpp"
#include "scheduler/loop_coalesce.hpp"
#include "scheduler/register_tile.hpp"

namespace hedra::backend {
namespace {

using sched::AstExpr;
using sched::AstNode;
using Nest = sched::RegisterTileNest;
using ReadPlan = sched::RegisterTile::Read;

std::string pad_of(int indent) {
    return std::string(static_cast<std::size_t>(indent) * 4, ' ');
}

// `e` printed on the vector types (vector_expression holds), its inputs printed as given.
// A shared node is printed at each use: vector_expression bounds the size that gives.
std::string vector_value(const ScalarExpr& e, const std::vector<std::string>& inputs) {
    std::unordered_map<const ScalarNode*, std::string> text;
    for (const ScalarExpr& x : topological_order(e)) {
        auto arg = [&](int i) { return text.at(x->args[static_cast<std::size_t>(i)].get()); };
        std::string t;
        if (x->op == ScalarOp::Input)
            t = inputs.at(static_cast<std::size_t>(x->ivalue));
        else if (x->op == ScalarOp::Const)
            t = c_literal(*x);
        else if (x->op == ScalarOp::Neg)
            t = "(-" + arg(0) + ")";
        else
            t = "(" + arg(0) +
                (x->op == ScalarOp::Add   ? " + "
                 : x->op == ScalarOp::Sub ? " - "
                 : x->op == ScalarOp::Div ? " / "
                                          : " * ") +
                arg(1) + ")";
        text.emplace(x.get(), std::move(t));
    }
    return text.at(e.get());
}

// The inclusive upper bound of a canonical loop (`it <= e` or `it < e`), printed.
std::string upper_bound(const AstNode& loop) {
    const AstExpr& c = loop.cond;
    if (c.op == AstExpr::Op::Le) return c_index_expr(c.args[1]);
    return "(" + c_index_expr(c.args[1]) + " - 1L)";
}

class Printer {
public:
    Printer(const RegisterTileContext& cx, const Nest& n, const sched::RegisterTile& tile)
        : cx_(cx), n_(n), st_(cx.kernel.statements.at(n.call->statement)),
          out_buf_(cx.program.buffers.at(st_.write_buffer)), reads_(tile.reads),
          ua_(upper_bound(*n.a)), uv_(upper_bound(*n.v)) {
        DType t = out_buf_.dtype;
        lanes_ = tile.lanes;
        width_ = 2 * lanes_;
        rows_ = tile.rows;
        vtype_ = std::string(t == DType::F32 ? "hd_vf" : "hd_vd") +
                 (tile.vector_bytes == cx.vector_bytes ? "" : "32");
        scalar_ = c_value_type(t);
        packs_ = tile.packs;
        pack_width_ = tile.pack_width;
        pack_rows_ = tile.pack_rows;
        pack_level_ = tile.pack_level;
        row_packs_ = tile.row_packs;
        row_pack_rows_ = tile.row_pack_rows;
        row_pack_blocks_ = tile.row_pack_blocks;
        if (n.epi_loop) {
            epi_call_ = &n.epi_loop->body[0];
            epi_ = &cx.kernel.statements.at(epi_call_->statement);
            epi_stride_ = tile.epilogue_stride;
            epi_vector_ = tile.epilogue_vector;
            epi_reads_vector_ = tile.epilogue_reads_vector;
            result_dead_ = tile.result_dead;
        }
    }

    // Blocks of R rows (R = rows_, as many as the registers allow, up to 6) run over the columns
    // in steps of 2 vectors, then of 1 vector; leftover columns, and rows past the last block
    // of R (in blocks of 4, 2, 1), run in the original loop order.
    void print(int indent, std::string& out) {
        std::string p = pad_of(indent);
        out += p + "{ // register tile: " + std::to_string(rows_) + " x " + std::to_string(width_) +
               "\n";
        if (!prologue_done_) print_prologue(indent + 1, {}, out);
        out += p + "    long hd_r = " + c_index_expr(n_.a->init) + ";\n";
        // With constant bounds only the blocks that run are printed (less for clang to compile).
        const std::int64_t trip_a = sched::constant_trip(*n_.a);
        const std::int64_t trip_v = sched::constant_trip(*n_.v);
        std::vector<int> row_counts;
        if (trip_a <= 0 || trip_a >= rows_) row_counts.push_back(rows_);
        // The rows past the last block of R: one block of each power of two below R, largest
        // first, which covers up to R - 1 rows.
        std::int64_t left = trip_a > 0 ? trip_a % rows_ : -1;
        int top = 1;
        while (top * 2 < rows_)
            top *= 2;
        for (int r = top; r >= 1; r /= 2)
            if (r < rows_ && (left < 0 || left >= r)) {
                row_counts.push_back(r);
                if (left >= r) left -= r;
            }
        const bool two = trip_v <= 0 || trip_v >= width_;
        const bool one = trip_v <= 0 || trip_v % width_ >= lanes_;
        const bool rest = trip_v <= 0 || trip_v % lanes_ != 0;
        for (int rows : row_counts) {
            std::string last = "hd_r + " + std::to_string(rows - 1);
            if (rows == rows_)
                out += p + "    for (; " + last + " <= " + ua_ +
                       "; hd_r += " + std::to_string(rows) + ") {\n";
            else
                out += p + "    if (" + last + " <= " + ua_ + ") {\n";
            out += p + "        long hd_c = hd_lv;\n";
            if (two) {
                out += p + "        for (; hd_c + " + std::to_string(width_ - 1) +
                       " <= hd_uv; hd_c += " + std::to_string(width_) + ") {\n";
                print_block(indent + 3, rows, 2, out);
                out += p + "        }\n";
            }
            if (one) {
                out += p + "        if (hd_c + " + std::to_string(lanes_ - 1) + " <= hd_uv) {\n";
                print_block(indent + 3, rows, 1, out);
                out += p + "            hd_c += " + std::to_string(lanes_) + ";\n";
                out += p + "        }\n";
            }
            if (rest) print_rest(indent + 2, rows, out);
            out += p + "        (void)hd_c;\n";
            if (rows != rows_) out += p + "        hd_r += " + std::to_string(rows) + ";\n";
            out += p + "    }\n";
        }
        out += p + "}\n";
    }

    std::size_t pack_level() const { return pack_level_; }

    // V's bounds and the packed panels; `hoisted` are the loops above A that this is printed
    // outside of (bound to their first value while packing: the panels do not depend on them).
    void print_prologue(int indent, std::vector<const AstNode*> hoisted, std::string& out) {
        prologue_done_ = true;
        hoisted_ = std::move(hoisted);
        out += pad_of(indent) + "const long hd_lv = " + c_index_expr(n_.v->init) +
               ", hd_uv = " + uv_ + ";\n";
        print_packs(indent, out);
    }

    bool has_row_packs() const { return row_packs_ > 0; }

    // Declares and fills the row panels: for each full block of R rows of A, K x R values, one
    // row of R per K step (the order print_block reads them in). Printed above the loops over
    // V tiles, with those loops bound to their first iteration (the copy does not use them).
    // Panel by panel, so the writes run in sequence and each K step reads R neighbouring values
    // (with one loop over all rows, every element paid a division and a remainder by R).
    void print_row_packs(int indent, std::string& out) {
        row_pack_base_ = cx_.next_name;
        cx_.next_name += row_packs_;
        std::string p = pad_of(indent);
        out += p + "const long hd_alo = " + c_index_expr(n_.a->init) + ", hd_aup = " + ua_ + ";\n";
        for (std::size_t r = 0; r < reads_.size(); ++r)
            if (reads_[r].row_pack >= 0)
                out += p + scalar_ + " " + row_pack_name(reads_[r].row_pack) + "[" +
                       std::to_string(row_pack_blocks_ * row_pack_rows_ * rows_) +
                       "] __attribute__((aligned(64)));\n";
        const std::string rr = std::to_string(rows_);
        out += p + "for (long hd_b = 0; hd_b < (hd_aup - hd_alo + 1) / " + rr + "; ++hd_b) {\n";
        for (const AstNode* l : n_.outer)
            out += p + "    const long " + l->iterator + " = " + c_index_expr(l->init) + ";\n";
        out += p + "    long hd_pi = 0;\n";
        int depth = 1;
        for (const AstNode* k : n_.ks)
            out += pad_of(indent + depth++) + "for (long " + k->iterator + " = " +
                   c_index_expr(k->init) + "; " + c_index_expr(k->cond) + "; ++" + k->iterator +
                   ") {\n";
        std::string q = pad_of(indent + depth);
        out += q + "#pragma clang loop unroll(full)\n";
        out += q + "for (long hd_q = 0; hd_q < " + rr + "; ++hd_q) {\n";
        out +=
            bind(q + "    ", "hd_alo + hd_b * " + rr + "L + hd_q", c_index_expr(n_.v->init), false);
        for (std::size_t r = 0; r < reads_.size(); ++r)
            if (reads_[r].row_pack >= 0)
                out += q + "    " + row_pack_name(reads_[r].row_pack) + "[hd_b * " +
                       std::to_string(row_pack_rows_ * rows_) + "L + hd_pi * " + rr +
                       "L + hd_q] = " +
                       c_element(cx_.program.buffers[st_.reads[r].buffer], st_.reads[r].access) +
                       ";\n";
        out += q + "}\n" + q + "++hd_pi;\n";
        for (int d = depth - 1; d >= 1; --d)
            out += pad_of(indent + d) + "}\n";
        out += p + "}\n";
    }

private:
    std::string row_pack_name(int k) const { return "hd_ap" + std::to_string(row_pack_base_ + k); }

    // The epilogue of rows hd_r .. hd_r + rows - 1 at `halves` vectors of columns from hd_c.
    void print_epilogue(int indent, int rows, int halves, std::string& out) {
        std::string p = pad_of(indent), q = p + "    ";
        const std::string& it = n_.epi_loop->iterator;
        for (int r = 0; r < rows; ++r) {
            // Rounded as the map's own kernel rounds it: one operation at a time.
            out += p + "{\n" + q + "#pragma clang fp contract(off)\n" + q + "const long " +
                   n_.a->iterator + " = hd_r + " + std::to_string(r) + "L;\n";
            if (!epi_vector_) {
                out += q + "for (long " + it + " = hd_c; " + it + " < hd_c + " +
                       std::to_string(halves * lanes_) + "L; ++" + it + ") {\n";
                cx_.print_statement(*epi_call_, indent + 2, out);
                out += q + "}\n" + p + "}\n";
                continue;
            }
            out += q + "const long " + it + " = hd_c;\n" + c_counter_lines(*epi_call_, q);
            std::string m = c_element(cx_.program.buffers[epi_->write_buffer], epi_->write_access);
            for (int h = 0; h < halves; ++h) {
                std::vector<std::string> inputs;
                for (std::size_t k = 0; k < epi_->reads.size(); ++k) {
                    const poly::Read& rd = epi_->reads[k];
                    std::string e = c_element(cx_.program.buffers[rd.buffer], rd.access);
                    inputs.push_back(rd.buffer == st_.write_buffer ? acc(r, h)
                                     : epi_reads_vector_[k]        ? vector_at(e, h)
                                                                   : e);
                }
                out += store_strided(q, m, h, vector_value(epi_->value, inputs), epi_stride_);
            }
            out += p + "}\n";
        }
    }

    // `const long <iterator> = <value>;` for A, the K loops and V, then the counters.
    std::string bind(const std::string& p, const std::string& a, const std::string& v,
                     bool ks_at_start) const {
        std::string s = p + "const long " + n_.a->iterator + " = " + a + ";\n";
        if (ks_at_start)
            for (const AstNode* k : n_.ks)
                s += p + "const long " + k->iterator + " = " + c_index_expr(k->init) + ";\n";
        s += p + "const long " + n_.v->iterator + " = " + v + ";\n";
        return s + c_counter_lines(*n_.call, p);
    }

    std::string pack_name(int k) const { return "hd_pk" + std::to_string(name_base_ + k); }

    void print_packs(int indent, std::string& out) {
        name_base_ = cx_.next_name;
        cx_.next_name += packs_;
        if (packs_ == 0) return;
        std::string p = pad_of(indent);
        // One panel row per iteration of the K loops (hd_pi counts them, as in print_block).
        for (std::size_t r = 0; r < reads_.size(); ++r) {
            if (reads_[r].pack < 0) continue;
            const poly::Read& rd = st_.reads[r];
            std::string name = pack_name(reads_[r].pack);
            out += p + scalar_ + " " + name + "[" + std::to_string(pack_rows_ * pack_width_) +
                   "] __attribute__((aligned(64)));\n";
            const std::string store =
                name + "[hd_pi * " + std::to_string(pack_width_) +
                "L + (hd_j - hd_lv)] = " + c_element(cx_.program.buffers[rd.buffer], rd.access) +
                ";\n";
            // V innermost, or the K loops (where the source is usually contiguous) with each V
            // column filling its panel column, as the pass chose.
            const bool v_inner = reads_[r].pack_v_inner;
            out += p + "{\n";
            for (const AstNode* l : hoisted_)
                out += p + "    const long " + l->iterator + " = " + c_index_expr(l->init) + ";\n";
            int depth = 1;
            if (!v_inner)
                out +=
                    pad_of(indent + depth++) + "for (long hd_j = hd_lv; hd_j <= hd_uv; ++hd_j) {\n";
            out += pad_of(indent + depth) + "long hd_pi = 0;\n";
            for (const AstNode* k : n_.ks)
                out += pad_of(indent + depth++) + "for (long " + k->iterator + " = " +
                       c_index_expr(k->init) + "; " + c_index_expr(k->cond) + "; ++" + k->iterator +
                       ") {\n";
            std::string q = pad_of(indent + depth);
            if (v_inner) {
                out += q + "for (long hd_j = hd_lv; hd_j <= hd_uv; ++hd_j) {\n";
                out += bind(q + "    ", c_index_expr(n_.a->init), "hd_j", false);
                out += q + "    " + store + q + "}\n";
            } else {
                out += bind(q, c_index_expr(n_.a->init), "hd_j", false);
                out += q + store;
            }
            out += q + "++hd_pi;\n";
            for (int d = depth - 1; d >= 0; --d)
                out += pad_of(indent + d) + "}\n";
        }
    }

    std::string acc(int row, int half) const {
        return "hd_a" + std::to_string(row) + "_" + std::to_string(half);
    }

    // The `half`-th vector of C's columns at `element`, and its store: contiguous, or
    // gathered and scattered lane by lane when V is not C's stride-1 axis.
    std::string load_c(const std::string& element, int half) const {
        if (n_.c_stride == 1) return vector_at(element, half);
        std::string s = "(" + vtype_ + "){";
        for (int l = 0; l < lanes_; ++l)
            s += (l ? ", " : "") + std::string("(&") + element + ")[" +
                 std::to_string((half * lanes_ + l) * n_.c_stride) + "L]";
        return s + "}";
    }
    std::string store_c(const std::string& pad, const std::string& element, int half,
                        const std::string& value) const {
        return store_strided(pad, element, half, value, n_.c_stride);
    }
    std::string store_strided(const std::string& pad, const std::string& element, int half,
                              const std::string& value, std::int64_t stride) const {
        if (stride == 1)
            return pad + "*(" + vtype_ + "*)(&" + element + " + " + std::to_string(half * lanes_) +
                   ") = " + value + ";\n";
        std::string s = pad + "{\n" + pad + "    const " + vtype_ + " hd_e = " + value + ";\n";
        for (int l = 0; l < lanes_; ++l)
            s += pad + "    (&" + element + ")[" + std::to_string((half * lanes_ + l) * stride) +
                 "L] = hd_e[" + std::to_string(l) + "];\n";
        return s + pad + "}\n";
    }

    std::string vector_at(const std::string& element, int half) const {
        return "*(const " + vtype_ + "*)(&" + element + " + " + std::to_string(half * lanes_) + ")";
    }

    // One block of `rows` rows and `halves` vectors of columns at (hd_r, hd_c).
    void print_block(int indent, int rows, int halves, std::string& out) {
        std::string p = pad_of(indent), q = p + "    ";
        std::string c = c_element(out_buf_, st_.write_access);
        for (int r = 0; r < rows; ++r) {
            out += p + vtype_ + " " + acc(r, 0) + (halves > 1 ? ", " + acc(r, 1) : "") + ";\n" + p +
                   "{\n";
            out += bind(q, "hd_r + " + std::to_string(r) + "L", "hd_c", true);
            for (int h = 0; h < halves; ++h)
                out += q + acc(r, h) + " = (" + vtype_ + "){};\n";
            out += p + "}\n";
        }
        block_rows_ = rows;
        if (packs_ > 0 || row_packs_ > 0) out += p + "long hd_pi = 0;\n";
        int depth = 0;
        for (const AstNode* k : n_.ks) {
            out += pad_of(indent + depth) + "for (long " + k->iterator + " = " +
                   c_index_expr(k->init) + "; " + c_index_expr(k->cond) + "; ++" + k->iterator +
                   ") {\n";
            ++depth;
        }
        print_update(indent + depth, rows, halves, out);
        if (packs_ > 0 || row_packs_ > 0) out += pad_of(indent + depth) + "++hd_pi;\n";
        for (int d = depth - 1; d >= 0; --d)
            out += pad_of(indent + d) + "}\n";
        // The block's products are summed from zero and added to C once: C accumulates one
        // partial sum per K tile, not every product (blocked summation bounds the f32 error).
        for (int r = 0; r < rows && !n_.init_loop; ++r) {
            out += p + "{\n" + bind(q, "hd_r + " + std::to_string(r) + "L", "hd_c", true);
            for (int h = 0; h < halves; ++h)
                out += q + acc(r, h) + " = " + load_c(c, h) + " + " + acc(r, h) + ";\n";
            out += p + "}\n";
        }
        for (int r = 0; r < rows && !result_dead_; ++r) {
            out += p + "{\n" + bind(q, "hd_r + " + std::to_string(r) + "L", "hd_c", true);
            for (int h = 0; h < halves; ++h)
                out += store_c(q, c, h, acc(r, h));
            out += p + "}\n";
        }
        if (epi_) print_epilogue(indent, rows, halves, out);
    }

    std::string read_value(std::size_t r, int half, int row = 0) const {
        const poly::Read& rd = st_.reads[r];
        if (reads_[r].row_pack >= 0 && block_rows_ == rows_)
            return row_pack_name(reads_[r].row_pack) + "[(hd_r - hd_alo) / " +
                   std::to_string(rows_) + " * " + std::to_string(row_pack_rows_ * rows_) +
                   "L + hd_pi * " + std::to_string(rows_) + "L + " + std::to_string(row) + "]";
        std::string e = c_element(cx_.program.buffers[rd.buffer], rd.access);
        if (!reads_[r].vector) return e;
        if (reads_[r].pack >= 0)
            e = pack_name(reads_[r].pack) + "[hd_pi * " + std::to_string(pack_width_) +
                "L + (hd_c - hd_lv)]";
        return vector_at(e, half);
    }

    void print_update(int indent, int rows, int halves, std::string& out) {
        std::string p = pad_of(indent), q = p + "    ";
        out += p + "#pragma clang fp contract(fast)\n";
        std::vector<std::string> shared(reads_.size() * 2);
        out += p + "{\n" + bind(q, "hd_r", "hd_c", false);
        for (std::size_t r = 0; r < reads_.size(); ++r) {
            if (reads_[r].per_row) continue;
            for (int h = 0; h < (reads_[r].vector ? halves : 1); ++h) {
                shared[2 * r + h] = "hd_s" + std::to_string(r) + "_" + std::to_string(h);
                out += q + "const " + (reads_[r].vector ? vtype_ : scalar_) + " " +
                       shared[2 * r + h] + " = " + read_value(r, h) + ";\n";
            }
        }
        for (int row = 0; row < rows; ++row) {
            out +=
                q + "{\n" + bind(q + "    ", "hd_r + " + std::to_string(row) + "L", "hd_c", false);
            for (int h = 0; h < halves; ++h) {
                std::vector<std::string> inputs;
                for (std::size_t r = 0; r < reads_.size(); ++r) {
                    int hh = reads_[r].vector ? h : 0;
                    inputs.push_back(reads_[r].per_row ? read_value(r, hh, row)
                                                       : shared[2 * r + hh]);
                }
                out += q + "    " + acc(row, h) + " = " + acc(row, h) + " + " +
                       vector_value(st_.value, inputs) + ";\n";
            }
            out += q + "}\n";
        }
        out += p + "}\n";
    }

    // Rows hd_r .. hd_r + rows - 1 at the columns from hd_c on, in the original loop order.
    // Fewer columns than one vector are left: the loops over them are not vectorized (clang's
    // vectorized copies, with their runtime checks and remainders, cost compile time for no
    // speed: the MLP step's cold compile 1.16 -> 1.05 s).
    void print_rest(int indent, int rows, std::string& out) {
        std::string p = pad_of(indent);
        auto columns = [&](int at, const std::string& it) {
            out += pad_of(at) + "#pragma clang loop vectorize(disable)\n";
            out +=
                pad_of(at) + "for (long " + it + " = hd_c; " + it + " <= hd_uv; ++" + it + ") {\n";
        };
        out += p + "for (long " + n_.a->iterator + " = hd_r; " + n_.a->iterator + " < hd_r + " +
               std::to_string(rows) + "; ++" + n_.a->iterator + ") {\n";
        if (n_.init_loop) { // the columns' init, then their accumulation
            columns(indent + 1, n_.init_loop->iterator);
            cx_.print_statement(n_.init_loop->body[0], indent + 2, out);
            out += pad_of(indent + 1) + "}\n";
        }
        int depth = 1;
        for (const AstNode* k : n_.ks) {
            out += pad_of(indent + depth) + "for (long " + k->iterator + " = " +
                   c_index_expr(k->init) + "; " + c_index_expr(k->cond) + "; ++" + k->iterator +
                   ") {\n";
            ++depth;
        }
        columns(indent + depth, n_.v->iterator);
        cx_.print_statement(*n_.call, indent + depth + 1, out);
        for (int d = depth; d >= 1; --d)
            out += pad_of(indent + d) + "}\n";
        if (epi_) { // the columns' epilogue, once their sums are complete
            columns(indent + 1, n_.epi_loop->iterator);
            cx_.print_statement(*epi_call_, indent + 2, out);
            out += pad_of(indent + 1) + "}\n";
        }
        out += pad_of(indent) + "}\n";
    }

    const RegisterTileContext& cx_;
    const Nest& n_;
    const poly::Statement& st_;
    const poly::Buffer& out_buf_;
    std::vector<ReadPlan> reads_;
    std::string ua_, uv_; // A's and V's inclusive upper bounds
    int lanes_ = 0, width_ = 0, rows_ = 0;
    std::size_t pack_level_ = 0;
    std::string vtype_, scalar_;
    int packs_ = 0, name_base_ = 0;
    int row_packs_ = 0, row_pack_base_ = 0, block_rows_ = 0;
    std::int64_t row_pack_rows_ = 0, row_pack_blocks_ = 0;
    const poly::Statement* epi_ = nullptr; // the epilogue (Nest::epi_loop), if any
    const AstNode* epi_call_ = nullptr;
    std::int64_t epi_stride_ = 0;        // of V in the epilogue's written element
    bool epi_vector_ = false;            // printed on the accumulators
    std::vector<bool> epi_reads_vector_; // per epilogue read: a vector along V
    bool result_dead_ = false;           // only the epilogue reads the result
    bool prologue_done_ = false;
    std::vector<const AstNode*> hoisted_;
    std::int64_t pack_width_ = 0, pack_rows_ = 0;
};

} // namespace

bool print_register_tile(const RegisterTileContext& context, const AstNode& mark, int indent,
                         std::string& out) {
    if (!mark.register_tile) return false;
    std::optional<Nest> nest = sched::match_register_tile(context.program, context.kernel, mark);
    if (!nest) internal_error("register tile: the nest under its mark lost its form");
    Printer printer(context, *nest, *mark.register_tile);
    const std::size_t level = printer.pack_level();
    int depth = 0;
    if (printer.has_row_packs()) {
        out += pad_of(indent + depth++) + "{\n";
        printer.print_row_packs(indent + depth, out);
    }
    for (std::size_t i = 0; i < nest->outer.size(); ++i) {
        if (i == level) {
            out += pad_of(indent + depth++) + "{\n";
            printer.print_prologue(indent + depth,
                                   {nest->outer.begin() + static_cast<long>(i), nest->outer.end()},
                                   out);
        }
        const AstNode* l = nest->outer[i];
        out += pad_of(indent + depth) + "for (long " + l->iterator + " = " + c_index_expr(l->init) +
               "; " + c_index_expr(l->cond) + "; " + l->iterator + " += " + c_index_expr(l->inc) +
               ") {\n";
        ++depth;
    }
    printer.print(indent + depth, out);
    for (int d = depth - 1; d >= 0; --d)
        out += pad_of(indent + d) + "}\n";
    return true;
}

} // namespace hedra::backend
