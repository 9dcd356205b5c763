// The generated CUDA kernels of every test program, run by the CPU emulator (emulator.hpp),
// against the reference backend: the templates as chosen, the generic isl mapping, and the
// contraction with small and odd tiles (partial tiles, chunks that do not divide) and with the
// 8x8 and 2x8 register tiles (vector fragment loads of 4 and 2 elements). Integer,
// bool and non-reduction results must agree bit for bit, float reductions within a tolerance.
#include "cuda/cuda_programs.hpp"
#include "cuda/cuda_testing.hpp"
#include "cuda/emulator.hpp"

using namespace hedra;

namespace {

bool skip_without_compiler() {
    return test::skip_because(
        test::emulation_compiler().empty() ? "no host C++ compiler to emulate CUDA kernels" : "");
}

void check_emulated(const test::CudaTestProgram& p, const backend::CudaLowerOptions& options) {
    CAPTURE(p.name);
    std::vector<Array> outputs = p.build();
    std::vector<NodePtr> nodes;
    for (const Array& a : outputs)
        nodes.push_back(a.node());
    std::vector<HostArray> want = get_backend("reference")->evaluate(nodes, {});
    test::LoweredArrays l = test::lower_arrays(outputs, options);
    std::vector<HostArray> got = test::emulate_cuda(l.ir, l.cuda);
    REQUIRE(got.size() == want.size());
    for (std::size_t k = 0; k < got.size(); ++k) {
        CAPTURE(k);
        test::check_same(got[k], want[k], p.exact);
    }
}

} // namespace

TEST_CASE("cuda emulation: every test program with the kernel templates") {
    if (skip_without_compiler()) return;
    for (const test::CudaTestProgram& p : test::cuda_test_programs())
        check_emulated(p, {});
}

TEST_CASE("cuda emulation: every test program with the generic isl mapping") {
    if (skip_without_compiler()) return;
    backend::CudaLowerOptions o;
    o.generic_only = true;
    for (const test::CudaTestProgram& p : test::cuda_test_programs())
        check_emulated(p, o);
}

TEST_CASE("cuda emulation: contractions with small and odd tiles") {
    if (skip_without_compiler()) return;
    for (std::vector<std::int64_t> tiles : {std::vector<std::int64_t>{1},
                                            {3},
                                            {16, 8, 5},
                                            {40, 24, 3},
                                            {64, 64, 16},
                                            {128, 128, 8},
                                            {32, 128, 4}}) {
        CAPTURE(tiles.size());
        CAPTURE(tiles[0]);
        backend::CudaLowerOptions o;
        o.tile_sizes = tiles;
        for (const char* name :
             {"matmul", "batched matmul", "conv2d", "odd matmul", "integer matmul"})
            check_emulated(test::cuda_test_program(name), o);
    }
}

// The kernels that share memory within a block (contractions, block and split reductions), run
// under ThreadSanitizer: every shared access ordered by the barriers (emulator.hpp).
TEST_CASE("cuda emulation: no shared-memory races (ThreadSanitizer)") {
    if (skip_without_compiler()) return;
    auto check = [](const char* name, const backend::CudaLowerOptions& o) {
        CAPTURE(name);
        test::LoweredArrays l = test::lower_arrays(test::cuda_test_program(name).build(), o);
        std::string report = test::race_check(l.ir, l.cuda);
        if (report.rfind("skipped: ", 0) == 0) return !test::skip_because(report.substr(9));
        CHECK_MESSAGE(report.empty(), report);
        return true;
    };
    for (const char* name : {"reductions over axis 1", "long reduction (split)", "softmax",
                             "conv2d", "aligned matmul", "epilogues", "split contraction",
                             "multi-value reductions over long rows (chunks, ties, an "
                             "order-dependent combiner)"})
        if (!check(name, {})) return;
    for (std::vector<std::int64_t> tiles : {std::vector<std::int64_t>{128, 128, 8}, {40, 24, 3}}) {
        CAPTURE(tiles[0]);
        backend::CudaLowerOptions o;
        o.tile_sizes = tiles;
        for (const char* name : {"matmul", "batched matmul", "conv2d", "integer matmul"})
            if (!check(name, o)) return;
    }
    // A limit that leaves room for one buffer only: the single-buffered protocol.
    backend::CudaLowerOptions one;
    one.gpu.shared_memory_per_block = 3000;
    check("matmul", one);
}

// Long f32 sums on the GPU path: the partition accumulates them in f64 (wide sums) and
// contractions sum K in chunks, so the emulated kernels agree with a double-precision sum
// computed here to 1e-6, however long the sum.
TEST_CASE("cuda emulation: long f32 sums are accurate to 1e-6") {
    if (skip_without_compiler()) return;
    std::mt19937 g(5);
    std::uniform_real_distribution<float> d(0.0f, 1.0f);
    std::vector<float> v(100'000'000);
    for (float& x : v)
        x = d(g);
    for (std::int64_t n : {std::int64_t{10'000'000}, std::int64_t{100'000'000}}) {
        CAPTURE(n);
        double exact = 0;
        for (std::int64_t i = 0; i < n; ++i)
            exact += v[static_cast<std::size_t>(i)];
        Array a = array(v.data(), Shape::of({n}), Ownership::Borrow);
        test::LoweredArrays l = test::lower_arrays({sum(a)});
        std::vector<HostArray> got = test::emulate_cuda(l.ir, l.cuda);
        CHECK(std::abs(got[0].flat(0) - exact) / exact <= 1e-6);
    }
    const std::int64_t rows = 4, k = 100'000; // a matmul with K = 10^5
    double row0 = 0;
    for (std::int64_t i = 0; i < k; ++i)
        row0 +=
            static_cast<double>(v[static_cast<std::size_t>(i)]) * v[static_cast<std::size_t>(i)];
    Array m = array(v.data(), Shape::of({rows, k}), Ownership::Borrow);
    test::LoweredArrays l = test::lower_arrays({matmul(m, transpose(m))});
    std::vector<HostArray> got = test::emulate_cuda(l.ir, l.cuda);
    CHECK(std::abs(got[0].flat(0) - row0) / row0 <= 1e-6);
}
