// kernel_profile (HEDRA_PROFILE): kernel descriptions and operation counts, the timing code the
// printer emits, and the table.
#include <doctest/doctest.h>

#include "backends/common/kernel_profile.hpp"
#include "backends/openmp/lower.hpp"
#include "hedra.hpp"
#include "scheduler/partition.hpp"

using namespace hedra;

namespace {

poly::ProgramIR matmul_ir() {
    Array a = placeholder(Shape::of({8, 5}), DType::F32, "a");
    Array b = placeholder(Shape::of({5, 3}), DType::F32, "b");
    return sched::partition({(matmul(a, b) + 1.0f).node()}, {a.node(), b.node()});
}

} // namespace

TEST_CASE("kernel profile: one description per kernel, operations counted per instance") {
    poly::ProgramIR ir = matmul_ir();
    std::vector<backend::KernelProfileInfo> info = backend::describe_kernels(ir);
    REQUIRE(info.size() == ir.kernels.size());
    CHECK(info[0].name == "k0");
    CHECK(info[0].summary.find("sum [8,3,5]") != std::string::npos);
    // A multiply and an accumulation per instance, then the epilogue's add per result.
    CHECK(info[0].flops == 8 * 3 * 5 * 2 + 8 * 3);
}

TEST_CASE("kernel profile: the printed program times each kernel call into <entry>_profile") {
    backend::LowerOptions options;
    options.profile = true;
    std::string code = backend::lower(matmul_ir(), options).source;
    CHECK(code.find("long long hedra_program_profile[") != std::string::npos);
    CHECK(code.find("clock_gettime(1, &t)") != std::string::npos);
    CHECK(code.find("hedra_program_profile[0] += hd_now_ns() - hd_t0;") != std::string::npos);
    CHECK(backend::lower(matmul_ir()).source.find("_profile") == std::string::npos);
}

TEST_CASE("kernel profile: the table lists kernels by time with GFLOP/s") {
    static long long counters[4] = {2000000, 4, 6000000, 4}; // k0: 2 ms, k1: 6 ms, 4 calls
    std::vector<backend::KernelProfileInfo> info{{"k0", "b2 sum [8,3,5]", 1e6},
                                                 {"k1", "b3 = [8,3]", 0}};
    backend::register_profile(info, counters, nullptr);
    std::string table = backend::profile_table();
    std::size_t k1 = table.find("  k1 "), k0 = table.find("  k0 ");
    REQUIRE(k0 != std::string::npos);
    REQUIRE(k1 != std::string::npos);
    CHECK(k1 < k0); // slowest first
    CHECK(table.find("2 kernels, 4 runs, 2.000 ms per run") != std::string::npos);
    CHECK(table.find("2.00  b2 sum [8,3,5]") != std::string::npos); // 4e6 flops in 2 ms
}

TEST_CASE("kernel profile: a scan's loop and each kernel in it, numbered after the program's") {
    Array xs = placeholder(Shape::of({6, 4}), DType::F32, "xs");
    auto [h, ys] = scan(
        [](const Array& c, const Array& x) {
            Array n = tanh(c + x);
            return std::pair{n, sum(n)};
        },
        zeros(Shape::of({4})), xs);
    poly::ProgramIR ir = sched::partition({h.node(), ys.node()}, {xs.node()});
    const std::vector<const poly::Kernel*> nested = poly::nested_kernels(ir);
    REQUIRE(!nested.empty());
    std::vector<backend::KernelProfileInfo> info = backend::describe_kernels(ir);
    REQUIRE(info.size() == ir.kernels.size() + nested.size());
    bool loop = false;
    for (std::size_t k = 0; k < ir.kernels.size(); ++k)
        loop = loop || info[k].summary.find("scan loop of") != std::string::npos;
    CHECK(loop);
    CHECK(info[ir.kernels.size()].name == nested[0]->name);
    backend::LowerOptions options;
    options.profile = true;
    std::string code = backend::lower(ir, options).source;
    const std::string last = "hedra_program_profile[" + std::to_string(2 * (info.size() - 1)) + "]";
    CHECK(code.find(last) != std::string::npos);
    CHECK(code.find("long long hedra_program_profile[" + std::to_string(2 * info.size()) + "]") !=
          std::string::npos);
}
