// MNIST-format datasets (MNIST, Fashion-MNIST, ...) loaded from a directory of IDX files, and the
// seeded shuffles and batches a training loop takes from them. The shuffle is defined here bit
// for bit (SplitMix64 seeding a Fisher-Yates shuffle), so a seed gives the same batches on every
// platform and standard library.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/host_array.hpp"

namespace hedra::nn {

// Where Debian's dataset-fashion-mnist package puts its files.
inline constexpr const char* kDefaultMnistDirectory = "/usr/share/datasets/fashion-mnist";

// One split: images f32 (n, rows, cols) in [0, 1] and labels i32 or i64 (n).
struct MnistSplit {
    HostArray images;
    HostArray labels;
    std::int64_t size() const { return labels.size(); }
};

struct MnistDataset {
    MnistSplit train;
    MnistSplit test;
};

// "<directory>/<stem>" or, failing that, "<directory>/<stem>.gz"; throws hedra::Error naming
// both when neither exists.
std::string find_mnist_file(const std::string& directory, const std::string& stem);

// The training split (train-*-idx?-ubyte) or the test split (t10k-*-idx?-ubyte) of `directory`;
// checks that images and labels agree in count.
MnistSplit load_mnist_split(const std::string& directory, bool train,
                            DType label_dtype = DType::I32);

// Both splits; checks that they have the same image size.
MnistDataset load_mnist(const std::string& directory = kDefaultMnistDirectory,
                        DType label_dtype = DType::I32);

// The mean and standard deviation of all pixels of a split's images.
struct PixelStatistics {
    double mean = 0.0;
    double stddev = 1.0;
};
PixelStatistics pixel_statistics(const MnistSplit& split);

// Every pixel x of the split's images becomes (x - mean) / stddev (zero mean, unit variance
// under the statistics given: the training split's, for both splits). Throws hedra::Error if
// stddev is not positive.
void standardize(MnistSplit& split, const PixelStatistics& statistics);

// 0, 1, ..., n-1 (the order for evaluation).
std::vector<std::int64_t> sequential_indices(std::int64_t n);

// A permutation of 0..n-1 determined by (seed, epoch) alone.
std::vector<std::int64_t> shuffled_indices(std::int64_t n, std::uint64_t seed,
                                           std::uint64_t epoch = 0);

// Number of batches in an epoch of n examples: the last, partial batch counts unless drop_last.
std::int64_t batch_count(std::int64_t n, std::int64_t batch_size, bool drop_last);

// Rows `rows` of `a` (along axis 0), each reshaped to `row_shape` (empty: keep a's own row
// shape). The result has shape (rows.size(), row_shape...) and a's dtype.
HostArray gather_rows(const HostArray& a, std::span<const std::int64_t> rows,
                      const std::vector<std::int64_t>& row_shape = {});

struct MnistBatch {
    HostArray images; // (b, image_shape...)
    HostArray labels; // (b)
};

// Batch number `batch_index` of `order`: examples order[batch_index * batch_size ...], at most
// batch_size of them (fewer for a final partial batch). `image_shape` reshapes each image, e.g.
// {784} for an MLP or {1, 28, 28} for a CNN; empty keeps (rows, cols).
MnistBatch mnist_batch(const MnistSplit& split, std::span<const std::int64_t> order,
                       std::int64_t batch_index, std::int64_t batch_size,
                       const std::vector<std::int64_t>& image_shape = {});

} // namespace hedra::nn
