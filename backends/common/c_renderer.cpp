// Prints a scheduled program as one C++ translation unit in a C style (see c_renderer.hpp).
#include "backends/common/c_renderer.hpp"

#include <algorithm>
#include <cctype>
#include <functional>
#include <optional>
#include <set>
#include <unordered_map>

#include "backends/common/c_access.hpp"
#include "backends/common/c_expr.hpp"
#include "backends/common/c_lane_reduction.hpp"
#include "backends/common/c_scan_loop.hpp"
#include "backends/common/c_segments.hpp"
#include "backends/common/register_tile.hpp"
#include "backends/common/shared_kernels.hpp"
#include "core/error.hpp"
#include "core/scalar_dag.hpp"
#include "scheduler/loop_coalesce.hpp"
#include "scheduler/target.hpp"

namespace hedra::backend {
namespace {

using sched::AstExpr;
using sched::AstNode;

// OpenMP's canonical loop form: `it <= ub` or `it < ub` and a positive constant step.
bool canonical(const AstNode& loop) {
    const AstExpr& c = loop.cond;
    bool cmp = c.kind == AstExpr::Kind::Op && (c.op == AstExpr::Op::Le || c.op == AstExpr::Op::Lt);
    return cmp && c.args[0].kind == AstExpr::Kind::Id && c.args[0].name == loop.iterator &&
           loop.inc.kind == AstExpr::Kind::Int && loop.inc.value > 0;
}

class KernelPrinter {
public:
    KernelPrinter(const poly::ProgramIR& program, const poly::Kernel& kernel,
                  const PrintOptions& options)
        : program_(program), kernel_(kernel), options_(options) {
        std::vector<bool> used(program.buffers.size()), written(program.buffers.size());
        for (const poly::Statement& st : kernel.statements) {
            used.at(st.write_buffer) = written.at(st.write_buffer) = true;
            for (const poly::Read& r : st.reads)
                if (r.buffer >= 0) used.at(r.buffer) = true;
        }
        for (std::size_t b = 0; b < used.size(); ++b) {
            if (!used[b]) continue;
            int r = program.buffers[b].row_local;
            if (r > 0) {
                locals_.push_back(static_cast<int>(b));
                local_depth_ = local_depth_ == 0 ? r : std::min(local_depth_, r);
            } else {
                buffers_.push_back({static_cast<int>(b), written[b]});
            }
        }
        std::int64_t work = 0;
        for (const poly::Statement& st : kernel.statements) {
            std::int64_t n = 1;
            for (std::int64_t e : st.extents)
                n *= e;
            work += n;
        }
        // A stencil stream's windows are shared by its steps, which must run in order (isl
        // may find its step loop parallel: the dependences are computed on whole buffers); a
        // banded stream's bands have windows of their own, and only its band loop runs in
        // parallel.
        bool windows = false;
        for (const auto& [b, w] : buffers_)
            windows = windows ||
                      (program.buffers[b].row_window > 0 && program.buffers[b].window_bands == 0);
        banded_ = poly::is_stream(kernel) && kernel.statements[0].stream_bands > 0;
        parallel_ = options.parallel && !options.dialect.parallel_for.empty() &&
                    work >= options.min_parallel_work && !windows &&
                    (!poly::is_stream(kernel) || banded_);
    }
    KernelPrinter(const KernelPrinter&) = delete;
    KernelPrinter& operator=(const KernelPrinter&) = delete;

    // The outlined functions and the kernel function.
    std::string print(const AstNode& ast) {
        std::string body;
        print_nodes(ast.body, 1, body);
        body = local_declarations() + body; // for rows run outside a parallel loop
        return functions_ + "static void " + kernel_.name + "(int hd_nt" + value_params() +
               params(true) + ") {\n    (void)hd_nt;\n" + body + "}\n\n";
    }

    // The buffers it names: its parameters in order, then its row-local buffers.
    std::vector<std::string> buffer_names() const {
        std::vector<std::string> names;
        for (const auto& [b, w] : buffers_)
            names.push_back(program_.buffers[b].name);
        for (int b : locals_)
            names.push_back(program_.buffers[b].name);
        return names;
    }

    // The call from the entry function, of `function` (this kernel's or an identical one's).
    // `table` names the entry's array of buffer pointers.
    std::string call(const std::string& function, const std::string& table = "hd_buf") const {
        std::string s = "    " + function + "(hd_nt" + value_args();
        for (const auto& [b, w] : buffers_)
            s += ", (" + std::string(c_storage_type(program_.buffers[b].dtype)) + "*)" + table +
                 "[" + std::to_string(b) + "]";
        return s + ");\n";
    }

private:
    // The row-local buffers' storage: one row, where every row of the kernel gets its own (in
    // the outlined body of a parallel row loop; at the top of the kernel for rows run there).
    std::string local_declarations() const {
        std::string s;
        for (int b : locals_) {
            const poly::Buffer& buf = program_.buffers[b];
            std::int64_t n = 1;
            for (std::size_t d = static_cast<std::size_t>(buf.row_local); d < buf.sizes.size(); ++d)
                n *= buf.sizes[d];
            s += "    " + std::string(c_storage_type(buf.dtype)) + " " + buf.name + "[" +
                 std::to_string(n) + "] __attribute__((aligned(64)));\n";
        }
        return s;
    }

    bool row_loop(const AstNode& n) const {
        const std::string& it = n.iterator;
        if (it.size() < 2 || it[0] != 'c' ||
            it.find_first_not_of("0123456789", 1) != std::string::npos)
            return false;
        return std::stoi(it.substr(1)) < local_depth_;
    }

    // Whether `text` names buffer `b` (as a whole word).
    bool names(const std::string& text, int b) const {
        const std::string& name = program_.buffers[b].name;
        auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
        for (std::size_t at = text.find(name); at != std::string::npos;
             at = text.find(name, at + 1))
            if ((at == 0 || !word(text[at - 1])) &&
                (at + name.size() == text.size() || !word(text[at + name.size()])))
                return true;
        return false;
    }
    // The kernel's buffers as parameters and as arguments; `used_in` given: only those it names
    // (an outlined part of a kernel of many buffers takes its own, so the text stays linear).
    std::string params(bool leading_comma, const std::string* used_in = nullptr) const {
        std::string s;
        for (const auto& [b, w] : buffers_) {
            if (used_in && !names(*used_in, b)) continue;
            if (leading_comma || !s.empty()) s += ", ";
            s += std::string(w ? "" : "const ") + c_storage_type(program_.buffers[b].dtype) + "* " +
                 options_.dialect.restrict_qualifier + " " + program_.buffers[b].name;
        }
        return s;
    }
    // The symbolic extents' values (hd_n0, ...), which every function of the kernel takes.
    std::string value_params() const {
        std::string s;
        for (std::size_t k = 0; k < program_.params.size(); ++k)
            s += ", long " + poly::param_value_name(static_cast<int>(k));
        return s;
    }
    std::string value_args() const {
        std::string s;
        for (std::size_t k = 0; k < program_.params.size(); ++k)
            s += ", " + poly::param_value_name(static_cast<int>(k));
        return s;
    }
    std::string args(const std::string* used_in = nullptr) const {
        std::string s;
        for (const auto& [b, w] : buffers_)
            if (!used_in || names(*used_in, b)) s += ", " + program_.buffers[b].name;
        return s;
    }

    void print_nodes(const std::vector<AstNode>& nodes, int indent, std::string& out) {
        for (const AstNode& n : nodes)
            print_node(n, indent, out);
    }

    void print_node(const AstNode& n, int indent, std::string& out) {
        std::string pad(static_cast<std::size_t>(indent) * 4, ' ');
        switch (n.kind) {
        case AstNode::Kind::Block:
            print_nodes(n.body, indent, out);
            return;
        case AstNode::Kind::Mark:
            // Also outside any parallel loop: a register-tiled nest run on one thread is
            // several times faster than its scalar loops run in parallel (schedules put a
            // parallel loop above the mark where one is worth it).
            if (print_register_tile(tile_context_, n, indent, out)) return;
            print_nodes(n.body, indent, out);
            return;
        case AstNode::Kind::Call:
            print_statement(n, indent, out);
            return;
        case AstNode::Kind::If:
            out += pad + "if (" + c_index_expr(n.condition) + ") {\n";
            print_nodes(n.body, indent + 1, out);
            if (!n.else_body.empty()) {
                out += pad + "} else {\n";
                print_nodes(n.else_body, indent + 1, out);
            }
            out += pad + "}\n";
            return;
        case AstNode::Kind::For:
            print_for(n, indent, out);
            return;
        }
    }

    void print_for(const AstNode& n, int indent, std::string& out) {
        std::string pad(static_cast<std::size_t>(indent) * 4, ' ');
        bool innermost = !sched::contains_for(n.body);
        bool simd = options_.simd && !options_.dialect.simd.empty() && n.parallel && innermost &&
                    canonical(n);
        // With row-local buffers, only a loop over the rows may run in parallel (each row's
        // statements then share its thread's row): one of the first local_depth_ schedule
        // dimensions, which isl names c0, c1, ... whether or not it drops degenerate loops.
        bool rows = (locals_.empty() || row_loop(n)) && (!banded_ || n.iterator == "c0");
        if (parallel_ && n.parallel && !in_parallel_ && canonical(n) && rows &&
            regions_ <= kMaxParallelRegions) {
            print_outlined(n, indent, simd, out);
            return;
        }
        if (options_.coalesce) {
            if (n.coalesce >= 2) {
                std::vector<const AstNode*> chain{&n};
                while (static_cast<int>(chain.size()) < n.coalesce)
                    chain.push_back(&chain.back()->body.at(0));
                print_coalesced(chain, indent, out);
                return;
            }
        }
        if (const AstNode* call = lane_reduction_call(n)) {
            print_lane_reduction(n, *call, indent, out);
            return;
        }
        if (simd) out += pad + options_.dialect.simd + "\n";
        if (!innermost && !options_.dialect.outer_loop.empty())
            out += pad + options_.dialect.outer_loop + "\n";
        out += pad + c_loop_header(n) + " {\n";
        scope_.push_back(n.iterator);
        const std::int64_t regions = regions_;
        regions_ *= trip_estimate(n);
        print_nodes(n.body, indent + 1, out);
        regions_ = regions;
        scope_.pop_back();
        out += pad + "}\n";
    }

    // The statement call of a loop the lane-reduction pass chose, or null.
    static const AstNode* lane_reduction_call(const AstNode& n) {
        if (n.reduction_lanes == 0) return nullptr;
        const AstNode* call = &n;
        while (call->kind != AstNode::Kind::Call)
            call = &call->body.at(0);
        return call;
    }

    // A row reduction the lane-reduction pass chose (c_lane_reduction.hpp).
    void print_lane_reduction(const AstNode& n, const AstNode& call, int indent, std::string& out) {
        const poly::Statement& st = kernel_.statements.at(call.statement);
        LaneReduction r;
        r.loop = &n;
        r.call = &call;
        r.op = st.reduce_op;
        r.dtype = program_.buffers.at(st.write_buffer).dtype;
        r.id = std::to_string(local_names_++);
        if (options_.simd) r.simd = options_.dialect.simd;
        r.vector_bytes = options_.vector_bytes;
        r.target = element(st.write_buffer, st.write_access);
        r.loaded = load(st.write_buffer, st.write_access);
        r.value = [&](const std::string& in, std::string& text) {
            return print_update_value(call, in, text);
        };
        out += lane_reduction_text(r, std::string(static_cast<std::size_t>(indent) * 4, ' '));
    }

    // The counters and the value an update statement folds in, printed into `out`.
    std::string print_update_value(const AstNode& call, const std::string& in, std::string& out) {
        const poly::Statement& st = kernel_.statements.at(call.statement);
        out += c_counter_lines(call, in);
        auto input = [&](int k) { return operand(st, {st.value}, k); };
        std::string value = print_scalar(st.value, input, in, "t", out);
        std::string name = "hd_v" + std::to_string(local_names_++);
        out += in + "const " + c_value_type(program_.buffers.at(st.write_buffer).dtype) + " " +
               name + " = " + value + ";\n";
        return name;
    }

    // A perfect nest of contiguous loops as one loop (loop_coalesce.hpp): the outer iterators
    // at their first value, the innermost over the flat range.
    void print_coalesced(const std::vector<const AstNode*>& chain, int indent, std::string& out) {
        std::string pad(static_cast<std::size_t>(indent) * 4, ' ');
        std::int64_t total = 1;
        bool parallel = true;
        for (const AstNode* l : chain) {
            total *= sched::constant_trip(*l);
            parallel = parallel && l->parallel;
        }
        std::string flat = "hd_f" + std::to_string(local_names_++);
        if (options_.simd && parallel && !options_.dialect.simd.empty())
            out += pad + options_.dialect.simd + "\n";
        out += pad + "for (long " + flat + " = 0; " + flat + " < " + c_int(total) + "; ++" + flat +
               ") {\n";
        for (std::size_t i = 0; i < chain.size(); ++i) {
            out += pad + "    const long " + chain[i]->iterator + " = " +
                   c_index_expr(chain[i]->init) + (i + 1 == chain.size() ? " + " + flat : "") +
                   ";\n";
            scope_.push_back(chain[i]->iterator);
        }
        print_nodes(chain.back()->body, indent + 1, out);
        for (std::size_t i = 0; i < chain.size(); ++i)
            scope_.pop_back();
        out += pad + "}\n";
    }

    // A loop's trip count when its bounds are constants (symbolic extents at their declared
    // maxima), else a guess.
    std::int64_t trip_estimate(const AstNode& n) const {
        const AstExpr& c = n.cond;
        if (n.init.kind != AstExpr::Kind::Int || c.kind != AstExpr::Kind::Op ||
            c.args.size() != 2 || n.inc.kind != AstExpr::Kind::Int || n.inc.value <= 0)
            return 8;
        std::optional<std::int64_t> bound = at_maxima(c.args[1]);
        if (!bound) return 8;
        std::int64_t last = *bound - (c.op == AstExpr::Op::Lt ? 1 : 0);
        return std::max<std::int64_t>(1, (last - n.init.value) / n.inc.value + 1);
    }
    // The value of a bound with every symbolic extent at its maximum, if it has no iterator.
    std::optional<std::int64_t> at_maxima(const AstExpr& e) const {
        switch (e.kind) {
        case AstExpr::Kind::Int:
            return e.value;
        case AstExpr::Kind::Id:
            for (std::size_t k = 0; k < program_.params.size(); ++k)
                if (e.name == poly::param_value_name(static_cast<int>(k)))
                    return program_.param_max[k];
            return std::nullopt;
        case AstExpr::Kind::Op:
            break;
        }
        std::vector<std::int64_t> v;
        for (const AstExpr& a : e.args) {
            std::optional<std::int64_t> x = at_maxima(a);
            if (!x) return std::nullopt;
            v.push_back(*x);
        }
        switch (e.op) {
        case AstExpr::Op::Add:
            return v.at(0) + v.at(1);
        case AstExpr::Op::Sub:
            return v.at(0) - v.at(1);
        case AstExpr::Op::Mul:
            return v.at(0) * v.at(1);
        case AstExpr::Op::Neg:
            return -v.at(0);
        case AstExpr::Op::Min:
            return *std::min_element(v.begin(), v.end());
        case AstExpr::Op::Max:
            return *std::max_element(v.begin(), v.end());
        case AstExpr::Op::FloorDiv:
        case AstExpr::Op::PDivQ:
        case AstExpr::Op::Div:
            if (v.at(1) <= 0) return std::nullopt;
            return v[0] >= 0 ? v[0] / v[1] : -((-v[0] + v[1] - 1) / v[1]);
        default:
            return std::nullopt;
        }
    }

    void print_outlined(const AstNode& n, int indent, bool simd, std::string& out) {
        std::string pad(static_cast<std::size_t>(indent) * 4, ' ');
        std::string name = kernel_.name + "_p" + std::to_string(outlined_++);
        std::string iters, iter_args;
        for (const std::string& it : scope_) {
            iters += "long " + it + ", ";
            iter_args += it + ", ";
        }
        std::string body;
        scope_.push_back(n.iterator);
        in_parallel_ = true;
        print_nodes(n.body, 1, body);
        in_parallel_ = false;
        scope_.pop_back();
        if (!locals_.empty()) body = local_declarations() + body;
        // Never inlined into the parallel loop: inlined there, clang fully unrolls the lane
        // reductions' accumulator loops and leaves them scalar (a 768x128 layer norm: 60 µs
        // against 16 µs called).
        std::string fn = "__attribute__((noinline)) static void " + name + "(" + iters + "long " +
                         n.iterator + value_params() + params(true, &body) + ") {\n" + body +
                         "}\n\n";
        functions_ += fn;
        out += pad + options_.dialect.parallel_for + (simd ? " simd" : "") +
               " num_threads(hd_nt) if(hd_nt > 1) schedule(static)\n";
        out += pad + c_loop_header(n) + "\n" + pad + "    " + name + "(" + iter_args + n.iterator +
               value_args() + args(&body) + ");\n";
    }

    std::string element(int buffer, const AffineMap& access) const {
        return c_element(program_.buffers.at(buffer), access);
    }

    std::string load(int buffer, const AffineMap& access) const {
        return c_loaded(program_.buffers[buffer].dtype, element(buffer, access));
    }

    // Input(k) of a statement's expressions `roots`: a buffer element, or the index value.
    std::string operand(const poly::Statement& st, const std::vector<ScalarExpr>& roots,
                        int k) const {
        const poly::Read& r = st.reads.at(k);
        if (r.buffer >= 0 && r.is_indirect())
            return c_loaded(program_.buffers[r.buffer].dtype, c_read_element(program_, st, r));
        if (r.buffer >= 0) return load(r.buffer, r.access);
        return index_value(r.access, input_dtype(roots, k));
    }

    std::string index_value(const AffineMap& access, DType t) const {
        std::string s;
        for (int k = 0; k < access.in_rank(); ++k) {
            std::int64_t c = access.coeff(0, k);
            if (c != 0) s += (s.empty() ? "" : " + ") + c_int(c) + " * i" + std::to_string(k);
        }
        s += (s.empty() ? "" : " + ") + c_int(access.offset(0));
        return "(" + std::string(c_value_type(t)) + ")(" + s + ")";
    }

    void print_statement(const AstNode& call, int indent, std::string& out) {
        std::string pad(static_cast<std::size_t>(indent) * 4, ' ');
        std::string in = pad + "    ";
        const poly::Statement& st = kernel_.statements.at(call.statement);
        const poly::Buffer& wb = program_.buffers.at(st.write_buffer);
        bool update = st.kind == poly::StatementKind::Update;
        out += pad + "{\n";
        out += c_counter_lines(call, in);
        auto input = [&](int k) { return operand(st, {st.value}, k); };
        if (!st.tuple_writes.empty()) {
            print_tuple_writes(st, in, out);
            out += pad + "}\n";
            return;
        }
        std::string value;
        if (worth_segmenting(st.value)) {
            std::string name = "hd_" + kernel_.name + "_s" + std::to_string(call.statement);
            SegmentedValue o = print_segmented(st.value, input, in, name, out);
            if (segmented_.insert(name).second) functions_ += o.functions;
            value = o.value;
        } else {
            value = print_scalar(st.value, input, in, "t", out);
        }
        std::string target = c_write_element(program_, st);
        // The value is computed exactly, as every kernel computes it (a map inlined into a min
        // reduction and into its gradient's comparison must agree bit for bit); only the
        // accumulation may contract and reassociate.
        bool fast = update && is_float(wb.dtype) && st.reduce_op != ReduceOp::Min &&
                    st.reduce_op != ReduceOp::Max;
        if (fast) {
            out += in + "const " + c_value_type(wb.dtype) + " hd_v = " + value + ";\n";
            value = "hd_v";
            out += in + "{\n";
            in += "    ";
            out += in + "#pragma clang fp contract(fast) reassociate(on)\n";
        }
        if (update) {
            std::string acc = c_loaded(wb.dtype, target);
            if (st.reduce_op == ReduceOp::Custom) {
                auto comb = [&](int k) { return k == 0 ? acc : value; };
                value = print_scalar(st.combiner, comb, in, "u", out);
            } else {
                value = c_combine(st.reduce_op, wb.dtype, acc, value);
            }
        }
        if (wb.dtype == DType::Bool) value = "(unsigned char)" + value;
        out += in + target + " = " + value + ";\n";
        if (fast) out += pad + "    }\n";
        out += pad + "}\n";
    }

    // A step of a reduction of several values: every new value first, then every store.
    void print_tuple_writes(const poly::Statement& st, const std::string& in, std::string& out) {
        std::vector<ScalarExpr> roots{st.value};
        std::vector<int> buffers{st.write_buffer};
        for (const poly::Statement::TupleWrite& w : st.tuple_writes) {
            roots.push_back(w.value);
            buffers.push_back(w.buffer);
        }
        auto input = [&](int k) { return operand(st, roots, k); };
        std::vector<std::string> values = print_scalars(roots, input, in, "t", out);
        for (std::size_t j = 0; j < roots.size(); ++j) {
            bool flag = program_.buffers.at(buffers[j]).dtype == DType::Bool;
            out += in + element(buffers[j], st.write_access) + " = " +
                   (flag ? "(unsigned char)" : "") + values[j] + ";\n";
        }
    }

    const poly::ProgramIR& program_;
    const poly::Kernel& kernel_;
    const PrintOptions& options_;
    std::vector<std::pair<int, bool>> buffers_; // (buffer, written), by buffer index
    std::vector<int> locals_;                   // row-local buffers
    int local_depth_ = 0;                       // the fewest row axes of a row-local buffer
    std::string functions_;
    std::set<std::string> segmented_; // the statements whose segments functions_ holds
    std::vector<std::string> scope_;
    // Parallel regions a loop at this depth would open per kernel call (the trips of the
    // enclosing sequential loops): past kMaxParallelRegions its iterations run sequentially,
    // since each region costs microseconds.
    static constexpr std::int64_t kMaxParallelRegions = 64;
    std::int64_t regions_ = 1;
    bool in_parallel_ = false;
    bool parallel_ = true; // this kernel is worth a parallel region
    bool banded_ = false;  // a stream in bands: its band loop, c0, is the one parallel loop
    int outlined_ = 0;
    int local_names_ = 0;
    RegisterTileContext tile_context_{program_, kernel_,
                                      [this](const AstNode& call, int indent, std::string& out) {
                                          print_statement(call, indent, out);
                                      },
                                      local_names_, options_.vector_bytes};
};

} // namespace

CDialect openmp_dialect() {
    CDialect d;
    d.name = "openmp";
    d.parallel_for = "#pragma omp parallel for";
    d.simd = "#pragma omp simd";
    d.outer_loop = "#pragma clang loop unroll(disable)";
    return d;
}

CDialect serial_dialect() {
    CDialect d;
    d.name = "c";
    return d;
}

std::string print_program(const poly::ProgramIR& program, const std::vector<sched::AstNode>& asts,
                          const PrintOptions& options) {
    HEDRA_INTERNAL_CHECK(asts.size() == program.kernels.size(), "c_renderer: one AST per kernel");
    std::string text = "// generated by hedra (" + options.dialect.name + " backend)\n" +
                       c_prelude(options.vector_bytes) + "\n";
    std::string counters = options.entry + "_profile";
    if (options.profile)
        text += "struct hd_timespec { long s, ns; };\n"
                "extern \"C\" int clock_gettime(int, hd_timespec*);\n"
                "static inline long long hd_now_ns() {\n"
                "    hd_timespec t;\n    clock_gettime(" +
                std::to_string(options.profile_clock) +
                ", &t);\n"
                "    return t.s * 1000000000LL + t.ns;\n}\n"
                "extern \"C\" long long " +
                counters + "[" +
                std::to_string(2 * std::max<std::size_t>(program.kernels.size() +
                                                             poly::nested_kernels(program).size(),
                                                         1)) +
                "] = {};\n\n";
    std::unordered_map<std::string, std::string> printed;       // canonical text -> its function
    std::vector<std::pair<std::string, std::string>> functions; // (name, text), printed once
    const std::string token = "hd_kernel";
    // A scan's loop points its slices at rows of their parents in a copy of the pointer table.
    const bool loops = poly::has_loops(program);
    const std::string table = loops ? "hd_b" : "hd_buf";
    auto kernel_call = [&](const poly::Kernel& kernel, const sched::AstNode& ast) {
        KernelPrinter printer(program, kernel, options);
        std::string canonical =
            canonical_kernel_text(printer.print(ast), kernel.name, printer.buffer_names(), token);
        auto [it, first] = printed.emplace(canonical, kernel.name);
        if (first)
            functions.emplace_back(kernel.name,
                                   canonical_kernel_text(canonical, token, {}, kernel.name));
        return printer.call(it->second, table);
    };
    // Profiling: counters per kernel, the loops' kernels numbered after the program's own in
    // depth-first order (poly::nested_kernels).
    int next_nested = static_cast<int>(program.kernels.size());
    auto profiled = [&](const std::string& call, std::size_t k) {
        if (!options.profile) return call;
        std::string at = counters + "[" + std::to_string(2 * k);
        return "    {\n        const long long hd_t0 = hd_now_ns();\n    " + call + "        " +
               at + "] += hd_now_ns() - hd_t0;\n        " + at + " + 1] += 1;\n    }\n";
    };
    std::function<std::string(const poly::Kernel&, const sched::AstNode&, int)> loop_text =
        [&](const poly::Kernel& kernel, const sched::AstNode& ast, int depth) {
            const poly::ScanLoop& loop = *kernel.loop;
            std::string s = scan_loop_head(program, loop, depth, table);
            HEDRA_INTERNAL_CHECK(ast.body.size() == loop.kernels.size(),
                                 "c_renderer: one AST per kernel of a scan's loop");
            for (std::size_t k = 0; k < loop.kernels.size(); ++k) {
                const poly::Kernel& inner = loop.kernels[k];
                const auto index = static_cast<std::size_t>(next_nested++);
                if (inner.loop)
                    s += profiled(loop_text(inner, ast.body[k], depth + 1), index);
                else if (!inner.statements.empty())
                    s += profiled(kernel_call(inner, ast.body[k]), index);
            }
            return s + "    }\n";
        };
    std::string calls;
    for (std::size_t k = 0; k < program.kernels.size(); ++k) {
        const poly::Kernel& kernel = program.kernels[k];
        if (kernel.statements.empty() && !kernel.loop) continue;
        std::string call =
            kernel.loop ? loop_text(kernel, asts[k], 0) : kernel_call(kernel, asts[k]);
        if (options.kernel_hooks)
            call += "    if (hd_h) hd_h->fn(hd_h->ctx, " + std::to_string(k) + ");\n";
        calls += profiled(call, k);
    }
    if (loops) {
        const std::string n = std::to_string(program.buffers.size());
        calls = "    void* hd_b[" + n + "];\n    for (int hd_k = 0; hd_k < " + n +
                "; ++hd_k) hd_b[hd_k] = hd_buf[hd_k];\n" + calls;
    }
    // The symbolic extents' values follow the buffers: hd_buf[buffers] points to them.
    std::string values;
    for (std::size_t k = 0; k < program.params.size(); ++k)
        values += "    const long " + poly::param_value_name(static_cast<int>(k)) +
                  " = ((const long long*)hd_buf[" + std::to_string(program.buffers.size()) + "])[" +
                  std::to_string(k) + "];\n";
    if (options.kernel_hooks)
        values += "    struct hd_hook { void (*fn)(void*, int); void* ctx; };\n"
                  "    const struct hd_hook* hd_h = (const struct hd_hook*)hd_buf[" +
                  std::to_string(program.buffers.size() + 1) + "];\n";
    std::string entry = "extern \"C\" void " + options.entry +
                        "(void** hd_buf, int hd_nt) {\n    (void)hd_buf;\n" + values + calls +
                        "}\n";
    const std::size_t units = std::min<std::size_t>(
        static_cast<std::size_t>(std::max(options.units, 1)), functions.size() / 2);
    if (units <= 1) {
        for (const auto& [name, function] : functions)
            text += function;
        return text + entry;
    }
    // The kernels in `units` translation units of about equal text (largest first, each to the
    // smallest unit), then the entry's unit with their declarations.
    const std::string banner = text.substr(0, text.find('\n') + 1);
    const std::string prelude = banner + c_prelude(options.vector_bytes) + "\n";
    std::vector<std::size_t> order(functions.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return functions[a].second.size() > functions[b].second.size();
    });
    std::vector<std::string> unit_text(units, prelude);
    std::string declarations;
    for (std::size_t i : order) {
        auto& [name, function] = functions[i];
        // The kernel function itself becomes extern "C"; its outlined helpers stay static.
        const std::string head = "static void " + name + "(int hd_nt";
        std::size_t at = function.find(head);
        HEDRA_INTERNAL_CHECK(at != std::string::npos, "c_renderer: no function " + name);
        function.replace(at, 6, "extern \"C\"");
        std::size_t open = function.find(") {\n", at);
        declarations += function.substr(at, open + 1 - at) + ";\n";
        auto smallest = std::min_element(
            unit_text.begin(), unit_text.end(),
            [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
        *smallest += function;
    }
    std::string out = text + declarations + "\n" + entry;
    for (const std::string& unit : unit_text)
        out += kTranslationUnitMarker + unit;
    return out;
}

} // namespace hedra::backend
