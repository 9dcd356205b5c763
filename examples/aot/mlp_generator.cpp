// The MNIST MLP's training step (784-300-100-10, ReLU, softmax cross-entropy, SGD) as a
// generator: the graph nn::TrainStep compiles for it, over placeholders for the parameters, the
// learning rate and a batch of up to `batch` images and labels. hedra_add_aot_library runs it
// at build time (CMakeLists.txt); tests/aot also compiles it with the JIT, to compare.
#include "aot/generator.hpp"
#include "hedra.hpp"
#include "nn/layers.hpp"
#include "nn/model.hpp"
#include "nn/optim.hpp"

hedra::aot::Generated mlp_step(const hedra::aot::GeneratorParams& params) {
    using namespace hedra;
    const std::int64_t batch = params.integer("batch", 64);
    nn::Model model = nn::mlp({784, 300, 100, 10}, 0); // its shapes and forward function
    std::vector<Array> weights;
    for (std::size_t i = 0; i < model.params.size(); ++i)
        weights.push_back(
            placeholder(Shape::of(model.params[i].sizes()), DType::F32, model.names[i]));
    Array lr = placeholder(Shape(), DType::F32, "lr");
    Array images = placeholder(Shape{dynamic("batch", batch), range(784)}, DType::F32, "images");
    Array labels = placeholder(Shape{dynamic("batch", batch)}, DType::I32, "labels");

    Array logits = model.forward(weights, images);
    Array loss = nn::softmax_cross_entropy(logits, labels);
    nn::Sgd sgd(nn::SgdOptions{});
    nn::OptimizerUpdate update = sgd.update(weights, grad(loss, weights), {}, lr);

    aot::Generated g;
    g.inputs = weights;
    g.inputs.insert(g.inputs.end(), {lr, images, labels});
    g.outputs = {loss};
    g.output_names = {"loss"};
    for (std::size_t i = 0; i < weights.size(); ++i) {
        g.outputs.push_back(update.params[i]);
        g.output_names.push_back("new_" + model.names[i]);
    }
    g.outputs.push_back(nn::count_correct(logits, labels));
    g.output_names.push_back("correct");
    return g;
}
HEDRA_AOT_GENERATOR(mlp_step)
