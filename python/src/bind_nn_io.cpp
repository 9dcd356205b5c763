// hedra.nn's files: safetensors reading and writing, and the MNIST-format datasets with the C++
// examples' shuffles and standardization (so that a Python loop sees the same batches).
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "hedra_python.hpp"
#include "nn/io/mnist_dataset.hpp"
#include "nn/io/safetensors.hpp"

namespace hedra::python {

using namespace nb::literals;

void bind_nn_io(nb::module_& nn) {
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
            return checkpoint_tuple(f.names, f.arrays, f.metadata);
        },
        "path"_a, "({name: array}, metadata) from a safetensors file.");

    nb::class_<nn::PixelStatistics>(nn, "PixelStatistics")
        .def_ro("mean", &nn::PixelStatistics::mean)
        .def_ro("stddev", &nn::PixelStatistics::stddev);
    nb::class_<nn::MnistSplit>(nn, "MnistSplit", "Images (n, rows, cols) f32 and labels (n).")
        .def(
            "__init__",
            [](nn::MnistSplit* s, ArrayLike images, ArrayLike labels) {
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
        [](const std::string& dir, OptionalDTypeLike label_dtype) {
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

} // namespace hedra::python
