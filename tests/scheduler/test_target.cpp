// The CPU target (scheduler/target.hpp): the described targets, the choice by name, and the
// vector width of a register tile over narrow columns.
#include <doctest/doctest.h>

#include "core/error.hpp"
#include "scheduler/target.hpp"

using namespace hedra;

TEST_CASE("cpu target: avx2 and avx512 by name; another name is refused") {
    sched::CpuTarget avx2 = sched::cpu_target_named("avx2");
    CHECK(avx2.vector_bytes == 32);
    CHECK(avx2.vector_registers == 16);
    sched::CpuTarget avx512 = sched::cpu_target_named("avx512");
    CHECK(avx512.vector_bytes == 64);
    CHECK(avx512.vector_registers == 32);
    CHECK(avx512.register_tile_rows == avx2.register_tile_rows);
    CHECK_THROWS_WITH_AS(sched::cpu_target_named("sse2"),
                         doctest::Contains("unknown CPU target 'sse2'; use avx2 or avx512"), Error);
    const std::string name = sched::cpu_target().name;
    CHECK((name == "avx2" || name == "avx512"));
}

TEST_CASE("cpu target: a register tile over fewer columns than one vector uses 32 bytes") {
    const int full = sched::cpu_target().vector_bytes;
    CHECK(sched::tile_vector_bytes(8, 4) == 32); // 8 f32 columns
    CHECK(sched::tile_vector_bytes(4, 8) == 32); // 4 f64 columns
    CHECK(sched::tile_vector_bytes(3, 4) == 32); // never below 32 bytes
    CHECK(sched::tile_vector_bytes(300, 4) == full);
    CHECK(sched::tile_vector_bytes(16, 4) == full); // 64 bytes of columns: a zmm's worth
}
