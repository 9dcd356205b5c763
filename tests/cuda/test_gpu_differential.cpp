// On a GPU: every test program evaluated by the "cuda" backend against the reference backend
// (also with small tiles and larger sizes), compiled programs rerun with new inputs, and device
// residency: feeding a result back in uploads nothing. Without a device each test prints
// "skipped: no CUDA device (...)".
#include "cuda/cuda_programs.hpp"
#include "cuda/cuda_testing.hpp"

using namespace hedra;

namespace {

std::shared_ptr<backend::CudaBackend> cuda_backend() {
    return std::dynamic_pointer_cast<backend::CudaBackend>(get_backend("cuda"));
}

// `atol` for floats that are not exact: the default suits short sums; long dot products need
// more (below).
void check_on_device(const std::vector<Array>& outputs, bool exact, const CompileOptions& o = {},
                     double atol = 1e-5) {
    std::vector<NodePtr> nodes;
    for (const Array& a : outputs)
        nodes.push_back(a.node());
    std::vector<HostArray> want = get_backend("reference")->evaluate(nodes, {});
    std::vector<HostArray> got = get_backend("cuda")->evaluate(nodes, o);
    REQUIRE(got.size() == want.size());
    for (std::size_t k = 0; k < got.size(); ++k) {
        CAPTURE(k);
        // Device math (exp, log, pow in double) may differ from the host's in the last bit.
        test::check_same(got[k], want[k], false, exact ? 1e-6 : 1e-4, exact ? 1e-7 : atol);
    }
}

} // namespace

TEST_CASE("cuda device: every test program against the reference") {
    if (test::skip_without_device()) return;
    for (const test::CudaTestProgram& p : test::cuda_test_programs()) {
        CAPTURE(p.name);
        check_on_device(p.build(), p.exact);
        CompileOptions small;
        small.tile_sizes = {16, 8, 5};
        check_on_device(p.build(), p.exact, small);
    }
}

TEST_CASE("cuda device: larger contractions and reductions") {
    if (test::skip_without_device()) return;
    Array a = test::cuda_random(Shape::of({300, 257}), 41),
          b = test::cuda_random(Shape::of({257, 515}), 42);
    check_on_device({matmul(a, b)}, false);
    Array big = test::cuda_random(Shape::of({1000, 1000}), 43);
    check_on_device({sum(big), sum(big, {0}), max(big, {1})}, false);
    // 1000 products of values in [-1, 1): entries of about ±10, each rounded at every partial
    // sum (fused multiply-adds on the device, in another order than the reference's), so an
    // entry that cancels to 0.006 is off by ~1e-5 (seen on an H200: 32 of 10^6 entries beyond
    // 1e-5). 1e-3 still fails any wrong index or missed chunk, which is off by ~1.
    check_on_device({matmul(big, big)}, false, {}, 1e-3);
    Array x = test::cuda_random(Shape::of({8, 16, 28, 28}), 44),
          w = test::cuda_random(Shape::of({32, 16, 5, 5}), 45);
    check_on_device({test::cuda_conv2d(x, w, 1)}, false);
}

TEST_CASE("cuda device: a compiled program reruns with new inputs; results stay resident") {
    if (test::skip_without_device()) return;
    Array p = placeholder(Shape::of({64, 64})), q = placeholder(Shape::of({64, 64}));
    ComputeOptions o;
    o.backend = "cuda";
    CompiledProgram step = compile({matmul(p, q) * 0.5f, p + 1.0f}, {p, q}, o);
    auto host = [](unsigned seed) {
        std::vector<float> v(64 * 64);
        for (std::size_t i = 0; i < v.size(); ++i)
            v[i] = static_cast<float>((i * 37 + seed) % 17) / 16.0f - 0.5f;
        return HostArray::from(v, {64, 64});
    };
    HostArray x = host(1), y = host(2);
    auto before = cuda_backend()->stats();
    std::vector<HostArray> r1 = step({x, y});
    std::vector<HostArray> r2 = step({r1[1], y}); // r1[1] is already on the device
    auto after = cuda_backend()->stats();
    CHECK(after.uploads - before.uploads == 3);
    CHECK(after.resident_inputs - before.resident_inputs == 1);
    std::vector<HostArray> want =
        get_backend("reference")
            ->compile({(matmul(p, q) * 0.5f).node(), (p + 1.0f).node()}, {p.node(), q.node()}, {})
            ->run({r1[1], y});
    test::check_same(r2[0], want[0], false);
    test::check_same(r2[1], want[1], true);
}

TEST_CASE("cuda device: compute on a rebuilt graph hits the program cache") {
    if (test::skip_without_device()) return;
    ComputeOptions o;
    o.backend = "cuda";
    auto build = [] {
        Array x = test::cuda_random(Shape::of({33, 17}), 46);
        return sum(exp(x) * 2.0f, {1});
    };
    compute(build(), o);
    auto before = cuda_backend()->stats();
    compute(build(), o);
    auto after = cuda_backend()->stats();
    CHECK(after.program_cache_hits == before.program_cache_hits + 1);
    CHECK(after.programs_compiled == before.programs_compiled);
}
