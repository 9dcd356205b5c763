// hedra.nn's compiled training steps: TrainStep (a classifier) and Trainer (any loss, which may
// be a Python function: called with the GIL held when a program is built, never per step), with
// their state and safetensors checkpoints.
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "hedra_python.hpp"
#include "nn/io/safetensors.hpp"
#include "nn/lr_schedule.hpp"
#include "nn/train_step.hpp"
#include "nn/trainer.hpp"

namespace hedra::python {

using namespace nb::literals;

namespace {

void bind_train_step(nb::module_& nn) {
    nb::class_<nn::TrainStep>(nn, "TrainStep",
                              "A classifier's training step (forward, backward, update) compiled "
                              "once and run per batch.")
        .def(
            "__init__",
            [](nn::TrainStep* s, const nn::Model& model,
               std::shared_ptr<const nn::Optimizer> optimizer, const std::string& backend,
               int num_threads) {
                ComputeOptions options;
                options.backend = backend;
                options.num_threads = num_threads;
                new (s) nn::TrainStep(model, std::move(optimizer), options);
            },
            "model"_a, "optimizer"_a, "backend"_a = "", "num_threads"_a = 0)
        .def(
            "step",
            [](nn::TrainStep& s, ArrayLike images, ArrayLike labels) {
                return s.step(to_host_array(images), to_host_array(labels));
            },
            "images"_a, "labels"_a, "One update; returns the loss before it.")
        .def(
            "count_correct",
            [](nn::TrainStep& s, ArrayLike images, ArrayLike labels) {
                return s.count_correct(to_host_array(images), to_host_array(labels));
            },
            "images"_a, "labels"_a)
        .def_prop_ro("params", [](const nn::TrainStep& s) { return to_numpy_list(s.params()); })
        .def_prop_ro("optimizer_state",
                     [](const nn::TrainStep& s) { return to_numpy_list(s.optimizer_state()); })
        .def(
            "set_params",
            [](nn::TrainStep& s, ArraySequence params) { s.set_params(to_host_arrays(params)); },
            "params"_a)
        .def("model", &nn::TrainStep::model)
        .def_prop_ro("example_shape", &nn::TrainStep::example_shape)
        .def_prop_ro("trainer", nb::overload_cast<>(&nn::TrainStep::trainer),
                     nb::rv_policy::reference_internal)
        .def_prop_ro("compile_seconds", &nn::TrainStep::compile_seconds)
        .def_prop_ro("programs_compiled", &nn::TrainStep::programs_compiled);
}

nn::LossOutputsFunction python_loss(LossCallable f) {
    return [f](const std::vector<Array>& params, const std::vector<Array>& inputs) {
        nb::gil_scoped_acquire gil;
        nb::object r = call_python(f, to_array_list(params), to_array_list(inputs));
        nn::LossOutputs out;
        if (nb::isinstance<nb::tuple>(r)) {
            nb::tuple t = nb::borrow<nb::tuple>(r);
            out.loss = to_array(t[0], "Trainer loss");
            if (t.size() > 1) out.outputs = to_arrays(t[1], "Trainer loss");
        } else {
            out.loss = to_array(r, "Trainer loss");
        }
        return out;
    };
}

void bind_schedules(nb::module_& nn) {
    nb::class_<nn::ConstantLr>(nn, "ConstantLr", "The same learning rate at every step.")
        .def(
            "__init__", [](nn::ConstantLr* s, double lr) { new (s) nn::ConstantLr{lr}; },
            "lr"_a = 1e-3)
        .def_rw("lr", &nn::ConstantLr::lr)
        .def("__call__", &nn::ConstantLr::at, "step"_a);
    nb::class_<nn::WarmupCosine>(nn, "WarmupCosine",
                                 "nanoGPT's schedule: linear warm-up, cosine decay to min_lr.")
        .def(
            "__init__",
            [](nn::WarmupCosine* s, double lr, double min_lr, std::int64_t warmup,
               std::int64_t decay_steps) {
                new (s) nn::WarmupCosine{lr, min_lr, warmup, decay_steps};
            },
            "lr"_a = 1e-3, "min_lr"_a = 1e-4, "warmup"_a = 100, "decay_steps"_a = 2000)
        .def_rw("lr", &nn::WarmupCosine::lr)
        .def_rw("min_lr", &nn::WarmupCosine::min_lr)
        .def_rw("warmup", &nn::WarmupCosine::warmup)
        .def_rw("decay_steps", &nn::WarmupCosine::decay_steps)
        .def("__call__", &nn::WarmupCosine::at, "step"_a);
}

void bind_trainer(nb::module_& nn) {
    nb::class_<nn::InputSpec>(nn, "InputSpec", "An input of a Trainer's step; -1: any extent.")
        .def(
            "__init__",
            [](nn::InputSpec* s, std::vector<std::int64_t> sizes, OptionalDTypeLike dtype,
               std::string name, bool any_integer) {
                new (s)
                    nn::InputSpec{std::move(sizes), dtype.is_none() ? DType::F32 : to_dtype(dtype),
                                  std::move(name), any_integer};
            },
            "sizes"_a, "dtype"_a = nb::none(), "name"_a = "", "any_integer"_a = false)
        .def_ro("sizes", &nn::InputSpec::sizes)
        .def_ro("dtype", &nn::InputSpec::dtype)
        .def_ro("name", &nn::InputSpec::name);
    nb::class_<nn::Trainer>(nn, "Trainer",
                            "A general training step: loss(params, inputs) -> loss or (loss, "
                            "[outputs]), compiled once per input shape.")
        .def(
            "__init__",
            [](nn::Trainer* t, LossCallable loss, std::vector<nn::InputSpec> inputs,
               ArraySequence params, std::shared_ptr<const nn::Optimizer> optimizer,
               std::vector<std::string> param_names, double clip_norm, const std::string& backend,
               int num_threads, bool symbolic_batch, OptionalDTypeLike precision) {
                nn::TrainerOptions options;
                if (!precision.is_none()) options.precision = to_dtype(precision);
                options.param_names = std::move(param_names);
                options.clip_norm = clip_norm;
                options.compute.backend = backend;
                options.compute.num_threads = num_threads;
                options.symbolic_batch = symbolic_batch;
                new (t) nn::Trainer(python_loss(std::move(loss)), std::move(inputs),
                                    to_host_arrays(params), std::move(optimizer), options);
            },
            "loss"_a, "inputs"_a, "params"_a, "optimizer"_a,
            "param_names"_a = std::vector<std::string>{}, "clip_norm"_a = 0.0, "backend"_a = "",
            "num_threads"_a = 0, "symbolic_batch"_a = true, "precision"_a = nb::none(),
            "precision: None or f32, or mixed precision: bf16, or f16 with dynamic loss scaling "
            "(GradScaler's defaults); parameters and optimizer state stay f32.")
        .def(
            "step",
            [](nn::Trainer& t, ArraySequence inputs, OptionalFloat lr) {
                return t.step(to_host_arrays(inputs),
                              lr.is_none() ? t.optimizer().learning_rate() : nb::cast<double>(lr));
            },
            "inputs"_a, "lr"_a = nb::none(),
            "One update (lr: the optimizer's unless given); returns the loss.")
        .def(
            "evaluate",
            [](nn::Trainer& t, ArraySequence inputs) -> std::pair<double, NumpyArrayList> {
                nn::StepResult r = t.evaluate(to_host_arrays(inputs));
                return {r.loss.flat(0), to_numpy_list(r.outputs)};
            },
            "inputs"_a, "(loss, [outputs]) at the current parameters, without an update.")
        .def_prop_ro("param_names", &nn::Trainer::param_names)
        .def_prop_ro("params", [](const nn::Trainer& t) { return to_numpy_list(t.params()); })
        .def_prop_ro("optimizer_state",
                     [](const nn::Trainer& t) { return to_numpy_list(t.optimizer_state()); })
        .def_prop_ro("step_count", &nn::Trainer::step_count)
        .def_prop_ro("precision", [](const nn::Trainer& t) { return t.options().precision; })
        .def_prop_ro("loss_scaling", &nn::Trainer::loss_scaling)
        .def_prop_ro("loss_scale", &nn::Trainer::loss_scale,
                     "The current loss scale (1.0 without loss scaling).")
        .def(
            "set_params",
            [](nn::Trainer& t, ArraySequence params) { t.set_params(to_host_arrays(params)); },
            "params"_a)
        .def(
            "checkpoint",
            [](const nn::Trainer& t) {
                return [](const nn::TrainerCheckpoint& c) {
                    return checkpoint_tuple(c.names, c.arrays, c.metadata);
                }(t.checkpoint());
            },
            "({name: array}, metadata): everything a resumed run depends on.")
        .def(
            "restore",
            [](nn::Trainer& t, nb::dict arrays, std::map<std::string, std::string> metadata) {
                std::vector<std::string> names;
                std::vector<HostArray> values;
                for (auto [k, v] : arrays) {
                    names.push_back(nb::cast<std::string>(k));
                    values.push_back(to_host_array(v));
                }
                t.restore(names, values, metadata);
            },
            "arrays"_a, "metadata"_a)
        .def(
            "save_checkpoint",
            [](const nn::Trainer& t, const std::string& path) {
                nn::TrainerCheckpoint c = t.checkpoint();
                nn::save_safetensors(path, c.names, c.arrays, c.metadata);
            },
            "path"_a, "Writes checkpoint() to a safetensors file.")
        .def(
            "load_checkpoint",
            [](nn::Trainer& t, const std::string& path) {
                nn::SafetensorsFile f = nn::load_safetensors(path);
                t.restore(f.names, f.arrays, f.metadata);
            },
            "path"_a);
}

} // namespace

void bind_training(nb::module_& nn) {
    bind_train_step(nn);
    bind_trainer(nn);
    bind_schedules(nn);
}

} // namespace hedra::python
