// The CUDA mapping of a whole MNIST-sized MLP training step (784-1024-1024-10, batch 256, SGD
// with momentum), as the backend lowers it for a 132-multiprocessor device: every kernel with
// work for more than a few blocks must launch enough blocks to fill the device, and the
// matmuls (forward, input and weight gradients) must use the contraction template.
#include <map>

#include "cuda/cuda_programs.hpp"
#include "cuda/cuda_testing.hpp"
#include "nn/layers.hpp"
#include "nn/model.hpp"
#include "nn/optim.hpp"

using namespace hedra;

namespace {

// One SGD training step of `model` on a batch of `x_shape` (integer labels), lowered as the
// cuda backend does for a 132-multiprocessor device.
test::LoweredArrays lower_step(const nn::Model& model, std::vector<std::int64_t> x_shape,
                               double momentum) {
    std::vector<Array> params, inputs;
    for (std::size_t i = 0; i < model.params.size(); ++i) {
        params.push_back(
            placeholder(Shape::of(model.params[i].sizes()), DType::F32, "p" + std::to_string(i)));
        inputs.push_back(params.back());
    }
    nn::Sgd sgd(nn::SgdOptions{0.01, momentum});
    std::vector<Array> state;
    for (const HostArray& s : sgd.initial_state(model.params)) {
        state.push_back(placeholder(Shape::of(s.sizes()), s.dtype(), "s"));
        inputs.push_back(state.back());
    }
    Array x = placeholder(Shape::of(x_shape), DType::F32, "x");
    Array y = placeholder(Shape::of({x_shape[0]}), DType::I32, "y");
    inputs.push_back(x);
    inputs.push_back(y);
    Array loss = nn::softmax_cross_entropy(model.forward(params, x), y);
    nn::OptimizerUpdate u = sgd.update(params, grad(loss, params), state);
    std::vector<Array> outputs{loss};
    outputs.insert(outputs.end(), u.params.begin(), u.params.end());
    outputs.insert(outputs.end(), u.state.begin(), u.state.end());
    backend::CudaLowerOptions o;
    o.gpu.multiprocessors = 132;
    return test::lower_arrays(outputs, o, inputs);
}

} // namespace

TEST_CASE("cuda mapping: the MLP training step fills the device") {
    test::LoweredArrays l = lower_step(nn::mlp({784, 1024, 1024, 10}, 0), {256, 784}, 0.9);
    int contractions = 0, splits = 0;
    for (const backend::CudaLaunch& launch : l.cuda.launches) {
        std::int64_t blocks = std::int64_t{launch.grid[0]} * launch.grid[1] * launch.grid[2];
        std::int64_t threads = std::int64_t{launch.block[0]} * launch.block[1] * launch.block[2];
        MESSAGE(launch.function << " " << launch.strategy << " blocks " << blocks << " threads "
                                << threads);
        contractions += launch.strategy == "contraction" || launch.strategy == "contraction_split";
        splits += launch.strategy == "contraction_split";
    }
    // Three forward matmuls, two input gradients (the first layer's is not needed) and three
    // weight gradients.
    CHECK(contractions == 8);
    // Too few output tiles for 132 multiprocessors, their reductions split: the logits (256x10
    // over 1024) and their weight gradient (10x1024 over 256), the hidden layers' forward
    // matmuls and input gradient (256x1024 over 784 and 1024: 64 tiles of 64x64).
    CHECK(splits == 5);
    // 21: bias + ReLU and the SGD updates (momentum, then weight) are epilogues of the
    // contractions and of the bias gradients' reductions; 5 final launches of splits.
    CHECK(l.cuda.launches.size() <= 21);
    // The six matmuls with 256x784 or more outputs (two forward, two input gradients, two
    // weight gradients) launch at least a block per multiprocessor.
    int wide = 0;
    for (const backend::CudaLaunch& launch : l.cuda.launches)
        wide += (launch.strategy == "contraction" || launch.strategy == "contraction_split") &&
                std::int64_t{launch.grid[0]} * launch.grid[1] * launch.grid[2] >= 132;
    CHECK(wide == 6);
}

// The MNIST CNN's training step (two 5x5 convolutions with pooling, batch 64): every
// convolution, its input gradient and its weight gradient are contractions, and nothing falls
// back to the generic mapping (one thread per outer point, the rest sequential).
TEST_CASE("cuda mapping: the CNN training step uses the templates") {
    test::LoweredArrays l = lower_step(nn::mnist_cnn(0), {64, 1, 28, 28}, 0.0);
    int contractions = 0, generic = 0;
    for (const backend::CudaLaunch& launch : l.cuda.launches) {
        MESSAGE(backend::to_string(launch, l.ir));
        contractions += launch.strategy == "contraction" || launch.strategy == "contraction_split";
        generic += launch.strategy.rfind("generic", 0) == 0;
    }
    CHECK(generic == 0);
    CHECK(contractions >= 8); // 2 convolutions, 1 input gradient, 2 weight gradients, 3 for fc
}

namespace {

// The split launch of `l` with an argument of `sizes` (a sum's result), or null.
const backend::CudaLaunch* split_with(const test::LoweredArrays& l,
                                      const std::vector<std::int64_t>& sizes) {
    for (const backend::CudaLaunch& launch : l.cuda.launches)
        if (launch.strategy == "contraction_split")
            for (int b : launch.buffers)
                if (static_cast<std::size_t>(b) < l.ir.buffers.size() &&
                    l.ir.buffers[static_cast<std::size_t>(b)].sizes == sizes)
                    return &launch;
    return nullptr;
}

} // namespace

// The second convolution's weight gradient (32x16x5x5, each a sum over 64x14x14) has tiles of 4
// warps narrowed to its small output: 80 blocks, one per multiprocessor at most, took 57% of
// the step's GPU time on an H200. It is split over the reduction to about 16 warps per
// multiprocessor; the first conv's weight gradient was already split (fewer blocks).
TEST_CASE("cuda mapping: the CNN's weight gradients are split over their long sums") {
    test::LoweredArrays l = lower_step(nn::mnist_cnn(0), {64, 1, 28, 28}, 0.9);
    int splits = 0;
    for (const backend::CudaLaunch& launch : l.cuda.launches)
        splits += launch.strategy == "contraction_split";
    CHECK(splits == 3); // the logits, and both weight gradients
    const backend::CudaLaunch* wgrad = split_with(l, {32, 16, 5, 5});
    REQUIRE(wgrad != nullptr);
    std::int64_t blocks = std::int64_t{wgrad->grid[0]} * wgrad->grid[1] * wgrad->grid[2];
    CHECK(blocks * ((wgrad->block[0] * wgrad->block[1] + 31) / 32) >= 16 * 132); // warps
    CHECK(split_with(l, {16, 1, 5, 5}) != nullptr);
    // The emulated program of the same gradient in small (its values are checked there).
    CHECK(split_with(test::lower_arrays(
                         test::cuda_test_program("conv weight gradient, split by warps").build()),
                     {32, 16, 5, 5}) != nullptr);
}

// SGD with momentum on a weight gradient: the momentum v' = mu v + g and the weight
// w' = w - lr v', which reads v', both join the gradient's contraction (a chain of epilogues,
// sched::partition_options for a GPU), applied to the accumulators: one launch, the gradient
// never stored (gpu.stage's decision, which the mapping shows and the renderer follows).
TEST_CASE("cuda mapping: the momentum update is a chain of epilogues") {
    Array w = placeholder(Shape::of({64, 96}), DType::F32, "w"),
          v = placeholder(Shape::of({64, 96}), DType::F32, "v");
    Array a = placeholder(Shape::of({64, 32}), DType::F32, "a"),
          b = placeholder(Shape::of({32, 96}), DType::F32, "b");
    nn::OptimizerUpdate u = nn::Sgd(nn::SgdOptions{0.01, 0.9}).update({w}, {matmul(a, b)}, {v});
    test::LoweredArrays l = test::lower_arrays({u.params[0], u.state[0]}, {}, {w, v, a, b});
    INFO(poly::to_string(l.ir));
    INFO(l.cuda.source);
    REQUIRE(l.cuda.launches.size() == 1);
    CHECK(l.cuda.launches[0].strategy == "contraction");
    REQUIRE(l.ir.kernels.size() == 1);
    CHECK(l.ir.kernels[0].statements.size() == 4); // init, update, momentum, weight
    const int gradient = l.ir.kernels[0].statements[1].write_buffer;
    CHECK(l.cuda.mapping.find(" unstored") != std::string::npos);
    CHECK(l.cuda.source.find(l.ir.buffers[gradient].name + "[") == std::string::npos);
    sched::GpuMapping m = sched::map_gpu_kernels(l.ir, sched::GpuTarget{});
    REQUIRE(m.kernels.size() == 1);
    CHECK_FALSE(m.kernels[0].contraction.store_result);
    // The openmp backend's partition keeps one epilogue (its register tile applies one).
    std::vector<NodePtr> outs{u.params[0].node(), u.state[0].node()},
        ins{w.node(), v.node(), a.node(), b.node()};
    CHECK(sched::partition(outs, ins).kernels.size() == 2);
}

// After every kind of sum (contraction, split contraction, serial, block and split reduction)
// the chain is applied where the sum's element is stored: no launch of its own.
TEST_CASE("cuda mapping: epilogue chains after every reduction template") {
    test::LoweredArrays l = test::lower_arrays(test::cuda_test_program("momentum chains").build());
    std::map<std::string, int> strategies;
    for (const backend::CudaLaunch& launch : l.cuda.launches)
        ++strategies[launch.strategy];
    INFO(l.cuda.source);
    CHECK(strategies["map"] == 2);
    CHECK(strategies["contraction"] == 2);
    CHECK(strategies["contraction_split"] == 1);
    CHECK(strategies["serial_reduction"] == 1);
    CHECK(strategies["block_reduction"] == 1);
    CHECK(strategies["split_final"] == 1);
    // + Adam: the contraction (m', v', the weight) and beta1^t, beta2^t as maps
    CHECK(l.cuda.launches.size() == 7 + 3);
}

// Adam on a weight gradient: m' and v' (which reads g twice, g * g) are maps of the sum, the
// weight reads both: all three join the gradient's contraction.
TEST_CASE("cuda mapping: the Adam update joins the gradient's contraction") {
    Array w = placeholder(Shape::of({64, 96}), DType::F32, "w");
    Array a = placeholder(Shape::of({64, 32}), DType::F32, "a"),
          b = placeholder(Shape::of({32, 96}), DType::F32, "b");
    nn::Adam adam(nn::AdamOptions{});
    std::vector<Array> state, inputs{w, a, b};
    for (const HostArray& s : adam.initial_state({HostArray({64, 96}, DType::F32)})) {
        state.push_back(placeholder(Shape::of(s.sizes()), s.dtype(), "s"));
        inputs.push_back(state.back());
    }
    nn::OptimizerUpdate u = adam.update({w}, {matmul(a, b)}, state);
    std::vector<Array> outputs{u.params[0]};
    outputs.insert(outputs.end(), u.state.begin(), u.state.end());
    test::LoweredArrays l = test::lower_arrays(outputs, {}, inputs);
    INFO(poly::to_string(l.ir));
    int contractions = 0, maps = 0;
    for (const backend::CudaLaunch& launch : l.cuda.launches) {
        contractions += launch.strategy == "contraction";
        maps += launch.strategy == "map";
    }
    CHECK(contractions == 1);
    CHECK(maps == 2); // the bias corrections' powers beta1^t and beta2^t, one scalar each
}

// A fuse's pieces that write disjoint elements (a 2x2 pooling gradient's four strided pieces)
// share one map launch; so do pieces that overlap when the later one writes a box (a pad:
// zeros everywhere, then the interior): the earlier piece skips the box's elements.
TEST_CASE("cuda mapping: disjoint fuse pieces share a launch") {
    Array x = placeholder(Shape::of({8, 6}), DType::F32, "x");
    std::vector<Array> pieces;
    for (std::int64_t di : {0, 1})
        for (std::int64_t dj : {0, 1})
            pieces.push_back(reshape(lazy([](Sym v) { return v * 2.0; }, x),
                                     Shape{range(di, 16, 2), range(dj, 12, 2)}));
    Array fused = fuse(pieces);
    test::LoweredArrays l = test::lower_arrays({fused}, {}, {x});
    INFO(l.cuda.source);
    int maps = 0;
    for (const backend::CudaLaunch& launch : l.cuda.launches)
        maps += launch.strategy == "map";
    REQUIRE(l.ir.kernels.size() == 1);
    CHECK(l.ir.kernels[0].statements.size() == 4);
    CHECK(maps == 1);
    test::LoweredArrays padded = test::lower_arrays({pad(x, {{1, 1}, {2, 2}})}, {}, {x});
    REQUIRE(padded.cuda.launches.size() == 1);
    CHECK(padded.cuda.source.find("if (!(") != std::string::npos); // the zeros skip the interior
}
