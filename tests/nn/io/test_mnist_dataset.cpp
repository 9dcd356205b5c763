// MNIST-format directories: a tiny dataset written here (plain and .gz names mixed), the real
// Fashion-MNIST files when Debian's package is installed, the seeded shuffle (checked against
// values from an independent Python implementation of SplitMix64 + Fisher-Yates), and batches.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <string>

#include "core/error.hpp"
#include "nn/io/mnist_dataset.hpp"
#include "nn_test_files.hpp"

using namespace hedra;
using namespace hedra::nn;
using namespace hedra::nn::test;

namespace {

template <class F>
std::string error_of(F f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    FAIL("expected hedra::Error");
    return "";
}

// n images of 2x2 pixels where image i holds i, i+1, i+2, i+3; labels i % 10.
void write_split(const ScratchDir& dir, const std::string& prefix, std::uint32_t n, bool gz) {
    Bytes pixels, labels;
    for (std::uint32_t i = 0; i < n; ++i) {
        for (std::uint32_t k = 0; k < 4; ++k)
            pixels.push_back(static_cast<unsigned char>(i + k));
        labels.push_back(static_cast<unsigned char>(i % 10));
    }
    Bytes images = idx_bytes(0x08, {n, 2, 2}, pixels);
    Bytes label_file = idx_bytes(0x08, {n}, labels);
    write_file(dir.file(prefix + "-images-idx3-ubyte" + (gz ? ".gz" : "")),
               gz ? gzip_bytes(images) : images);
    write_file(dir.file(prefix + "-labels-idx1-ubyte"), label_file);
}

std::vector<std::int64_t> as_vector(const HostArray& a) {
    auto v = a.values<std::int64_t>();
    return {v.begin(), v.end()};
}

} // namespace

TEST_CASE("a small mnist-format directory loads with both file-name forms") {
    ScratchDir dir("mnist_small");
    write_split(dir, "train", 12, true);
    write_split(dir, "t10k", 5, false);
    MnistDataset d = load_mnist(dir.dir(), DType::I64);
    CHECK(d.train.size() == 12);
    CHECK(d.test.size() == 5);
    CHECK(d.train.images.sizes() == std::vector<std::int64_t>{12, 2, 2});
    CHECK(d.test.images.at({4, 1, 1}) == doctest::Approx(7.0 / 255.0));
    CHECK(as_vector(d.train.labels)[11] == 1);
    CHECK(d.test.labels.dtype() == DType::I64);
}

TEST_CASE("missing and inconsistent mnist directories are explained") {
    ScratchDir dir("mnist_missing");
    std::string message = error_of([&] { load_mnist(dir.dir()); });
    CHECK(message.find("train-images-idx3-ubyte") != std::string::npos);
    CHECK(message.find("train-images-idx3-ubyte.gz") != std::string::npos);
    CHECK(message.find("apt-get install dataset-fashion-mnist") != std::string::npos);
    CHECK(message.find("--data DIR") != std::string::npos);
    message = error_of([&] { load_mnist(dir.file("nowhere")); });
    CHECK(message.find("does not exist") != std::string::npos);

    write_split(dir, "train", 6, false);
    write_file(dir.file("train-labels-idx1-ubyte"), idx_bytes(0x08, {5}, {0, 1, 2, 3, 4}));
    message = error_of([&] { load_mnist_split(dir.dir(), true); });
    CHECK(message.find("6 images") != std::string::npos);
    CHECK(message.find("5 labels") != std::string::npos);
}

TEST_CASE("shuffled indices are fixed by seed and epoch") {
    // From a separate Python implementation of the documented algorithm.
    CHECK(shuffled_indices(10, 0) == std::vector<std::int64_t>{0, 2, 8, 6, 1, 9, 7, 3, 5, 4});
    CHECK(shuffled_indices(10, 42, 3) == std::vector<std::int64_t>{5, 6, 1, 8, 3, 0, 9, 4, 2, 7});
    std::vector<std::int64_t> big = shuffled_indices(60000, 0, 0);
    CHECK(std::vector<std::int64_t>(big.begin(), big.begin() + 6) ==
          std::vector<std::int64_t>{48327, 5566, 27756, 7180, 33508, 49047});
    std::vector<std::int64_t> sorted = big;
    std::sort(sorted.begin(), sorted.end());
    CHECK(sorted == sequential_indices(60000));
    CHECK(shuffled_indices(60000, 0, 1) != big);
    CHECK(shuffled_indices(60000, 1, 0) != big);
    CHECK(shuffled_indices(0, 5).empty());
    CHECK(shuffled_indices(1, 5) == std::vector<std::int64_t>{0});
}

TEST_CASE("batches gather rows in the given order and reshape images") {
    ScratchDir dir("mnist_batches");
    write_split(dir, "train", 7, false);
    MnistSplit s = load_mnist_split(dir.dir(), true, DType::I64);
    std::vector<std::int64_t> order{6, 2, 5, 0, 1, 3, 4};
    CHECK(batch_count(7, 3, false) == 3);
    CHECK(batch_count(7, 3, true) == 2);
    MnistBatch b = mnist_batch(s, order, 0, 3, {4});
    CHECK(b.images.sizes() == std::vector<std::int64_t>{3, 4});
    CHECK(as_vector(b.labels) == std::vector<std::int64_t>{6, 2, 5});
    for (std::int64_t k = 0; k < 4; ++k) {
        CHECK(b.images.at({0, k}) == doctest::Approx((6.0 + k) / 255.0));
        CHECK(b.images.at({1, k}) == doctest::Approx((2.0 + k) / 255.0));
    }
    MnistBatch last = mnist_batch(s, order, 2, 3, {1, 2, 2});
    CHECK(last.images.sizes() == std::vector<std::int64_t>{1, 1, 2, 2});
    CHECK(as_vector(last.labels) == std::vector<std::int64_t>{4});
    CHECK(last.images.at({0, 0, 1, 0}) == doctest::Approx(6.0 / 255.0));
    MnistBatch plain = mnist_batch(s, order, 1, 3);
    CHECK(plain.images.sizes() == std::vector<std::int64_t>{3, 2, 2});
    CHECK_THROWS_AS(mnist_batch(s, order, 3, 3), Error);
    CHECK_THROWS_AS(mnist_batch(s, order, 0, 3, {5}), Error);
    std::vector<std::int64_t> bad{0, 9};
    CHECK(error_of([&] { gather_rows(s.labels, bad); }).find("row 9 is out of range") !=
          std::string::npos);
}

TEST_CASE("the real fashion-mnist files, when installed") {
    if (!std::filesystem::exists(std::string(kDefaultMnistDirectory) +
                                 "/train-images-idx3-ubyte.gz")) {
        MESSAGE("skipped: Debian's dataset-fashion-mnist is not installed");
        return;
    }
    MnistDataset d = load_mnist();
    CHECK(d.train.images.sizes() == std::vector<std::int64_t>{60000, 28, 28});
    CHECK(d.test.images.sizes() == std::vector<std::int64_t>{10000, 28, 28});
    CHECK(d.train.size() == 60000);
    CHECK(d.test.size() == 10000);
    // Hand values from Python's gzip module: the first labels, 6000 (1000) of each class, and
    // row 14 of the first training image.
    auto train = d.train.labels.values<std::int32_t>();
    CHECK(std::vector<std::int32_t>(train.begin(), train.begin() + 10) ==
          std::vector<std::int32_t>{9, 0, 0, 3, 0, 2, 7, 2, 5, 5});
    auto test = d.test.labels.values<std::int32_t>();
    CHECK(std::vector<std::int32_t>(test.begin(), test.begin() + 5) ==
          std::vector<std::int32_t>{9, 2, 1, 1, 6});
    for (std::int32_t label = 0; label < 10; ++label) {
        CHECK(std::count(train.begin(), train.end(), label) == 6000);
        CHECK(std::count(test.begin(), test.end(), label) == 1000);
    }
    CHECK(*std::min_element(train.begin(), train.end()) == 0);
    CHECK(*std::max_element(train.begin(), train.end()) == 9);
    const int row14[] = {0, 0, 1, 4, 6, 7, 2, 0, 0, 0, 0, 0, 237, 226};
    for (int c = 0; c < 14; ++c)
        CHECK(d.train.images.at({0, 14, c}) == doctest::Approx(row14[c] / 255.0));
    auto pixels = d.train.images.values<float>();
    double first_image = std::accumulate(pixels.begin(), pixels.begin() + 784, 0.0);
    CHECK(first_image == doctest::Approx(76247.0 / 255.0));
    auto [lo, hi] = std::minmax_element(pixels.begin(), pixels.end());
    CHECK(*lo == 0.0f);
    CHECK(*hi == 1.0f);
}

TEST_CASE("pixel statistics and standardization against hand-computed values") {
    // Pixels 0, 0.25, 0.5, 1: mean 0.4375, variance (0.4375^2 + 0.1875^2 + 0.0625^2 +
    // 0.5625^2) / 4 = 0.1367..., as numpy's x.mean() and x.std() give.
    MnistSplit split{HostArray::from<float>({0.0f, 0.25f, 0.5f, 1.0f}, {1, 2, 2}),
                     HostArray::from<std::int32_t>({3}, {1})};
    PixelStatistics stats = pixel_statistics(split);
    CHECK(stats.mean == doctest::Approx(0.4375).epsilon(1e-12));
    CHECK(stats.stddev == doctest::Approx(std::sqrt(0.13671875)).epsilon(1e-12));
    MnistSplit test{HostArray::from<float>({0.4375f, 1.0f}, {1, 1, 2}),
                    HostArray::from<std::int32_t>({1}, {1})};
    standardize(split, stats);
    standardize(test, stats); // the training split's statistics, applied to another split
    auto v = split.images.values<float>();
    double mean = 0.0, squares = 0.0;
    for (float x : v)
        mean += x / 4.0;
    for (float x : v)
        squares += (x - mean) * (x - mean) / 4.0;
    CHECK(std::abs(mean) < 1e-7);
    CHECK(squares == doctest::Approx(1.0).epsilon(1e-6));
    CHECK(split.images.sizes() == std::vector<std::int64_t>{1, 2, 2});
    CHECK(test.images.values<float>()[0] == doctest::Approx(0.0).epsilon(1e-6));
    CHECK(test.images.values<float>()[1] ==
          doctest::Approx(0.5625 / std::sqrt(0.13671875)).epsilon(1e-6));
}

TEST_CASE("standardizing constant images is refused with the reason") {
    MnistSplit split{HostArray::from<float>({0.5f, 0.5f}, {1, 1, 2}),
                     HostArray::from<std::int32_t>({0}, {1})};
    PixelStatistics stats = pixel_statistics(split);
    CHECK(stats.stddev == 0.0);
    CHECK(error_of([&] { standardize(split, stats); }).find("all equal") != std::string::npos);
    MnistSplit wrong{HostArray::from<std::int32_t>({1, 2}, {1, 1, 2}),
                     HostArray::from<std::int32_t>({0}, {1})};
    CHECK(error_of([&] { pixel_statistics(wrong); }).find("f32") != std::string::npos);
}
