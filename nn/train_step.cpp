// TrainStep (train_step.hpp): the classifier's loss and inputs handed to a Trainer.
#include "nn/train_step.hpp"

#include <string>

#include "core/error.hpp"
#include "nn/layers.hpp"

namespace hedra::nn {

namespace {

std::string sizes_string(const std::vector<std::int64_t>& sizes) {
    std::string s = "(";
    for (std::size_t i = 0; i < sizes.size(); ++i)
        s += (i ? "," : "") + std::to_string(sizes[i]);
    return s + ")";
}

Model checked(Model model, const std::shared_ptr<const Optimizer>& optimizer) {
    if (!model.forward) throw Error("TrainStep: the model has no forward function");
    if (!optimizer) throw Error("TrainStep: no optimizer given");
    return model;
}

std::vector<InputSpec> specs(const Model& model) {
    std::vector<std::int64_t> images{kAnyExtent};
    images.insert(images.end(), model.example_shape.begin(), model.example_shape.end());
    return {InputSpec{images, DType::F32, "images"},
            InputSpec{{kAnyExtent}, DType::I32, "labels", true}};
}

// Softmax cross-entropy of the logits, and the number of correct predictions.
LossOutputsFunction classifier_loss(ForwardFunction forward) {
    return [forward = std::move(forward)](const std::vector<Array>& params,
                                          const std::vector<Array>& inputs) {
        Array logits = forward(params, inputs[0]);
        return LossOutputs{softmax_cross_entropy(logits, inputs[1]),
                           {nn::count_correct(logits, inputs[1])}};
    };
}

} // namespace

TrainStep::TrainStep(Model model, std::shared_ptr<const Optimizer> optimizer,
                     ComputeOptions options)
    : model_(checked(std::move(model), optimizer)),
      trainer_(classifier_loss(model_.forward), specs(model_), model_.params, optimizer,
               TrainerOptions{model_.names, 0.0, std::move(options)}),
      lr_(optimizer->learning_rate()) {}

Model TrainStep::model() const {
    Model m = model_;
    m.params = trainer_.params();
    return m;
}

void TrainStep::set_params(std::vector<HostArray> params) {
    const std::vector<HostArray>& now = trainer_.params();
    if (params.size() != now.size())
        throw Error("TrainStep::set_params: got " + std::to_string(params.size()) + " arrays for " +
                    std::to_string(now.size()) + " parameters");
    for (std::size_t i = 0; i < params.size(); ++i)
        if (params[i].sizes() != now[i].sizes() || params[i].dtype() != now[i].dtype())
            throw Error("TrainStep::set_params: parameter '" + model_.names[i] + "' is " +
                        std::string(dtype_name(now[i].dtype())) + " " +
                        sizes_string(now[i].sizes()) + ", got " +
                        std::string(dtype_name(params[i].dtype())) + " " +
                        sizes_string(params[i].sizes()));
    trainer_.set_params(std::move(params));
}

void TrainStep::check_batch(const HostArray& images, const HostArray& labels) const {
    std::vector<std::int64_t> expect{images.rank() > 0 ? images.sizes()[0] : 0};
    expect.insert(expect.end(), model_.example_shape.begin(), model_.example_shape.end());
    if (images.rank() == 0 || images.sizes() != expect || images.dtype() != DType::F32) {
        std::string want = "(batch";
        for (std::int64_t s : model_.example_shape)
            want += "," + std::to_string(s);
        throw Error("TrainStep: images must be f32 " + want + "), got " +
                    std::string(dtype_name(images.dtype())) + " " + sizes_string(images.sizes()));
    }
    if (labels.rank() != 1 || labels.sizes()[0] != expect[0] || !is_integer(labels.dtype()))
        throw Error("TrainStep: labels must be integers of shape (" + std::to_string(expect[0]) +
                    "), got " + std::string(dtype_name(labels.dtype())) + " " +
                    sizes_string(labels.sizes()));
}

double TrainStep::step(const HostArray& images, const HostArray& labels) {
    return step_loss(images, labels).flat(0);
}

HostArray TrainStep::step_loss(const HostArray& images, const HostArray& labels) {
    check_batch(images, labels);
    return trainer_.step_outputs({images, labels}, lr_).loss;
}

std::int64_t TrainStep::count_correct(const HostArray& images, const HostArray& labels) {
    check_batch(images, labels);
    return static_cast<std::int64_t>(trainer_.evaluate({images, labels}).outputs.at(0).flat(0));
}

} // namespace hedra::nn
