// TrainStep (train_step.hpp): builds the step graph over placeholders, compiles it with
// compile(), and threads parameters and optimizer state from one call to the next.
#include "nn/train_step.hpp"

#include <chrono>
#include <string>

#include "ad/grad.hpp"
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

std::vector<Array> placeholders_like(const std::vector<HostArray>& values, const char* prefix) {
    std::vector<Array> out;
    for (std::size_t i = 0; i < values.size(); ++i)
        out.push_back(placeholder(Shape::of(values[i].sizes()), values[i].dtype(),
                                  prefix + std::to_string(i)));
    return out;
}

} // namespace

TrainStep::TrainStep(Model model, std::shared_ptr<const Optimizer> optimizer,
                     ComputeOptions options)
    : model_(std::move(model)), optimizer_(std::move(optimizer)), options_(std::move(options)) {
    if (!model_.forward) throw Error("TrainStep: the model has no forward function");
    if (!optimizer_) throw Error("TrainStep: no optimizer given");
    state_ = optimizer_->initial_state(model_.params);
}

void TrainStep::set_params(std::vector<HostArray> params) {
    if (params.size() != model_.params.size())
        throw Error("TrainStep::set_params: got " + std::to_string(params.size()) + " arrays for " +
                    std::to_string(model_.params.size()) + " parameters");
    for (std::size_t i = 0; i < params.size(); ++i)
        if (params[i].sizes() != model_.params[i].sizes() ||
            params[i].dtype() != model_.params[i].dtype())
            throw Error("TrainStep::set_params: parameter '" + model_.names[i] + "' is " +
                        std::string(dtype_name(model_.params[i].dtype())) + " " +
                        sizes_string(model_.params[i].sizes()) + ", got " +
                        std::string(dtype_name(params[i].dtype())) + " " +
                        sizes_string(params[i].sizes()));
    model_.params = std::move(params);
    state_ = optimizer_->initial_state(model_.params);
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

CompiledProgram TrainStep::build(std::int64_t batch, DType label_dtype, bool training) const {
    std::vector<Array> params = placeholders_like(model_.params, "param");
    std::vector<std::int64_t> x_sizes{batch};
    x_sizes.insert(x_sizes.end(), model_.example_shape.begin(), model_.example_shape.end());
    Array x = placeholder(Shape::of(x_sizes), DType::F32, "x");
    Array y = placeholder(Shape::of({batch}), label_dtype, "y");
    Array logits = model_.forward(params, x);
    std::vector<Array> inputs = params;
    if (!training) {
        inputs.insert(inputs.end(), {x, y});
        return compile({nn::count_correct(logits, y)}, inputs, options_);
    }
    Array loss = softmax_cross_entropy(logits, y);
    std::vector<Array> state = placeholders_like(state_, "state");
    OptimizerUpdate update = optimizer_->update(params, grad(loss, params), state);
    std::vector<Array> outputs{loss};
    outputs.insert(outputs.end(), update.params.begin(), update.params.end());
    outputs.insert(outputs.end(), update.state.begin(), update.state.end());
    inputs.insert(inputs.end(), state.begin(), state.end());
    inputs.insert(inputs.end(), {x, y});
    return compile(outputs, inputs, options_);
}

const CompiledProgram& TrainStep::program(std::map<Key, CompiledProgram>& cache,
                                          const HostArray& images, const HostArray& labels,
                                          bool training) {
    check_batch(images, labels);
    Key key{images.sizes()[0], labels.dtype()};
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
    const auto start = std::chrono::steady_clock::now();
    CompiledProgram p = build(key.first, key.second, training);
    compile_seconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ++programs_compiled_;
    return cache.emplace(key, std::move(p)).first->second;
}

double TrainStep::step(const HostArray& images, const HostArray& labels) {
    return step_loss(images, labels).flat(0);
}

HostArray TrainStep::step_loss(const HostArray& images, const HostArray& labels) {
    const CompiledProgram& p = program(train_programs_, images, labels, true);
    std::vector<HostArray> inputs = model_.params;
    inputs.insert(inputs.end(), state_.begin(), state_.end());
    inputs.push_back(images);
    inputs.push_back(labels);
    std::vector<HostArray> out = p(inputs);
    const std::size_t n = model_.params.size();
    for (std::size_t i = 0; i < n; ++i)
        model_.params[i] = out[1 + i];
    for (std::size_t i = 0; i < state_.size(); ++i)
        state_[i] = out[1 + n + i];
    return out[0];
}

std::int64_t TrainStep::count_correct(const HostArray& images, const HostArray& labels) {
    const CompiledProgram& p = program(eval_programs_, images, labels, false);
    std::vector<HostArray> inputs = model_.params;
    inputs.push_back(images);
    inputs.push_back(labels);
    return static_cast<std::int64_t>(p(inputs)[0].flat(0));
}

} // namespace hedra::nn
