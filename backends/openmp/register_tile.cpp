// Register-tiled contraction micro-kernels (see register_tile.hpp).
#include "backends/openmp/register_tile.hpp"

#include <optional>
#include <vector>

#include "backends/openmp/c_access.hpp"
#include "backends/openmp/c_expr.hpp"

namespace hedra::backend {
namespace {

using sched::AstExpr;
using sched::AstNode;

constexpr int kRows = 4;         // R: rows of A per block
constexpr int kVectorBytes = 32; // one AVX2 register
constexpr std::size_t kMaxPackBytes = 128 * 1024;

std::string pad_of(int indent) {
    return std::string(static_cast<std::size_t>(indent) * 4, ' ');
}

// The inclusive upper bound of a canonical loop (`it <= e` or `it < e`), or null.
std::optional<std::string> upper_bound(const AstNode& loop) {
    const AstExpr& c = loop.cond;
    if (c.kind != AstExpr::Kind::Op || c.args.size() != 2 || c.args[0].kind != AstExpr::Kind::Id ||
        c.args[0].name != loop.iterator)
        return std::nullopt;
    if (c.op == AstExpr::Op::Le) return c_index_expr(c.args[1]);
    if (c.op == AstExpr::Op::Lt) return "(" + c_index_expr(c.args[1]) + " - 1L)";
    return std::nullopt;
}

// A constant bound on the trip count of a canonical loop, from constants in its init (a
// number or a max with one) and its bound (a number or a min with one).
std::optional<std::int64_t> max_trip(const AstNode& loop) {
    auto constant_in = [](const AstExpr& e, AstExpr::Op combine) -> std::optional<std::int64_t> {
        if (e.kind == AstExpr::Kind::Int) return e.value;
        if (e.kind == AstExpr::Kind::Op && e.op == combine)
            for (const AstExpr& a : e.args)
                if (a.kind == AstExpr::Kind::Int) return a.value;
        return std::nullopt;
    };
    auto lo = constant_in(loop.init, AstExpr::Op::Max);
    if (loop.cond.kind != AstExpr::Kind::Op || loop.cond.args.size() != 2) return std::nullopt;
    auto hi = constant_in(loop.cond.args[1], AstExpr::Op::Min);
    if (!lo || !hi) return std::nullopt;
    std::int64_t trip = *hi - *lo + (loop.cond.op == AstExpr::Op::Le ? 1 : 0);
    return trip > 0 ? std::optional<std::int64_t>(trip) : std::nullopt;
}

bool vector_expression(const ScalarExpr& e, DType t) {
    if (e->dtype != t) return false;
    switch (e->op) {
    case ScalarOp::Input:
    case ScalarOp::Const:
        return true;
    case ScalarOp::Add:
    case ScalarOp::Sub:
    case ScalarOp::Mul:
    case ScalarOp::Neg:
        for (const ScalarExpr& a : e->args)
            if (!vector_expression(a, t)) return false;
        return true;
    default:
        return false;
    }
}

std::string vector_value(const ScalarExpr& e, const std::vector<std::string>& inputs) {
    switch (e->op) {
    case ScalarOp::Input:
        return inputs.at(static_cast<std::size_t>(e->ivalue));
    case ScalarOp::Const:
        return c_literal(*e);
    case ScalarOp::Neg:
        return "(-" + vector_value(e->args[0], inputs) + ")";
    default:
        break;
    }
    const char* op = e->op == ScalarOp::Add ? " + " : e->op == ScalarOp::Sub ? " - " : " * ";
    return "(" + vector_value(e->args[0], inputs) + op + vector_value(e->args[1], inputs) + ")";
}

struct ReadPlan {
    bool vector = false;  // runs along V (else one value per row and K step)
    bool per_row = false; // depends on A
    int pack = -1;        // packed panel number, or -1
};

struct Nest {
    std::vector<const AstNode*> outer; // loops above A, printed unchanged
    const AstNode* a = nullptr;
    std::vector<const AstNode*> ks;
    const AstNode* v = nullptr;
    const AstNode* call = nullptr;
    std::string ua, uv; // inclusive upper bounds
    std::int64_t trip_v = 0;
};

std::optional<Nest> match(const RegisterTileContext& cx, const AstNode& mark) {
    std::vector<const AstNode*> loops;
    const std::vector<AstNode>* body = &mark.body;
    while (body->size() == 1 && (*body)[0].kind == AstNode::Kind::For) {
        loops.push_back(&(*body)[0]);
        body = &(*body)[0].body;
    }
    if (body->size() != 1 || (*body)[0].kind != AstNode::Kind::Call || loops.size() < 3)
        return std::nullopt;
    Nest n;
    n.call = &(*body)[0];
    const poly::Statement& st = cx.kernel.statements.at(n.call->statement);
    const poly::Buffer& out = cx.program.buffers.at(st.write_buffer);
    if (st.kind != poly::StatementKind::Update || st.reduce_op != ReduceOp::Sum ||
        !is_float(out.dtype) || !vector_expression(st.value, out.dtype))
        return std::nullopt;
    auto write_coef = [&](const AstNode* l) {
        return element_coefficient(out, st.write_access, *n.call, l->iterator);
    };
    n.v = loops.back();
    if (write_coef(n.v) != 1) return std::nullopt;
    std::size_t i = loops.size() - 1;
    while (i > 0 && write_coef(loops[i - 1]) == 0)
        n.ks.insert(n.ks.begin(), loops[--i]);
    if (n.ks.empty() || i == 0) return std::nullopt;
    n.a = loops[i - 1];
    auto ca = write_coef(n.a);
    auto trip = max_trip(*n.v);
    if (!ca || !trip || (*ca < 0 ? -*ca : *ca) < *trip) return std::nullopt; // rows overlap
    n.trip_v = *trip;
    n.outer.assign(loops.begin(), loops.begin() + static_cast<long>(i) - 1);
    // Rectangular, unit-step loops.
    std::vector<const AstNode*> inner = n.ks;
    inner.insert(inner.begin(), n.a);
    inner.push_back(n.v);
    for (const AstNode* l : inner) {
        if (l->inc.kind != AstExpr::Kind::Int || l->inc.value != 1 || !upper_bound(*l))
            return std::nullopt;
        for (const AstNode* other : inner)
            if (mentions(l->init, other->iterator) || mentions(l->cond.args[1], other->iterator))
                return std::nullopt;
    }
    n.ua = *upper_bound(*n.a);
    n.uv = *upper_bound(*n.v);
    for (const poly::Read& r : st.reads) {
        if (r.buffer < 0 || r.buffer == st.write_buffer) return std::nullopt;
        auto cv =
            element_coefficient(cx.program.buffers[r.buffer], r.access, *n.call, n.v->iterator);
        if (!cv || (*cv != 0 && *cv != 1)) return std::nullopt;
        for (const AstNode* l : inner)
            if (!element_coefficient(cx.program.buffers[r.buffer], r.access, *n.call, l->iterator))
                return std::nullopt;
    }
    return n;
}

class Printer {
public:
    Printer(const RegisterTileContext& cx, const Nest& n)
        : cx_(cx), n_(n), st_(cx.kernel.statements.at(n.call->statement)),
          out_buf_(cx.program.buffers.at(st_.write_buffer)) {
        DType t = out_buf_.dtype;
        lanes_ = kVectorBytes / static_cast<int>(dtype_size(t));
        width_ = 2 * lanes_;
        vtype_ = t == DType::F32 ? "hd_vf" : "hd_vd";
        scalar_ = c_value_type(t);
        plan_reads();
    }

    void print(int indent, std::string& out) {
        std::string p = pad_of(indent);
        out += p + "{ // register tile: " + std::to_string(kRows) + " x " + std::to_string(width_) +
               "\n";
        out +=
            p + "    const long hd_lv = " + c_index_expr(n_.v->init) + ", hd_uv = " + n_.uv + ";\n";
        print_packs(indent + 1, out);
        out += p + "    for (long hd_r = " + c_index_expr(n_.a->init) + "; hd_r <= " + n_.ua +
               "; hd_r += " + std::to_string(kRows) + ") {\n";
        out += p + "        long hd_c = hd_lv;\n";
        out += p + "        if (hd_r + " + std::to_string(kRows - 1) + " <= " + n_.ua + ")\n";
        out += p + "            for (; hd_c + " + std::to_string(width_ - 1) +
               " <= hd_uv; hd_c += " + std::to_string(width_) + ") {\n";
        print_block(indent + 4, out);
        out += p + "            }\n";
        print_rest(indent + 2, out);
        out += p + "    }\n" + p + "}\n";
    }

private:
    void plan_reads() {
        packs_ = 0;
        for (const poly::Read& r : st_.reads) {
            const poly::Buffer& b = cx_.program.buffers[r.buffer];
            ReadPlan plan;
            plan.vector = element_coefficient(b, r.access, *n_.call, n_.v->iterator) == 1;
            plan.per_row = element_coefficient(b, r.access, *n_.call, n_.a->iterator) != 0;
            if (plan.vector && !plan.per_row && n_.ks.size() == 1) {
                auto trip_k = max_trip(*n_.ks[0]);
                std::int64_t pw = (n_.trip_v + width_ - 1) / width_ * width_;
                if (trip_k && std::size_t(*trip_k * pw) * dtype_size(b.dtype) <= kMaxPackBytes) {
                    plan.pack = packs_++;
                    pack_width_ = pw;
                    pack_rows_ = *trip_k;
                }
            }
            reads_.push_back(plan);
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
        const AstNode& k = *n_.ks[0];
        out += p + "const long hd_lk = " + c_index_expr(k.init) + ";\n";
        for (std::size_t r = 0; r < reads_.size(); ++r) {
            if (reads_[r].pack < 0) continue;
            const poly::Read& rd = st_.reads[r];
            std::string name = pack_name(reads_[r].pack);
            out += p + scalar_ + " " + name + "[" + std::to_string(pack_rows_ * pack_width_) +
                   "] __attribute__((aligned(64)));\n";
            out += p + "for (long " + k.iterator + " = hd_lk; " + c_index_expr(k.cond) + "; ++" +
                   k.iterator + ")\n";
            out += p + "    for (long hd_j = hd_lv; hd_j <= hd_uv; ++hd_j) {\n";
            out += bind(p + "        ", c_index_expr(n_.a->init), "hd_j", false);
            out += p + "        " + name + "[(" + k.iterator + " - hd_lk) * " +
                   std::to_string(pack_width_) +
                   "L + (hd_j - hd_lv)] = " + c_element(cx_.program.buffers[rd.buffer], rd.access) +
                   ";\n";
            out += p + "    }\n";
        }
    }

    std::string acc(int row, int half) const {
        return "hd_a" + std::to_string(row) + "_" + std::to_string(half);
    }

    std::string vector_at(const std::string& element, int half) const {
        return "*(const " + vtype_ + "*)(&" + element + " + " + std::to_string(half * lanes_) + ")";
    }

    void print_block(int indent, std::string& out) {
        std::string p = pad_of(indent), q = p + "    ";
        std::string c = c_element(out_buf_, st_.write_access);
        for (int r = 0; r < kRows; ++r) {
            out += p + vtype_ + " " + acc(r, 0) + ", " + acc(r, 1) + ";\n" + p + "{\n";
            out += bind(q, "hd_r + " + std::to_string(r) + "L", "hd_c", true);
            for (int h = 0; h < 2; ++h)
                out += q + acc(r, h) + " = " + vector_at(c, h) + ";\n";
            out += p + "}\n";
        }
        int depth = 0;
        for (const AstNode* k : n_.ks) {
            out += pad_of(indent + depth) + "for (long " + k->iterator + " = " +
                   c_index_expr(k->init) + "; " + c_index_expr(k->cond) + "; ++" + k->iterator +
                   ") {\n";
            ++depth;
        }
        print_update(indent + depth, out);
        for (int d = depth - 1; d >= 0; --d)
            out += pad_of(indent + d) + "}\n";
        for (int r = 0; r < kRows; ++r) {
            out += p + "{\n" + bind(q, "hd_r + " + std::to_string(r) + "L", "hd_c", true);
            for (int h = 0; h < 2; ++h)
                out += q + "*(" + vtype_ + "*)(&" + c + " + " + std::to_string(h * lanes_) +
                       ") = " + acc(r, h) + ";\n";
            out += p + "}\n";
        }
    }

    std::string read_value(std::size_t r, int half) const {
        const poly::Read& rd = st_.reads[r];
        std::string e = c_element(cx_.program.buffers[rd.buffer], rd.access);
        if (!reads_[r].vector) return e;
        if (reads_[r].pack >= 0)
            e = pack_name(reads_[r].pack) + "[(" + n_.ks[0]->iterator + " - hd_lk) * " +
                std::to_string(pack_width_) + "L + (hd_c - hd_lv)]";
        return vector_at(e, half);
    }

    void print_update(int indent, std::string& out) {
        std::string p = pad_of(indent), q = p + "    ";
        out += p + "#pragma clang fp contract(fast)\n";
        std::vector<std::string> shared(reads_.size() * 2);
        out += p + "{\n" + bind(q, "hd_r", "hd_c", false);
        for (std::size_t r = 0; r < reads_.size(); ++r) {
            if (reads_[r].per_row) continue;
            for (int h = 0; h < (reads_[r].vector ? 2 : 1); ++h) {
                shared[2 * r + h] = "hd_s" + std::to_string(r) + "_" + std::to_string(h);
                out += q + "const " + (reads_[r].vector ? vtype_ : scalar_) + " " +
                       shared[2 * r + h] + " = " + read_value(r, h) + ";\n";
            }
        }
        for (int row = 0; row < kRows; ++row) {
            out +=
                q + "{\n" + bind(q + "    ", "hd_r + " + std::to_string(row) + "L", "hd_c", false);
            for (int h = 0; h < 2; ++h) {
                std::vector<std::string> inputs;
                for (std::size_t r = 0; r < reads_.size(); ++r) {
                    int hh = reads_[r].vector ? h : 0;
                    inputs.push_back(reads_[r].per_row ? read_value(r, hh) : shared[2 * r + hh]);
                }
                out += q + "    " + acc(row, h) + " = " + acc(row, h) + " + " +
                       vector_value(st_.value, inputs) + ";\n";
            }
            out += q + "}\n";
        }
        out += p + "}\n";
    }

    // The columns past the last full block (all rows of the block), and the rows past the last
    // full block, in the original loop order.
    void print_rest(int indent, std::string& out) {
        std::string p = pad_of(indent);
        out += p + "for (long " + n_.a->iterator + " = hd_r; " + n_.a->iterator + " <= " + n_.ua +
               " && " + n_.a->iterator + " < hd_r + " + std::to_string(kRows) + "; ++" +
               n_.a->iterator + ") {\n";
        int depth = 1;
        for (const AstNode* k : n_.ks) {
            out += pad_of(indent + depth) + "for (long " + k->iterator + " = " +
                   c_index_expr(k->init) + "; " + c_index_expr(k->cond) + "; ++" + k->iterator +
                   ") {\n";
            ++depth;
        }
        out += pad_of(indent + depth) + "for (long " + n_.v->iterator + " = hd_c; " +
               n_.v->iterator + " <= hd_uv; ++" + n_.v->iterator + ") {\n";
        cx_.print_statement(*n_.call, indent + depth + 1, out);
        for (int d = depth; d >= 0; --d)
            out += pad_of(indent + d) + "}\n";
    }

    const RegisterTileContext& cx_;
    const Nest& n_;
    const poly::Statement& st_;
    const poly::Buffer& out_buf_;
    int lanes_ = 8, width_ = 16;
    std::string vtype_, scalar_;
    std::vector<ReadPlan> reads_;
    int packs_ = 0, name_base_ = 0;
    std::int64_t pack_width_ = 0, pack_rows_ = 0;
};

} // namespace

bool print_register_tile(const RegisterTileContext& context, const AstNode& mark, int indent,
                         std::string& out) {
    std::optional<Nest> nest = match(context, mark);
    if (!nest) return false;
    int depth = 0;
    for (const AstNode* l : nest->outer) {
        out += pad_of(indent + depth) + "for (long " + l->iterator + " = " + c_index_expr(l->init) +
               "; " + c_index_expr(l->cond) + "; " + l->iterator + " += " + c_index_expr(l->inc) +
               ") {\n";
        ++depth;
    }
    Printer(context, *nest).print(indent + depth, out);
    for (int d = depth - 1; d >= 0; --d)
        out += pad_of(indent + d) + "}\n";
    return true;
}

} // namespace hedra::backend
