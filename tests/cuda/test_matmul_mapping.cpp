// Structure of the generated matmul (no GPU needed): one contraction launch, the grid and block
// sizes of the PPCG mapping (an output tile per block, a register tile per thread), A and B
// tiles promoted to __shared__ memory within 48 KiB (k-major, so each thread loads its operands
// with vector loads into register fragments), the hot loop reading only those fragments with
// fused multiply-adds, and batches over blockIdx.z.
#include "cuda/cuda_programs.hpp"
#include "cuda/cuda_testing.hpp"

using namespace hedra;

namespace {

test::LoweredArrays lower_matmul(std::int64_t batch, std::int64_t m, std::int64_t k,
                                 std::int64_t n) {
    Shape sa = batch ? Shape::of({batch, m, k}) : Shape::of({m, k});
    Shape sb = batch ? Shape::of({batch, k, n}) : Shape::of({k, n});
    Array a = placeholder(sa), b = placeholder(sb);
    return test::lower_arrays({matmul(a, b)}, {}, {a, b});
}

const backend::CudaLaunch& only_launch(const test::LoweredArrays& l) {
    REQUIRE(l.cuda.launches.size() == 1);
    return l.cuda.launches[0];
}

// The lines of the source that accumulate into the register tile.
std::vector<std::string> fma_lines(const std::string& source) {
    std::vector<std::string> lines;
    std::size_t at = 0;
    while ((at = source.find("__fmaf_rn(", at)) != std::string::npos) {
        std::size_t begin = source.rfind('\n', at) + 1, end = source.find('\n', at);
        lines.push_back(source.substr(begin, end - begin));
        at = end;
    }
    return lines;
}

} // namespace

TEST_CASE("cuda mapping: matmul 1024 uses 64x64 tiles, 4x4 per thread, A and B in shared") {
    test::LoweredArrays l = lower_matmul(0, 1024, 1024, 1024);
    const backend::CudaLaunch& c = only_launch(l);
    CHECK(c.strategy == "contraction");
    CHECK(c.grid == std::array<unsigned, 3>{16, 16, 1});
    CHECK(c.block == std::array<unsigned, 3>{16, 16, 1});
    // A transposed and B: 16 rows of k x 64, row pitch 68 (16-byte rows, 4 mod 32 words: the
    // transposed stores of A are free of bank conflicts).
    // Two buffers of each: the next chunk is loaded into registers while this one is folded.
    CHECK(c.shared_bytes == 2 * (16 * 68 + 16 * 68) * 4);
    const std::string& s = l.cuda.source;
    CHECK(s.find("__shared__ __align__(16) float hd_s0[2][1088];") != std::string::npos);
    CHECK(s.find("__shared__ __align__(16) float hd_s1[2][1088];") != std::string::npos);
    // Prefetch: the tiles divide 1024, so no bounds tests, and one 16-byte load per thread
    // and operand (A's rows along k, B's along n).
    CHECK(s.find("hd_r0[hd_i * 4 + 0] = hd_v.x;") != std::string::npos);
    CHECK(s.find("*reinterpret_cast<const float4*>(&b0[") != std::string::npos);
    CHECK(s.find("*reinterpret_cast<const float4*>(&b1[") != std::string::npos);
    // B's rows stay rows in shared memory: one 16-byte store per load (A is transposed, four)
    CHECK(s.find("*reinterpret_cast<float4*>(&hd_s1[hd_buf ^ 1][") != std::string::npos);
    CHECK(s.find("*reinterpret_cast<float4*>(&hd_s0[") == std::string::npos);
    CHECK(s.find("< 1024L) ? b0[") == std::string::npos);
    CHECK(s.find("hd_s0[hd_buf ^ 1][") != std::string::npos); // into the other buffer
    CHECK(s.find("&hd_s0[hd_buf][") != std::string::npos);    // fold from this one
    CHECK(s.find("float hd_acc[4][4];") != std::string::npos);
    CHECK(s.find("__syncthreads();") != std::string::npos);
    auto lines = fma_lines(s);
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].find("hd_acc[hd_tm][hd_tn]") != std::string::npos);
    // The operands come from register fragments, loaded from the staged copies with one 16-byte
    // load each (a thread's 4 rows, and its 4 columns, are consecutive).
    CHECK(s.find("= hd_f0[hd_tm];") != std::string::npos);
    CHECK(s.find("= hd_f1[hd_tn];") != std::string::npos);
    CHECK(s.find("float hd_f0[4];") != std::string::npos);
    CHECK(s.find("hd_w = *reinterpret_cast<const float4*>(&hd_s0[") != std::string::npos);
    CHECK(s.find("hd_w = *reinterpret_cast<const float4*>(&hd_s1[") != std::string::npos);
}

TEST_CASE("cuda mapping: matmul 4096 uses 128x128 tiles with an 8x8 register tile") {
    test::LoweredArrays l = lower_matmul(0, 4096, 4096, 4096);
    const backend::CudaLaunch& c = only_launch(l);
    CHECK(c.strategy == "contraction");
    CHECK(c.grid == std::array<unsigned, 3>{32, 32, 1});
    CHECK(c.block == std::array<unsigned, 3>{16, 16, 1});
    // Chunks of 16 (two buffers of A's 16x128 and B's 16x128, rows padded to 132).
    CHECK(c.shared_bytes == 2 * (16 * 132 + 16 * 132) * 4);
    CHECK(c.shared_bytes <= 48 * 1024);
    CHECK(l.cuda.source.find("float hd_acc[8][8];") != std::string::npos);
    // 8 rows per thread in two groups of 4: ty·4 + {0..3} and 64 + ty·4 + {0..3}.
    CHECK(l.cuda.source.find("float hd_f0[8];") != std::string::npos);
    CHECK(l.cuda.source.find("hd_g * 64 + hd_ty * 4") != std::string::npos);
    CHECK(l.cuda.source.find("hd_g * 64 + hd_tx * 4") != std::string::npos);
    // 32-bit index arithmetic (every buffer fits in int) and two blocks per multiprocessor:
    // ptxas fits the kernel in 128 registers without spills.
    CHECK(l.cuda.source.find("__launch_bounds__(256, 2)") != std::string::npos);
    CHECK(l.cuda.source.find("const int hd_m0 = (int)blockIdx.y * 128") != std::string::npos);
    if (!test::skip_without_nvrtc())
        CHECK_NOTHROW(backend::cuda::Nvrtc::instance().compile(l.cuda.source, "compute_90"));
}

TEST_CASE("cuda mapping: 128x128 tiles from one block per multiprocessor up") {
    // N = 2048: 256 blocks of 128x128 on 132 multiprocessors, two resident on each (measured
    // on an H200: 0.39 ms, against 0.55 ms for 1024 blocks of 64x64).
    CHECK(only_launch(lower_matmul(0, 2048, 2048, 2048)).grid ==
          std::array<unsigned, 3>{16, 16, 1});
    // N = 1024: 64 such blocks would leave half the multiprocessors idle: 64x64.
    CHECK(only_launch(lower_matmul(0, 1024, 1024, 1024)).grid ==
          std::array<unsigned, 3>{16, 16, 1});
}

TEST_CASE("cuda mapping: non-square and batched matmuls") {
    test::LoweredArrays l = lower_matmul(0, 300, 77, 1000);
    const backend::CudaLaunch& c = only_launch(l);
    CHECK(c.strategy == "contraction");
    CHECK(c.grid[0] * 32 >= 1000);
    CHECK(c.grid[1] * 32 >= 300);
    test::LoweredArrays b = lower_matmul(8, 256, 64, 128);
    const backend::CudaLaunch& cb = only_launch(b);
    CHECK(cb.strategy == "contraction");
    CHECK(cb.grid[2] == 8); // batches over blockIdx.z
    CHECK(cb.block[0] * cb.block[1] == 256);
}

TEST_CASE("cuda mapping: user tile sizes and the shared memory bound") {
    Array a = placeholder(Shape::of({512, 512})), b = placeholder(Shape::of({512, 512}));
    backend::CudaLowerOptions o;
    o.tile_sizes = {32, 64, 8};
    test::LoweredArrays l = test::lower_arrays({matmul(a, b)}, o, {a, b});
    const backend::CudaLaunch& c = only_launch(l);
    CHECK(c.grid == std::array<unsigned, 3>{8, 16, 1});
    CHECK(c.block == std::array<unsigned, 3>{16, 16, 1});
    CHECK(l.cuda.source.find("float hd_acc[2][4];") != std::string::npos);
    o.tile_sizes = {32, 32, 16};
    // 32x32 tiles: A and B are 16 rows of k x 32 (pitch 36), 2x2 per thread.
    test::LoweredArrays l32 = test::lower_arrays({matmul(a, b)}, o, {a, b});
    CHECK(only_launch(l32).shared_bytes == 2 * (16 * 36 + 16 * 36) * 4);
    CHECK(l32.cuda.source.find("reinterpret_cast<const float2*>(&hd_s0[") != std::string::npos);
    o.gpu.shared_memory_per_block = 2400; // room for one A tile (2304 bytes) only: one buffer
    test::LoweredArrays small = test::lower_arrays({matmul(a, b)}, o, {a, b});
    CHECK(only_launch(small).shared_bytes == 16 * 36 * 4);
    CHECK(small.cuda.source.find("float hd_s0[576];") != std::string::npos);
    CHECK(small.cuda.source.find("hd_buf") == std::string::npos);
    CHECK(small.cuda.source.find("hd_s0[") != std::string::npos);
    CHECK(small.cuda.source.find("hd_s1[") == std::string::npos);
}

TEST_CASE("cuda mapping: a reduction without a parallel outer loop is a block or split reduction") {
    Array x = placeholder(Shape::of({1 << 20}));
    test::LoweredArrays l = test::lower_arrays({sum(x)}, {}, {x});
    REQUIRE(l.cuda.launches.size() == 2);
    CHECK(l.cuda.launches[0].strategy == "split_partial");
    CHECK(l.cuda.launches[1].strategy == "split_final");
    CHECK(l.cuda.scratch.size() == 1);
    Array rows = placeholder(Shape::of({100, 5000}));
    test::LoweredArrays r = test::lower_arrays({max(rows, {1})}, {}, {rows});
    REQUIRE(r.cuda.launches.size() == 1);
    CHECK(r.cuda.launches[0].strategy == "block_reduction");
    CHECK(r.cuda.launches[0].grid[0] == 100);
    Array cols = placeholder(Shape::of({5000, 4096}));
    test::LoweredArrays c = test::lower_arrays({sum(cols, {0})}, {}, {cols});
    REQUIRE(c.cuda.launches.size() == 1);
    CHECK(c.cuda.launches[0].strategy == "serial_reduction"); // threads along contiguous columns
}

TEST_CASE("cuda mapping: an SGD update of a matmul runs in the contraction's store") {
    Array a = placeholder(Shape::of({256, 512})), b = placeholder(Shape::of({512, 384}));
    Array w = placeholder(Shape::of({256, 384}));
    test::LoweredArrays l = test::lower_arrays({w - 0.01f * matmul(a, b)}, {}, {a, b, w});
    const backend::CudaLaunch& c = only_launch(l);
    CHECK(c.strategy == "contraction");
    REQUIRE(l.ir.kernels.size() == 1);
    REQUIRE(l.ir.kernels[0].statements.size() == 3);
    const poly::Statement& update = l.ir.kernels[0].statements[1];
    // The sum is read only by the update: never stored, the accumulators feed the epilogue.
    std::string sum = l.ir.buffers.at(static_cast<std::size_t>(update.write_buffer)).name;
    CHECK(l.cuda.source.find(sum + "[") == std::string::npos);
    CHECK(l.cuda.source.find("hd_acc[hd_tm][hd_tn])") != std::string::npos);
    // Read elsewhere too (an output), it is stored as well.
    Array g = matmul(a, b);
    test::LoweredArrays both = test::lower_arrays({w - 0.01f * g, g}, {}, {a, b, w});
    CHECK(only_launch(both).strategy == "contraction");
    std::string gname = both.ir.buffers.at(static_cast<std::size_t>(both.ir.outputs[1])).name;
    CHECK(both.cuda.source.find(gname + "[") != std::string::npos);
}

TEST_CASE("cuda mapping: partial tiles keep bounds tests and scalar loads") {
    test::LoweredArrays l = lower_matmul(0, 1000, 1000, 1000);
    const std::string& s = l.cuda.source;
    CHECK(s.find("reinterpret_cast<const float4*>(&b0[") == std::string::npos);
    CHECK(s.find("< 1000) ? b0[") != std::string::npos);
}

TEST_CASE("cuda mapping: a buffer past 2^31 elements keeps 64-bit indices") {
    Array a = placeholder(Shape::of({50000, 48000})), b = placeholder(Shape::of({48000, 64}));
    test::LoweredArrays l = test::lower_arrays({matmul(a, b)}, {}, {a, b});
    const backend::CudaLaunch& c = only_launch(l);
    CHECK(c.strategy == "contraction");
    CHECK(l.cuda.source.find("const long hd_m0 = (long)blockIdx.y") != std::string::npos);
    CHECK(l.cuda.source.find("__launch_bounds__(256)") != std::string::npos);
    CHECK(l.cuda.source.find("48000L") != std::string::npos);
}

TEST_CASE("cuda mapping: a sum computed only where it is read is still a contraction") {
    // The partition narrows a temporary's domain to the box its readers use; the sum is then
    // written at an offset into its buffer.
    Array a = placeholder(Shape::of({200, 300})), b = placeholder(Shape::of({300, 120}));
    Array g = view(matmul(a, b), Shape::of({130, 70}), AffineMap(2, 2, {1, 0, 0, 1}, {20, 30}));
    test::LoweredArrays l = test::lower_arrays({exp(g)}, {}, {a, b});
    REQUIRE(l.cuda.launches.size() == 2);
    CHECK(l.cuda.launches[0].strategy == "contraction");
    CHECK(l.cuda.source.find("[2430 + 120 * i0 + i1]") != std::string::npos); // 20·120 + 30
}

TEST_CASE("cuda mapping: few 64x64 tiles over a long reduction are split, not shrunk") {
    // 256x1024 over 784 on 132 multiprocessors: 64 blocks of 64x64 (4x4 per thread) in 4
    // slices of the reduction, then a final launch; over 10 there is nothing to split, and the
    // tiles shrink to 32x32 (256 blocks).
    Array a = placeholder(Shape::of({256, 784})), w = placeholder(Shape::of({784, 1024}));
    test::LoweredArrays l = test::lower_arrays({matmul(a, w)}, {}, {a, w});
    REQUIRE(l.cuda.launches.size() == 2);
    CHECK(l.cuda.launches[0].strategy == "contraction_split");
    CHECK(l.cuda.launches[0].grid == std::array<unsigned, 3>{16, 4, 4});
    CHECK(l.cuda.source.find("float hd_acc[4][4];") != std::string::npos);
    CHECK(l.cuda.launches[1].strategy == "contraction_final");
    Array d = placeholder(Shape::of({256, 10})), v = placeholder(Shape::of({10, 1024}));
    test::LoweredArrays short_k = test::lower_arrays({matmul(d, v)}, {}, {d, v});
    const backend::CudaLaunch& c = only_launch(short_k);
    CHECK(c.strategy == "contraction");
    CHECK(c.grid == std::array<unsigned, 3>{32, 8, 1});
}

// A tile wider than the output wastes its threads: the policy's tile is narrowed to the next
// power of two of M and N. The MNIST conv (16 channels by 28-wide rows, the batch and the rows
// over blockIdx.z) gets 16x32 tiles, two accumulators per thread, instead of 128x128 (2.7% of
// the accumulators used); a 256x10 product gets 16 columns.
TEST_CASE("cuda mapping: small outputs get narrowed tiles") {
    Array x = placeholder(Shape::of({64, 1, 32, 32})), w = placeholder(Shape::of({16, 1, 5, 5}));
    test::LoweredArrays conv = test::lower_arrays({test::cuda_conv2d(x, w, 1)}, {}, {x, w});
    const backend::CudaLaunch& c = only_launch(conv);
    CHECK(c.strategy == "contraction");
    CHECK(c.grid == std::array<unsigned, 3>{1, 1, 64 * 28});
    CHECK(c.block == std::array<unsigned, 3>{16, 16, 1});
    CHECK(conv.cuda.source.find("float hd_acc[1][2];") != std::string::npos);
    test::LoweredArrays logits = lower_matmul(0, 4096, 64, 10);
    const backend::CudaLaunch& l = only_launch(logits);
    CHECK(l.grid[0] == 1);
    CHECK(l.block[0] == 16);
    CHECK(logits.cuda.source.find("][1];") != std::string::npos); // one column per thread
}

// The autotuner's side of the lowering: a contraction's candidate tilings (the policy's first;
// none for a kernel that is no contraction), and a tiling chosen per kernel, split or not.
TEST_CASE("cuda mapping: contraction candidates and per-kernel tilings") {
    Array a = placeholder(Shape::of({1024, 1024})), b = placeholder(Shape::of({1024, 1024}));
    test::LoweredArrays l = test::lower_arrays({matmul(a, b), exp(a)}, {}, {a, b});
    REQUIRE(l.ir.kernels.size() == 2);
    std::vector<sched::ContractionTiling> c = sched::contraction_candidates(l.ir, 0);
    REQUIRE(c.size() >= 2);
    CHECK(c[0] == sched::ContractionTiling{});
    CHECK(sched::contraction_candidates(l.ir, 1).empty()); // exp(a) is a map
    backend::CudaLowerOptions o;
    o.only_kernel = 0;
    o.contraction_tilings[0] = {{64, 64, 16}, 1};
    backend::CudaLoweredProgram unsplit = backend::lower_cuda(l.ir, o);
    REQUIRE(unsplit.launches.size() == 1); // only kernel 0
    CHECK(unsplit.launches[0].grid == std::array<unsigned, 3>{16, 16, 1});
    CHECK(unsplit.source.find("float hd_acc[4][4];") != std::string::npos);
    o.contraction_tilings[0] = {{128, 128, 8}, 4};
    backend::CudaLoweredProgram split = backend::lower_cuda(l.ir, o);
    REQUIRE(split.launches.size() == 2);
    CHECK(split.launches[0].strategy == "contraction_split");
    CHECK(split.launches[0].grid == std::array<unsigned, 3>{8, 8, 4});
    CHECK(split.launches[1].strategy == "contraction_final");
}
