// A general training step, compiled once and run per batch: any loss function of the parameters
// and any number of inputs (tokens and targets, images and labels, ...), optional global-norm
// gradient clipping, any optimizer, and the learning rate as a run-time input, so that a schedule
// changes it every step without recompiling. The step graph takes the parameters, the optimizer
// state, the learning rate and the inputs as placeholders and returns the loss, the new
// parameters, the new state and the loss function's extra outputs: forward, backward
// (ad/grad.hpp), clipping and update in one program. A program is compiled per distinct shapes
// of the inputs. Gradients may also be accumulated over micro-batches before one update.
// checkpoint() and restore() give and take every array a run depends on (parameters, optimizer
// state, step count), so a resumed run is bitwise equal to an uninterrupted one; nn/io's
// safetensors files store them. TrainerOptions::precision trains in mixed precision
// (nn/autocast.hpp, nn/loss_scaling.hpp): f32 master weights and optimizer state, half
// contractions, f32 softmax, normalization and loss, still one program per step.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/compute.hpp"
#include "nn/clip_grad.hpp"
#include "nn/loss_scaling.hpp"
#include "nn/optim.hpp"

namespace hedra::nn {

// An extent of an InputSpec that matches any size (a program is compiled per distinct one).
inline constexpr std::int64_t kAnyExtent = -1;

struct InputSpec {
    std::vector<std::int64_t> sizes; // kAnyExtent where any extent is accepted
    DType dtype = DType::F32;
    std::string name; // in messages and placeholder names; "input<i>" when empty
    // Any integer dtype is accepted (a program per dtype): class labels read as i32 or i64.
    bool any_integer = false;
};

struct LossOutputs {
    Array loss;                 // rank 0, float
    std::vector<Array> outputs; // anything else a step returns (accuracy, logits, ...)
};

// The loss from the parameters and the inputs (placeholders in the order of the input specs).
using LossFunction =
    std::function<Array(const std::vector<Array>& params, const std::vector<Array>& inputs)>;
// The same, with extra outputs.
using LossOutputsFunction =
    std::function<LossOutputs(const std::vector<Array>& params, const std::vector<Array>& inputs)>;

struct TrainerOptions {
    std::vector<std::string> param_names; // one per parameter; empty: "param0", "param1", ...
    double clip_norm = 0.0; // > 0: clip_grad_norm(grads, clip_norm) before every update
    ComputeOptions compute; // the backend and compile options of every program
    // Inputs whose leading extent is kAnyExtent share one symbolic extent "batch": a program
    // serves every batch up to the largest it was compiled for (the first batch, or a larger
    // one that comes later), so a final partial batch compiles nothing. Off: a program per size.
    bool symbolic_batch = true;
    // DType::F32: no mixed precision. DType::BF16 or DType::F16: the loss function (in every
    // program: steps, gradients, evaluation) runs under nn::Autocast(precision); parameters,
    // gradients and optimizer state stay f32. Parameters must then be f32.
    DType precision = DType::F32;
    // Dynamic loss scaling (nn/loss_scaling.hpp); unset: LossScaling{} (on, GradScaler's
    // defaults) for f16, none for bf16, whose range is f32's. It needs precision bf16 or f16 and
    // covers step() and step_outputs(); gradients() and step_accumulated() refuse it.
    std::optional<LossScaling> loss_scaling = std::nullopt;
    // The step and apply programs write the new parameters and optimizer state into the memory
    // of the old ones (CompileOptions::donate) where their partition allows it, so a step
    // allocates no new parameter or state arrays. Arrays from params() or optimizer_state()
    // that the caller still holds are copied before a step writes over them, never changed.
    bool update_in_place = true;
    // Activation recomputation: the gradients compute the forward's elementwise maps (a GELU's
    // output, softmax probabilities, normalized rows) again where they read them, from the
    // values those maps read, so the forward's copies are freed when the forward is done with
    // them (ad/recompute.hpp): less memory between the passes for some more work in the
    // backward. Applies to the step and gradient programs.
    bool recompute = false;
    // Tensor parallelism: the parameters that are this rank's shards and the group they are
    // split over, so that clipping takes the norm of the whole model's gradient.
    GradientShards shards;
};

struct StepResult {
    HostArray loss;      // rank 0: the loss before the update
    HostArray grad_norm; // rank 0: the total gradient norm before clipping (clip_norm > 0)
    std::vector<HostArray> outputs; // LossOutputs::outputs
    HostArray skipped; // rank-0 bool with loss scaling: inf/NaN gradients, nothing updated
};

// Everything a run depends on, for a checkpoint file: the parameters by their names, the
// optimizer state by the optimizer's names prefixed "optimizer." (numbered when it names none),
// with loss scaling "loss_scaler.scale" and "loss_scaler.growth_tracker", and metadata: "step"
// (steps taken, skipped ones included) and "optimizer" (its name).
struct TrainerCheckpoint {
    std::vector<std::string> names;
    std::vector<HostArray> arrays;
    std::map<std::string, std::string> metadata;
};

class Trainer {
public:
    Trainer(LossFunction loss, std::vector<InputSpec> inputs, std::vector<HostArray> params,
            std::shared_ptr<const Optimizer> optimizer, TrainerOptions options = {});
    Trainer(LossOutputsFunction loss, std::vector<InputSpec> inputs, std::vector<HostArray> params,
            std::shared_ptr<const Optimizer> optimizer, TrainerOptions options = {});

    // One update with learning rate `lr` on `inputs` (matching the specs): returns the loss
    // before the update and updates the parameters, the optimizer state and step_count().
    double step(const std::vector<HostArray>& inputs, double lr);
    // The same step, returning the loss, the gradient norm and the extra outputs as arrays
    // without waiting for them (on a device backend they are copied to the host when read).
    StepResult step_outputs(const std::vector<HostArray>& inputs, double lr);
    // One update from the gradients of several micro-batches: each micro-batch's loss is
    // scaled by 1/count before its gradient is taken and the gradients are summed (PyTorch's
    // gradient accumulation), then clipped and applied once. Returns the mean of the losses.
    double step_accumulated(const std::vector<std::vector<HostArray>>& micro_batches, double lr);
    // The loss and extra outputs at the current parameters, without an update.
    StepResult evaluate(const std::vector<HostArray>& inputs);

    // The parts of a step, for callers that combine gradients themselves (gradient
    // accumulation, data parallelism): the loss of `inputs` and the gradients of loss / divisor,
    // added to `accumulated` when it is not empty; nothing is updated.
    struct Gradients {
        HostArray loss;               // rank 0, before the division
        std::vector<HostArray> grads; // one per parameter
    };
    // `hook` (optional) hears of every output as it becomes final (output 0 the loss, then
    // the gradients, then the extra outputs): a data-parallel step starts each gradient's
    // all-reduce there, while the backward pass goes on.
    Gradients gradients(const std::vector<HostArray>& inputs, double divisor,
                        const std::vector<HostArray>& accumulated = {},
                        const OutputHook* hook = nullptr);
    // One update of the parameters and optimizer state from gradients (clipped first when
    // clip_norm > 0), counted as a step.
    void apply_gradients(const std::vector<HostArray>& grads, double lr);

    const std::vector<std::string>& param_names() const { return names_; }
    const std::vector<HostArray>& params() const { return params_; }
    const std::vector<HostArray>& optimizer_state() const { return state_; }
    const Optimizer& optimizer() const { return *optimizer_; }
    std::int64_t step_count() const { return steps_; } // updates done
    // Replaces the parameters (same shapes and dtypes), resets the optimizer state and the step
    // count.
    void set_params(std::vector<HostArray> params);
    // Replaces the parameters with ones an update made elsewhere (a sharded optimizer: each rank
    // updates a part), keeping the optimizer state, and counts a step.
    void take_updated_params(std::vector<HostArray> params);
    // Frees the optimizer state when another object holds it (the data-parallel sharded
    // optimizer, which keeps each rank's part only): step() and apply_gradients() then throw,
    // gradients() and evaluate() work, and checkpoint()/restore() cover the parameters and step
    // count only.
    void release_optimizer_state();
    bool optimizer_state_released() const { return state_released_; }
    const TrainerOptions& options() const { return options_; }
    // Whether the steps scale the loss (TrainerOptions::loss_scaling), the current scale and
    // the clean steps counted towards its growth (reading them waits for the last step).
    bool loss_scaling() const { return scaler_.enabled; }
    double loss_scale() const;
    std::int64_t loss_scale_growth_tracker() const;

    TrainerCheckpoint checkpoint() const;
    // Takes the parameters, optimizer state and step count from arrays named as checkpoint()
    // names them (in any order; every name must be present, with its shape and dtype).
    void restore(const std::vector<std::string>& names, const std::vector<HostArray>& arrays,
                 const std::map<std::string, std::string>& metadata);

    const std::vector<InputSpec>& input_specs() const { return inputs_; }

    // TrainerOptions::symbolic_batch for the programs compiled from now on.
    void set_symbolic_batch(bool on) { options_.symbolic_batch = on; }

    // Seconds spent building and compiling programs so far, and how many were compiled.
    double compile_seconds() const { return compile_seconds_; }
    // The memory plan of the step program for inputs like these (compiling it if need be):
    // its arena of shared temporaries, its results (the new parameters and state), its inputs.
    std::optional<ProgramMemory> step_memory(const std::vector<HostArray>& inputs);
    int programs_compiled() const { return programs_compiled_; }

private:
    enum class Kind { Train, Evaluate, AccumulateFirst, AccumulateNext, Apply };
    struct Key {
        Kind kind;
        std::vector<std::vector<std::int64_t>> sizes; // per input
        std::vector<DType> dtypes;                    // per input
        std::int64_t batch_max = 0; // > 0: the symbolic batch's maximum (its sizes hold -1)
        auto operator<=>(const Key&) const = default;
    };
    const CompiledProgram& program(Kind kind, const std::vector<HostArray>& inputs);
    CompiledProgram build(Kind kind, const std::vector<HostArray>& inputs,
                          std::int64_t batch_max) const;
    // The batch the inputs share on their kAnyExtent leading axes (symbolic_batch), or 0.
    std::int64_t symbolic_batch(const std::vector<HostArray>& inputs) const;
    bool batch_axis(std::size_t input) const; // whether input's leading axis is the batch
    LossOutputs loss_of(const std::vector<Array>& params, const std::vector<Array>& inputs) const;
    // The gradients of `loss` (a function of `forward`'s values), with recompute's copies.
    std::vector<Array> gradients_of(const Array& loss, const LossOutputs& forward,
                                    const std::vector<Array>& params) const;
    struct UpdateGraph {
        std::vector<Array> outputs; // new parameters, new state
        std::vector<Array> inputs;  // state and learning-rate placeholders
        Array grad_norm;            // with clipping
    };
    // The update from the gradients, clipped first when clip_norm > 0.
    UpdateGraph update_of(const std::vector<Array>& params, std::vector<Array> grads) const;
    void check_inputs(const char* op, const std::vector<HostArray>& inputs) const;
    void check_state_held(const char* op) const;
    void check_no_loss_scaling(const char* op) const;
    void check_precision(); // TrainerOptions::precision and loss_scaling; sets up the scaler
    HostArray lr_array(double lr) const;
    std::vector<std::string> state_names() const;
    void take_update(const std::vector<HostArray>& out, std::size_t first);
    // Runs `p` on the parameters, the optimizer state, then `rest`; with update_in_place the
    // parameters and state are moved in (donated) and put back if the run throws.
    std::vector<HostArray> run_on_state(const CompiledProgram& p,
                                        const std::vector<HostArray>& rest);

    LossOutputsFunction loss_;
    std::vector<InputSpec> inputs_;
    std::vector<std::string> names_;
    std::vector<HostArray> params_;
    std::shared_ptr<const Optimizer> optimizer_;
    TrainerOptions options_;
    DType lr_dtype_ = DType::F32;
    std::vector<HostArray> state_;
    LossScaling scaler_{.enabled = false};
    std::vector<HostArray> scaler_state_; // with loss scaling: the scale and the growth tracker
    std::int64_t steps_ = 0;
    bool state_released_ = false;
    std::map<Key, CompiledProgram> programs_;
    double compile_seconds_ = 0.0;
    int programs_compiled_ = 0;
    // Kinds whose graph could not keep the batch symbolic: they compile a program per size
    // without trying again.
    std::vector<Kind> per_size_kinds_;
};

} // namespace hedra::nn
