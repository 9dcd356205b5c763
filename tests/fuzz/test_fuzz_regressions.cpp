// Regression tests for bugs the fuzzer found, each the shrunk reproducer of a failing seed.
// Both were found in builds of the openmp backend from the same afternoon and no longer
// reproduce after its scheduler gained direct schedules for lone reductions:
// - seed 300366: a full sum's reduction loop was interchanged and then run as an OpenMP
//   parallel loop (the per-loop parallelism test uses nearest dependences, which no longer
//   order two updates of one element once the reduction counters are reordered): lost updates
//   with 2 threads, different wrong values run to run;
// - linear seeds 138 and 943: the vjp graph of a linear program (pad, sum with keepdims, a
//   flipping view; overwrite of 1-D pieces) computed on openmp differed from the reference by
//   far more than rounding (53.56 vs 62.49), while the dot-product identity held on the
//   reference: a backend bug on gradient graphs, not an AD one;
// - seed 200913: a float max reduction of (b * a) * b gave values one f32 ulp away from the
//   reference's (a rounding skipped or reordered; deterministic, 1 thread).
#include <doctest/doctest.h>

#include "fuzz/lib/fuzz_data.hpp"
#include "fuzz/lib/fuzz_runner.hpp"

using namespace hedra;

namespace {

ComputeOptions openmp_with(int threads, std::vector<std::int64_t> tiles = {}) {
    fuzz::openmp_backend();
    ComputeOptions o;
    o.backend = "openmp";
    o.num_threads = threads;
    o.tile_sizes = std::move(tiles);
    return o;
}

// How many of `runs` evaluations on openmp differ from the reference (evaluate: no memo).
int wrong_runs(const Array& a, int runs, const CompileOptions& o) {
    std::vector<NodePtr> nodes = {a.node()};
    std::vector<double> want = get_backend("reference")->evaluate(nodes, {}).at(0).to_doubles();
    int wrong = 0;
    CompileOptions one = o;
    one.num_threads = 1;
    for (int r = 0; r < runs; ++r) {
        wrong += fuzz::openmp_backend()->evaluate(nodes, r % 2 ? o : one).at(0).to_doubles() != want;
    }
    return wrong;
}

} // namespace

TEST_CASE("fuzz regression: seed 300366, a full i32 sum raced with 2 threads") {
    Array v0 = array(fuzz::leaf<std::int32_t>(93, 7933851179578242019ull, fuzz::ValueKind::SmallInt),
                     Shape{range(31), Range(-4, 1, 3)});
    Array v2 = reduce(ReduceOp::Sum, transpose(v0, {}), {0, -1}, false);
    CompileOptions o = openmp_with(2);
    CHECK(wrong_runs(v2, 200, o) == 0);
    Array v3 = view(v2, Shape{Range(-2, 1, 5), range(1), Range(0, 2, 4)}, AffineMap(3, 0, {}, {}));
    Array v4 = array(fuzz::leaf<float>(20, 2716497864466459293ull, fuzz::ValueKind::Special),
                     Shape{Range(-2, 1, 5), range(1), Range(0, 2, 4)});
    Array v5 = lazy_n_ary([](const std::vector<Sym>& in) { return log(max(in[1], in[0])); },
                          {Operand(v3), Operand(v4)});
    CHECK(wrong_runs(v5, 200, o) == 0);
    Array simple = cast(v3, DType::F32) + v4;
    CHECK(wrong_runs(simple, 200, o) == 0);
    Array bare = v3 * 1;
    CHECK(wrong_runs(bare, 200, o) == 0);
}

TEST_CASE("fuzz regression: reductions are never split across threads without privatization") {
    // Large integer sums (exact), over every subset of axes of transposed and strided views: a
    // reduced loop run in parallel loses updates almost every time at these sizes.
    Array x = array(fuzz::leaf<std::int64_t>(400 * 96, 77, fuzz::ValueKind::SmallInt),
                    Shape{range(400), Range(-3, 2, 96)});
    CompileOptions o = openmp_with(2);
    for (const Array& a : {x, transpose(x, {}), reshape(x, Shape{range(0, 400, 3), Range(-3, 4, 48)})})
        for (std::vector<int> axes : {std::vector<int>{0}, {1}, {0, 1}, {1, 0}}) {
            CAPTURE(a.shape().to_string());
            CAPTURE(axes.size());
            CHECK(wrong_runs(sum(a, axes), 6, o) == 0);
            CHECK(wrong_runs(sum(a * 3, axes, true) + 1, 6, o) == 0);
            CHECK(wrong_runs(max(a, axes), 6, o) == 0);
        }
}

TEST_CASE("fuzz regression: seed 200913, f32 products rounded after every operation") {
    Array v1 = array(fuzz::leaf<float>(13, 3246924266182714387ull, fuzz::ValueKind::Special),
                     Shape{Range(0, 2, 13), range(1)});
    Array v2 = array(fuzz::leaf<float>(143, 3386943290446055421ull, fuzz::ValueKind::Dyadic),
                     Shape{Range(0, 2, 13), range(11)});
    Array v3 = lazy_n_ary([](const std::vector<Sym>& in) { return ((in[1] * in[0]) * in[1]); },
                          {Operand(v1), Operand(v2)});
    Array v4 = reduce(ReduceOp::Max, v3, {0}, false);
    CompileOptions o = openmp_with(1);
    CHECK(wrong_runs(v4, 2, o) == 0);
    CHECK(wrong_runs(v3, 2, o) == 0);
}

TEST_CASE("fuzz regression: linear seed 138, a vjp graph on openmp") {
    Array v0 = array(std::vector<double>{0x1.f5587c161d484p+0, 0x1.ac0d7448ee73p-3, -0x1.af8d338cbdep-8, 0x1.e34e330c5104p-4, -0x1.74f1f19f177e4p-1, -0x1.fed29b14ca0e8p-2, 0x1.fc6b46885ce1p-2, 0x1.6556e8ac31ae4p-1, -0x1.85b3b46b907d4p-1, 0x1.5cec406c9f91ep+0, 0x1.aae7735a7d1ap-2, -0x1.88fc3ed56c3eap+0, 0x1.9b9f17657f2bp-2, -0x1.73992eb41c2acp-1, -0x1.60677ef2e2fcep+0, 0x1.a0258fd3aa4ap-1, -0x1.e101a6b4a312p-2, 0x1.73de881b9d6bep+0, -0x1.e2d24ee0b5fd2p+0, 0x1.47e3bd8729364p-1, 0x1.f9757e0689886p+0, 0x1.327d6ae0b5fbp-3, 0x1.3ac0c9bf1923ap+0, 0x1.c867fe19975acp+0, 0x1.1a499842c1634p-1, -0x1.5a7446ee74f5p-2, -0x1.fc91814bcd6c8p-1, -0x1.6a2a05034090cp-1, -0x1.ba00fd3aacd1ep+0, -0x1.b7be121f27eep-4, 0x1.5aeffa1fa174ep+0, -0x1.646cd63ce83c8p+0, -0x1.85727be91d012p+0, 0x1.f52d509ee6d7cp+0, 0x1.7233f74e162e2p+0}, Shape{Range(4, 1, 5), range(7)});
    Array v1 = array(std::vector<double>{-0x1.ef83252e01a82p+0}, Shape{range(1)});
    Array v2 = array(std::vector<double>{0x1.5009ada6c292ep+0}, Shape{});
    Array v3 = lazy_n_ary([](const std::vector<Sym>& in) { return ((in[0] - (in[1] * Sym(2.0))) + (in[2] * Sym(3.0))); }, {Operand(v0), Operand(v1), Operand(v2)});
    Array v4 = pad(v3, {{2, 0}, {2, 0}}, 0.0);
    Array v5 = reduce(ReduceOp::Sum, v4, {1}, true);
    Array v6 = array(std::vector<double>{-0x1.f94e49aa7ce28p-1, -0x1.76d35a14acap+0, 0x1.b22e13301de9p-2, -0x1.4c594b69036cp-5, -0x1.b12f723855e82p+0, 0x1.48888af542a24p+0, -0x1.2f11636b339dcp+0}, Shape{Range(2, 1, 7), range(1)});
    Array v7 = lazy_n_ary([](const std::vector<Sym>& in) { return (in[0] - (in[1] * Sym(0x1p-1))); }, {Operand(v5), Operand(v6)});
    Array v8 = view(v7, Shape{range(7)}, AffineMap(1, 2, {-1, 0}, {8, 0}));

    Array y = array(fuzz::leaf<double>(v8.size(), 1138, fuzz::ValueKind::Uniform), v8.shape());
    std::vector<Array> pulled = vjp({v8}, {y}, {v0, v1, v2, v6});
    std::vector<NodePtr> nodes;
    for (const Array& a : pulled)
        nodes.push_back(a.node());
    std::vector<HostArray> want = get_backend("reference")->evaluate(nodes, {});
    for (int threads : {1, 2}) {
        std::vector<HostArray> got = fuzz::openmp_backend()->evaluate(nodes, openmp_with(threads));
        for (std::size_t k = 0; k < want.size(); ++k) {
            std::vector<double> g = got[k].to_doubles(), w = want[k].to_doubles();
            for (std::size_t i = 0; i < w.size(); ++i)
                CHECK(g[i] == doctest::Approx(w[i]).epsilon(1e-12));
        }
    }
}

// Found by the symbolic-size fuzz batch once it drew scans (seeds 338 and 347 of
// "fuzz: symbolic sizes"): a scan over an axis of symbolic extent, run with fewer rows than
// the extent's bound, on the reference interpreter. Its stacked outputs (ys, states) throw
// "internal error in hedra: interpreter: scan_output value does not match the node's sizes or
// dtype", and its final carry differs run to run (as if steps past the input's rows ran on
// whatever memory follows them); openmp gave the right values. The specialized graph kept the
// scan's body and length at their bounds.
TEST_CASE("fuzz regression: a scan over a symbolic extent on the reference") {
    Array xs = placeholder(Shape{dynamic("fz", 4), range(3)}, DType::F32, "fz");
    Array h0 = full(Shape{range(3)}, 1.0, DType::F32);
    ScanResult r = scan(
        [](const std::vector<Array>& c, const std::vector<Array>& x) {
            Array n = c[0] + x[0];
            return ScanStep{{n}, {n * 2.0f}};
        },
        {h0}, {xs});
    ComputeOptions ref;
    ref.backend = "reference";
    HostArray rows = array(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape::of({2, 3})).node()->data;
    for (int run = 0; run < 3; ++run) { // the carry's garbage shows in some runs only
        std::vector<HostArray> got =
            compile({r.carries[0], r.ys[0], r.states[0]}, {xs}, ref)({rows});
        CHECK(got[0].to_doubles() == std::vector<double>{6, 8, 10});
        CHECK(got[1].to_doubles() == std::vector<double>{4, 6, 8, 12, 16, 20});
        CHECK(got[2].to_doubles() == std::vector<double>{1, 1, 1, 2, 3, 4});
    }
}
