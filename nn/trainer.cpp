// Trainer (trainer.hpp): builds the step graphs over placeholders, compiles each once per kind
// and input shapes, and threads parameters, optimizer state and the step count from one call to
// the next. Program inputs are ordered params, [state], [accumulated gradients], [lr or
// micro-batch count], [loss scale, growth tracker], inputs; outputs are loss, [norm], new params
// or gradients, [new state], [found inf, new scale, new growth tracker], extra outputs.
#include "nn/trainer.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <optional>
#include <utility>

#include "ad/grad.hpp"
#include "ad/recompute.hpp"
#include "core/error.hpp"
#include "core/library.hpp"
#include "nn/autocast.hpp"
#include "nn/clip_grad.hpp"

namespace hedra::nn {

namespace {

std::string sizes_string(const std::vector<std::int64_t>& sizes) {
    std::string s = "(";
    for (std::size_t i = 0; i < sizes.size(); ++i)
        s += (i ? "," : "") +
             (sizes[i] == kAnyExtent ? std::string("any") : std::to_string(sizes[i]));
    return s + (sizes.size() == 1 ? ",)" : ")");
}

std::string array_string(DType dtype, const std::vector<std::int64_t>& sizes) {
    return std::string(dtype_name(dtype)) + " " + sizes_string(sizes);
}

std::vector<Array> placeholders_like(const std::vector<HostArray>& values,
                                     const std::string& prefix) {
    std::vector<Array> out;
    for (std::size_t i = 0; i < values.size(); ++i)
        out.push_back(placeholder(Shape::of(values[i].sizes()), values[i].dtype(),
                                  prefix + std::to_string(i)));
    return out;
}

void append(std::vector<Array>& to, const std::vector<Array>& more) {
    to.insert(to.end(), more.begin(), more.end());
}

LossOutputsFunction with_no_outputs(LossFunction loss) {
    if (!loss) return nullptr;
    return [loss = std::move(loss)](const std::vector<Array>& params,
                                    const std::vector<Array>& inputs) {
        return LossOutputs{loss(params, inputs), {}};
    };
}

HostArray scalar(DType dtype, double value) {
    HostArray a({}, dtype);
    a.set_flat(0, value);
    return a;
}

} // namespace

Trainer::Trainer(LossFunction loss, std::vector<InputSpec> inputs, std::vector<HostArray> params,
                 std::shared_ptr<const Optimizer> optimizer, TrainerOptions options)
    : Trainer(with_no_outputs(std::move(loss)), std::move(inputs), std::move(params),
              std::move(optimizer), std::move(options)) {}

Trainer::Trainer(LossOutputsFunction loss, std::vector<InputSpec> inputs,
                 std::vector<HostArray> params, std::shared_ptr<const Optimizer> optimizer,
                 TrainerOptions options)
    : loss_(std::move(loss)), inputs_(std::move(inputs)), names_(options.param_names),
      params_(std::move(params)), optimizer_(std::move(optimizer)), options_(std::move(options)) {
    if (!loss_) throw Error("Trainer: no loss function given");
    if (!optimizer_) throw Error("Trainer: no optimizer given");
    if (params_.empty())
        throw Error("Trainer: no parameters given; the loss needs something to train");
    if (!(options_.clip_norm >= 0.0))
        throw Error("Trainer: clip_norm " + std::to_string(options_.clip_norm) +
                    " must be 0 (no clipping) or positive");
    if (names_.empty())
        for (std::size_t i = 0; i < params_.size(); ++i)
            names_.push_back("param" + std::to_string(i));
    if (names_.size() != params_.size())
        throw Error("Trainer: got " + std::to_string(names_.size()) + " parameter names for " +
                    std::to_string(params_.size()) + " parameters");
    for (std::size_t i = 0; i < params_.size(); ++i)
        if (!is_float(params_[i].dtype()))
            throw Error("Trainer: parameter '" + names_[i] + "' is " +
                        array_string(params_[i].dtype(), params_[i].sizes()) +
                        "; parameters must be f32 or f64");
    for (std::size_t i = 0; i < inputs_.size(); ++i) {
        if (inputs_[i].name.empty()) inputs_[i].name = "input" + std::to_string(i);
        for (std::int64_t s : inputs_[i].sizes)
            if (s < 0 && s != kAnyExtent)
                throw Error("Trainer: input '" + inputs_[i].name + "' has extent " +
                            std::to_string(s) + "; use a size >= 0 or kAnyExtent");
    }
    check_precision();
    lr_dtype_ = params_[0].dtype();
    state_ = optimizer_->initial_state(params_);
}

void Trainer::check_precision() {
    const DType p = options_.precision;
    const std::string name(dtype_name(p));
    if (p != DType::F32 && !is_half(p))
        throw Error("Trainer: precision " + name +
                    " is not a training precision; use DType::F32, DType::BF16 or DType::F16");
    if (is_half(p))
        for (std::size_t i = 0; i < params_.size(); ++i)
            if (params_[i].dtype() != DType::F32)
                throw Error("Trainer: precision " + name + " keeps f32 master weights, but " +
                            "parameter '" + names_[i] + "' is " +
                            array_string(params_[i].dtype(), params_[i].sizes()) +
                            "; pass f32 parameters, or train with precision f32");
    if (options_.loss_scaling) {
        if (options_.loss_scaling->enabled && p == DType::F32)
            throw Error("Trainer: loss scaling keeps small f16 gradients from flushing to zero "
                        "and needs precision f16 (or bf16); with f32 leave "
                        "TrainerOptions::loss_scaling unset");
        scaler_ = *options_.loss_scaling;
    } else if (p == DType::F16) {
        scaler_ = LossScaling{};
    }
    if (!scaler_.enabled) return;
    check_loss_scaling(scaler_);
    scaler_state_ = {scalar(DType::F32, scaler_.init_scale), scalar(DType::F32, 0.0)};
}

double Trainer::loss_scale() const {
    return scaler_.enabled ? scaler_state_.at(0).flat(0) : 1.0;
}

std::int64_t Trainer::loss_scale_growth_tracker() const {
    return scaler_.enabled ? static_cast<std::int64_t>(scaler_state_.at(1).flat(0)) : 0;
}

void Trainer::check_no_loss_scaling(const char* op) const {
    if (scaler_.enabled)
        throw Error(std::string(op) + ": dynamic loss scaling (precision " +
                    std::string(dtype_name(options_.precision)) +
                    ") is applied by step() only; call step(), train in bf16 (no scaling "
                    "needed), or set TrainerOptions::loss_scaling to LossScaling{.enabled = "
                    "false}");
}

void Trainer::set_params(std::vector<HostArray> params) {
    if (params.size() != params_.size())
        throw Error("Trainer::set_params: got " + std::to_string(params.size()) + " arrays for " +
                    std::to_string(params_.size()) + " parameters");
    for (std::size_t i = 0; i < params.size(); ++i)
        if (params[i].sizes() != params_[i].sizes() || params[i].dtype() != params_[i].dtype())
            throw Error("Trainer::set_params: parameter '" + names_[i] + "' is " +
                        array_string(params_[i].dtype(), params_[i].sizes()) + ", got " +
                        array_string(params[i].dtype(), params[i].sizes()));
    params_ = std::move(params);
    if (!state_released_) state_ = optimizer_->initial_state(params_);
    steps_ = 0;
}

void Trainer::take_updated_params(std::vector<HostArray> params) {
    std::int64_t steps = steps_;
    std::vector<HostArray> state = std::move(state_);
    set_params(std::move(params));
    state_ = std::move(state);
    steps_ = steps + 1;
}

void Trainer::release_optimizer_state() {
    state_.clear();
    state_.shrink_to_fit();
    state_released_ = true;
}

void Trainer::check_state_held(const char* op) const {
    if (state_released_)
        throw Error(
            std::string(op) +
            ": this trainer's optimizer state was released to a sharded optimizer "
            "(distributed::DataParallelTrainer with shard_optimizer_state); step through that");
}

void Trainer::check_inputs(const char* op, const std::vector<HostArray>& inputs) const {
    if (inputs.size() != inputs_.size())
        throw Error(std::string(op) + ": got " + std::to_string(inputs.size()) + " inputs, the " +
                    "trainer's specs list " + std::to_string(inputs_.size()));
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const InputSpec& spec = inputs_[i];
        bool ok =
            (spec.any_integer ? is_integer(inputs[i].dtype()) : inputs[i].dtype() == spec.dtype) &&
            inputs[i].rank() == int(spec.sizes.size());
        for (std::size_t a = 0; ok && a < spec.sizes.size(); ++a)
            ok = spec.sizes[a] == kAnyExtent || spec.sizes[a] == inputs[i].sizes()[a];
        if (!ok)
            throw Error(std::string(op) + ": input " + std::to_string(i) + " '" + spec.name +
                        "' must be " +
                        (spec.any_integer ? "an integer array " + sizes_string(spec.sizes)
                                          : array_string(spec.dtype, spec.sizes)) +
                        ", got " + array_string(inputs[i].dtype(), inputs[i].sizes()));
    }
}

HostArray Trainer::lr_array(double lr) const {
    if (!(lr >= 0.0) || !std::isfinite(lr))
        throw Error("Trainer::step: learning rate " + std::to_string(lr) +
                    " must be finite and >= 0");
    return scalar(lr_dtype_, lr);
}

LossOutputs Trainer::loss_of(const std::vector<Array>& params,
                             const std::vector<Array>& inputs) const {
    Autocast autocast(options_.precision);
    LossOutputs out = loss_(params, inputs);
    if (!out.loss.valid() || out.loss.rank() != 0 || !is_float(out.loss.dtype()))
        throw Error("Trainer: the loss function must return a rank-0 float array, got " +
                    (out.loss.valid() ? out.loss.describe() : std::string("an empty array")));
    return out;
}

Trainer::UpdateGraph Trainer::update_of(const std::vector<Array>& params,
                                        std::vector<Array> grads) const {
    UpdateGraph g;
    std::vector<Array> state = placeholders_like(state_, "state");
    Array lr = placeholder(Shape(), lr_dtype_, "lr");
    if (options_.clip_norm > 0.0) {
        ClippedGradients c = clip_grad_norm(grads, options_.clip_norm, options_.shards);
        grads = std::move(c.grads);
        g.grad_norm = c.total_norm;
    }
    OptimizerUpdate u = optimizer_->update(params, grads, state, lr);
    if (u.params.size() != params.size() || u.state.size() != state.size())
        throw Error("Trainer: optimizer '" + optimizer_->name() + "' returned " +
                    std::to_string(u.params.size()) + " parameters and " +
                    std::to_string(u.state.size()) + " state arrays for " +
                    std::to_string(params.size()) + " and " + std::to_string(state.size()));
    for (std::size_t i = 0; i < params.size(); ++i)
        if (u.params[i].shape() != params[i].shape() || u.params[i].dtype() != params[i].dtype())
            throw Error("Trainer: optimizer '" + optimizer_->name() + "' turned parameter '" +
                        names_[i] + "' " + params[i].describe() + " into " +
                        u.params[i].describe());
    g.outputs = u.params;
    append(g.outputs, u.state);
    g.inputs = state;
    g.inputs.push_back(lr);
    return g;
}

std::vector<Array> Trainer::gradients_of(const Array& loss, const LossOutputs& forward,
                                         const std::vector<Array>& params) const {
    std::vector<Array> grads = grad(loss, params);
    if (!options_.recompute) return grads;
    std::vector<Array> values{forward.loss};
    append(values, forward.outputs);
    return ad::recompute_maps(values, grads);
}

bool Trainer::batch_axis(std::size_t input) const {
    return options_.symbolic_batch && !inputs_[input].sizes.empty() &&
           inputs_[input].sizes[0] == kAnyExtent;
}

std::int64_t Trainer::symbolic_batch(const std::vector<HostArray>& inputs) const {
    std::int64_t batch = 0;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (!batch_axis(i)) continue;
        const std::int64_t b = inputs[i].sizes().at(0);
        if (b < 1 || (batch > 0 && b != batch)) return 0; // not one batch: a program per size
        batch = b;
    }
    return batch;
}

CompiledProgram Trainer::build(Kind kind, const std::vector<HostArray>& inputs,
                               std::int64_t batch_max) const {
    const std::size_t n = params_.size();
    // Steps and updates take the parameters and the state first: with update_in_place they
    // are donated, so the new values may be written over the old.
    ComputeOptions updating = options_.compute;
    if (options_.update_in_place)
        for (std::size_t i = 0; i < n + state_.size(); ++i)
            updating.donate.push_back(static_cast<int>(i));
    std::vector<Array> params = placeholders_like(params_, "param");
    std::vector<Array> xs;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        Shape shape = Shape::of(inputs[i].sizes());
        if (batch_max > 0 && batch_axis(i)) {
            std::vector<Range> ranges = shape.ranges();
            ranges[0] = dynamic("batch", batch_max);
            shape = Shape(std::move(ranges));
        }
        xs.push_back(placeholder(shape, inputs[i].dtype(), inputs_[i].name));
    }
    std::vector<Array> ins = params, outs;
    if (kind == Kind::Evaluate) {
        LossOutputs lo = loss_of(params, xs);
        outs.push_back(lo.loss);
        append(outs, lo.outputs);
        append(ins, xs);
        return compile(outs, ins, options_.compute);
    }
    if (kind == Kind::Apply) {
        std::vector<Array> grads = placeholders_like(params_, "grad");
        UpdateGraph u = update_of(params, grads);
        if (u.grad_norm.valid()) outs.push_back(u.grad_norm);
        append(outs, u.outputs);
        append(ins, u.inputs);
        append(ins, grads);
        return compile(outs, ins, updating);
    }
    if (kind == Kind::Train) {
        LossOutputs lo = loss_of(params, xs);
        // Loss scaling: the gradients of loss · scale, multiplied by 1/scale in f32; a step with
        // an inf or NaN among them keeps the parameters and the state.
        Array scale, tracker, found;
        std::vector<Array> grads;
        if (scaler_.enabled) {
            scale = placeholder(Shape(), DType::F32, "loss_scale");
            tracker = placeholder(Shape(), DType::F32, "loss_scale_growth_tracker");
            Array loss32 = lo.loss.dtype() == DType::F32 ? lo.loss : cast(lo.loss, DType::F32);
            Array inverse = 1.0 / scale;
            for (const Array& g : gradients_of(loss32 * scale, lo, params))
                grads.push_back(g * inverse);
            found = found_non_finite(grads);
        } else {
            grads = gradients_of(lo.loss, lo, params);
        }
        UpdateGraph u = update_of(params, grads);
        outs.push_back(lo.loss);
        if (u.grad_norm.valid()) outs.push_back(u.grad_norm);
        if (found.valid()) {
            std::vector<Array> old = params; // and the state (the update's inputs but the lr)
            old.insert(old.end(), u.inputs.begin(), u.inputs.end() - 1);
            for (std::size_t i = 0; i < u.outputs.size(); ++i)
                outs.push_back(where(found, old.at(i), u.outputs[i]));
            ScaleUpdate next = update_scale(found, scale, tracker, scaler_);
            outs.push_back(found);
            outs.push_back(next.scale);
            outs.push_back(next.growth_tracker);
        } else {
            append(outs, u.outputs);
        }
        append(outs, lo.outputs);
        append(ins, u.inputs);
        if (found.valid()) {
            ins.push_back(scale);
            ins.push_back(tracker);
        }
        append(ins, xs);
        return compile(outs, ins, updating);
    }
    // Accumulation: loss, accumulated gradients of loss / count, extra outputs; each output
    // announced as soon as it is final (Trainer::gradients' hook).
    ComputeOptions hooked = options_.compute;
    hooked.output_hooks = true;
    std::vector<Array> acc;
    if (kind == Kind::AccumulateNext) acc = placeholders_like(params_, "grad");
    Array count = placeholder(Shape(), lr_dtype_, "micro_batches");
    LossOutputs lo = loss_of(params, xs);
    Array scaled =
        lo.loss / (count.dtype() == lo.loss.dtype() ? count : cast(count, lo.loss.dtype()));
    std::vector<Array> g = gradients_of(scaled, lo, params);
    outs.push_back(lo.loss);
    for (std::size_t i = 0; i < n; ++i)
        outs.push_back(acc.empty() ? g[i] : acc[i] + g[i]);
    append(outs, lo.outputs);
    append(ins, acc);
    ins.push_back(count);
    append(ins, xs);
    return compile(outs, ins, hooked);
}

const CompiledProgram& Trainer::program(Kind kind, const std::vector<HostArray>& inputs) {
    const bool per_size =
        std::find(per_size_kinds_.begin(), per_size_kinds_.end(), kind) != per_size_kinds_.end();
    const std::int64_t batch = per_size ? 0 : symbolic_batch(inputs);
    // The key: the inputs' sizes, the symbolic batch's leading extents as -1.
    auto key_for = [&](std::int64_t symbolic) {
        Key key{kind, {}, {}};
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            key.sizes.push_back(inputs[i].sizes());
            if (symbolic > 0 && batch_axis(i)) key.sizes.back()[0] = -1;
            key.dtypes.push_back(inputs[i].dtype());
        }
        return key;
    };
    Key key = key_for(batch);
    if (batch > 0) { // the program of the smallest maximum that holds this batch
        const CompiledProgram* best = nullptr;
        std::int64_t best_max = 0;
        for (const auto& [k, p] : programs_)
            if (k.kind == kind && k.sizes == key.sizes && k.dtypes == key.dtypes &&
                k.batch_max >= batch && (!best || k.batch_max < best_max)) {
                best = &p;
                best_max = k.batch_max;
            }
        if (best) return *best;
        key.batch_max = batch;
    }
    auto it = programs_.find(key);
    if (it != programs_.end()) return it->second;
    const auto start = std::chrono::steady_clock::now();
    // A model whose graph cannot keep the batch symbolic (an operation that slices or reshapes
    // across it) gets a program per batch size instead, from now on for this kind.
    std::optional<CompiledProgram> built;
    if (key.batch_max > 0) {
        try {
            built = build(kind, inputs, key.batch_max);
        } catch (const Error&) {
            per_size_kinds_.push_back(kind);
            key = key_for(0);
        }
    }
    CompiledProgram p = built ? std::move(*built) : build(kind, inputs, 0);
    compile_seconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ++programs_compiled_;
    return programs_.emplace(std::move(key), std::move(p)).first->second;
}

void Trainer::take_update(const std::vector<HostArray>& out, std::size_t first) {
    for (std::size_t i = 0; i < params_.size(); ++i)
        params_[i] = out[first + i];
    for (std::size_t i = 0; i < state_.size(); ++i)
        state_[i] = out[first + params_.size() + i];
    ++steps_;
}

std::vector<HostArray> Trainer::run_on_state(const CompiledProgram& p,
                                             const std::vector<HostArray>& rest) {
    std::vector<HostArray> in;
    if (!options_.update_in_place) {
        in = params_;
        in.insert(in.end(), state_.begin(), state_.end());
        in.insert(in.end(), rest.begin(), rest.end());
        return p(in);
    }
    in.reserve(params_.size() + state_.size() + rest.size());
    for (HostArray& a : params_)
        in.push_back(std::move(a));
    for (HostArray& a : state_)
        in.push_back(std::move(a));
    in.insert(in.end(), rest.begin(), rest.end());
    try {
        return p(std::move(in));
    } catch (...) {
        for (std::size_t i = 0; i < params_.size(); ++i)
            params_[i] = std::move(in[i]);
        for (std::size_t i = 0; i < state_.size(); ++i)
            state_[i] = std::move(in[params_.size() + i]);
        throw;
    }
}

double Trainer::step(const std::vector<HostArray>& inputs, double lr) {
    return step_outputs(inputs, lr).loss.flat(0);
}

std::optional<ProgramMemory> Trainer::step_memory(const std::vector<HostArray>& inputs) {
    check_inputs("Trainer::step_memory", inputs);
    return program(Kind::Train, inputs).memory();
}

StepResult Trainer::step_outputs(const std::vector<HostArray>& inputs, double lr) {
    check_inputs("Trainer::step", inputs);
    check_state_held("Trainer::step");
    HostArray lr_value = lr_array(lr);
    const CompiledProgram& p = program(Kind::Train, inputs);
    std::vector<HostArray> rest{lr_value};
    rest.insert(rest.end(), scaler_state_.begin(), scaler_state_.end());
    rest.insert(rest.end(), inputs.begin(), inputs.end());
    std::vector<HostArray> out = run_on_state(p, rest);
    StepResult r;
    r.loss = out[0];
    const std::size_t clipped = options_.clip_norm > 0.0 ? 1 : 0;
    if (clipped) r.grad_norm = out[1];
    take_update(out, 1 + clipped);
    std::size_t next = 1 + clipped + params_.size() + state_.size();
    if (scaler_.enabled) {
        r.skipped = out[next];
        scaler_state_ = {out[next + 1], out[next + 2]};
        next += 3;
    }
    r.outputs.assign(out.begin() + long(next), out.end());
    return r;
}

double Trainer::step_accumulated(const std::vector<std::vector<HostArray>>& micro_batches,
                                 double lr) {
    if (micro_batches.empty())
        throw Error("Trainer::step_accumulated: no micro-batches given; pass at least one");
    check_no_loss_scaling("Trainer::step_accumulated");
    check_state_held("Trainer::step_accumulated");
    for (const std::vector<HostArray>& batch : micro_batches)
        check_inputs("Trainer::step_accumulated", batch);
    lr_array(lr); // checked before any work
    const double count = static_cast<double>(micro_batches.size());
    std::vector<HostArray> grads;
    double loss_sum = 0.0;
    for (const std::vector<HostArray>& batch : micro_batches) {
        Gradients g = gradients(batch, count, grads);
        loss_sum += g.loss.flat(0);
        grads = std::move(g.grads);
    }
    apply_gradients(grads, lr);
    return loss_sum / count;
}

Trainer::Gradients Trainer::gradients(const std::vector<HostArray>& inputs, double divisor,
                                      const std::vector<HostArray>& accumulated,
                                      const OutputHook* hook) {
    check_inputs("Trainer::gradients", inputs);
    check_no_loss_scaling("Trainer::gradients");
    if (!(divisor > 0.0) || !std::isfinite(divisor))
        throw Error("Trainer::gradients: divisor " + std::to_string(divisor) +
                    " must be finite and > 0");
    const std::size_t n = params_.size();
    if (!accumulated.empty() && accumulated.size() != n)
        throw Error("Trainer::gradients: " + std::to_string(accumulated.size()) +
                    " accumulated gradients for " + std::to_string(n) + " parameters");
    const CompiledProgram& p =
        program(accumulated.empty() ? Kind::AccumulateFirst : Kind::AccumulateNext, inputs);
    std::vector<HostArray> in = params_;
    in.insert(in.end(), accumulated.begin(), accumulated.end());
    in.push_back(scalar(lr_dtype_, divisor));
    in.insert(in.end(), inputs.begin(), inputs.end());
    std::vector<HostArray> out = hook ? p(in, *hook) : p(in);
    return {out[0], std::vector<HostArray>(out.begin() + 1, out.begin() + long(1 + n))};
}

void Trainer::apply_gradients(const std::vector<HostArray>& grads, double lr) {
    check_state_held("Trainer::apply_gradients");
    if (grads.size() != params_.size())
        throw Error("Trainer::apply_gradients: " + std::to_string(grads.size()) +
                    " gradients for " + std::to_string(params_.size()) + " parameters");
    for (std::size_t i = 0; i < grads.size(); ++i)
        if (grads[i].sizes() != params_[i].sizes() || grads[i].dtype() != params_[i].dtype())
            throw Error("Trainer::apply_gradients: the gradient of '" + names_[i] + "' is " +
                        array_string(grads[i].dtype(), grads[i].sizes()) + ", the parameter " +
                        array_string(params_[i].dtype(), params_[i].sizes()));
    HostArray lr_value = lr_array(lr);
    const CompiledProgram& apply = program(Kind::Apply, {});
    std::vector<HostArray> rest{lr_value};
    rest.insert(rest.end(), grads.begin(), grads.end());
    take_update(run_on_state(apply, rest), options_.clip_norm > 0.0 ? 1 : 0);
}

StepResult Trainer::evaluate(const std::vector<HostArray>& inputs) {
    check_inputs("Trainer::evaluate", inputs);
    const CompiledProgram& p = program(Kind::Evaluate, inputs);
    std::vector<HostArray> in = params_;
    in.insert(in.end(), inputs.begin(), inputs.end());
    std::vector<HostArray> out = p(in);
    StepResult r;
    r.loss = out[0];
    r.outputs.assign(out.begin() + 1, out.end());
    return r;
}

std::vector<std::string> Trainer::state_names() const {
    std::vector<std::string> names = optimizer_->state_names(names_);
    if (names.size() != state_.size()) {
        names.clear();
        for (std::size_t i = 0; i < state_.size(); ++i)
            names.push_back(std::to_string(i));
    }
    for (std::string& name : names)
        name = "optimizer." + name;
    return names;
}

TrainerCheckpoint Trainer::checkpoint() const {
    TrainerCheckpoint c;
    c.names = names_;
    std::vector<std::string> s = state_names();
    c.names.insert(c.names.end(), s.begin(), s.end());
    c.arrays = params_;
    c.arrays.insert(c.arrays.end(), state_.begin(), state_.end());
    if (scaler_.enabled) {
        c.names.push_back("loss_scaler.scale");
        c.names.push_back("loss_scaler.growth_tracker");
        c.arrays.insert(c.arrays.end(), scaler_state_.begin(), scaler_state_.end());
    }
    c.metadata["step"] = std::to_string(steps_);
    c.metadata["optimizer"] = optimizer_->name();
    return c;
}

void Trainer::restore(const std::vector<std::string>& names, const std::vector<HostArray>& arrays,
                      const std::map<std::string, std::string>& metadata) {
    if (names.size() != arrays.size())
        throw Error("Trainer::restore: got " + std::to_string(names.size()) + " names for " +
                    std::to_string(arrays.size()) + " arrays");
    auto it = metadata.find("step");
    std::int64_t steps = -1;
    if (it != metadata.end()) {
        const std::string& v = it->second;
        auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), steps);
        if (ec != std::errc() || end != v.data() + v.size() || steps < 0) steps = -1;
    }
    if (steps < 0)
        throw Error("Trainer::restore: the metadata has no valid \"step\" (the update count); "
                    "restore from what Trainer::checkpoint() gave");
    if (auto o = metadata.find("optimizer"); o != metadata.end() && o->second != optimizer_->name())
        throw Error("Trainer::restore: the checkpoint holds the state of optimizer '" + o->second +
                    "', this trainer's is '" + optimizer_->name() + "'");
    TrainerCheckpoint mine = checkpoint();
    std::map<std::string, const HostArray*> given;
    for (std::size_t i = 0; i < names.size(); ++i)
        given[names[i]] = &arrays[i];
    std::vector<HostArray> values;
    for (std::size_t i = 0; i < mine.names.size(); ++i) {
        auto g = given.find(mine.names[i]);
        if (g == given.end())
            throw Error("Trainer::restore: no array named '" + mine.names[i] + "' (" +
                        array_string(mine.arrays[i].dtype(), mine.arrays[i].sizes()) +
                        "); the checkpoint is not of this model and optimizer");
        const HostArray& a = *g->second;
        if (a.dtype() != mine.arrays[i].dtype() || a.sizes() != mine.arrays[i].sizes())
            throw Error("Trainer::restore: '" + mine.names[i] + "' is " +
                        array_string(a.dtype(), a.sizes()) + ", the trainer's is " +
                        array_string(mine.arrays[i].dtype(), mine.arrays[i].sizes()));
        values.push_back(a);
    }
    const auto state_begin = values.begin() + long(params_.size());
    const auto state_end = state_begin + long(state_.size());
    params_.assign(values.begin(), state_begin);
    state_.assign(state_begin, state_end);
    scaler_state_.assign(state_end, values.end());
    steps_ = steps;
}

} // namespace hedra::nn
