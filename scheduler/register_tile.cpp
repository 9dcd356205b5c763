// The register-tile pass (see register_tile.hpp).
#include "scheduler/register_tile.hpp"

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "scheduler/ast_access.hpp"
#include "scheduler/contraction_schedule.hpp"

namespace hedra::sched {
namespace {

constexpr std::size_t kMaxPackBytes = 256 * 1024; // all packed K x V panels of a nest
// A broadcast operand whose innermost K steps are this far apart (a weight gradient's dZ[b, o],
// rows 4 KiB apart: every K step maps to the same L1 set) is copied, once above the loops over
// V tiles, into panels of R rows x K contiguous (BLIS's packed A), up to this size.
constexpr std::int64_t kFarBroadcastBytes = 1024;
constexpr std::size_t kMaxRowPackBytes = 512 * 1024;
// A panel is filled with the K loops innermost when its source's rows along V are this far
// apart (a transposed matmul operand): measured 8.1 -> 6.4 ms on a 256x1024x1024 A·B^T; with
// rows 1.6 KB apart V innermost stays faster.
constexpr std::int64_t kPackKInnerBytes = 4096;

std::int64_t round_up_to(std::int64_t x, std::int64_t m) {
    return (x + m - 1) / m * m;
}

// `it <= e` or `it < e`, the form the printers bound a loop by.
bool has_upper_bound(const AstNode& loop) {
    const AstExpr& c = loop.cond;
    return c.kind == AstExpr::Kind::Op && c.args.size() == 2 &&
           c.args[0].kind == AstExpr::Kind::Id && c.args[0].name == loop.iterator &&
           (c.op == AstExpr::Op::Le || c.op == AstExpr::Op::Lt);
}

// `loop` is `for (...) { one call }` over the same columns as the update's V loop `v`.
bool is_column_row(const AstNode& loop, const AstNode& v) {
    return loop.kind == AstNode::Kind::For && loop.body.size() == 1 &&
           loop.body[0].kind == AstNode::Kind::Call && loop.cond.kind == AstExpr::Kind::Op &&
           v.cond.kind == AstExpr::Kind::Op && loop.cond.args.size() == 2 &&
           v.cond.args.size() == 2 && to_string(loop.init) == to_string(v.init) &&
           to_string(loop.cond.args[1]) == to_string(v.cond.args[1]) && loop.cond.op == v.cond.op &&
           to_string(loop.inc) == to_string(v.inc);
}

// `loop` is `for (V) { init(...) }` over the columns of the update's V loop `v`, with init an
// assignment of 0 to the update's buffer.
bool is_init_row(const poly::Kernel& kernel, const AstNode& loop, const AstNode& v,
                 const poly::Statement& update) {
    if (!is_column_row(loop, v)) return false;
    const poly::Statement& init = kernel.statements.at(loop.body[0].statement);
    return init.kind == poly::StatementKind::Assign && init.write_buffer == update.write_buffer &&
           init.value->op == ScalarOp::Const && init.value->fvalue == 0.0;
}

// `loop` is `for (V') { epilogue(...) }` over the columns of the update's V loop `v`: an Assign
// to another buffer of the update's dtype that reads the update's result (partition.hpp).
bool is_epilogue_row(const poly::ProgramIR& program, const poly::Kernel& kernel,
                     const AstNode& loop, const AstNode& v, const poly::Statement& update) {
    if (!is_column_row(loop, v)) return false;
    const poly::Statement& e = kernel.statements.at(loop.body[0].statement);
    bool reads_result = false;
    for (const poly::Read& r : e.reads)
        reads_result = reads_result || r.buffer == update.write_buffer;
    return e.kind == poly::StatementKind::Assign && e.write_buffer != update.write_buffer &&
           e.write_buffer >= 0 && reads_result &&
           program.buffers.at(e.write_buffer).dtype == program.buffers.at(update.write_buffer).dtype;
}

// Elements of a packed panel: one row per iteration of the K loops, each round_up(trip_v, width).
std::optional<std::int64_t> pack_elements(const RegisterTileNest& n, std::int64_t width) {
    std::int64_t rows = 1;
    for (const AstNode* k : n.ks) {
        auto trip = max_trip(*k);
        if (!trip) return std::nullopt;
        rows *= *trip;
    }
    return rows * round_up_to(n.trip_v, width);
}

class Planner {
public:
    Planner(const poly::ProgramIR& program, const poly::Kernel& kernel, const RegisterTileNest& n,
            const CpuTarget& cpu)
        : program_(program), kernel_(kernel), n_(n), cpu_(cpu),
          st_(kernel.statements.at(n.call->statement)),
          out_buf_(program.buffers.at(st_.write_buffer)) {}

    std::optional<RegisterTile> plan() {
        const std::size_t size = dtype_size(out_buf_.dtype);
        t_.vector_bytes = tile_vector_bytes(cpu_, n_.trip_v, size);
        t_.lanes = t_.vector_bytes / static_cast<int>(size);
        if (!plan_reads()) return std::nullopt;
        plan_row_packs();
        plan_epilogue();
        plan_pack_level();
        return t_;
    }

private:
    // Which reads are vectors along V, which depend on A, which are packed; then R.
    bool plan_reads() {
        const std::int64_t width = 2 * t_.lanes;
        for (const poly::Read& r : st_.reads) {
            const poly::Buffer& b = program_.buffers[r.buffer];
            RegisterTile::Read plan;
            auto cv = element_coefficient(b, r.access, *n_.call, n_.v->iterator);
            plan.vector = cv != 0;
            plan.per_row = element_coefficient(b, r.access, *n_.call, n_.a->iterator) != 0;
            const bool strided = cv && *cv != 0 && *cv != 1;
            if (plan.vector && !plan.per_row) {
                auto elements = pack_elements(n_, width);
                if (elements && std::size_t(*elements) * dtype_size(b.dtype) <= kMaxPackBytes) {
                    plan.pack = t_.packs++;
                    t_.pack_width = round_up_to(n_.trip_v, width);
                    t_.pack_rows = *elements / t_.pack_width;
                    plan.pack_v_inner =
                        !cv || std::llabs(*cv) * static_cast<std::int64_t>(dtype_size(b.dtype)) <
                                   kPackKInnerBytes;
                }
            }
            if (strided && plan.pack < 0) return false; // strided along V: only as a panel
            t_.reads.push_back(plan);
        }
        int shared = 0, per_row = 0;
        for (const RegisterTile::Read& r : t_.reads) {
            shared += r.vector && !r.per_row;
            per_row += r.vector && r.per_row;
        }
        t_.rows = std::max(1, register_block_rows(cpu_, shared, per_row));
        if (auto trip_a = max_trip(*n_.a))
            t_.rows = static_cast<int>(std::min<std::int64_t>(t_.rows, *trip_a));
        return true;
    }

    // Far broadcast operands (kFarBroadcastBytes) whose copy fits, when A's range and the K
    // loops do not depend on the loops above A (the copy is made once, above them).
    void plan_row_packs() {
        auto trip_a = max_trip(*n_.a);
        if (!trip_a) return;
        std::int64_t k_rows = 1;
        for (const AstNode* k : n_.ks) {
            auto trip = max_trip(*k);
            if (!trip) return;
            k_rows *= *trip;
        }
        for (const AstNode* l : n_.outer) {
            bool used = mentions(n_.a->init, l->iterator) || mentions(n_.a->cond, l->iterator);
            for (const AstNode* k : n_.ks)
                used = used || mentions(k->init, l->iterator) || mentions(k->cond, l->iterator);
            if (used) return;
        }
        for (std::size_t r = 0; r < t_.reads.size(); ++r) {
            const poly::Read& rd = st_.reads[r];
            const poly::Buffer& b = program_.buffers[rd.buffer];
            if (t_.reads[r].vector || !t_.reads[r].per_row) continue;
            auto ck = element_coefficient(b, rd.access, *n_.call, n_.ks.back()->iterator);
            auto size = static_cast<std::int64_t>(dtype_size(b.dtype));
            if (!ck || std::llabs(*ck) * size < kFarBroadcastBytes) continue;
            for (const AstNode* l : n_.outer)
                if (element_coefficient(b, rd.access, *n_.call, l->iterator) != 0) return;
            if (std::size_t(round_up_to(*trip_a, t_.rows) * k_rows * size) > kMaxRowPackBytes)
                continue;
            t_.reads[r].row_pack = t_.row_packs++;
        }
        t_.row_pack_rows = k_rows;
        t_.row_pack_blocks = round_up_to(*trip_a, t_.rows) / t_.rows;
    }

    // The epilogue's reads: the result (the accumulators), operands contiguous along V
    // (vectors) or constant along it (broadcast); anything else, or an expression the vector
    // types cannot print, runs the epilogue's own loop over the stored result instead.
    void plan_epilogue() {
        if (!n_.epi_loop) return;
        const AstNode& call = n_.epi_loop->body[0];
        const poly::Statement& epi = kernel_.statements.at(call.statement);
        const std::string& it = n_.epi_loop->iterator;
        auto cm = element_coefficient(program_.buffers[epi.write_buffer], epi.write_access, call,
                                      it);
        t_.epilogue_stride = cm ? *cm : 0;
        t_.epilogue_vector = t_.epilogue_stride != 0 && vector_expression(epi.value, out_buf_.dtype);
        for (const poly::Read& r : epi.reads) {
            t_.epilogue_reads_vector.push_back(false);
            if (r.buffer < 0) { // an index expression: not printed as a vector here
                t_.epilogue_vector = false;
                continue;
            }
            if (r.buffer == st_.write_buffer) continue;
            auto c = element_coefficient(program_.buffers[r.buffer], r.access, call, it);
            if (!c || (*c != 0 && *c != 1)) t_.epilogue_vector = false;
            t_.epilogue_reads_vector.back() = c && *c == 1;
        }
        // The result need not be stored when nothing but the epilogue reads it.
        t_.result_dead = t_.epilogue_vector && out_buf_.role == poly::BufferRole::Temporary;
        for (const poly::Kernel& k : program_.kernels)
            for (const poly::Statement& other : k.statements) {
                if (&other == &epi || &other == &st_) continue;
                for (const poly::Read& r : other.reads)
                    if (r.buffer == st_.write_buffer) t_.result_dead = false;
            }
    }

    // How many of the loops above A the packed panels must stay inside: the panels are filled
    // once outside the others, which neither they nor the bounds of A, K and V mention (a
    // convolution's weight panel outside the loops over image rows).
    void plan_pack_level() {
        std::size_t level = n_.outer.size();
        while (t_.packs > 0 && level > 0) {
            const std::string& it = n_.outer[level - 1]->iterator;
            bool used =
                mentions(n_.a->init, it) || mentions(n_.v->init, it) || mentions(n_.v->cond, it);
            for (const AstNode* k : n_.ks)
                used = used || mentions(k->init, it) || mentions(k->cond, it);
            for (std::size_t r = 0; r < t_.reads.size(); ++r)
                if (t_.reads[r].pack >= 0)
                    used = used || element_coefficient(program_.buffers[st_.reads[r].buffer],
                                                       st_.reads[r].access, *n_.call, it) != 0;
            if (used) break;
            --level;
        }
        t_.pack_level = level;
    }

    const poly::ProgramIR& program_;
    const poly::Kernel& kernel_;
    const RegisterTileNest& n_;
    const CpuTarget& cpu_;
    const poly::Statement& st_;
    const poly::Buffer& out_buf_;
    RegisterTile t_;
};

void choose_in(const poly::ProgramIR& program, const poly::Kernel& kernel, AstNode& n,
               const CpuTarget& cpu) {
    if (n.kind == AstNode::Kind::Mark && n.mark == kPermutableMark)
        if (auto tile = plan_register_tile(program, kernel, n, cpu)) {
            n.register_tile = std::make_shared<const RegisterTile>(std::move(*tile));
            return;
        }
    for (auto* list : {&n.body, &n.else_body})
        for (AstNode& c : *list)
            choose_in(program, kernel, c, cpu);
}

} // namespace

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

std::optional<RegisterTileNest> match_register_tile(const poly::ProgramIR& program,
                                                    const poly::Kernel& kernel,
                                                    const AstNode& mark) {
    std::vector<const AstNode*> loops;
    const std::vector<AstNode>* body = &mark.body;
    const AstNode* init_loop = nullptr;
    const AstNode* epi_loop = nullptr;
    std::size_t init_after = 0;
    while (true) {
        if (body->size() == 1 && (*body)[0].kind == AstNode::Kind::For) {
            loops.push_back(&(*body)[0]);
            body = &(*body)[0].body;
        } else if ((body->size() == 2 || body->size() == 3) && !init_loop && !loops.empty() &&
                   (*body)[1].kind == AstNode::Kind::For) {
            init_loop = &(*body)[0]; // checked below, once V is known
            if (body->size() == 3) epi_loop = &(*body)[2];
            init_after = loops.size() - 1;
            loops.push_back(&(*body)[1]);
            body = &(*body)[1].body;
        } else {
            break;
        }
    }
    if (body->size() != 1 || (*body)[0].kind != AstNode::Kind::Call || loops.size() < 3)
        return std::nullopt;
    RegisterTileNest n;
    n.call = &(*body)[0];
    n.init_loop = init_loop;
    n.init_after = init_after;
    const poly::Statement& st = kernel.statements.at(n.call->statement);
    const poly::Buffer& out = program.buffers.at(st.write_buffer);
    if (st.kind != poly::StatementKind::Update || st.reduce_op != ReduceOp::Sum ||
        !is_float(out.dtype) || !vector_expression(st.value, out.dtype))
        return std::nullopt;
    auto write_coef = [&](const AstNode* l) {
        return element_coefficient(out, st.write_access, *n.call, l->iterator);
    };
    n.v = loops.back();
    auto cv_out = write_coef(n.v);
    if (!cv_out || *cv_out == 0) return std::nullopt;
    n.c_stride = *cv_out;
    std::size_t i = loops.size() - 1;
    while (i > 0 && write_coef(loops[i - 1]) == 0)
        n.ks.insert(n.ks.begin(), loops[--i]);
    if (n.ks.empty() || i == 0) return std::nullopt;
    n.a = loops[i - 1];
    if (n.init_loop && (n.init_after != i - 1 || !is_init_row(kernel, *n.init_loop, *n.v, st)))
        return std::nullopt;
    if (epi_loop && !is_epilogue_row(program, kernel, *epi_loop, *n.v, st)) return std::nullopt;
    n.epi_loop = epi_loop;
    auto ca = write_coef(n.a);
    auto trip = max_trip(*n.v);
    auto trip_a = max_trip(*n.a);
    if (!ca || !trip) return std::nullopt;
    std::int64_t sa = *ca < 0 ? -*ca : *ca, sv = n.c_stride < 0 ? -n.c_stride : n.c_stride;
    if (sa < *trip * sv && (!trip_a || sv < *trip_a * sa)) return std::nullopt; // overlap
    n.trip_v = *trip;
    n.outer.assign(loops.begin(), loops.begin() + static_cast<long>(i) - 1);
    // Rectangular, unit-step loops.
    std::vector<const AstNode*> inner = n.ks;
    inner.insert(inner.begin(), n.a);
    inner.push_back(n.v);
    for (const AstNode* l : inner) {
        if (l->inc.kind != AstExpr::Kind::Int || l->inc.value != 1 || !has_upper_bound(*l))
            return std::nullopt;
        for (const AstNode* other : inner)
            if (mentions(l->init, other->iterator) || mentions(l->cond.args[1], other->iterator))
                return std::nullopt;
    }
    for (const poly::Read& r : st.reads) {
        if (r.buffer < 0 || r.buffer == st.write_buffer) return std::nullopt;
        const poly::Buffer& b = program.buffers[r.buffer];
        auto cv = element_coefficient(b, r.access, *n.call, n.v->iterator);
        if (!cv) return std::nullopt;
        // Strided along V: only as a packed panel, which cannot depend on A.
        if (*cv != 0 && *cv != 1 && element_coefficient(b, r.access, *n.call, n.a->iterator) != 0)
            return std::nullopt;
        for (const AstNode* l : inner)
            if (!element_coefficient(b, r.access, *n.call, l->iterator)) return std::nullopt;
    }
    return n;
}

int register_block_rows(const CpuTarget& cpu, int shared_vectors, int row_vectors) {
    return std::min((cpu.vector_registers - 1 - 2 * shared_vectors - 2 * (row_vectors > 0)) / 2,
                    cpu.register_tile_rows);
}

std::optional<RegisterTile> plan_register_tile(const poly::ProgramIR& program,
                                               const poly::Kernel& kernel, const AstNode& mark,
                                               const CpuTarget& cpu) {
    std::optional<RegisterTileNest> nest = match_register_tile(program, kernel, mark);
    if (!nest) return std::nullopt;
    return Planner(program, kernel, *nest, cpu).plan();
}

void choose_register_tiles(const poly::ProgramIR& program, const poly::Kernel& kernel,
                           AstNode& root, const CpuTarget& cpu) {
    choose_in(program, kernel, root, cpu);
}

std::string to_string(const RegisterTile& t) {
    std::string s = "register tile: " + std::to_string(t.rows) + " x 2x" +
                    std::to_string(t.lanes) + " (" + std::to_string(t.vector_bytes) +
                    "-byte vectors)";
    s += ", reads";
    for (const RegisterTile::Read& r : t.reads) {
        s += r.vector ? (r.per_row ? " vector-per-row" : " vector")
                      : (r.per_row ? " per-row" : " scalar");
        if (r.pack >= 0) s += "/pack" + std::to_string(r.pack) + (r.pack_v_inner ? "" : "-k");
        if (r.row_pack >= 0) s += "/row-pack" + std::to_string(r.row_pack);
    }
    if (t.packs > 0)
        s += ", panels " + std::to_string(t.pack_rows) + "x" + std::to_string(t.pack_width) +
             " inside " + std::to_string(t.pack_level) + " loops";
    if (t.row_packs > 0)
        s += ", row panels " + std::to_string(t.row_pack_blocks) + " blocks of " +
             std::to_string(t.row_pack_rows) + " K";
    if (!t.epilogue_reads_vector.empty() || t.epilogue_vector)
        s += std::string(", epilogue ") + (t.epilogue_vector ? "on the accumulators" : "as loops") +
             (t.result_dead ? ", result not stored" : "");
    return s;
}

} // namespace hedra::sched
