// Loading MNIST-format directories, seeded shuffles and batch extraction (see mnist_dataset.hpp).
#include "nn/io/mnist_dataset.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "core/error.hpp"
#include "nn/io/idx_reader.hpp"

namespace hedra::nn {

namespace {

std::string sizes_string(const std::vector<std::int64_t>& sizes) {
    std::string s = "(";
    for (std::size_t i = 0; i < sizes.size(); ++i)
        s += (i ? "," : "") + std::to_string(sizes[i]);
    return s + (sizes.size() == 1 ? ",)" : ")");
}

std::int64_t product(const std::vector<std::int64_t>& sizes) {
    std::int64_t p = 1;
    for (std::int64_t s : sizes)
        p *= s;
    return p;
}

// SplitMix64 (Steele, Lea and Flood 2014): a tiny generator whose output is fixed by its seed.
class SplitMix64 {
public:
    explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next() {
        std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    // Uniform in [0, bound), by rejection so that no value is favoured.
    std::uint64_t below(std::uint64_t bound) {
        std::uint64_t threshold = (0 - bound) % bound;
        for (;;)
            if (std::uint64_t r = next(); r >= threshold) return r % bound;
    }

private:
    std::uint64_t state_;
};

} // namespace

std::string find_mnist_file(const std::string& directory, const std::string& stem) {
    namespace fs = std::filesystem;
    fs::path plain = fs::path(directory) / stem;
    fs::path gz = fs::path(directory) / (stem + ".gz");
    std::error_code ec;
    if (fs::is_regular_file(plain, ec)) return plain.string();
    if (fs::is_regular_file(gz, ec)) return gz.string();
    std::string where = fs::is_directory(directory, ec)
                            ? "neither '" + plain.string() + "' nor '" + gz.string() + "' exists"
                            : "the directory '" + directory + "' does not exist";
    throw Error("cannot find mnist file '" + stem + "': " + where + "; " + mnist_data_hint());
}

MnistSplit load_mnist_split(const std::string& directory, bool train, DType label_dtype) {
    std::string prefix = train ? "train" : "t10k";
    std::string images_path = find_mnist_file(directory, prefix + "-images-idx3-ubyte");
    std::string labels_path = find_mnist_file(directory, prefix + "-labels-idx1-ubyte");
    MnistSplit split{read_idx_images(images_path), read_idx_labels(labels_path, label_dtype)};
    if (split.images.sizes()[0] != split.labels.sizes()[0])
        throw Error("mnist files disagree: '" + images_path + "' holds " +
                    std::to_string(split.images.sizes()[0]) + " images but '" + labels_path +
                    "' holds " + std::to_string(split.labels.sizes()[0]) + " labels; " +
                    mnist_data_hint());
    return split;
}

MnistDataset load_mnist(const std::string& directory, DType label_dtype) {
    MnistDataset d{load_mnist_split(directory, true, label_dtype),
                   load_mnist_split(directory, false, label_dtype)};
    const auto& a = d.train.images.sizes();
    const auto& b = d.test.images.sizes();
    if (a[1] != b[1] || a[2] != b[2])
        throw Error("mnist files in '" + directory + "' disagree: training images have shape " +
                    sizes_string(a) + " but test images " + sizes_string(b) + "; " +
                    mnist_data_hint());
    return d;
}

PixelStatistics pixel_statistics(const MnistSplit& split) {
    if (split.images.dtype() != DType::F32 || split.images.size() == 0)
        throw Error("pixel_statistics: the images must be a non-empty f32 array, got " +
                    std::string(dtype_name(split.images.dtype())) + " with " +
                    std::to_string(split.images.size()) + " elements");
    // Two passes in double: the mean first, then the spread around it (no cancellation).
    auto values = split.images.values<float>();
    double sum = 0.0;
    for (float v : values)
        sum += v;
    const double mean = sum / static_cast<double>(values.size());
    double squares = 0.0;
    for (float v : values)
        squares += (v - mean) * (v - mean);
    return {mean, std::sqrt(squares / static_cast<double>(values.size()))};
}

void standardize(MnistSplit& split, const PixelStatistics& statistics) {
    if (!(statistics.stddev > 0.0))
        throw Error("standardize: the standard deviation is " + std::to_string(statistics.stddev) +
                    "; images whose pixels are all equal cannot be standardized");
    HostArray out(split.images.sizes(), DType::F32);
    auto in = split.images.values<float>();
    auto values = out.mutable_values<float>();
    const double scale = 1.0 / statistics.stddev;
    for (std::size_t i = 0; i < values.size(); ++i)
        values[i] = static_cast<float>((in[i] - statistics.mean) * scale);
    split.images = std::move(out);
}

std::vector<std::int64_t> sequential_indices(std::int64_t n) {
    std::vector<std::int64_t> order(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)));
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = static_cast<std::int64_t>(i);
    return order;
}

std::vector<std::int64_t> shuffled_indices(std::int64_t n, std::uint64_t seed,
                                           std::uint64_t epoch) {
    std::vector<std::int64_t> order = sequential_indices(n);
    SplitMix64 mixer(seed);
    SplitMix64 rng(mixer.next() ^ SplitMix64(epoch ^ 0xD1B54A32D192ED03ull).next());
    for (std::size_t i = order.size(); i > 1; --i)
        std::swap(order[i - 1], order[rng.below(i)]);
    return order;
}

std::int64_t batch_count(std::int64_t n, std::int64_t batch_size, bool drop_last) {
    if (batch_size <= 0)
        throw Error("batch_count: batch size must be positive, got " + std::to_string(batch_size));
    return drop_last ? n / batch_size : (n + batch_size - 1) / batch_size;
}

HostArray gather_rows(const HostArray& a, std::span<const std::int64_t> rows,
                      const std::vector<std::int64_t>& row_shape) {
    if (a.rank() < 1) throw Error("gather_rows: a scalar has no rows");
    std::vector<std::int64_t> own(a.sizes().begin() + 1, a.sizes().end());
    const std::vector<std::int64_t>& shape = row_shape.empty() ? own : row_shape;
    std::int64_t row_elements = product(own);
    if (product(shape) != row_elements)
        throw Error("gather_rows: rows of shape " + sizes_string(own) + " cannot be reshaped to " +
                    sizes_string(shape));
    std::vector<std::int64_t> sizes{static_cast<std::int64_t>(rows.size())};
    sizes.insert(sizes.end(), shape.begin(), shape.end());
    HostArray out(sizes, a.dtype());
    std::size_t row_bytes = static_cast<std::size_t>(row_elements) * dtype_size(a.dtype());
    auto* dst = static_cast<unsigned char*>(out.raw_mutable());
    const auto* src = static_cast<const unsigned char*>(a.raw());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (rows[i] < 0 || rows[i] >= a.sizes()[0])
            throw Error("gather_rows: row " + std::to_string(rows[i]) +
                        " is out of range for shape " + sizes_string(a.sizes()));
        std::memcpy(dst + i * row_bytes, src + static_cast<std::size_t>(rows[i]) * row_bytes,
                    row_bytes);
    }
    return out;
}

MnistBatch mnist_batch(const MnistSplit& split, std::span<const std::int64_t> order,
                       std::int64_t batch_index, std::int64_t batch_size,
                       const std::vector<std::int64_t>& image_shape) {
    std::int64_t batches = batch_count(static_cast<std::int64_t>(order.size()), batch_size, false);
    if (batch_index < 0 || batch_index >= batches)
        throw Error("mnist_batch: batch " + std::to_string(batch_index) +
                    " is out of range: " + std::to_string(order.size()) + " examples make " +
                    std::to_string(batches) + " batches of " + std::to_string(batch_size));
    auto begin = static_cast<std::size_t>(batch_index * batch_size);
    std::size_t count = std::min(order.size() - begin, static_cast<std::size_t>(batch_size));
    std::span<const std::int64_t> rows = order.subspan(begin, count);
    return {gather_rows(split.images, rows, image_shape), gather_rows(split.labels, rows)};
}

} // namespace hedra::nn
