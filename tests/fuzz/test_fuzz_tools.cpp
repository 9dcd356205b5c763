// Tests of the fuzzing tools themselves: the generator is deterministic and covers every op
// kind, the analysis classifies values as documented, the runner catches a planted backend bug,
// and the shrinker reduces the failing program to a few ops that still show it.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>

#include "backends/openmp/openmp_backend.hpp"
#include "fuzz/lib/fuzz_analysis.hpp"
#include "fuzz/lib/fuzz_data.hpp"
#include "fuzz/lib/fuzz_generator.hpp"
#include "fuzz/lib/fuzz_runner.hpp"
#include "fuzz/lib/fuzz_shrink.hpp"

using namespace hedra;
using namespace hedra::fuzz;

namespace {

// The openmp backend with a planted bug: every result of a graph that contains a max
// reduction gets its first element incremented.
class PlantedBugBackend : public Backend {
public:
    std::string name() const override { return "fuzz_planted_bug"; }
    std::unique_ptr<hedra::Program> compile(const std::vector<NodePtr>& outputs,
                                            const std::vector<NodePtr>& placeholders,
                                            const CompileOptions& options) override {
        return real_.compile(outputs, placeholders, options);
    }
    std::vector<HostArray> evaluate(const std::vector<NodePtr>& outputs,
                                    const CompileOptions& options) override {
        std::vector<HostArray> r = real_.evaluate(outputs, options);
        bool has_max = false;
        for (const NodePtr& n : topological_order(outputs))
            has_max = has_max || (n->kind == NodeKind::Reduce && n->reduce_op == ReduceOp::Max);
        if (has_max)
            for (HostArray& h : r)
                if (h.size() > 0 && h.dtype() != DType::Bool) {
                    HostArray copy(h.sizes(), h.dtype());
                    for (std::int64_t i = 0; i < h.size(); ++i)
                        copy.set_flat(i, h.flat(i) + (i == 0 ? 1 : 0));
                    h = copy;
                }
        return r;
    }

private:
    backend::OpenMPBackend real_;
};

bool has_max_reduce(const FuzzProgram& p) {
    for (const Op& op : p.ops)
        if (op.kind == OpKind::Reduce && op.reduce_op == ReduceOp::Max) return true;
    return false;
}

} // namespace

TEST_CASE("fuzz tools: the generator is deterministic and covers every op kind") {
    std::set<std::string> kinds;
    std::set<DType> dtypes;
    bool strided = false, offset = false, empty = false, window = false;
    for (std::uint64_t seed = 1; seed <= 300; ++seed) {
        Generated g = generate(seed);
        CHECK(to_cpp(g.program, "x") == to_cpp(generate(seed).program, "x"));
        CHECK(g.rejections.empty());
        for (const Op& op : g.program.ops) {
            kinds.insert(op_kind_name(op.kind));
            if (op.kind == OpKind::Data) dtypes.insert(op.dtype);
            for (const Range& r : op.shape.ranges()) {
                strided = strided || r.step > 1;
                offset = offset || r.start != 0;
                empty = empty || r.size == 0;
            }
            if (op.kind == OpKind::View)
                for (int d = 0; d < op.map.out_rank(); ++d) {
                    int used = 0;
                    for (int k = 0; k < op.map.in_rank(); ++k)
                        used += op.map.coeff(d, k) != 0;
                    window = window || used >= 2;
                }
        }
    }
    CHECK(kinds.size() == 23); // every OpKind
    CHECK(dtypes.size() == 5);
    CHECK(strided);
    CHECK(offset);
    CHECK(empty);
    CHECK(window);
}

TEST_CASE("fuzz tools: exactness classes") {
    FuzzProgram p;
    Op x;
    x.kind = OpKind::Data;
    x.shape = Shape::of({4, 5});
    x.dtype = DType::F32;
    x.seed = 3;
    p.ops.push_back(x);
    Op s;
    s.kind = OpKind::Reduce;
    s.inputs = {0};
    s.axes = {1};
    p.ops.push_back(s); // v1 = sum: approx
    s.reduce_op = ReduceOp::Max;
    p.ops.push_back(s); // v2 = max: zero-sign
    Op m;
    m.kind = OpKind::Map;
    m.inputs = {1};
    m.operands = {{0}};
    m.expr = Expr::binary(ScalarOp::Mul, Expr::in(0), Expr::lit(Expr::Literal::Double, 2.0));
    p.ops.push_back(m); // v3 = 2 * sum: approx, still valid
    p.outputs = {3};
    BuiltProgram b = build(p);
    auto metas = analyze(p, b.values);
    REQUIRE(metas);
    CHECK((*metas)[0].frag == Frag::Exact);
    CHECK((*metas)[1].frag == Frag::Approx);
    CHECK((*metas)[1].err > 0);
    CHECK((*metas)[2].frag == Frag::ZeroSign);
    CHECK((*metas)[3].frag == Frag::Approx);
    CHECK((*metas)[3].err == doctest::Approx(2 * (*metas)[1].err).epsilon(0.01));
    // A comparison of an approximate value could flip: invalid.
    p.ops[3].expr = Expr::binary(ScalarOp::Lt, Expr::in(0), Expr::lit(Expr::Literal::Double, 0.5));
    CHECK_FALSE(analyze(p, build(p).values));
    // ... but of a max (equal up to the sign of zero) it is exact.
    p.ops[3].inputs = {2};
    auto exact = analyze(p, build(p).values);
    REQUIRE(exact);
    CHECK((*exact)[3].frag == Frag::Exact);
}

TEST_CASE("fuzz tools: the runner finds a planted bug and the shrinker isolates it") {
    register_backend("fuzz_planted_bug", [] { return std::make_shared<PlantedBugBackend>(); });
    RunnerOptions planted{true, false, "fuzz_planted_bug"};
    int found = 0;
    for (std::uint64_t seed = 1; seed <= 200 && found < 2; ++seed) {
        FuzzProgram p = generate(seed).program;
        bool uses_placeholders = false;
        for (const Op& op : p.ops)
            uses_placeholders = uses_placeholders || op.placeholder;
        if (!has_max_reduce(p) || uses_placeholders) continue;
        std::vector<RunConfig> configs = {{1, {}}};
        RunResult r = run_differential(p, configs, planted);
        if (r.outcome != Outcome::Mismatch) continue; // e.g. every result empty or bool
        ++found;
        ShrinkStats stats;
        FuzzProgram small = shrink(
            p,
            [&](const FuzzProgram& q) {
                return run_differential(q, configs, planted).outcome == Outcome::Mismatch;
            },
            200, &stats);
        CAPTURE(to_cpp(small, "shrunk"));
        CHECK(has_max_reduce(small));
        CHECK(small.ops.size() <= 4);
        CHECK(small.ops.size() <= p.ops.size());
        CHECK(run_differential(small, configs, planted).outcome == Outcome::Mismatch);
        CHECK(run_differential(small, configs).outcome == Outcome::Pass); // the real backend
        CHECK(to_cpp(small, "shrunk").find("ReduceOp::Max") != std::string::npos);
    }
    CHECK(found == 2);
}

TEST_CASE("fuzz tools: a scan's bound grows with its steps, and the shrinker shortens it") {
    FuzzProgram p;
    Op xs;
    xs.kind = OpKind::Data;
    xs.shape = Shape::of({6, 4});
    xs.dtype = DType::F32;
    xs.seed = 5;
    p.ops.push_back(xs);
    Op init = xs;
    init.shape = Shape::of({4});
    init.seed = 6;
    p.ops.push_back(init);
    Op s;
    s.kind = OpKind::Scan;
    s.inputs = {0, 1};
    s.extra = ScanExtra::Sum; // carry + sum(x): approximate, more so with every step
    s.step = {Expr::binary(ScalarOp::Add, Expr::in(0), Expr::in(2)), Expr::in(1)};
    p.ops.push_back(s);
    p.outputs = {2};
    auto metas = analyze(p, build(p).values);
    REQUIRE(metas);
    CHECK((*metas)[2].frag == Frag::Approx);
    FuzzProgram shorter = p;
    shorter.ops[0].shape = Shape::of({3, 4});
    auto fewer = analyze(shorter, build(shorter).values);
    REQUIRE(fewer);
    CHECK((*fewer)[2].err < (*metas)[2].err);
    // The ys (the slices themselves) stay exact; a comparison of the carry is invalid.
    p.ops[2].scan_value = ScanValue::Ys;
    CHECK((*analyze(p, build(p).values))[2].frag == Frag::Exact);
    p.ops[2].step[0] = Expr::cast(
        Expr::binary(ScalarOp::Lt, s.step[0], Expr::lit(Expr::Literal::Double, 0.5)), DType::F32);
    CHECK_FALSE(analyze(p, build(p).values));

    // Shrinking any generated program with a scan for "it builds and holds a scan" ends at one
    // step.
    auto has_scan = [](const FuzzProgram& q) {
        try {
            build(q);
        } catch (const Error&) {
            return false;
        }
        return std::any_of(q.ops.begin(), q.ops.end(),
                           [](const Op& op) { return op.kind == OpKind::Scan; });
    };
    std::uint64_t seed = 1;
    while (!has_scan(generate(seed).program))
        ++seed;
    FuzzProgram small = shrink(generate(seed).program, has_scan, 300);
    CAPTURE(to_cpp(small, "shrunk"));
    REQUIRE(has_scan(small));
    for (const Op& op : small.ops)
        if (op.kind == OpKind::Scan) {
            const Array xs_value = build(small).values.at(static_cast<std::size_t>(op.inputs[0]));
            int axis = op.axis < 0 ? op.axis + xs_value.rank() : op.axis;
            CHECK(xs_value.shape()[axis].size == 1);
        }
    CHECK(to_cpp(small, "shrunk").find("ScanResult r = scan(") != std::string::npos);
}
