// Shared helpers of the scheduler tests: partition a graph and run it with the IR interpreter,
// run the reference interpreter on the same graph (it does not memoize), compare arrays, and
// count things in a ProgramIR.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/reference/interpreter.hpp"
#include "hedra.hpp"
#include "scheduler/ir_interpreter.hpp"
#include "scheduler/partition.hpp"

namespace hedra::test {

inline std::vector<NodePtr> nodes_of(const std::vector<Array>& arrays) {
    std::vector<NodePtr> out;
    for (const Array& a : arrays)
        out.push_back(a.node());
    return out;
}

struct Partitioned {
    poly::ProgramIR ir;
    std::vector<HostArray> results;
};

inline Partitioned run_partitioned(const std::vector<Array>& outputs,
                                   const std::vector<Array>& placeholders = {},
                                   const std::vector<HostArray>& inputs = {},
                                   const sched::PartitionOptions& options = {}) {
    Partitioned p;
    p.ir = sched::partition(nodes_of(outputs), nodes_of(placeholders), options);
    p.results = interpret_ir(p.ir, inputs);
    return p;
}

inline std::vector<HostArray> run_reference(const std::vector<Array>& outputs,
                                            const std::vector<Array>& placeholders = {},
                                            const std::vector<HostArray>& inputs = {}) {
    return backend::interpret(nodes_of(outputs), nodes_of(placeholders), inputs);
}

inline void check_close(const HostArray& got, const std::vector<double>& want,
                        double tolerance = 0.0) {
    REQUIRE(static_cast<std::size_t>(got.size()) == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
        double g = got.flat(static_cast<std::int64_t>(i));
        INFO("element " << i << ": got " << g << ", want " << want[i]);
        CHECK(std::abs(g - want[i]) <= tolerance * (1.0 + std::abs(want[i])));
    }
}

inline void check_close(const HostArray& got, const HostArray& want, double tolerance = 0.0) {
    CHECK(got.sizes() == want.sizes());
    CHECK(got.dtype() == want.dtype());
    check_close(got, want.to_doubles(), tolerance);
}

// Partition + IR interpreter against the reference interpreter, output by output.
inline Partitioned check_against_reference(const std::vector<Array>& outputs,
                                           const std::vector<Array>& placeholders = {},
                                           const std::vector<HostArray>& inputs = {},
                                           double tolerance = 0.0,
                                           const sched::PartitionOptions& options = {}) {
    Partitioned p = run_partitioned(outputs, placeholders, inputs, options);
    std::vector<HostArray> want = run_reference(outputs, placeholders, inputs);
    REQUIRE(p.results.size() == want.size());
    for (std::size_t k = 0; k < want.size(); ++k) {
        INFO("output " << k);
        check_close(p.results[k], want[k], tolerance);
    }
    return p;
}

// Small integers as floats: sums of products are exact, so results compare exactly.
inline std::vector<float> small_values(std::int64_t n, std::uint32_t seed) {
    std::vector<float> v(static_cast<std::size_t>(n));
    std::uint32_t s = seed * 2654435761u + 12345u;
    for (auto& x : v) {
        s = s * 1664525u + 1013904223u;
        x = static_cast<float>(static_cast<int>((s >> 16) % 9) - 4);
    }
    return v;
}

// An f32 array of the given sizes holding small_values(…, seed).
inline Array small_array(std::vector<std::int64_t> sizes, std::uint32_t seed) {
    std::int64_t n = 1;
    for (std::int64_t s : sizes)
        n *= s;
    return array(HostArray::from<float>(small_values(n, seed), std::move(sizes)));
}

// The default (openmp) backend compiles the same partition: its values must match the
// reference interpreter's too.
inline void check_backend(const Array& y, double tolerance = 0.0) {
    check_close(compute(y), run_reference({y}).at(0), tolerance);
}

inline int count_buffers(const poly::ProgramIR& ir, poly::BufferRole role) {
    int n = 0;
    for (const auto& b : ir.buffers)
        n += b.role == role;
    return n;
}

inline int count_statements(const poly::ProgramIR& ir) {
    int n = 0;
    for (const auto& k : ir.kernels)
        n += static_cast<int>(k.statements.size());
    return n;
}

} // namespace hedra::test
