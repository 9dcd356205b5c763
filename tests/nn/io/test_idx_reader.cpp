// IDX reading: small files written here (plain and gzip) read back with the expected dtype and
// values, and every malformed case throws hedra::Error naming the file and how to get data.
#include <doctest/doctest.h>

#include <string>

#include "core/error.hpp"
#include "nn/io/idx_reader.hpp"
#include "nn_test_files.hpp"

using namespace hedra;
using namespace hedra::nn;
using namespace hedra::nn::test;

namespace {

// Two 2x3 images with pixel values 0, 51, 102, ... and three labels.
const Bytes kPixels{0, 51, 102, 153, 204, 255, 255, 0, 1, 2, 3, 128};
const Bytes kLabels{7, 0, 9};

// The error message of `f`, which must throw hedra::Error.
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

void check_names_file_and_hint(const std::string& message, const std::string& path) {
    CHECK(message.find("'" + path + "'") != std::string::npos);
    CHECK(message.find("apt-get install dataset-fashion-mnist") != std::string::npos);
    CHECK(message.find("--data DIR") != std::string::npos);
}

} // namespace

TEST_CASE("idx images and labels read back from plain and gzip files") {
    ScratchDir dir("idx_roundtrip");
    Bytes images = idx_bytes(0x08, {2, 2, 3}, kPixels);
    Bytes labels = idx_bytes(0x08, {3}, kLabels);
    write_file(dir.file("images"), images);
    write_file(dir.file("images.gz"), gzip_bytes(images));
    write_file(dir.file("labels-gz-without-suffix"), gzip_bytes(labels));
    write_file(dir.file("labels"), labels);
    for (const char* name : {"images", "images.gz"}) {
        HostArray a = read_idx_images(dir.file(name));
        CHECK(a.dtype() == DType::F32);
        CHECK(a.sizes() == std::vector<std::int64_t>{2, 2, 3});
        auto v = a.values<float>();
        REQUIRE(v.size() == 12);
        CHECK(v[0] == 0.0f);
        CHECK(v[1] == doctest::Approx(0.2));
        CHECK(v[5] == 1.0f);
        CHECK(v[11] == doctest::Approx(128.0 / 255.0));
    }
    for (const char* name : {"labels", "labels-gz-without-suffix"}) {
        HostArray l32 = read_idx_labels(dir.file(name));
        CHECK(l32.dtype() == DType::I32);
        CHECK(l32.sizes() == std::vector<std::int64_t>{3});
        auto v32 = l32.values<std::int32_t>();
        CHECK(std::vector<std::int32_t>(v32.begin(), v32.end()) ==
              std::vector<std::int32_t>{7, 0, 9});
        HostArray l64 = read_idx_labels(dir.file(name), DType::I64);
        auto v64 = l64.values<std::int64_t>();
        CHECK(std::vector<std::int64_t>(v64.begin(), v64.end()) ==
              std::vector<std::int64_t>{7, 0, 9});
    }
}

TEST_CASE("idx files of other element types convert as a cast would") {
    ScratchDir dir("idx_types");
    // i16 big-endian: -2, 300; f32 big-endian: 1.5 (0x3fc00000), -0.25 (0xbe800000).
    write_file(dir.file("i16"), idx_bytes(0x0B, {2}, {0xff, 0xfe, 0x01, 0x2c}));
    write_file(dir.file("f32"), idx_bytes(0x0D, {1, 2}, {0x3f, 0xc0, 0, 0, 0xbe, 0x80, 0, 0}));
    auto i16 = read_idx(dir.file("i16"), DType::I64);
    CHECK(i16.values<std::int64_t>()[0] == -2);
    CHECK(i16.values<std::int64_t>()[1] == 300);
    auto f32 = read_idx(dir.file("f32"), DType::F64, 2);
    CHECK(f32.sizes() == std::vector<std::int64_t>{1, 2});
    CHECK(f32.values<double>()[0] == 1.5);
    CHECK(f32.values<double>()[1] == -0.25);
    IdxContents raw = read_idx_contents(dir.file("i16"));
    CHECK(raw.element == IdxElement::I16);
    CHECK(raw.payload.size() == 4);
}

TEST_CASE("a missing idx file names the file and how to get the data") {
    ScratchDir dir("idx_missing");
    std::string path = dir.file("train-images-idx3-ubyte");
    std::string message = error_of([&] { read_idx_images(path); });
    check_names_file_and_hint(message, path);
    CHECK(message.find("no such file") != std::string::npos);
}

TEST_CASE("a bad idx magic number is rejected") {
    ScratchDir dir("idx_magic");
    Bytes bad = idx_bytes(0x08, {3}, kLabels);
    bad[0] = 0x12;
    write_file(dir.file("bad"), bad);
    write_file(dir.file("type"), idx_bytes(0x07, {3}, kLabels)); // no element type 0x07
    write_file(dir.file("short"), Bytes{0, 0});
    for (const char* name : {"bad", "type"}) {
        std::string message = error_of([&] { read_idx_labels(dir.file(name)); });
        check_names_file_and_hint(message, dir.file(name));
        CHECK(message.find("bad magic number") != std::string::npos);
    }
    std::string message = error_of([&] { read_idx_labels(dir.file("short")); });
    check_names_file_and_hint(message, dir.file("short"));
    CHECK(message.find("too short") != std::string::npos);
}

TEST_CASE("truncated idx files are rejected, plain and gzip") {
    ScratchDir dir("idx_truncated");
    Bytes images = idx_bytes(0x08, {2, 2, 3}, kPixels);
    Bytes cut(images.begin(), images.end() - 1);
    write_file(dir.file("cut"), cut);
    write_file(dir.file("cut-data.gz"), gzip_bytes(cut));
    Bytes gz = gzip_bytes(images);
    write_file(dir.file("cut-stream.gz"), Bytes(gz.begin(), gz.begin() + gz.size() / 2));
    write_file(dir.file("cut-header"), Bytes(images.begin(), images.begin() + 10));
    for (const char* name : {"cut", "cut-data.gz"}) {
        std::string message = error_of([&] { read_idx_images(dir.file(name)); });
        check_names_file_and_hint(message, dir.file(name));
        CHECK(message.find("truncated") != std::string::npos);
        CHECK(message.find("(2,2,3)") != std::string::npos);
        CHECK(message.find("need 12 bytes") != std::string::npos);
        CHECK(message.find("has 11") != std::string::npos);
    }
    std::string message = error_of([&] { read_idx_images(dir.file("cut-stream.gz")); });
    check_names_file_and_hint(message, dir.file("cut-stream.gz"));
    CHECK(message.find("truncated gzip stream") != std::string::npos);
    message = error_of([&] { read_idx_images(dir.file("cut-header")); });
    CHECK(message.find("truncated header") != std::string::npos);
}

TEST_CASE("idx files with extra bytes, wrong dimensions or wrong element types are rejected") {
    ScratchDir dir("idx_dims");
    Bytes labels = idx_bytes(0x08, {3}, kLabels);
    labels.push_back(1);
    write_file(dir.file("long"), labels);
    write_file(dir.file("rank1"), idx_bytes(0x08, {12}, kPixels));
    write_file(dir.file("zero"), idx_bytes(0x08, {0, 28, 28}, {}));
    write_file(dir.file("i32"), idx_bytes(0x0C, {1}, {0, 0, 0, 1}));
    std::string message = error_of([&] { read_idx_labels(dir.file("long")); });
    check_names_file_and_hint(message, dir.file("long"));
    CHECK(message.find("1 unexpected bytes after") != std::string::npos);
    message = error_of([&] { read_idx_images(dir.file("rank1")); });
    check_names_file_and_hint(message, dir.file("rank1"));
    CHECK(message.find("expected 3 dimensions") != std::string::npos);
    message = error_of([&] { read_idx_images(dir.file("zero")); });
    CHECK(message.find("dimension 0 is 0") != std::string::npos);
    message = error_of([&] { read_idx_labels(dir.file("i32")); });
    check_names_file_and_hint(message, dir.file("i32"));
    CHECK(message.find("labels must be u8") != std::string::npos);
    CHECK_THROWS_AS(read_idx_labels(dir.file("i32"), DType::F32), Error);
}
