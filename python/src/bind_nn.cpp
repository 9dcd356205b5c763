// hedra.nn: the layers, optimizers, models, compiled training steps (TrainStep, Trainer),
// safetensors checkpoints and the MNIST data helpers of nn/. A model's forward function or a
// Trainer's loss may be Python: it is called (with the GIL held) when a program is built,
// on placeholders, never per step.
#include <nanobind/stl/map.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "hedra_python.hpp"
#include "nn/io/mnist_dataset.hpp"
#include "nn/io/safetensors.hpp"
#include "nn/layers.hpp"
#include "nn/model.hpp"
#include "nn/optim.hpp"
#include "nn/train_step.hpp"
#include "nn/trainer.hpp"
#include "nn/transformer.hpp"

namespace hedra::python {

using namespace nb::literals;

namespace {

Array optional_array(nb::handle h, const char* op) {
    return h.is_none() ? Array() : to_array(h, op);
}

std::vector<HostArray> to_host_arrays(nb::handle sequence) {
    std::vector<HostArray> out;
    for (nb::handle h : sequence)
        out.push_back(to_host_array(h));
    return out;
}

nb::list to_numpy_list(const std::vector<HostArray>& arrays) {
    nb::list out;
    for (const HostArray& a : arrays)
        out.append(to_numpy(a));
    return out;
}

nb::list to_array_list(const std::vector<Array>& arrays) {
    nb::list out;
    for (const Array& a : arrays)
        out.append(nb::cast(a));
    return out;
}

void bind_layers(nb::module_& nn) {
    nn.def(
        "linear",
        [](nb::handle x, nb::handle w, nb::handle b) {
            return nn::linear(to_array(x, "linear"), to_array(w, "linear"),
                              optional_array(b, "linear"), python_location());
        },
        "x"_a, "weight"_a, "bias"_a = nb::none(),
        "x · weightᵀ (+ bias), weight (out, in...) as PyTorch's.");
    nn.def(
        "conv2d",
        [](nb::handle x, nb::handle w, nb::handle b, std::int64_t stride, std::int64_t padding) {
            return nn::conv2d(to_array(x, "conv2d"), to_array(w, "conv2d"),
                              optional_array(b, "conv2d"), stride, padding, python_location());
        },
        "x"_a, "weight"_a, "bias"_a = nb::none(), "stride"_a = 1, "padding"_a = 0);
    nn.def(
        "maxpool2d",
        [](nb::handle x, std::int64_t kernel, std::int64_t stride) {
            return nn::maxpool2d(to_array(x, "maxpool2d"), kernel, stride, python_location());
        },
        "x"_a, "kernel"_a, "stride"_a = 0);
    nn.def(
        "softmax",
        [](nb::handle x, int axis) {
            return nn::softmax(to_array(x, "softmax"), axis, python_location());
        },
        "x"_a, "axis"_a = -1);
    nn.def(
        "log_softmax",
        [](nb::handle x, int axis) {
            return nn::log_softmax(to_array(x, "log_softmax"), axis, python_location());
        },
        "x"_a, "axis"_a = -1);
    nn.def(
        "softmax_cross_entropy",
        [](nb::handle logits, nb::handle labels) {
            return nn::softmax_cross_entropy(to_array(logits, "softmax_cross_entropy"),
                                             to_array(labels, "softmax_cross_entropy"),
                                             python_location());
        },
        "logits"_a, "labels"_a, "Mean cross-entropy of logits (B, K) against integer labels (B).");
    nn.def(
        "cross_entropy",
        [](nb::handle logits, nb::handle labels) {
            return nn::cross_entropy(to_array(logits, "cross_entropy"),
                                     to_array(labels, "cross_entropy"), python_location());
        },
        "logits"_a, "labels"_a);
    nn.def(
        "count_correct",
        [](nb::handle logits, nb::handle labels) {
            return nn::count_correct(to_array(logits, "count_correct"),
                                     to_array(labels, "count_correct"), python_location());
        },
        "logits"_a, "labels"_a);
    nn.def(
        "dropout",
        [](nb::handle x, double p, nb::handle seed, bool training) {
            return nn::dropout(to_array(x, "dropout"), p, optional_array(seed, "dropout"), training,
                               python_location());
        },
        "x"_a, "p"_a, "seed"_a = nb::none(), "training"_a = true);
    nn.def(
        "layer_norm",
        [](nb::handle x, nb::handle w, nb::handle b, double eps) {
            return nn::layer_norm(to_array(x, "layer_norm"), optional_array(w, "layer_norm"),
                                  optional_array(b, "layer_norm"), eps, python_location());
        },
        "x"_a, "weight"_a = nb::none(), "bias"_a = nb::none(), "eps"_a = 1e-5);
    nn.def(
        "gelu", [](nb::handle x) { return nn::gelu(to_array(x, "gelu"), python_location()); },
        "x"_a);
    nn.def(
        "embedding",
        [](nb::handle i, nb::handle t) {
            return nn::embedding(to_array(i, "embedding"), to_array(t, "embedding"),
                                 python_location());
        },
        "indices"_a, "table"_a);
}

void bind_optimizers(nb::module_& nn) {
    nb::class_<nn::Optimizer>(nn, "Optimizer")
        .def_prop_ro("name", &nn::Optimizer::name)
        .def_prop_ro("lr", &nn::Optimizer::learning_rate);
    nb::class_<nn::Sgd, nn::Optimizer>(nn, "SGD", "torch.optim.SGD's rule.")
        .def(
            "__init__",
            [](nn::Sgd* o, double lr, double momentum, double weight_decay, bool nesterov) {
                new (o) nn::Sgd(nn::SgdOptions{lr, momentum, weight_decay, nesterov});
            },
            "lr"_a = 0.01, "momentum"_a = 0.0, "weight_decay"_a = 0.0, "nesterov"_a = false);
    nb::class_<nn::Adam, nn::Optimizer>(nn, "Adam", "torch.optim.Adam's rule.")
        .def(
            "__init__",
            [](nn::Adam* o, double lr, double beta1, double beta2, double eps, double wd) {
                new (o) nn::Adam(nn::AdamOptions{lr, beta1, beta2, eps, wd});
            },
            "lr"_a = 1e-3, "beta1"_a = 0.9, "beta2"_a = 0.999, "eps"_a = 1e-8,
            "weight_decay"_a = 0.0);
    nb::class_<nn::AdamW, nn::Optimizer>(nn, "AdamW", "torch.optim.AdamW's rule.")
        .def(
            "__init__",
            [](nn::AdamW* o, double lr, double beta1, double beta2, double eps, double wd,
               std::vector<bool> decay_mask) {
                new (o)
                    nn::AdamW(nn::AdamWOptions{lr, beta1, beta2, eps, wd, std::move(decay_mask)});
            },
            "lr"_a = 1e-3, "beta1"_a = 0.9, "beta2"_a = 0.999, "eps"_a = 1e-8,
            "weight_decay"_a = 1e-2, "decay_mask"_a = std::vector<bool>{});
}

nn::ForwardFunction python_forward(nb::callable f) {
    return [f](const std::vector<Array>& params, const Array& x) {
        nb::gil_scoped_acquire gil;
        return to_array(f(to_array_list(params), nb::cast(x)), "forward");
    };
}

void bind_models(nb::module_& nn) {
    nb::class_<nn::Model>(nn, "Model", "Named parameters and a forward function to logits.")
        .def(
            "__init__",
            [](nn::Model* m, std::vector<std::string> names, nb::handle params,
               nb::callable forward, std::vector<std::int64_t> example_shape) {
                new (m) nn::Model{std::move(names), to_host_arrays(params), python_forward(forward),
                                  std::move(example_shape)};
            },
            "names"_a, "params"_a, "forward"_a, "example_shape"_a,
            "forward(params, x) returns logits (B, classes) for x (B, example_shape...).")
        .def_ro("names", &nn::Model::names)
        .def_prop_ro("params", [](const nn::Model& m) { return to_numpy_list(m.params); })
        .def_ro("example_shape", &nn::Model::example_shape)
        .def(
            "__call__",
            [](const nn::Model& m, nb::handle x) {
                std::vector<Array> params;
                for (const HostArray& p : m.params)
                    params.push_back(array(p));
                return m.forward(params, to_array(x, "Model"));
            },
            "x"_a, "The logits for x at the model's parameters (lazy).");
    nn.def("mlp", &nn::mlp, "sizes"_a, "seed"_a,
           "Dense layers sizes[0] -> ... -> sizes[-1], ReLU between, PyTorch's initialisation.");
    nn.def("mnist_cnn", &nn::mnist_cnn, "seed"_a, "c0"_a = 16, "c1"_a = 32, "classes"_a = 10);
}

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
            [](nn::TrainStep& s, nb::handle images, nb::handle labels) {
                return s.step(to_host_array(images), to_host_array(labels));
            },
            "images"_a, "labels"_a, "One update; returns the loss before it.")
        .def(
            "count_correct",
            [](nn::TrainStep& s, nb::handle images, nb::handle labels) {
                return s.count_correct(to_host_array(images), to_host_array(labels));
            },
            "images"_a, "labels"_a)
        .def_prop_ro("params", [](const nn::TrainStep& s) { return to_numpy_list(s.params()); })
        .def_prop_ro("optimizer_state",
                     [](const nn::TrainStep& s) { return to_numpy_list(s.optimizer_state()); })
        .def(
            "set_params",
            [](nn::TrainStep& s, nb::handle params) { s.set_params(to_host_arrays(params)); },
            "params"_a)
        .def("model", &nn::TrainStep::model)
        .def_prop_ro("example_shape", &nn::TrainStep::example_shape)
        .def_prop_ro("trainer", nb::overload_cast<>(&nn::TrainStep::trainer),
                     nb::rv_policy::reference_internal)
        .def_prop_ro("compile_seconds", &nn::TrainStep::compile_seconds)
        .def_prop_ro("programs_compiled", &nn::TrainStep::programs_compiled);
}

nn::LossOutputsFunction python_loss(nb::callable f) {
    return [f](const std::vector<Array>& params, const std::vector<Array>& inputs) {
        nb::gil_scoped_acquire gil;
        nb::object r = f(to_array_list(params), to_array_list(inputs));
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

nb::tuple checkpoint_tuple(const nn::TrainerCheckpoint& c) {
    nb::dict arrays;
    for (std::size_t i = 0; i < c.names.size(); ++i)
        arrays[nb::str(c.names[i].c_str())] = to_numpy(c.arrays[i]);
    return nb::make_tuple(arrays, nb::cast(c.metadata));
}

void bind_trainer(nb::module_& nn) {
    nb::class_<nn::InputSpec>(nn, "InputSpec", "An input of a Trainer's step; -1: any extent.")
        .def(
            "__init__",
            [](nn::InputSpec* s, std::vector<std::int64_t> sizes, nb::handle dtype,
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
            [](nn::Trainer* t, nb::callable loss, std::vector<nn::InputSpec> inputs,
               nb::handle params, std::shared_ptr<const nn::Optimizer> optimizer,
               std::vector<std::string> param_names, double clip_norm, const std::string& backend,
               int num_threads, bool symbolic_batch) {
                nn::TrainerOptions options;
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
            "num_threads"_a = 0, "symbolic_batch"_a = true)
        .def(
            "step",
            [](nn::Trainer& t, nb::handle inputs, nb::handle lr) {
                return t.step(to_host_arrays(inputs),
                              lr.is_none() ? t.optimizer().learning_rate() : nb::cast<double>(lr));
            },
            "inputs"_a, "lr"_a = nb::none(),
            "One update (lr: the optimizer's unless given); returns the loss.")
        .def(
            "evaluate",
            [](nn::Trainer& t, nb::handle inputs) {
                nn::StepResult r = t.evaluate(to_host_arrays(inputs));
                return nb::make_tuple(r.loss.flat(0), to_numpy_list(r.outputs));
            },
            "inputs"_a, "(loss, [outputs]) at the current parameters, without an update.")
        .def_prop_ro("param_names", &nn::Trainer::param_names)
        .def_prop_ro("params", [](const nn::Trainer& t) { return to_numpy_list(t.params()); })
        .def_prop_ro("optimizer_state",
                     [](const nn::Trainer& t) { return to_numpy_list(t.optimizer_state()); })
        .def_prop_ro("step_count", &nn::Trainer::step_count)
        .def(
            "set_params",
            [](nn::Trainer& t, nb::handle params) { t.set_params(to_host_arrays(params)); },
            "params"_a)
        .def(
            "checkpoint", [](const nn::Trainer& t) { return checkpoint_tuple(t.checkpoint()); },
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

void bind_io(nb::module_& nn) {
    nn.def(
        "save_safetensors",
        [](const std::string& path, nb::dict arrays, std::map<std::string, std::string> metadata) {
            std::vector<std::string> names;
            std::vector<HostArray> values;
            for (auto [k, v] : arrays) {
                names.push_back(nb::cast<std::string>(k));
                values.push_back(to_host_array(v));
            }
            nn::save_safetensors(path, names, values, metadata);
        },
        "path"_a, "arrays"_a, "metadata"_a = std::map<std::string, std::string>{});
    nn.def(
        "load_safetensors",
        [](const std::string& path) {
            nn::SafetensorsFile f = nn::load_safetensors(path);
            return checkpoint_tuple(nn::TrainerCheckpoint{f.names, f.arrays, f.metadata});
        },
        "path"_a, "({name: array}, metadata) from a safetensors file.");

    nb::class_<nn::PixelStatistics>(nn, "PixelStatistics")
        .def_ro("mean", &nn::PixelStatistics::mean)
        .def_ro("stddev", &nn::PixelStatistics::stddev);
    nb::class_<nn::MnistSplit>(nn, "MnistSplit", "Images (n, rows, cols) f32 and labels (n).")
        .def(
            "__init__",
            [](nn::MnistSplit* s, nb::handle images, nb::handle labels) {
                new (s) nn::MnistSplit{to_host_array(images), to_host_array(labels)};
            },
            "images"_a, "labels"_a)
        .def_prop_ro("images", [](const nn::MnistSplit& s) { return to_numpy(s.images); })
        .def_prop_ro("labels", [](const nn::MnistSplit& s) { return to_numpy(s.labels); })
        .def("__len__", &nn::MnistSplit::size);
    nb::class_<nn::MnistDataset>(nn, "MnistDataset")
        .def_rw("train", &nn::MnistDataset::train)
        .def_rw("test", &nn::MnistDataset::test);
    nn.attr("DEFAULT_MNIST_DIRECTORY") = nn::kDefaultMnistDirectory;
    nn.def(
        "load_mnist",
        [](const std::string& dir, nb::handle label_dtype) {
            return nn::load_mnist(dir, label_dtype.is_none() ? DType::I32 : to_dtype(label_dtype));
        },
        "directory"_a = nn::kDefaultMnistDirectory, "label_dtype"_a = nb::none(),
        "Both splits of an MNIST-format folder: images f32 (n, rows, cols) in [0, 1], labels.");
    nn.def("pixel_statistics", &nn::pixel_statistics, "split"_a);
    nn.def("standardize", &nn::standardize, "split"_a, "statistics"_a,
           "(x - mean) / stddev for every pixel of the split, in place.");
    nn.def(
        "shuffled_indices",
        [](std::int64_t n, std::uint64_t seed, std::uint64_t epoch) {
            auto v = nn::shuffled_indices(n, seed, epoch);
            return to_numpy(HostArray::from(std::move(v), {n}));
        },
        "n"_a, "seed"_a, "epoch"_a = 0,
        "The C++ examples' permutation of 0..n-1 for (seed, epoch).");
    nn.def("batch_count", &nn::batch_count, "n"_a, "batch_size"_a, "drop_last"_a = false);
}

} // namespace

void bind_nn(nb::module_& m) {
    nb::module_ nn = m.def_submodule("nn", "Layers, optimizers, training steps, checkpoints.");
    bind_layers(nn);
    bind_optimizers(nn);
    bind_models(nn);
    bind_train_step(nn);
    bind_trainer(nn);
    bind_io(nn);
}

} // namespace hedra::python
