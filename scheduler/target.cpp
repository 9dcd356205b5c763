// cpu_target (target.hpp): the machine's vector width, read once.
#include "scheduler/target.hpp"

#include <cstdlib>

#include "core/error.hpp"

namespace hedra::sched {

namespace {

bool has_avx512() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
#else
    return false;
#endif
}

CpuTarget detect() {
    const char* env = std::getenv("HEDRA_CPU_TARGET");
    if (env && *env) return cpu_target_named(env);
    return cpu_target_named(has_avx512() ? "avx512" : "avx2");
}

} // namespace

CpuTarget cpu_target_named(const std::string& name) {
    CpuTarget t;
    t.name = name;
    if (name == "avx2") return t;
    if (name == "avx512") {
        t.vector_bytes = 64;
        t.vector_registers = 32;
        return t;
    }
    throw Error("HEDRA_CPU_TARGET: unknown CPU target '" + name + "'; use avx2 or avx512");
}

int tile_vector_bytes(std::int64_t v_extent, std::size_t element_bytes) {
    return tile_vector_bytes(cpu_target(), v_extent, element_bytes);
}

int tile_vector_bytes(const CpuTarget& cpu, std::int64_t v_extent, std::size_t element_bytes) {
    int bytes = cpu.vector_bytes;
    while (bytes > 32 && v_extent * static_cast<std::int64_t>(element_bytes) < bytes)
        bytes /= 2;
    return bytes;
}

const CpuTarget& cpu_target() {
    static const CpuTarget target = detect();
    return target;
}

std::string to_string(const GpuTarget& t) {
    return "warp " + std::to_string(t.warp_size) + ", shared " +
           std::to_string(t.shared_memory_per_block) + " B/block, " +
           std::to_string(t.registers_per_thread) + " registers/thread, " +
           std::to_string(t.multiprocessors) + " SMs, " + std::to_string(t.max_threads_per_block) +
           " threads/block, grid " + std::to_string(t.max_grid_x) + "x" +
           std::to_string(t.max_grid_y) + "x" + std::to_string(t.max_grid_z) + ", sm_" +
           std::to_string(t.compute_capability);
}

} // namespace hedra::sched
