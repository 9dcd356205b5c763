// Tensor-core contractions (scheduler/gpu_mma.hpp, backends/cuda/render/cuda_mma.cpp) without a
// GPU: which contractions the GPU tile pass puts on mma.sync (bf16 and f16 operands; f32 only
// with allow_tf32) and which stay on the SIMT tiles, and the generated kernels run by the CPU
// emulator, whose warp-collective mma and ldmatrix follow the PTX ISA's fragment layouts,
// against the reference backend and an independent host computation.
#include <cmath>
#include <cstring>

#include "cuda/cuda_programs.hpp"
#include "cuda/cuda_testing.hpp"
#include "cuda/emulator.hpp"
#include "nn/autocast.hpp"
#include "nn/gpt.hpp"

using namespace hedra;

namespace {

bool skip_without_compiler() {
    return test::skip_because(
        test::emulation_compiler().empty() ? "no host C++ compiler to emulate CUDA kernels" : "");
}

HostArray evaluate(const Array& a) {
    return get_backend("reference")->evaluate({a.node()}, {}).at(0);
}

// Data of `dtype` (bf16, f16: f32 values in [-1, 1) rounded), a leaf of the graph.
Array input(const Shape& shape, unsigned seed, DType dtype) {
    Array a = test::cuda_random(shape, seed);
    return dtype == DType::F32 ? a : array(evaluate(cast(a, dtype)));
}

backend::CudaLowerOptions tf32_options() {
    backend::CudaLowerOptions o;
    o.allow_tf32 = true;
    return o;
}

std::vector<HostArray> emulated(const std::vector<Array>& outputs,
                                const backend::CudaLowerOptions& options,
                                std::string* mapping = nullptr) {
    test::LoweredArrays l = test::lower_arrays(outputs, options);
    if (mapping) *mapping = l.cuda.mapping;
    return test::emulate_cuda(l.ir, l.cuda);
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// x rounded to TF32 as cvt.rna does: 10 mantissa bits, ties away from zero.
float tf32(float x) {
    std::uint32_t u;
    std::memcpy(&u, &x, 4);
    u = (u + 0x1000u) & 0xffffe000u;
    std::memcpy(&x, &u, 4);
    return x;
}

} // namespace

TEST_CASE("tensor cores: bf16 and f16 matmuls are mapped to mma.sync with ldmatrix") {
    for (DType dt : {DType::BF16, DType::F16}) {
        CAPTURE(dtype_name(dt));
        Array a = placeholder(Shape::of({1024, 256}), dt),
              b = placeholder(Shape::of({256, 768}), dt);
        test::LoweredArrays l = test::lower_arrays({matmul(a, b)}, {}, {a, b});
        const std::string name = dt == DType::BF16 ? "bf16" : "f16";
        CHECK(has(l.cuda.mapping,
                  " mma=" + name + ".m16n8k16 warps=2x2 frags=2x4 stages=3 ldmatrix"));
        // A (row-major, K contiguous) in rows of M, the reduction innermost; B (N contiguous)
        // in rows of K, read by ldmatrix .trans; both copied 16 bytes at a time by cp.async.
        CHECK(has(l.cuda.mapping, "\n  A read 0 k-inner pitch=40 copy=8"));
        CHECK(has(l.cuda.mapping, "\n  B read 1 k-outer pitch=72 copy=8"));
        REQUIRE(l.cuda.launches.size() == 1);
        CHECK(l.cuda.launches[0].strategy == "contraction_mma");
        CHECK(l.cuda.launches[0].block == std::array<unsigned, 3>{128, 1, 1});
        CHECK(l.cuda.launches[0].grid == std::array<unsigned, 3>{12, 16, 1}); // 64x64 tiles
        // Three stages of A's 64 rows of 32 + 8 halves and B's 32 rows of 64 + 8.
        CHECK(l.cuda.launches[0].shared_bytes == 3 * (64 * 40 + 32 * 72) * 2);
        const std::string& s = l.cuda.source;
        CHECK(has(s, "mma.sync.aligned.m16n8k16.row.col.f32." + name + "." + name + ".f32"));
        CHECK(has(s, "ldmatrix.sync.aligned.m8n8.x4.shared.b16"));
        CHECK(has(s, "hd_ldmatrix_x4(hd_a[hd_i], &hd_sa[hd_s]["));
        CHECK(has(s, "hd_ldmatrix_x2_trans(hd_b[hd_j], &hd_sb[hd_s]["));
        CHECK(has(s, "hd_cp_async16(&hd_sa[hd_next % 3]["));
        CHECK(has(s, "hd_cp_async_wait1();"));
        CHECK(has(s, "hd_mma_" + name + "(hd_acc[hd_i][hd_j], hd_a[hd_i], hd_b[hd_j]);"));
        CHECK(has(s, "float hd_acc[2][4][4];"));
    }
    // Many blocks: 128x128 tiles of 8 warps, each 64x32 (4x4 fragments).
    Array a = placeholder(Shape::of({2048, 1024}), DType::BF16),
          b = placeholder(Shape::of({1024, 2048}), DType::BF16);
    test::LoweredArrays l = test::lower_arrays({matmul(a, b)}, {}, {a, b});
    CHECK(has(l.cuda.mapping, "tile=128x128/64x32 kb=32"));
    CHECK(has(l.cuda.mapping, "warps=2x4 frags=4x4"));
    CHECK(l.cuda.launches.at(0).block == std::array<unsigned, 3>{256, 1, 1});
    CHECK(has(l.cuda.mapping, "stages=2"));                  // three would pass 48 KiB
    CHECK(has(l.cuda.source, "__launch_bounds__(256, 1) ")); // not held to 128 registers
}

TEST_CASE("tensor cores: f32 contractions stay on the SIMT tiles unless allow_tf32") {
    Array a = placeholder(Shape::of({256, 128})), b = placeholder(Shape::of({128, 192}));
    test::LoweredArrays plain = test::lower_arrays({matmul(a, b)}, {}, {a, b});
    backend::CudaLowerOptions simt;
    simt.no_tensor_cores = true;
    test::LoweredArrays without = test::lower_arrays({matmul(a, b)}, simt, {a, b});
    CHECK(plain.cuda.source == without.cuda.source); // f32 unchanged, byte for byte
    CHECK(plain.cuda.mapping == without.cuda.mapping);
    CHECK(!has(plain.cuda.source, "mma"));
    CHECK(plain.cuda.launches.at(0).strategy.rfind("contraction", 0) == 0);
    test::LoweredArrays tf = test::lower_arrays({matmul(a, b)}, tf32_options(), {a, b});
    CHECK(has(tf.cuda.mapping, " mma=tf32.m16n8k8"));
    CHECK(!has(tf.cuda.mapping, "ldmatrix"));
    CHECK(has(tf.cuda.source, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"));
    CHECK(has(tf.cuda.source, "hd_a[hd_i][0] = hd_tf32(hd_sa[hd_s]["));
    CHECK(has(tf.cuda.mapping, "\n  A read 0 k-inner pitch=20 copy=4"));
}

TEST_CASE("tensor cores: shapes and forms the mma path cannot take fall back to SIMT") {
    auto strategy = [](const std::vector<Array>& out, const std::vector<Array>& in,
                       const backend::CudaLowerOptions& o = {}) {
        test::LoweredArrays l = test::lower_arrays(out, o, in);
        return l.cuda.launches.back().strategy;
    };
    Array a = placeholder(Shape::of({64, 64}), DType::BF16),
          b = placeholder(Shape::of({64, 64}), DType::BF16);
    CHECK(strategy({matmul(a, b)}, {a, b}) == "contraction_mma");
    backend::CudaLowerOptions old;
    old.gpu.compute_capability = 75; // mma.sync of bf16 needs sm_80
    CHECK(strategy({matmul(a, b)}, {a, b}, old) == "contraction");
    Array thin = placeholder(Shape::of({8, 64}), DType::BF16); // M below one fragment
    CHECK(strategy({matmul(thin, b)}, {thin, b}) == "contraction");
    Array h = placeholder(Shape::of({64, 64}), DType::F16); // mixed operand formats
    CHECK(strategy({matmul(cast(h, DType::F32), cast(b, DType::F32))}, {h, b}) == "contraction");
    // Not a plain product of the two reads.
    Array p = sum(reshape(cast(a, DType::F32), Shape::of({64, 64, 1})) *
                          reshape(cast(b, DType::F32), Shape::of({1, 64, 64})) +
                      1.0f,
                  {1});
    CHECK(strategy({p}, {a, b}) == "contraction");
    // The architecture compiled for decides (the backend and hedra-aot read it so).
    CHECK(backend::cuda::compute_capability_of("sm_75") == 75);
    CHECK(backend::cuda::compute_capability_of("compute_90a") == 90);
    CHECK(backend::cuda::compute_capability_of("sm_120") == 120);
    CHECK(backend::cuda::compute_capability_of("native") == 0);
    backend::CudaLowerOptions tiles;
    tiles.tile_sizes = {32, 32, 8}; // explicit SIMT tiles
    CHECK(strategy({matmul(a, b)}, {a, b}, tiles) == "contraction");
}

TEST_CASE("tensor cores emulated: bf16 and f16 matmuls, ragged and batched, with epilogues") {
    if (skip_without_compiler()) return;
    for (DType dt : {DType::BF16, DType::F16}) {
        CAPTURE(dtype_name(dt));
        struct Case {
            std::int64_t batch, m, k, n;
        };
        for (Case c : {Case{0, 64, 64, 64}, Case{0, 70, 33, 45}, Case{0, 160, 100, 136},
                       Case{3, 40, 50, 24}}) {
            CAPTURE(c.m);
            CAPTURE(c.k);
            CAPTURE(c.n);
            CAPTURE(c.batch);
            Shape sa = c.batch ? Shape::of({c.batch, c.m, c.k}) : Shape::of({c.m, c.k});
            Shape sb = c.batch ? Shape::of({c.batch, c.k, c.n}) : Shape::of({c.k, c.n});
            Array a = input(sa, 7 + unsigned(c.m), dt), b = input(sb, 11 + unsigned(c.n), dt);
            // A as the transpose of a K x M array: M contiguous, staged in rows of K (ldmatrix
            // .x4.trans).
            const bool transposed = c.m == 160;
            if (transposed) a = transpose(input(Shape::of({c.k, c.m}), 3 + unsigned(c.k), dt));
            Array bias = test::cuda_random(Shape::of({c.n}), 5);
            // f32 results of the exact products (only the order of the sum may differ), the
            // rounded half result, and an epilogue on the accumulators.
            Array exact = matmul(cast(a, DType::F32), cast(b, DType::F32));
            std::vector<Array> outs{exact, matmul(a, b), relu(exact + bias) * 0.5f};
            std::string mapping;
            std::vector<HostArray> got = emulated(outs, {}, &mapping);
            CHECK(has(mapping, std::string(" mma=") + (dt == DType::BF16 ? "bf16" : "f16")));
            const std::size_t a_line = mapping.find("  A read");
            REQUIRE(a_line != std::string::npos);
            CHECK(has(mapping.substr(a_line, mapping.find('\n', a_line) - a_line),
                      transposed ? "k-outer" : "k-inner"));
            for (std::size_t k = 0; k < outs.size(); ++k) {
                CAPTURE(k);
                HostArray want = evaluate(outs[k]);
                // Half results: a sum that differs in its last f32 bits may round to the
                // neighbouring half value (2^-8 relative for bf16, 2^-11 for f16).
                double rtol = k == 1 ? (dt == DType::BF16 ? 8e-3 : 1e-3) : 1e-5;
                test::check_same(got[k], want, false, rtol, 1e-5);
            }
        }
    }
}

TEST_CASE("tensor cores emulated: bf16 convolutions as implicit GEMMs") {
    if (skip_without_compiler()) return;
    // The reduction members (input channels × kernel rows × kernel columns) are one flattened
    // K: 3×3 kernels, copied element by element; 1×8 kernels, whose weights are copied 16 bytes
    // at a time (each run one kernel row).
    auto f32 = [](const Array& x) { return cast(x, DType::F32); };
    struct Case {
        Shape x, w;
        std::int64_t stride;
        const char* weights; // the weights' staging (the A operand)
    };
    for (const Case& c : {Case{Shape::of({2, 8, 19, 19}), Shape::of({16, 8, 3, 3}), 1, "copy=0"},
                          Case{Shape::of({2, 8, 19, 19}), Shape::of({16, 8, 3, 3}), 2, "copy=0"},
                          Case{Shape::of({2, 8, 6, 24}), Shape::of({16, 8, 1, 8}), 1, "copy=8"}}) {
        CAPTURE(c.stride);
        CAPTURE(c.weights);
        Array x = input(c.x, 31, DType::BF16), w = input(c.w, 32, DType::BF16);
        Array bias = test::cuda_random(Shape::of({16, 1, 1}), 33);
        Array y = test::cuda_conv2d(f32(x), f32(w), c.stride);
        std::vector<Array> outs{y, relu(y + bias)};
        std::string mapping;
        std::vector<HostArray> got = emulated(outs, {}, &mapping);
        CHECK(has(mapping, " mma=bf16.m16n8k16"));
        CHECK(has(mapping, std::string("  A read 1 k-inner pitch=40 ") + c.weights));
        // Batch × rows × columns are one N, tiled together (nothing left over blockIdx.z).
        CHECK(has(mapping, " z=- "));
        CHECK(has(mapping, " N=0,2,3"));
        for (std::size_t k = 0; k < outs.size(); ++k)
            test::check_same(got[k], evaluate(outs[k]), false, 1e-5, 1e-5);
    }
}

TEST_CASE("tensor cores: output members read by one operand only are flattened into M or N") {
    // A projection of a batch of token rows: batch × tokens is one M of 8·256 rows, the blocks
    // tile it as one matrix (not 8 launches' worth of blockIdx.z over 256 rows each).
    Array x = placeholder(Shape::of({8, 256, 384}), DType::BF16),
          w = placeholder(Shape::of({384, 1152}), DType::BF16);
    test::LoweredArrays l = test::lower_arrays({matmul(x, w)}, {}, {x, w});
    CHECK(has(l.cuda.mapping, " z=- "));
    CHECK(has(l.cuda.mapping, " M=0,1"));
    CHECK(l.cuda.launches.at(0).grid == std::array<unsigned, 3>{9, 16, 1}); // 128x128 tiles
    CHECK(has(l.cuda.source, " hd_mf = hd_m0 + hd_o;"));
    // A batched product whose operands both walk the batch keeps it over blockIdx.z.
    Array q = placeholder(Shape::of({4, 64, 32}), DType::BF16),
          k = placeholder(Shape::of({4, 32, 64}), DType::BF16);
    test::LoweredArrays b = test::lower_arrays({matmul(q, k)}, {}, {q, k});
    CHECK(has(b.cuda.mapping, " z=0 "));
    CHECK(!has(b.cuda.mapping, " M="));
    CHECK(!has(b.cuda.mapping, " N="));
}

TEST_CASE("tensor cores emulated: flattened M and N members, ragged, with epilogues") {
    if (skip_without_compiler()) return;
    // M = 3 × 13 rows (ragged against the 16-row fragments and across batch entries), N = 40;
    // the transposed product puts the flattened members into N, whose innermost extent (20)
    // holds whole 8-byte runs of the cp.async copies and not 16-byte ones.
    Array x = input(Shape::of({3, 13, 48}), 41, DType::BF16),
          w = input(Shape::of({48, 40}), 42, DType::BF16);
    Array bias = test::cuda_random(Shape::of({40}), 43);
    Array y = matmul(cast(x, DType::F32), cast(w, DType::F32));
    Array u = input(Shape::of({24, 48}), 44, DType::BF16),
          v = input(Shape::of({2, 48, 20}), 45, DType::BF16);
    Array yt = matmul(cast(u, DType::F32), cast(v, DType::F32)); // [2, 24, 20]: N = batch × 20
    std::vector<Array> outs{y, relu(y + bias), matmul(x, w), yt};
    std::string mapping;
    std::vector<HostArray> got = emulated(outs, {}, &mapping);
    CHECK(has(mapping, " M=0,1"));
    CHECK(has(mapping, " N=0,2"));
    for (std::size_t k = 0; k < outs.size(); ++k) {
        CAPTURE(k);
        test::check_same(got[k], evaluate(outs[k]), false, k == 2 ? 8e-3 : 1e-5, 1e-5);
    }
}

TEST_CASE("tensor cores emulated: TF32 rounds the f32 inputs (allow_tf32)") {
    if (skip_without_compiler()) return;
    const std::int64_t m = 72, k = 40, n = 56;
    Array a = input(Shape::of({m, k}), 3, DType::F32), b = input(Shape::of({k, n}), 4, DType::F32);
    Array bias = test::cuda_random(Shape::of({n}), 6);
    std::vector<Array> outs{matmul(a, b), tanh(matmul(a, b) + bias)};
    std::string mapping;
    std::vector<HostArray> got = emulated(outs, tf32_options(), &mapping);
    CHECK(has(mapping, " mma=tf32.m16n8k8"));
    // Independent: the product of the TF32-rounded inputs, in double.
    HostArray ha = evaluate(a), hb = evaluate(b), exact = evaluate(outs[0]);
    HostArray want(exact.sizes(), DType::F32);
    double off_exact = 0;
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            double s = 0;
            for (std::int64_t q = 0; q < k; ++q)
                s += double(tf32(float(ha.flat(i * k + q)))) *
                     double(tf32(float(hb.flat(q * n + j))));
            want.set_flat(i * n + j, s);
            off_exact = std::max(off_exact, std::fabs(s - exact.flat(i * n + j)));
        }
    test::check_same(got[0], want, false, 1e-5, 1e-5);
    // TF32 is coarser than f32: the inputs' rounding shows against the exact f32 product
    // (about 2^-11 relative per input), within the bound PyTorch's allow_tf32 accepts.
    CHECK(off_exact > 1e-4);
    test::check_same(got[0], exact, false, 1e-2, 1e-2);
    test::check_same(got[1], evaluate(outs[1]), false, 1e-2, 1e-2);
    // Off by default: the same program on the SIMT tiles agrees with f32 closely.
    std::vector<HostArray> f32 = emulated(outs, {});
    test::check_same(f32[0], exact, false, 1e-5, 1e-5);
}

TEST_CASE("tensor cores emulated: the warps' shared-memory accesses are ordered by barriers") {
    if (skip_without_compiler()) return;
    // Five chunks through three stages of cp.async: the copies refill stages that other warps
    // read a chunk before (without the barrier ahead of each refill this fails); bf16 through
    // ldmatrix, f32 through TF32's fragment loads.
    for (DType dt : {DType::BF16, DType::F32}) {
        CAPTURE(dtype_name(dt));
        const std::int64_t k = dt == DType::BF16 ? 160 : 80; // five chunks of 32, of 16
        Array a = input(Shape::of({48, k}), 21, dt), b = input(Shape::of({k, 40}), 22, dt);
        test::LoweredArrays l = test::lower_arrays({matmul(a, b)}, tf32_options());
        REQUIRE(l.cuda.launches.at(0).strategy == "contraction_mma");
        CHECK(has(l.cuda.mapping, "stages=3"));
        CHECK(has(l.cuda.source, "hd_cp_async16("));
        std::string report = test::race_check(l.ir, l.cuda);
        if (report.rfind("skipped:", 0) == 0) {
            test::skip_because(report.substr(9));
            return;
        }
        CHECK_MESSAGE(report.empty(), report);
    }
}

TEST_CASE("tensor cores emulated: a bf16 GPT training step's contractions take mma.sync") {
    if (skip_without_compiler()) return;
    // nn's autocast rounds a contraction's operands to bf16 and reads them in f32 inside the
    // products (nn/autocast.hpp): the form the tile pass puts on tensor cores. The step's loss
    // and gradients, emulated, against the reference backend's run of the same graph.
    nn::GptConfig cfg;
    cfg.vocab = 40, cfg.block = 16, cfg.layers = 1, cfg.heads = 2, cfg.embd = 32;
    std::vector<Array> params;
    for (const HostArray& p : nn::gpt_init(cfg, 5))
        params.push_back(array(p));
    std::vector<std::int64_t> tok, tgt;
    for (int i = 0; i < 2 * 16; ++i) {
        tok.push_back((7 * i + 3) % 40);
        tgt.push_back((7 * i + 4) % 40);
    }
    Array tokens = array(HostArray::from(tok, {2, 16})),
          targets = array(HostArray::from(tgt, {2, 16}));
    std::vector<Array> outs;
    {
        nn::Autocast bf16(DType::BF16);
        Array loss = nn::gpt_loss(cfg, params, tokens, targets);
        outs = grad(loss, params);
        outs.insert(outs.begin(), loss);
    }
    test::LoweredArrays l = test::lower_arrays(outs, {});
    int mma = 0;
    for (const backend::CudaLaunch& launch : l.cuda.launches)
        mma += launch.strategy == "contraction_mma";
    MESSAGE("bf16 GPT step: " << mma << " of " << l.cuda.launches.size()
                              << " launches on tensor cores");
    // The blocks' linear layers forward, and backward their input and weight gradients: the
    // gradient of a bf16 activation is read as bf16 (PartitionOptions::half_operands), not
    // widened to an f32 buffer first. 5 of 87 launches without that.
    CHECK(mma >= 10);
    std::vector<HostArray> got = test::emulate_cuda(l.ir, l.cuda);
    std::vector<NodePtr> nodes;
    for (const Array& a : outs)
        nodes.push_back(a.node());
    std::vector<HostArray> want = get_backend("reference")->evaluate(nodes, {});
    REQUIRE(got.size() == want.size());
    for (std::size_t k = 0; k < got.size(); ++k) {
        CAPTURE(k);
        // Sums in another order may round a bf16 activation the other way: 1e-2 of the values.
        test::check_same(got[k], want[k], false, 1e-2, 1e-3);
    }
}
