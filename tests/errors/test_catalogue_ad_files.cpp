// Bad-input catalogue, part 4: autodiff, graph files, data readers and nn layers. Each misuse
// must throw hedra::Error naming the operation, the shapes or the file, and what to do.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "core/expect_error.hpp"
#include "core/graph_file.hpp"
#include "hedra.hpp"
#include "nn/io/idx_reader.hpp"
#include "nn/io/npy_reader.hpp"
#include "nn/layers.hpp"

using namespace hedra;

namespace {

Array f64(const Shape& s) {
    return array(std::vector<double>(static_cast<std::size_t>(s.size()), 0.5), s);
}

std::string temp_file(const std::string& name, const std::string& contents) {
    auto path = std::filesystem::temp_directory_path() /
                ("hedra_catalogue_" + std::to_string(::getpid()) + "_" + name);
    std::ofstream(path, std::ios::binary) << contents;
    return path.string();
}

} // namespace

TEST_CASE("catalogue: gradients") {
    Array w = f64(Shape::of({3, 4}));
    Array y = sum(w * w, {1}); // rank 1
    CHECK_ERROR(grad(y, w), "grad", "loss must have rank 0", "(3)", "sum or mean");
    Array count = sum(cast(w > 0.0, DType::I32));
    CHECK_ERROR(grad(count, w), "grad", "loss has dtype i64", "only float");
    Array n = array(std::vector<std::int32_t>{1, 2, 3}, Shape::of({3}));
    CHECK_ERROR(grad(sum(w) * sum(n), n), "grad", "cannot differentiate with respect to",
                "only float arrays");
    CHECK_ERROR(vjp({y}, {}, {w}), "vjp: 1 outputs but 0 cotangents");
    CHECK_ERROR(vjp({y}, {f64(Shape::of({4}))}, {w}), "vjp: cotangent 0 has shape (4)",
                "output has shape (3)");
    Array custom = reduce([](Sym acc, Sym x) { return acc + x * x; }, 0.0, w);
    CHECK_ERROR(grad(custom, w), "grad", "custom combiner");
    Array t = transpose(w);
    CHECK_ERROR(grad(sum(reshape(t, Shape{range(4), range(0, 3, 2)})), t), "grad", "is a view",
                "differentiate with respect to the array it views");
    CHECK_ERROR(stop_gradient(Array()), "empty hedra::Array handle");
}

TEST_CASE("catalogue: graph files") {
    CHECK_ERROR(load_graph("{\"format\": \"hedra-graph\", ", "broken.json"), "broken.json");
    CHECK_ERROR(load_graph("[1, 2, 3]", "array.json"), "array.json");
    CHECK_ERROR(load_graph("{\"format\": \"numpy\", \"version\": 1}", "other.json"), "other.json",
                "format");
    CHECK_ERROR(load_graph("{\"format\": \"hedra-graph\", \"version\": 99, \"exprs\": [], "
                           "\"nodes\": [], \"outputs\": []}",
                           "future.json"),
                "future.json", "version");
    Array x = f64(Shape::of({2}));
    std::string text = save_graph({x * 2.0});
    std::string bad_ref = text;
    auto pos = bad_ref.find("\"outputs\"");
    REQUIRE(pos != std::string::npos);
    bad_ref = bad_ref.substr(0, pos) + "\"outputs\": [12345]}";
    CHECK_ERROR(load_graph(bad_ref, "dangling.json"), "dangling.json", "12345");
    CHECK_ERROR(load_graph_file("/nonexistent/dir/graph.json"), "load_graph_file",
                "/nonexistent/dir/graph.json");
    CHECK_ERROR(save_graph_file("/nonexistent/dir/graph.json", {x}), "/nonexistent/dir/graph.json");
}

TEST_CASE("catalogue: data readers") {
    CHECK_ERROR(nn::read_npy("/nonexistent/weights.npy"), "/nonexistent/weights.npy");
    std::string garbage = temp_file("garbage.npy", "this is not a numpy file at all");
    CHECK_ERROR(nn::read_npy(garbage), "garbage.npy");
    std::string truncated = temp_file("truncated.idx", std::string("\0\0\x08\x03\0\0", 6));
    CHECK_ERROR(nn::read_idx(truncated, DType::F32), "truncated.idx");
    CHECK_ERROR(nn::read_idx("/nonexistent/train-images-idx3-ubyte", DType::F32),
                "/nonexistent/train-images-idx3-ubyte");
    std::filesystem::remove(garbage);
    std::filesystem::remove(truncated);
}

TEST_CASE("catalogue: nn layers") {
    Array x = f64(Shape::of({2, 5})), w = f64(Shape::of({3, 4}));
    CHECK_ERROR(nn::linear(x, w), "linear", "feature axis", "(2,5)", "(3,4)");
    Array img = f64(Shape::of({1, 2, 6, 6})), k = f64(Shape::of({4, 3, 3, 3}));
    CHECK_ERROR(nn::conv2d(img, k), "conv2d", "(1,2,6,6)", "(4,3,3,3)");
    CHECK_ERROR(nn::conv2d(img, f64(Shape::of({4, 2, 3, 3})), Array(), 0), "conv2d", "stride");
}
