// The GPU mapping passes (scheduler/gpu_mapping.hpp): what each decides for kernels of every
// form, that the target passed in is what they read, that the renderer prints what they
// decided, that a cuda lowering runs them in the pass list's order, and that each writes its
// HEDRA_DUMP stage.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/dump.hpp"
#include "cuda/cuda_testing.hpp"
#include "scheduler/gpu_mapping.hpp"
#include "scheduler/lower.hpp"
#include "support/pass_timers.hpp"

using namespace hedra;

namespace {

poly::ProgramIR partitioned(const std::vector<Array>& arrays, const std::vector<Array>& inputs) {
    std::vector<NodePtr> nodes, leaves;
    for (const Array& a : arrays)
        nodes.push_back(a.node());
    for (const Array& a : inputs)
        leaves.push_back(a.node());
    return sched::partition(nodes, leaves, sched::partition_options(sched::Target::for_gpu({})));
}

const sched::GpuKernelMapping& only(const sched::GpuMapping& m) {
    REQUIRE(m.kernels.size() == 1);
    return m.kernels[0];
}

} // namespace

TEST_CASE("gpu mapping passes: a large matmul is a contraction of 128x128 tiles, staged") {
    Array a = placeholder(Shape::of({2048, 2048})), b = placeholder(Shape::of({2048, 2048}));
    poly::ProgramIR ir = partitioned({matmul(a, b)}, {a, b});
    sched::GpuMapping m = sched::map_gpu_kernels(ir, sched::GpuTarget{});
    const sched::GpuKernelMapping& k = only(m);
    REQUIRE(k.form == sched::GpuForm::Contraction);
    const sched::GpuContractionMapping& c = k.contraction;
    CHECK(c.tile.bm == 128);
    CHECK(c.tile.bn == 128);
    CHECK(c.tile.tm == 8);
    CHECK(c.tile.tn == 8);
    CHECK(c.tile.kb == 16);
    CHECK(c.splits == 1);
    CHECK(c.staged.size() == 2); // A and B
    CHECK(c.index32);
    CHECK(c.min_blocks_per_sm == 2);
    CHECK(c.shared_bytes <= sched::GpuTarget{}.shared_memory_per_block);
    CHECK(c.tile.vm == 4); // a thread's 8 rows and 8 columns in groups of 4
    CHECK(c.tile.vn == 4);
    CHECK_FALSE(c.guard_fold); // every read that depends on M or N is staged
    bool vector_stores = false;
    for (const sched::GpuStagedRead& s : c.staged)
        vector_stores = vector_stores || s.store_vector;
    // The renderer prints that mapping: the grid and block the tiles give, the shared bytes.
    test::LoweredArrays l = test::lower_arrays({matmul(a, b)}, {}, {a, b});
    REQUIRE(l.cuda.launches.size() == 1);
    CHECK(l.cuda.launches[0].grid == std::array<unsigned, 3>{16, 16, 1});
    CHECK(l.cuda.launches[0].block == std::array<unsigned, 3>{16, 16, 1});
    CHECK((l.cuda.source.find("*reinterpret_cast<float4*>(&hd_s") != std::string::npos) ==
          vector_stores);
    CHECK(l.cuda.launches[0].shared_bytes == c.shared_bytes);
    CHECK(l.cuda.source.find("__launch_bounds__(256, 2)") != std::string::npos);
}

TEST_CASE("gpu mapping passes: the target's facts are the ones read") {
    Array a = placeholder(Shape::of({1024, 1024})), b = placeholder(Shape::of({1024, 1024}));
    poly::ProgramIR ir = partitioned({matmul(a, b)}, {a, b});
    // 64 blocks of 128x128 cover 132 multiprocessors poorly: 64x64 tiles; on a 48-SM device
    // 128x128 already fills the chip.
    sched::GpuTarget h200;
    CHECK(only(sched::map_gpu_kernels(ir, h200)).contraction.tile.bm == 64);
    sched::GpuTarget small = h200;
    small.multiprocessors = 48;
    CHECK(only(sched::map_gpu_kernels(ir, small)).contraction.tile.bm == 128);
    // Less shared memory: fewer reads staged, no double buffering.
    sched::GpuTarget tight = h200;
    tight.shared_memory_per_block = 4096;
    const sched::GpuContractionMapping& c = only(sched::map_gpu_kernels(ir, tight)).contraction;
    CHECK(c.shared_bytes <= 4096);
    CHECK(c.staged.size() < 2);
    // Fewer threads per block than the tile needs: the kernel becomes a reduction.
    sched::GpuTarget few = h200;
    few.max_threads_per_block = 128;
    CHECK(only(sched::map_gpu_kernels(ir, few)).form == sched::GpuForm::Reduction);
    // The warp size rounds the threads of small launches.
    Array v = placeholder(Shape::of({40}));
    poly::ProgramIR map = partitioned({v * 2.0f}, {v});
    sched::GpuKernelMapping mk = only(sched::map_gpu_kernels(map, h200));
    REQUIRE(mk.form == sched::GpuForm::Map);
    CHECK(mk.map_threads == std::vector<std::int64_t>{64});
    sched::GpuTarget wide = h200;
    wide.warp_size = 64;
    CHECK(only(sched::map_gpu_kernels(map, wide)).map_threads == std::vector<std::int64_t>{64});
    wide.warp_size = 16;
    CHECK(only(sched::map_gpu_kernels(map, wide)).map_threads == std::vector<std::int64_t>{48});
}

TEST_CASE("gpu mapping passes: reductions, tuple reductions and the generic form") {
    sched::GpuTarget t;
    // A row sum along contiguous memory: a block per row.
    Array x = placeholder(Shape::of({64, 4096}));
    sched::GpuKernelMapping rows = only(sched::map_gpu_kernels(partitioned({sum(x, {1})}, {x}), t));
    REQUIRE(rows.form == sched::GpuForm::Reduction);
    CHECK(rows.reduction_mapping.strategy == sched::GpuReductionStrategy::Block);
    CHECK(rows.reduction_mapping.threads == 256);
    // A total of a long vector: split into partials.
    Array y = placeholder(Shape::of({1 << 20}));
    sched::GpuKernelMapping total =
        only(sched::map_gpu_kernels(partitioned({sum(y, {0})}, {y}), t));
    REQUIRE(total.form == sched::GpuForm::Reduction);
    CHECK(total.reduction_mapping.strategy == sched::GpuReductionStrategy::Split);
    CHECK(total.reduction_mapping.slices == 256);
    CHECK(total.reduction_mapping.final_threads == 256);
    // Column sums: a thread per column.
    Array z = placeholder(Shape::of({4096, 4096}));
    sched::GpuKernelMapping cols = only(sched::map_gpu_kernels(partitioned({sum(z, {0})}, {z}), t));
    REQUIRE(cols.form == sched::GpuForm::Reduction);
    CHECK(cols.reduction_mapping.strategy == sched::GpuReductionStrategy::Serial);
    CHECK(cols.reduction_mapping.threads == 256);
    // Argmax (a reduction of two values) over 1000 entries: a block of 256 per row.
    Array w = placeholder(Shape::of({8, 1000}));
    poly::ProgramIR am = partitioned({argmax(w, 1)}, {w});
    sched::GpuMapping m = sched::map_gpu_kernels(am, t);
    auto tuple = std::find_if(m.kernels.begin(), m.kernels.end(), [](const auto& k) {
        return k.form == sched::GpuForm::TupleReduction;
    });
    REQUIRE(tuple != m.kernels.end());
    CHECK(tuple->reduction_mapping.threads == 256);
    // generic_only: every kernel on the generic mapping.
    sched::GpuMappingOptions generic;
    generic.generic_only = true;
    CHECK(only(sched::map_gpu_kernels(partitioned({sum(x, {1})}, {x}), t, generic)).form ==
          sched::GpuForm::Generic);
}

TEST_CASE("gpu mapping passes: every launch's grid, within the target's") {
    sched::GpuTarget t;
    // A map over 2^29 points, 256 threads per block: 2^21 blocks would do, the grid-stride loop
    // walks them over 2^20; a narrower grid along x caps it further.
    Array big = placeholder(Shape::of({std::int64_t{1} << 29}));
    poly::ProgramIR map = partitioned({big * 2.0f}, {big});
    sched::GpuKernelMapping mk = only(sched::map_gpu_kernels(map, t));
    REQUIRE(mk.form == sched::GpuForm::Map);
    CHECK(mk.map_threads == std::vector<std::int64_t>{256});
    CHECK(mk.map_blocks == std::vector<std::int64_t>{std::int64_t{1} << 20});
    sched::GpuTarget narrow = t;
    narrow.max_grid_x = 1000;
    CHECK(only(sched::map_gpu_kernels(map, narrow)).map_blocks == std::vector<std::int64_t>{1000});
    Array v = placeholder(Shape::of({40}));
    CHECK(only(sched::map_gpu_kernels(partitioned({v * 2.0f}, {v}), t)).map_blocks ==
          std::vector<std::int64_t>{1});
    // A 1024x1024 matmul in 64x64 tiles: 16x16 blocks. 70,000 batches of 16x16 matmuls: more
    // than the grid's z (65,535), which the kernel walks.
    Array a = placeholder(Shape::of({1024, 1024})), b = placeholder(Shape::of({1024, 1024}));
    sched::GpuKernelMapping mm =
        only(sched::map_gpu_kernels(partitioned({matmul(a, b)}, {a, b}), t));
    REQUIRE(mm.form == sched::GpuForm::Contraction);
    CHECK(mm.contraction.grid == std::array<std::int64_t, 3>{16, 16, 1});
    Array ba = placeholder(Shape::of({70000, 16, 16})),
          bb = placeholder(Shape::of({70000, 16, 16}));
    sched::GpuKernelMapping batched =
        only(sched::map_gpu_kernels(partitioned({matmul(ba, bb)}, {ba, bb}), t));
    REQUIRE(batched.form == sched::GpuForm::Contraction);
    CHECK(batched.contraction.splits == 1);
    CHECK(batched.contraction.grid == std::array<std::int64_t, 3>{1, 1, 65535});
    sched::GpuTarget shallow = t;
    shallow.max_grid_z = 100;
    CHECK(only(sched::map_gpu_kernels(partitioned({matmul(ba, bb)}, {ba, bb}), shallow))
              .contraction.grid[2] == 100);
    // Reductions: a block per row; a thread per column, 256 columns per block; a split total's
    // 256 partial blocks, then one; a tuple reduction's block per row.
    Array x = placeholder(Shape::of({64, 4096}));
    sched::GpuReductionMapping rows =
        only(sched::map_gpu_kernels(partitioned({sum(x, {1})}, {x}), t)).reduction_mapping;
    CHECK(rows.blocks == 64);
    Array z = placeholder(Shape::of({4096, 4096}));
    sched::GpuReductionMapping cols =
        only(sched::map_gpu_kernels(partitioned({sum(z, {0})}, {z}), t)).reduction_mapping;
    CHECK(cols.blocks == 16);
    Array y = placeholder(Shape::of({1 << 20}));
    sched::GpuReductionMapping total =
        only(sched::map_gpu_kernels(partitioned({sum(y, {0})}, {y}), t)).reduction_mapping;
    CHECK(total.blocks == 256);
    CHECK(total.final_blocks == 1);
    Array w = placeholder(Shape::of({8, 1000}));
    sched::GpuMapping am = sched::map_gpu_kernels(partitioned({argmax(w, 1)}, {w}), t);
    auto tuple = std::find_if(am.kernels.begin(), am.kernels.end(), [](const auto& k) {
        return k.form == sched::GpuForm::TupleReduction;
    });
    REQUIRE(tuple != am.kernels.end());
    CHECK(tuple->reduction_mapping.blocks == 8);
}

TEST_CASE("gpu mapping passes: the generic kernels' loops over threads, from the target") {
    // A 100 x 3 elementwise map on the generic mapping: both loops over threads (300 points),
    // whole warps up to 256 threads, the blocks to cover the points.
    Array x = placeholder(Shape::of({100, 3}));
    poly::ProgramIR ir = partitioned({exp(x)}, {x});
    sched::LowerOptions options;
    options.gpu.generic_only = true;
    auto nest_for = [&](const sched::GpuTarget& t) {
        sched::LoweredKernels l = sched::lower(ir, sched::Target::for_gpu(t), options);
        REQUIRE(l.gpu);
        const sched::GpuKernelMapping& m = only(*l.gpu);
        REQUIRE(m.form == sched::GpuForm::Generic);
        REQUIRE(m.generic.size() == 1);
        return m.generic[0];
    };
    sched::GpuTarget t;
    sched::GpuGenericNest g = nest_for(t);
    CHECK(g.thread_loops == 2);
    CHECK(g.trips == std::vector<std::int64_t>{100, 3});
    CHECK(g.points == 300);
    CHECK(g.threads == 256);
    CHECK(g.blocks == 2);
    // A smaller limit per block: more blocks.
    sched::GpuTarget small = t;
    small.max_threads_per_block = 128;
    g = nest_for(small);
    CHECK(g.threads == 128);
    CHECK(g.blocks == 3);
    CHECK(g.max_threads == 128);
    // A reduction's carried loop stays inside the thread: only the rows over threads.
    Array y = placeholder(Shape::of({40, 70}));
    sched::LoweredKernels l =
        sched::lower(partitioned({sum(y, {1})}, {y}), sched::Target::for_gpu(t), options);
    REQUIRE(l.gpu);
    bool rows = false;
    for (const sched::GpuKernelMapping& m : l.gpu->kernels)
        for (const sched::GpuGenericNest& n : m.generic)
            rows = rows || (n.thread_loops == 1 && n.trips == std::vector<std::int64_t>{40} &&
                            n.threads == 64);
    CHECK(rows);
    CHECK(sched::to_string(g).find("threads over 100 3 block=128 grid=3") != std::string::npos);
}

TEST_CASE("gpu mapping passes: the autotuner's tiling and split K") {
    // A 256x1024 result over 784 (the MNIST MLP's first weight gradient): 64x64 tiles, split K.
    Array a = placeholder(Shape::of({256, 784})), b = placeholder(Shape::of({784, 1024}));
    poly::ProgramIR ir = partitioned({matmul(a, b)}, {a, b});
    sched::GpuContractionMapping policy = only(sched::map_gpu_kernels(ir, {})).contraction;
    CHECK(policy.tile.bm == 64);
    CHECK(policy.splits > 1);
    sched::GpuMappingOptions tuned;
    tuned.contraction_tilings[0] = {{32, 32, 16}, 1};
    sched::GpuContractionMapping t = only(sched::map_gpu_kernels(ir, {}, tuned)).contraction;
    CHECK(t.tile.bm == 32);
    CHECK(t.splits == 1);
    CHECK(t.final_threads == 0);
    tuned.contraction_tilings[0] = {{64, 64, 16}, 4};
    sched::GpuContractionMapping s = only(sched::map_gpu_kernels(ir, {}, tuned)).contraction;
    CHECK(s.splits == 4);
    CHECK(s.final_threads == 256);
    CHECK(s.final_index32);
}

TEST_CASE("gpu mapping passes: gpu.autotune asks the measurement and keeps its choice") {
    Array a = placeholder(Shape::of({512, 512})), b = placeholder(Shape::of({512, 512}));
    Array v = placeholder(Shape::of({512}));
    poly::ProgramIR ir = partitioned({matmul(a, b), v * 2.0f}, {a, b, v});
    std::vector<int> asked;
    std::size_t offered = 0;
    sched::GpuMappingOptions o;
    o.measure = [&](int kernel, const std::vector<sched::ContractionTiling>& candidates) {
        asked.push_back(kernel);
        offered = candidates.size();
        CHECK(candidates[0] == sched::ContractionTiling{}); // the policy's first
        return std::optional<sched::ContractionTiling>(sched::ContractionTiling{{32, 32, 16}, 1});
    };
    sched::GpuMapping m = sched::map_gpu_kernels(ir, {}, o);
    REQUIRE(asked.size() == 1); // the contraction only, not the map
    const int contraction = asked[0];
    CHECK(offered == sched::contraction_candidates(ir, contraction).size());
    for (const sched::GpuKernelMapping& k : m.kernels)
        if (k.form == sched::GpuForm::Contraction) {
            CHECK(k.contraction.tile.bm == 32);
            CHECK(k.contraction.splits == 1);
        }
    // Nothing measured: the policy's tile. A tiling given already: not asked again.
    o.measure = [&](int, const std::vector<sched::ContractionTiling>&) {
        return std::optional<sched::ContractionTiling>();
    };
    for (const sched::GpuKernelMapping& k : sched::map_gpu_kernels(ir, {}, o).kernels)
        if (k.form == sched::GpuForm::Contraction) CHECK(k.contraction.tile.bm == 64);
    asked.clear();
    o.contraction_tilings[contraction] = {{64, 64, 8}, 1};
    o.measure = [&](int kernel, const std::vector<sched::ContractionTiling>&) {
        asked.push_back(kernel);
        return std::optional<sched::ContractionTiling>();
    };
    sched::map_gpu_kernels(ir, {}, o);
    CHECK(asked.empty());
}

TEST_CASE("gpu mapping passes: a cuda lowering runs them in the pass list's order") {
    setenv("HEDRA_TIME_PASSES", "1", 1);
    dump::reset_pass_times();
    Array a = placeholder(Shape::of({96, 80})), b = placeholder(Shape::of({80, 72}));
    Array c = matmul(a, b);
    Array s = sum(c, {1});
    Array q = placeholder(Shape::of({96, 8}));
    Array top = argmax(q, 1); // over 8 entries: serial per element, the generic form
    test::LoweredArrays l = test::lower_arrays({c, s, top, exp(a)}, {}, {a, b, q});
    std::vector<std::string> names = test::timed_passes();
    unsetenv("HEDRA_TIME_PASSES");
    dump::reset_pass_times();
    // The generic kernel (the short argmax) also runs the kernel passes, after them.
    test::check_in_list_order(names, {"gpu.forms", "gpu.tile", "gpu.stage", "gpu.reduction",
                                      "gpu.launch", "scop", "schedule", "ast", "print"});
    for (const sched::PassInfo& p : sched::pass_list())
        if (p.unit == "gpu" && p.name != "gpu.autotune") { // its choice is gpu.tile's
            CAPTURE(p.name);
            CHECK(p.dumps == p.name);
        }
}

TEST_CASE("gpu mapping passes: each writes its HEDRA_DUMP stage") {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("hedra_gpu_dump_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    setenv("HEDRA_DUMP", dir.c_str(), 1);
    Array a = placeholder(Shape::of({64, 48})), b = placeholder(Shape::of({48, 40}));
    test::LoweredArrays l = test::lower_arrays({matmul(a, b)}, {}, {a, b});
    unsetenv("HEDRA_DUMP");
    std::vector<std::string> stages;
    std::string tile;
    for (const auto& e : fs::directory_iterator(dir)) {
        std::string name = e.path().filename().string();
        for (const char* stage :
             {"gpu.forms", "gpu.tile", "gpu.stage", "gpu.reduction", "gpu.launch"})
            if (name.find(std::string("-") + stage + ".txt") != std::string::npos)
                stages.push_back(stage);
        if (name.find("-gpu.stage.txt") != std::string::npos) {
            std::stringstream text;
            text << std::ifstream(e.path()).rdbuf();
            tile = text.str();
        }
    }
    fs::remove_all(dir);
    CHECK(stages.size() == 5);
    CAPTURE(tile);
    CHECK(tile.find("contraction m=") != std::string::npos);
    CHECK(tile.find("staged read") != std::string::npos);
}
