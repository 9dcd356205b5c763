// Bad-input catalogue, part 2: evaluation. Compile options, backend selection, compiled
// programs fed the wrong inputs on the real backends (reference and openmp), and allocation
// failure from a huge shape. Each must throw hedra::Error with a message a user can act on.
#include <doctest/doctest.h>

#include <cstdlib>

#include "backends/openmp/openmp_backend.hpp"
#include "core/allocation.hpp"
#include "core/expect_error.hpp"
#include "hedra.hpp"

using namespace hedra;

namespace {

void use_openmp() {
    static const bool registered = [] {
        bool known = false;
        for (const std::string& n : backend_names())
            known = known || n == "openmp";
        if (!known)
            register_backend("openmp", [] { return std::make_shared<backend::OpenMPBackend>(); });
        return true;
    }();
    (void)registered;
}

ComputeOptions on(const std::string& backend) {
    use_openmp();
    ComputeOptions o;
    o.backend = backend;
    return o;
}

Array f32(const Shape& s) {
    return array(std::vector<float>(static_cast<std::size_t>(s.size()), 1.0f), s);
}

} // namespace

TEST_CASE("catalogue: compile options") {
    for (const char* name : {"reference", "openmp"}) {
        CAPTURE(name);
        ComputeOptions o = on(name);
        Array y = f32(Shape::of({4, 4})) * 2.0f;
        o.tile_sizes = {16, 0};
        CHECK_ERROR(compute(y, o), "tile size 0", "at least 1");
        o.tile_sizes = {-4};
        CHECK_ERROR(compute(y, o), "tile size -4", "at least 1");
        o.tile_sizes = {};
        o.num_threads = -2;
        CHECK_ERROR(compute(y, o), "num_threads -2", "0 (the default) or positive");
        o.num_threads = 0;
        Array x = placeholder(Shape::of({4}), DType::F32, "x");
        o.tile_sizes = {0};
        CHECK_ERROR(compile({x + 1.0f}, {x}, o), "tile size 0");
    }
    CHECK_ERROR(compile({}, {}, on("reference")), "compile: no outputs");
}

TEST_CASE("catalogue: choosing a backend") {
    Array y = f32(Shape::of({2})) + 1.0f;
    set_default_backend("no_such_backend");
    CHECK_ERROR(compute(y), "unknown backend 'no_such_backend'", "registered backends",
                "reference");
    set_default_backend("");
    setenv("HEDRA_BACKEND", "nope", 1);
    CHECK_ERROR(compute(y), "unknown backend 'nope'", "reference");
    unsetenv("HEDRA_BACKEND");
    CHECK(compute(y).flat(1) == 2.0);
}

TEST_CASE("catalogue: placeholders fed the wrong inputs, on the real backends") {
    for (const char* name : {"reference", "openmp"}) {
        CAPTURE(name);
        Array x = placeholder(Shape{range(1, 4), range(0, 8, 2)}, DType::F64, "x");
        Array n = placeholder(Shape{range(1, 4)}, DType::I32, "n");
        CompiledProgram p = compile({sum(x, {1}) * n}, {x, n}, on(name));
        HostArray good_x({3, 4}, DType::F64), good_n({3}, DType::I32);
        CHECK(p({good_x, good_n}).at(0).sizes() == std::vector<std::int64_t>{3});
        CHECK_ERROR(p({good_n, good_x}), "input 0 has shape (3)", "placeholder 'x'",
                    "([1,4), [0,8):2)");
        CHECK_ERROR(p({HostArray({3, 4}, DType::F32), good_n}), "input 0 has dtype f32",
                    "placeholder 'x'", "f64");
        CHECK_ERROR(p({good_x, HostArray({3}, DType::I64)}), "input 1 has dtype i64", "'n'", "i32");
        CHECK_ERROR(p({good_x, HostArray({3, 1}, DType::I32)}), "input 1 has shape (3,1)", "'n'");
        CHECK_ERROR(p({good_x}), "expected 2 inputs", "got 1");
        CHECK_ERROR(p({good_x, good_n, good_n}), "expected 2 inputs", "got 3");
        CHECK_ERROR(p({HostArray(), good_n}), "input 0 has shape ()", "'x'");
    }
}

TEST_CASE("catalogue: allocation failure from a huge shape") {
    // 2^45 f32 elements (128 TiB): a valid shape whose result cannot be allocated.
    Array big =
        full(Shape::of({std::int64_t{1} << 15, std::int64_t{1} << 15, std::int64_t{1} << 15}), 1.0);
    // Refused before the allocator is asked (its answer differs: null, or a sanitizer's abort),
    // naming the bytes, the array and, on the reference backend, the node and its creation site.
    CHECK_ERROR(compute(big + 1.0f, on("reference")), "out of memory", "(32768,32768,32768)",
                "140737488355328 bytes", "created at test_catalogue_compile.cpp",
                "reference backend");
    CHECK_ERROR(compute(big + 1.0f, on("openmp")), "out of memory", "140737488355328 bytes");
    CHECK_ERROR(HostArray({std::int64_t{1} << 40, std::int64_t{1} << 20}, DType::F64), "host array",
                "out of memory", "9223372036854775808 bytes", "(1099511627776,1048576) of f64");
    CHECK(allocation_limit_bytes() >= (std::size_t{1} << 20));
    CHECK_NOTHROW(check_allocation(std::size_t{1} << 20, "a test buffer"));
    CHECK_ERROR(check_allocation(allocation_limit_bytes() + 1, "a test buffer"),
                "out of memory: cannot allocate", "bytes for a test buffer");
}
