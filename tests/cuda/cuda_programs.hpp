// The programs every CUDA test runs through the code generator: maps, reductions over each
// axis, matmul (square, odd, batched, with a fused epilogue; bf16 and f16 operands on tensor
// cores), conv2d (strides 1 and 2), Jacobi
// sweeps with overwrite, softmax, fuse/stack/pad, index components (iota) and masks, integer
// and bool reductions, a custom reduction, a long reduction that splits and a map that reuses one
// value hundreds of times (a DAG, not a tree), with its gradient. Small sizes, so the
// CPU emulation of the generated kernels (emulator.hpp) stays fast.
#pragma once

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "hedra.hpp"
#include "nn/optim.hpp"

namespace hedra::test {

struct CudaTestProgram {
    std::string name;
    std::function<std::vector<Array>()> build;
    bool exact = false; // compare bit for bit (no float reductions)
};

inline Array cuda_random(const Shape& shape, unsigned seed, float lo = -1, float hi = 1) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(static_cast<std::size_t>(shape.size()));
    for (float& x : v)
        x = dist(gen);
    return array(v, shape);
}

inline Array cuda_conv2d(const Array& x, const Array& w, std::int64_t stride) {
    std::int64_t n = x.shape()[0].size, c = x.shape()[1].size, h = x.shape()[2].size,
                 wd = x.shape()[3].size;
    std::int64_t f = w.shape()[0].size, kh = w.shape()[2].size, kw = w.shape()[3].size;
    std::int64_t oh = (h - kh) / stride + 1, ow = (wd - kw) / stride + 1;
    Shape space = Shape::of({n, f, oh, ow, c, kh, kw});
    AffineMap window(7, 4, {1, 0, 0,      0, 0, 0, 0, 0, 0, 0, 0,      1, 0, 0,
                            0, 0, stride, 0, 0, 1, 0, 0, 0, 0, stride, 0, 0, 1},
                     {0, 0, 0, 0});
    AffineMap weights(
        7, 4, {0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1},
        {0, 0, 0, 0});
    return sum(view(x, space, window) * view(w, space, weights), {4, 5, 6});
}

inline Array cuda_jacobi_sweep(const Array& u) {
    std::int64_t n = u.shape()[0].size, m = u.shape()[1].size;
    Shape interior{range(1, n - 1), range(1, m - 1)};
    auto shifted = [&](std::int64_t di, std::int64_t dj) {
        return view(u, interior, AffineMap(2, 2, {1, 0, 0, 1}, {di, dj}));
    };
    return overwrite(
        {u, (shifted(-1, 0) + shifted(1, 0) + shifted(0, -1) + shifted(0, 1)) * 0.25f});
}

inline std::vector<CudaTestProgram> cuda_test_programs() {
    std::vector<CudaTestProgram> p;
    p.push_back(
        {"maps",
         [] {
             Array a = cuda_random(Shape::of({7, 1}), 1), b = cuda_random(Shape::of({1, 33}), 2);
             Array c = cuda_random(Shape::of({33}), 3);
             return std::vector<Array>{
                 a * b + c,      exp(a - b) / (1.0f + abs(c)), sigmoid(a * c) - tanh(b),
                 pow(abs(a), b), where(a < b, a, b * 2.0f),    cast(a * 100.0f, DType::I32)};
         },
         true});
    p.push_back({"integer maps",
                 [] {
                     std::vector<std::int32_t> av, bv;
                     for (int i = 0; i < 64; ++i) {
                         // large values of both signs: computed in 64 bits, then wrapped to
                         // 32 (a defined conversion; int arithmetic would overflow)
                         av.push_back(static_cast<std::int32_t>(std::int64_t{i} * 97 - 3000 +
                                                                std::int64_t{i % 7} * 2147480000));
                         bv.push_back(i % 7 - 3);
                     }
                     Array a = array(av, Shape::of({8, 8})), b = array(bv, Shape::of({8, 8}));
                     return std::vector<Array>{
                         a + b * a,     a / b, minimum(a, b),
                         pow(b, b + 2), -a,    cast(a, DType::I64) * cast(b, DType::I64),
                         a > b};
                 },
                 true});
    for (int axis : {0, 1, 2})
        p.push_back({"reductions over axis " + std::to_string(axis), [axis] {
                         Array x = cuda_random(Shape::of({5, 7, 40}), 11);
                         return std::vector<Array>{sum(x, {axis}), mean(x, {axis}, true),
                                                   max(x, {axis}), min(x, {axis}),
                                                   reduce(ReduceOp::Prod, x + 1.5f, {axis})};
                     }});
    p.push_back({"reductions over several axes", [] {
                     Array x = cuda_random(Shape::of({5, 7, 33}), 12);
                     return std::vector<Array>{sum(x, {0, 2}), sum(x), max(x, {1, 2}, true)};
                 }});
    p.push_back({"integer, bool and custom reductions", [] {
                     std::vector<std::int32_t> v;
                     for (int i = 0; i < 7 * 300; ++i)
                         v.push_back((i * 7919) % 2001 - 1000);
                     Array a = array(v, Shape::of({7, 300}));
                     Array x = cuda_random(Shape{range(2, 29, 3), range(-1, 3)}, 13);
                     Array sq = reduce([](auto acc, auto e) { return acc + e * e; }, 0.0, x, {0});
                     return std::vector<Array>{sum(a, {1}),
                                               sum(a, {0}),
                                               max(a, {0}),
                                               min(a),
                                               reduce(ReduceOp::And, a > -900, {1}),
                                               reduce(ReduceOp::Or, a > 990, {0}),
                                               sq};
                 }});
    p.push_back({"long reduction (split)", [] {
                     // f32 sums this long accumulate in f64 (partition.cpp, wide_sum)
                     Array x = cuda_random(Shape::of({2, 40000}), 14);
                     return std::vector<Array>{sum(x, {1}), max(x), mean(x, {1}) * 2.0f + 1.0f,
                                               sum(transpose(x), {0})};
                 }});
    p.push_back({"half formats", [] {
                     // bf16 and f16 storage, computed in f32 and rounded (core/dtype.hpp)
                     Array a = cast(cuda_random(Shape::of({20, 33}), 41), DType::BF16),
                           b = cast(cuda_random(Shape::of({33, 12}), 42), DType::BF16);
                     Array h = cast(cuda_random(Shape::of({20, 33}), 43), DType::F16);
                     // A tied head's product: a bf16 table read transposed, its rows (84)
                     // not a multiple of the tile, so the staging tests bounds and zero-fills.
                     // (bf16 host data, so the operands are bf16 buffers, not inlined casts)
                     ComputeOptions ref;
                     ref.backend = "reference";
                     Array x = array(compute(
                               cast(cuda_random(Shape::of({96, 128}), 44), DType::BF16), ref)),
                           table = array(compute(
                               cast(cuda_random(Shape::of({84, 128}), 45), DType::BF16), ref));
                     return std::vector<Array>{a * 3.0f + exp(a),
                                               sum(a, {1}),
                                               matmul(a, b),
                                               tanh(h) * h,
                                               max(h, {0}),
                                               cast(h, DType::F32) + cast(a, DType::F32),
                                               matmul(x, transpose(table))};
                 }});
    p.push_back({"tensor-core matmuls", [] {
                     // bf16 and f16 operands, products and sums in f32 (mma.sync on sm_80+):
                     // ragged, batched, with an epilogue
                     auto half = [](const Shape& s, unsigned seed, DType t) {
                         Array x = cast(cuda_random(s, seed), t);
                         return array(get_backend("reference")->evaluate({x.node()}, {}).at(0));
                     };
                     auto f32 = [](const Array& x) { return cast(x, DType::F32); };
                     Array a = half(Shape::of({70, 40}), 51, DType::BF16),
                           b = half(Shape::of({40, 45}), 52, DType::BF16);
                     Array h = half(Shape::of({2, 24, 48}), 53, DType::F16),
                           g = half(Shape::of({2, 48, 20}), 54, DType::F16);
                     Array bias = cuda_random(Shape::of({45}), 55);
                     Array ab = matmul(f32(a), f32(b));
                     return std::vector<Array>{ab, relu(ab + bias), matmul(f32(h), f32(g))};
                 }});
    p.push_back({"matmul", [] {
                     Array a = cuda_random(Shape::of({70, 33}), 21),
                           b = cuda_random(Shape::of({33, 45}), 22);
                     Array bias = cuda_random(Shape::of({45}), 23);
                     return std::vector<Array>{matmul(a, b), relu(matmul(a, b) + bias)};
                 }});
    p.push_back(
        {"odd matmul", [] {
             Array a = cuda_random(Shape::of({7, 33}), 24), b = cuda_random(Shape::of({33, 5}), 25);
             Array c = cuda_random(Shape::of({1, 100}), 26),
                   d = cuda_random(Shape::of({100, 3}), 27);
             return std::vector<Array>{matmul(a, b), matmul(c, d)};
         }});
    p.push_back({"integer matmul",
                 [] {
                     // i32 operands staged k-major and loaded four at a time (int4 fragments)
                     std::vector<std::int32_t> av, bv;
                     for (int i = 0; i < 72 * 40; ++i)
                         av.push_back((i * 37) % 201 - 100);
                     for (int i = 0; i < 40 * 68; ++i)
                         bv.push_back((i * 53) % 97 - 48);
                     Array a = array(av, Shape::of({72, 40})), b = array(bv, Shape::of({40, 68}));
                     return std::vector<Array>{matmul(a, b)};
                 },
                 true});
    p.push_back(
        {"aligned matmul", [] {
             // tile-divisible shapes: staging without bounds tests, 16-byte global
             // loads (float4, int4) along each operand's rows, and 16-byte shared stores
             // where the staged layout keeps them adjacent
             Array a = cuda_random(Shape::of({64, 32}), 48),
                   b = cuda_random(Shape::of({32, 96}), 49);
             Array ba = cuda_random(Shape::of({2, 32, 16}), 50),
                   bb = cuda_random(Shape::of({2, 16, 64}), 51);
             std::vector<std::int32_t> iv;
             for (int i = 0; i < 64 * 32; ++i)
                 iv.push_back((i * 29) % 61 - 30);
             Array ia = array(iv, Shape::of({64, 32}));
             Array ib = view(ia, Shape::of({32, 64}), AffineMap(2, 2, {0, 1, 1, 0}, {0, 0}));
             // a row-major i32 right operand: its rows are staged with 16-byte stores (int4)
             std::vector<std::int32_t> cv;
             for (int i = 0; i < 32 * 64; ++i)
                 cv.push_back((i * 31) % 53 - 26);
             Array ic = array(cv, Shape::of({32, 64}));
             // rows that start one element into a 16-byte group (a slice at column 1): scalar
             // loads, which the emulation's alignment check holds the code generator to
             Array wide = cuda_random(Shape::of({64, 36}), 52);
             Array shifted = reshape(wide, Shape{range(64), range(1, 33)});
             return std::vector<Array>{matmul(a, b), matmul(ba, bb), matmul(ia, ib), matmul(ia, ic),
                                       matmul(shifted, b)};
         }});
    p.push_back(
        {"split contraction", [] {
             // few output tiles over a long reduction: split K into slices over
             // blockIdx.z, partials combined (with the epilogues) by a second launch
             Array a = cuda_random(Shape::of({40, 600}), 52),
                   b = cuda_random(Shape::of({600, 30}), 53);
             Array bias = cuda_random(Shape::of({30}), 54);
             Array ba = cuda_random(Shape::of({3, 20, 700}), 55),
                   bb = cuda_random(Shape::of({3, 700, 10}), 56);
             std::vector<std::int32_t> iv;
             for (int i = 0; i < 16 * 900; ++i)
                 iv.push_back((i * 31) % 41 - 20);
             Array ia = array(iv, Shape::of({16, 900}));
             Array ib = view(ia, Shape::of({900, 16}), AffineMap(2, 2, {0, 1, 1, 0}, {0, 0}));
             Array g = matmul(a, b);
             Array mx = reduce(
                 ReduceOp::Max,
                 view(a, Shape::of({40, 30, 600}), AffineMap(3, 2, {1, 0, 0, 0, 0, 1}, {0, 0})) *
                     view(b, Shape::of({40, 30, 600}), AffineMap(3, 2, {0, 0, 1, 0, 1, 0}, {0, 0})),
                 {2});
             return std::vector<Array>{g, relu(g + bias), matmul(ba, bb), matmul(ia, ib), mx};
         }});
    p.push_back({"narrowed sums", [] {
                     // only a box of each sum is read, so only that box is computed (the
                     // partition narrows domains): the result is written at an offset
                     Array a = cuda_random(Shape::of({20, 30}), 57),
                           b = cuda_random(Shape::of({30, 12}), 58);
                     Array x = cuda_random(Shape::of({50, 300}), 59);
                     Array g = view(matmul(a, b), Shape::of({13, 7}),
                                    AffineMap(2, 2, {1, 0, 0, 1}, {2, 3}));
                     Array s = view(sum(x, {1}), Shape::of({35}), AffineMap(1, 1, {1}, {5}));
                     Array m = view(max(x, {1}), Shape::of({3}), AffineMap(1, 1, {1}, {40}));
                     return std::vector<Array>{exp(g), s * 3.0f, m - 1.0f};
                 }});
    p.push_back({"epilogues", [] {
                     // maps that read a sum's result element for element run where the sum
                     // completes: in the contraction's store (the sum stored only when it is
                     // read elsewhere: here g is an output), or after a block reduction
                     Array a = cuda_random(Shape::of({50, 30}), 42),
                           b = cuda_random(Shape::of({30, 70}), 43);
                     Array w = cuda_random(Shape::of({50, 70}), 44),
                           bias = cuda_random(Shape::of({70}), 45);
                     Array x = cuda_random(Shape::of({6, 500}), 46);
                     Array g = matmul(a, b), dead = matmul(b, cuda_random(Shape::of({70, 9}), 47));
                     return std::vector<Array>{w - 0.1f * g,
                                               relu(g + bias),
                                               g,
                                               sum(x, {1}) * (1.0f / 500.0f) + 1.0f,
                                               cast(dead > 0.0f, DType::I32),
                                               exp(dead * 0.5f)};
                 }});
    p.push_back({"momentum chains", [] {
                     // SGD with momentum after each kind of sum: v' = 0.9 v + s is an epilogue
                     // and w' = w - 0.1 v' (reading v') a second one, in the contraction's store,
                     // a split contraction's final launch, and the serial, block and split
                     // reductions' final stores
                     std::vector<Array> sums{matmul(cuda_random(Shape::of({50, 30}), 70),
                                                    cuda_random(Shape::of({30, 70}), 71)),
                                             matmul(cuda_random(Shape::of({16, 1200}), 72),
                                                    cuda_random(Shape::of({1200, 12}), 73)),
                                             sum(cuda_random(Shape::of({3000, 8}), 74), {1}),
                                             sum(cuda_random(Shape::of({6, 500}), 75), {1}),
                                             sum(cuda_random(Shape::of({2, 40000}), 76), {1})};
                     std::vector<Array> out;
                     unsigned seed = 80;
                     for (const Array& g : sums) {
                         Array v = cuda_random(g.shape(), seed++),
                               w = cuda_random(g.shape(), seed++);
                         Array next_v = 0.9f * v + g;
                         out.push_back(next_v);
                         out.push_back(w - 0.1f * next_v);
                     }
                     // Adam after a contraction: m', v' (reading g * g), then the weight, which
                     // also reads beta2^t, a scalar computed after the sum in node order (the
                     // partition makes its kernel first)
                     Array g = matmul(cuda_random(Shape::of({24, 40}), 95),
                                      cuda_random(Shape::of({40, 36}), 96));
                     Array w = cuda_random(g.shape(), 97);
                     std::vector<Array> state{array(std::vector<float>{0.9f}, Shape{}),
                                              array(std::vector<float>{0.999f}, Shape{}),
                                              cuda_random(g.shape(), 98, -0.1f, 0.1f),
                                              cuda_random(g.shape(), 99, 0.0f, 0.01f)};
                     nn::OptimizerUpdate adam = nn::Adam(nn::AdamOptions{}).update({w}, {g}, state);
                     out.push_back(adam.params[0]);
                     out.insert(out.end(), adam.state.begin(), adam.state.end());
                     return out;
                 }});
    p.push_back({"batched matmul", [] {
                     Array a = cuda_random(Shape::of({3, 20, 17}), 28),
                           b = cuda_random(Shape::of({3, 17, 36}), 29);
                     return std::vector<Array>{matmul(a, b)};
                 }});
    p.push_back(
        {"flipped matmul", [] {
             Array a = cuda_random(Shape::of({40, 24}), 36);
             Array b = cuda_random(Shape::of({24, 36}), 37);
             Array flip = view(a, Shape::of({40, 24}), AffineMap(2, 2, {-1, 0, 0, -1}, {39, 23}));
             return std::vector<Array>{matmul(flip, b)};
         }});
    p.push_back({"gradients", [] {
                     Array x = cuda_random(Shape::of({2, 3, 9, 8}), 38);
                     Array w = cuda_random(Shape::of({4, 3, 3, 2}), 39);
                     Array loss = sum(tanh(cuda_conv2d(x, w, 2)));
                     Array m = cuda_random(Shape::of({16, 20}), 40),
                           v = cuda_random(Shape::of({20, 12}), 41);
                     Array l2 = sum(relu(matmul(m, v)) * 0.5f);
                     std::vector<Array> g = grad(loss, {x, w});
                     std::vector<Array> h = grad(l2, {m, v});
                     return std::vector<Array>{g[0], g[1], h[0], h[1]};
                 }});
    p.push_back({"conv weight gradient, split by warps", [] {
                     // The MNIST CNN's second weight gradient in small: 32x16x5x5 sums, tiles of
                     // 4 warps, split over the 2x10x10 sum (Contraction::choose_splits).
                     Array x = cuda_random(Shape::of({2, 16, 14, 14}), 42);
                     Array w = cuda_random(Shape::of({32, 16, 5, 5}), 43, -0.1f, 0.1f);
                     return std::vector<Array>{grad(sum(tanh(cuda_conv2d(x, w, 1))), w)};
                 }});
    p.push_back({"conv2d", [] {
                     Array x = cuda_random(Shape::of({2, 3, 12, 11}), 30),
                           w = cuda_random(Shape::of({9, 3, 3, 2}), 31);
                     return std::vector<Array>{cuda_conv2d(x, w, 1), cuda_conv2d(x, w, 2)};
                 }});
    p.push_back({"jacobi",
                 [] {
                     Array u = cuda_random(Shape::of({17, 19}), 32);
                     for (int sweep = 0; sweep < 3; ++sweep)
                         u = cuda_jacobi_sweep(u);
                     return std::vector<Array>{u};
                 },
                 true});
    p.push_back({"softmax", [] {
                     Array x = cuda_random(Shape::of({7, 300}), 33) * 5.0f;
                     Array e = exp(x - max(x, {1}, true));
                     return std::vector<Array>{e / sum(e, {1}, true)};
                 }});
    p.push_back({"fuse, stack, pad",
                 [] {
                     Array x = cuda_random(Shape::of({8, 5}), 34);
                     Array even = reshape(x, Shape{range(0, 8, 2), range(5)});
                     Array odd = reshape(x, Shape{range(1, 8, 2), range(5)});
                     // a later piece over a strided box: the earlier one skips its elements
                     Array strided = reshape(x, Shape{range(1, 7, 2), range(0, 5, 2)});
                     return std::vector<Array>{fuse({odd * 2.0f, even + 1.0f}),
                                               stack(0, {x, x * 3.0f}), stack(1, {x, -x, x + 1.0f}),
                                               pad(x, {{1, 2}, {0, 3}}),
                                               overwrite({x * 3.0f, -strided})};
                 },
                 true});
    p.push_back({"iota and masks",
                 [] {
                     Shape s{range(1, 20, 3), range(-2, 3)};
                     Array i0 = index_components(s, 0), i1 = index_components(s, 1);
                     Shape sq = Shape::of({9, 9});
                     Array i = index_components(sq, 0), j = index_components(sq, 1);
                     Array scores = cuda_random(sq, 35);
                     return std::vector<Array>{i0 * 10 + i1, where(j <= i, scores, -1e9f),
                                               sum(cast(j <= i, DType::I32), {1})};
                 },
                 true});
    p.push_back({"math functions, %, bit operations and shifts",
                 [] {
                     Array x = cuda_random(Shape::of({5, 13}), 37, -4, 4);
                     std::vector<std::int32_t> av, bv;
                     for (int i = 0; i < 65; ++i) {
                         av.push_back(static_cast<std::int32_t>(i * 2654435761u));
                         bv.push_back(i % 37 - 3);
                     }
                     Array a = array(av, Shape::of({5, 13})), b = array(bv, Shape::of({5, 13}));
                     return std::vector<Array>{sin(x),        cos(x),      erf(x),
                                               log1p(abs(x)), expm1(x),    floor(x) + ceil(x),
                                               round(x),      x % 1.25f,   a % b,
                                               a & b,         (a | b) ^ b, a << b,
                                               a >> b};
                 },
                 true});
    p.push_back({"argmax and argmin",
                 [] {
                     Array x = cuda_random(Shape::of({6, 50}), 38);
                     Array t = where(x > 0.5f, 0.5f, x); // ties: the first index wins
                     return std::vector<Array>{argmax(t, 1), argmin(x, 1), argmax(x, 0, true)};
                 },
                 true});
    p.push_back(
        {"multi-value reductions (one-pass argmax, logsumexp)", [] {
             Array x = cuda_random(Shape::of({6, 40}), 39);
             Array t = where(x > 0.5f, 0.5f, x);
             auto argmax_tuple = [](const std::vector<Sym>& acc, const std::vector<Sym>& e) {
                 Sym take = e[0] > acc[0] || (e[0] == acc[0] && e[1] < acc[1]);
                 return std::vector<Sym>{select(take, e[0], acc[0]), select(take, e[1], acc[1])};
             };
             std::vector<Array> am = reduce_multiple_value(
                 argmax_tuple, {-1e30, 0}, {t, index_components(t.shape(), 1)}, {1});
             std::vector<Array> ac = reduce_multiple_value(
                 argmax_tuple, {-1e30, 0}, {t, index_components(t.shape(), 0)}, {0});
             std::vector<Array> l = reduce_multiple_value(
                 [](const std::vector<Sym>& acc, const std::vector<Sym>& e) {
                     Sym m = max(acc[0], e[0]);
                     return std::vector<Sym>{m, acc[1] * exp(acc[0] - m) + e[1] * exp(e[0] - m)};
                 },
                 {-1e30, 0}, {x, full(x.shape(), 1.0)}, {1});
             return std::vector<Array>{am[1], am[0], ac[1], l[0] + log(l[1])};
         }});
    p.push_back(
        {"multi-value reductions over long rows (chunks, ties, an order-dependent combiner)",
         [] {
             // Values in steps of 1/8, so rows of 1000 have many ties across threads' chunks.
             Array x = floor(cuda_random(Shape::of({3, 1000}), 41, -4, 4) * 8.0f) / 8.0f;
             // The first element above 3.5 of each row: associative, not commutative.
             std::vector<Array> first = reduce_multiple_value(
                 [](const std::vector<Sym>& acc, const std::vector<Sym>& e) {
                     return std::vector<Sym>{select(acc[0], acc[0], e[0]),
                                             select(acc[0], acc[1], e[1])};
                 },
                 {0, 0}, {x > 3.5f, x}, {1});
             Array pos = index_components(x.shape(), 1);
             std::vector<Array> at = reduce_multiple_value(
                 [](const std::vector<Sym>& acc, const std::vector<Sym>& e) {
                     return std::vector<Sym>{select(acc[0], acc[0], e[0]),
                                             select(acc[0], acc[1], e[1])};
                 },
                 {0, 0}, {x > 3.5f, pos}, {1}, true);
             return std::vector<Array>{first[1], at[1], argmax(x, 1), argmin(x, 1, true),
                                       argmax(flatten(x), 0)};
         },
         true});
    p.push_back({"a map that reuses a value 300 times, and its gradient", [] {
                     Array x = cuda_random(Shape::of({37}), 36, -3, 3);
                     Array y = lazy(
                         [](auto v) {
                             for (int i = 0; i < 300; ++i)
                                 v = tanh(v) * 0.5f + v * 0.5f;
                             return v;
                         },
                         x);
                     return std::vector<Array>{y, grad(sum(y), x)};
                 }});
    p.push_back({"take and scatter_add (an embedding and its gradient)", [] {
                     Array table = cuda_random(Shape::of({50, 12}), 37);
                     std::vector<std::int32_t> ids;
                     for (int i = 0; i < 40; ++i)
                         ids.push_back((i * 17 + 3) % 50);
                     Array tokens = array(ids, Shape::of({5, 8}));
                     Array x = take(table, tokens);
                     Array wild = index_components(Shape::of({9}), 0) * 7 - 5; // clamped
                     Array values = cuda_random(Shape::of({5, 8, 12}), 38);
                     return std::vector<Array>{x, take(table, wild, 0) * 2.0f,
                                               grad(sum(x * x), table),
                                               scatter_add(values, tokens, 0, table.shape())};
                 }});
    return p;
}

inline CudaTestProgram cuda_test_program(const std::string& name) {
    for (CudaTestProgram& p : cuda_test_programs())
        if (p.name == name) return p;
    throw Error("no test program '" + name + "'");
}

} // namespace hedra::test
