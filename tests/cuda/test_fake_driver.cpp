// The cuda backend's run-time path without a GPU: a child process loads the fake driver
// (fake_driver/fake_libcuda.cpp) through $HEDRA_CUDA_DRIVER, whose launches run the CPU
// emulation of the generated kernels. So compile/compute on "cuda" go through the real
// backend: program cache, NVRTC, module loading, buffer bindings, the temporaries' arena,
// scratch buffers, the caching allocator, uploads, downloads and device residency, with results
// checked against the reference backend.
#include <algorithm>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>
#include <unistd.h>

#include "backends/common/kernel_profile.hpp"
#include "backends/cuda/runtime/cuda_driver.hpp"
#include "cuda/cuda_programs.hpp"
#include "cuda/cuda_testing.hpp"
#include "cuda/emulator.hpp"
#include "cuda/fake_driver/fake_driver_path.hpp"
#include "distributed/data_parallel.hpp"
#include "distributed/distributed_testing.hpp"
#include "distributed/fake_nccl.hpp"
#include "nn/gpt.hpp"
#include "nn/model.hpp"
#include "nn/optim.hpp"
#include "nn/train_step.hpp"

using namespace hedra;

namespace {

bool in_child() {
    return std::getenv("HEDRA_FAKE_CUDA_CHILD") != nullptr;
}

// Runs the test case `name` in a child process with the fake driver.
void run_child(const std::string& name, const std::string& environment = "") {
    if (test::skip_without_nvrtc()) return;
    if (test::skip_because(test::emulation_compiler().empty() ? "no host C++ compiler" : ""))
        return;
    char self[4096] = {0};
    REQUIRE(readlink("/proc/self/exe", self, sizeof self - 1) > 0);
    std::string filter; // doctest splits filters at commas unless escaped
    for (char c : name)
        filter += c == ',' ? std::string("\\,") : std::string(1, c);
    std::string log = std::filesystem::temp_directory_path() /
                      ("hedra_fake_cuda_" + std::to_string(getpid()) + ".log");
    std::string cmd = environment + " HEDRA_FAKE_CUDA_CHILD=1 HEDRA_CUDA_DRIVER=" +
                      hedra::test::fake_driver_path() + " HEDRA_CUDA_ARCH=compute_90 " + self +
                      " --test-case='" + filter + "' > " + log + " 2>&1";
    int rc = std::system(cmd.c_str());
    std::stringstream out;
    out << std::ifstream(log).rdbuf();
    INFO(out.str());
    CHECK(rc == 0);
    CHECK(out.str().find("Status: SUCCESS") != std::string::npos);
    // The child ran the test case: a filter that matches none (a name the shell's quoting
    // mangles, a comma doctest reads as a separator) would pass without running anything.
    std::smatch ran;
    std::string text = out.str();
    CHECK(std::regex_search(text, ran, std::regex(R"(test cases:\s*(\d+)\s*\|\s*(\d+) passed)")));
    CHECK((ran.size() == 3 && ran[2] == "1"));
}

using Register = void (*)(const char*, void*);
using Counters = void (*)(std::uint64_t*, std::uint64_t*, std::uint64_t*, std::uint64_t*);

void* fake() {
    static void* handle = dlopen(hedra::test::fake_driver_path().c_str(), RTLD_NOW | RTLD_GLOBAL);
    REQUIRE(handle != nullptr);
    return handle;
}

// Lowers and compiles `outputs` as the backend will on the fake device (132 multiprocessors,
// 48 KiB of shared memory, PTX for compute_90), and registers the emulation for that PTX.
void prepare(const std::vector<Array>& outputs, const std::vector<Array>& placeholders = {}) {
    backend::CudaLowerOptions o;
    o.gpu.multiprocessors = 132;
    test::LoweredArrays l = test::lower_arrays(outputs, o, placeholders);
    std::string ptx = backend::cuda::Nvrtc::instance().compile(l.cuda.source, "compute_90").image;
    auto reg = reinterpret_cast<Register>(dlsym(fake(), "hedra_fake_cuda_register"));
    reg(ptx.c_str(), test::emulation_library(l.cuda.source));
}

std::array<std::uint64_t, 4> counters() {
    std::array<std::uint64_t, 4> c{};
    reinterpret_cast<Counters>(dlsym(fake(), "hedra_fake_cuda_counters"))(&c[0], &c[1], &c[2],
                                                                          &c[3]);
    return c; // launches, uploads, downloads, live allocations
}

std::shared_ptr<backend::CudaBackend> cuda() {
    return std::dynamic_pointer_cast<backend::CudaBackend>(get_backend("cuda"));
}

} // namespace

TEST_CASE("cuda fake driver: Device::target from the device attributes") {
    if (!in_child())
        return run_child("cuda fake driver: Device::target from the device attributes");
    const backend::cuda::Device& d = backend::cuda::Device::instance();
    sched::GpuTarget t = d.target();
    CHECK(t.multiprocessors == 132);
    CHECK(t.warp_size == 32);
    CHECK(t.max_threads_per_block == 1024);
    CHECK(t.shared_memory_per_block == 49152);
    CHECK(t.max_grid_x == 2147483647);
    CHECK(t.max_grid_y == 65535);
    CHECK(t.max_grid_z == 65535);
    // The base's bound on shared memory stays when the device offers more; its other facts are
    // the device's.
    sched::GpuTarget base;
    base.shared_memory_per_block = 16384;
    base.multiprocessors = 7;
    base.max_grid_z = 100;
    sched::GpuTarget bounded = d.target(base);
    CHECK(bounded.shared_memory_per_block == 16384);
    CHECK(bounded.multiprocessors == 132);
    CHECK(bounded.max_grid_z == 65535);
}

TEST_CASE("cuda fake driver: test programs through the backend") {
    if (!in_child()) return run_child("cuda fake driver: test programs through the backend");
    REQUIRE(backend::cuda_unavailable_reason() == "");
    for (const char* name :
         {"maps", "reductions over axis 1", "integer, bool and custom reductions",
          "long reduction (split)", "matmul", "conv2d", "jacobi", "softmax", "fuse, stack, pad",
          "iota and masks"}) {
        CAPTURE(name);
        test::CudaTestProgram p = test::cuda_test_program(name);
        std::vector<Array> outputs = p.build();
        prepare(outputs);
        std::vector<NodePtr> nodes;
        for (const Array& a : outputs)
            nodes.push_back(a.node());
        std::vector<HostArray> want = get_backend("reference")->evaluate(nodes, {});
        std::vector<HostArray> got = cuda()->evaluate(nodes, {});
        REQUIRE(got.size() == want.size());
        for (std::size_t k = 0; k < got.size(); ++k) {
            CAPTURE(k);
            test::check_same(got[k], want[k], p.exact);
        }
        // Run again: the program, the temporaries and the scratch buffers are reused.
        auto before = cuda()->stats();
        std::vector<HostArray> again = cuda()->evaluate(nodes, {});
        CHECK(cuda()->stats().program_cache_hits == before.program_cache_hits + 1);
        for (std::size_t k = 0; k < got.size(); ++k)
            test::check_same(again[k], got[k], true);
    }
}

// Launch by launch (HEDRA_CUDA_GRAPHS=0): the copies counted are those of runs without graphs.
TEST_CASE("cuda fake driver: results fed back stay on the device") {
    if (!in_child())
        return run_child("cuda fake driver: results fed back stay on the device",
                         "HEDRA_CUDA_GRAPHS=0");
    Array p = placeholder(Shape::of({40, 40})), q = placeholder(Shape::of({40, 40}));
    std::vector<Array> outs{matmul(p, q) * 0.5f, p + 1.0f};
    prepare(outs, {p, q});
    ComputeOptions o;
    o.backend = "cuda";
    CompiledProgram step = compile(outs, {p, q}, o);
    std::vector<float> v(1600);
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = static_cast<float>(i % 13) / 13.0f - 0.5f;
    HostArray x = HostArray::from(v, {40, 40}), y = HostArray::from(v, {40, 40});
    auto c0 = counters();
    std::vector<HostArray> r1 = step({x, y});
    auto c1 = counters();
    CHECK(c1[1] - c0[1] == 2); // both inputs uploaded
    CHECK(c1[2] == c0[2]);     // nothing downloaded: nobody has read the results yet
    CHECK(r1[0].pending());
    CHECK(r1[1].pending());
    std::vector<HostArray> r2 = step({r1[1], y});
    auto c2 = counters();
    CHECK(c2[1] - c1[1] == 1); // only y: r1[1] is resident
    CHECK(c2[2] == c1[2]);     // and was fed back without crossing the bus
    CHECK(cuda()->stats().resident_inputs >= 1);
    auto ref = get_backend("reference")
                   ->compile({outs[0].node(), outs[1].node()}, {p.node(), q.node()}, {});
    std::vector<HostArray> want = ref->run({r1[1], y}); // the reference reads r1[1]: one copy
    CHECK_FALSE(r1[1].pending());
    CHECK(counters()[2] == c2[2] + 1);
    CHECK(cuda()->stats().downloads >= 1);
    test::check_same(r2[0], want[0], false);
    test::check_same(r2[1], want[1], true);
    CHECK(counters()[2] == c2[2] + 3);
    // A result read from several threads at once is copied once.
    std::vector<HostArray> r3 = step({r2[1], y});
    auto c3 = counters();
    std::vector<std::thread> readers;
    std::vector<double> seen(4);
    for (int t = 0; t < 4; ++t)
        readers.emplace_back([&, t] { seen[static_cast<std::size_t>(t)] = r3[0].flat(41); });
    for (auto& t : readers)
        t.join();
    CHECK(counters()[2] == c3[2] + 1);
    for (double s : seen)
        CHECK(s == seen[0]);
    // A result changed in place on the host is uploaded again, not taken from the device.
    std::vector<HostArray> r4 = step({r3[1], y});
    HostArray changed = r4[1];
    changed.mutable_values<float>()[0] = 42.0f;
    CHECK(changed.changed());
    auto c5 = counters();
    std::vector<HostArray> r5 = step({changed, y});
    CHECK(counters()[1] == c5[1] + 2); // changed and y
    CHECK(r5[1].flat(0) == doctest::Approx(43.0));
    // The openmp backend reads a device result as an input.
    Array on_host = array(r3[1]) * 2.0f;
    HostArray twice_host = compute(on_host);
    CHECK(twice_host.flat(7) == doctest::Approx(2 * r3[1].flat(7)));
    // A leaf computed earlier is resident too: its memo is a result of the backend.
    Array a = array(v, Shape::of({40, 40}));
    Array twice = a * 2.0f;
    prepare({twice});
    compute(twice, o);
    Array after = twice + 1.0f;
    prepare({after});
    auto c4 = counters();
    HostArray h = compute(after, o);
    CHECK(counters()[1] == c4[1]); // nothing uploaded
    CHECK(h.values<float>()[5] == doctest::Approx(2 * v[5] + 1));
    // Dropping results frees their device copies at the next run.
    std::uint64_t live = counters()[3];
    r1.clear();
    r2.clear();
    step({x, y});
    CHECK(counters()[3] <= live + 1);
}

TEST_CASE("cuda fake driver: empty arrays, and a module the driver rejects") {
    if (!in_child())
        return run_child("cuda fake driver: empty arrays, and a module the driver rejects");
    Array e = array(std::vector<float>{}, Shape::of({0, 4}));
    Array y = test::cuda_random(Shape::of({3, 4}), 35);
    std::vector<Array> outs{sum(e, {0}), e * 2.0f, max(sum(e, {0}) + y, {0})};
    prepare(outs);
    std::vector<NodePtr> nodes;
    for (const Array& a : outs)
        nodes.push_back(a.node());
    auto want = get_backend("reference")->evaluate(nodes, {});
    auto got = cuda()->evaluate(nodes, {});
    for (std::size_t k = 0; k < got.size(); ++k)
        test::check_same(got[k], want[k], false);
    Array unregistered = test::cuda_random(Shape::of({5}), 99) * 3.0f;
    CHECK_THROWS_WITH_AS(cuda()->evaluate({unregistered.node()}, {}),
                         doctest::Contains("cannot load the compiled kernels"), Error);
}

namespace {

// Registers the emulation of every program the backend compiles (set_cuda_image_hook).
void register_emulation(const std::string& source, const std::string& image) {
    auto reg = reinterpret_cast<Register>(dlsym(fake(), "hedra_fake_cuda_register"));
    reg(image.c_str(), test::emulation_library(source));
}

} // namespace

// nn::TrainStep on the fake device: epilogues (bias + ReLU, SGD with momentum) in the
// contractions, parameters and optimizer state fed back from step to step without crossing the
// bus, the loss read lazily; every step's loss and the final parameters equal the reference's.
// Launch by launch (HEDRA_CUDA_GRAPHS=0); with graphs, below.
TEST_CASE("cuda fake driver: MLP training steps stay on the device") {
    if (!in_child())
        return run_child("cuda fake driver: MLP training steps stay on the device",
                         "HEDRA_CUDA_GRAPHS=0");
    backend::set_cuda_image_hook(register_emulation);
    auto sgd = std::make_shared<nn::Sgd>(nn::SgdOptions{0.1, 0.9});
    ComputeOptions on_cuda, on_reference;
    on_cuda.backend = "cuda";
    on_reference.backend = "reference";
    nn::TrainStep gpu(nn::mlp({40, 24, 10}, 3), sgd, on_cuda);
    nn::TrainStep ref(nn::mlp({40, 24, 10}, 3), sgd, on_reference);
    test::Batch data = test::batch(16, 40, 0);
    const HostArray &x = data.x, &y = data.y;
    gpu.step(x, y); // compiles; uploads the batch and the initial parameters
    ref.step(x, y);
    std::vector<HostArray> losses;
    auto before = counters();
    for (int s = 0; s < 3; ++s) {
        losses.push_back(gpu.step_loss(x, y));
        CHECK(losses.back().pending());
    }
    auto after = counters();
    CHECK(after[2] == before[2]); // nothing downloaded: parameters and state stayed resident
    // At most the batch (x and y) and the learning rate (a run-time input) per step.
    CHECK(after[1] - before[1] <= 3 * 3);
    for (const HostArray& loss : losses)
        CHECK(loss.flat(0) == doctest::Approx(ref.step(x, y)).epsilon(1e-4));
    for (std::size_t p = 0; p < gpu.params().size(); ++p) {
        CAPTURE(p);
        test::check_same(gpu.params()[p], ref.params()[p], false, 1e-4, 1e-6);
    }
    backend::set_cuda_image_hook(nullptr);
}

// HEDRA_PROFILE=1: GPU time per kernel from CUDA events around each launch, in the table that
// the openmp backend's profiles print at exit.
TEST_CASE("cuda fake driver: HEDRA_PROFILE times each kernel") {
    if (!in_child())
        return run_child("cuda fake driver: HEDRA_PROFILE times each kernel", "HEDRA_PROFILE=1");
    REQUIRE(backend::profile_enabled());
    backend::set_cuda_image_hook(register_emulation);
    Array a = test::cuda_random(Shape::of({40, 30}), 60),
          b = test::cuda_random(Shape::of({30, 20}), 61);
    ComputeOptions o;
    o.backend = "cuda";
    HostArray r = compute(relu(matmul(a, b)) + 1.0f, o);
    CHECK(r.flat(0) >= 1.0);
    compute(relu(matmul(a, b)) + 1.0f, o);
    std::string table = backend::profile_table();
    INFO(table);
    CHECK(table.find("2 runs") != std::string::npos);
    CHECK(table.find("gpu time") != std::string::npos);
    CHECK(table.find("k0 ") != std::string::npos);
    CHECK(table.find(" 0.000 ms per run") == std::string::npos); // the fake times emulations
    backend::set_cuda_image_hook(nullptr);
}

// HEDRA_CUDA_AUTOTUNE: each contraction's distinct candidate tilings are compiled and timed on
// the (fake) device, the fastest used, and the choice stored on disk: a second process with the
// same cache directory times nothing. Results equal the reference's whatever the choice.
TEST_CASE("cuda fake driver: autotuned contractions") {
    if (!in_child()) {
        std::string dir =
            std::filesystem::temp_directory_path() / ("hedra_autotune_" + std::to_string(getpid()));
        std::filesystem::remove_all(dir);
        std::string env = "HEDRA_CUDA_AUTOTUNE=verbose HEDRA_CACHE_DIR=" + dir;
        run_child("cuda fake driver: autotuned contractions", env);
        run_child("cuda fake driver: autotuned contractions", env + " HEDRA_TUNED_BEFORE=1");
        std::filesystem::remove_all(dir);
        return;
    }
    backend::set_cuda_image_hook(register_emulation);
    Array a = test::cuda_random(Shape::of({40, 30}), 90),
          b = test::cuda_random(Shape::of({30, 20}), 91),
          v = test::cuda_random(Shape::of({40, 20}), 92);
    Array next_v = 0.9f * v + matmul(a, b);
    std::vector<Array> outputs{next_v, relu(next_v) * 2.0f};
    ComputeOptions on_cuda, on_reference;
    on_cuda.backend = "cuda";
    on_reference.backend = "reference";
    std::vector<HostArray> got = compute(outputs, on_cuda), want = compute(outputs, on_reference);
    for (std::size_t i = 0; i < got.size(); ++i)
        test::check_same(got[i], want[i], false, 1e-5, 1e-6);
    backend::CudaStats s = cuda()->stats();
    CHECK(s.tuned_kernels == 1);
    if (std::getenv("HEDRA_TUNED_BEFORE"))
        CHECK(s.tuning_candidates == 0); // the choice came from the disk cache
    else
        CHECK(s.tuning_candidates >= 2);
    backend::set_cuda_image_hook(nullptr);
}

namespace {

using GraphCounters = void (*)(std::uint64_t*, std::uint64_t*, std::uint64_t*);

std::array<std::uint64_t, 3> graph_counters() {
    std::array<std::uint64_t, 3> c{};
    reinterpret_cast<GraphCounters>(dlsym(fake(), "hedra_fake_cuda_graph_counters"))(&c[0], &c[1],
                                                                                     &c[2]);
    return c; // graphs instantiated, graph launches, bytes copied to the device
}

// A TrainStep whose programs run launch by launch: HEDRA_CUDA_GRAPHS is read when a program is
// made, at the first step.
double first_step_without_graphs(nn::TrainStep& step, const HostArray& x, const HostArray& y) {
    setenv("HEDRA_CUDA_GRAPHS", "0", 1);
    double loss = step.step(x, y);
    unsetenv("HEDRA_CUDA_GRAPHS");
    return loss;
}

} // namespace

// The training step as a CUDA graph: the first step runs launch by launch (the warm-up), the
// second captures the graphs (two: the parameters and the optimizer state alternate between two
// sets of device buffers) and every later step is one graph launch whose only uploads are the
// batch and the learning rate, staged through pinned memory, and whose only download is the
// loss. Losses and parameters equal those of the same steps without graphs bit for bit, and the
// reference backend's (and the openmp backend's, where the build has it: the CUDA-only build
// does not) within float tolerance; results read two steps later (after their device buffers
// were reused) are still right.
TEST_CASE("cuda fake driver: a training step replayed as a CUDA graph") {
    if (!in_child()) return run_child("cuda fake driver: a training step replayed as a CUDA graph");
    backend::set_cuda_image_hook(register_emulation);
    auto sgd = std::make_shared<nn::Sgd>(nn::SgdOptions{0.1, 0.9});
    ComputeOptions on_cuda, on_openmp, on_reference;
    on_cuda.backend = "cuda";
    on_openmp.backend = "openmp";
    on_reference.backend = "reference";
    const std::vector<std::string> backends = backend_names();
    const bool with_openmp =
        std::find(backends.begin(), backends.end(), "openmp") != backends.end();
    if (!with_openmp) on_openmp = on_reference;
    const nn::Model model = nn::mlp({40, 24, 10}, 3);
    nn::TrainStep graphed(model, sgd, on_cuda), plain(model, sgd, on_cuda),
        openmp(model, sgd, on_openmp), ref(model, sgd, on_reference);
    const int steps = 6;
    std::vector<test::Batch> batches;
    for (int s = 0; s < steps; ++s)
        batches.push_back(test::batch(16, 40, static_cast<unsigned>(s)));
    std::size_t param_bytes = 0;
    for (const HostArray& p : model.params)
        param_bytes += p.bytes();

    const backend::CudaStats before = cuda()->stats();
    std::vector<HostArray> graphed_losses;
    std::vector<double> plain_losses;
    std::vector<HostArray> graphed_at_2, plain_at_2;
    std::uint64_t kernels = 0;
    for (int s = 0; s < steps; ++s) {
        CAPTURE(s);
        const HostArray &x = batches[static_cast<std::size_t>(s)].x,
                        &y = batches[static_cast<std::size_t>(s)].y;
        auto c0 = counters();
        auto g0 = graph_counters();
        // Results of two steps ago still unread are copied to the host before their device
        // buffers are written again.
        std::uint64_t unread = 0;
        for (const HostArray& p : graphed_at_2)
            unread += p.pending() ? 1 : 0;
        // The first loss is read at once (so the graph copies the loss to the host); the others
        // only at the end.
        graphed_losses.push_back(graphed.step_loss(x, y));
        if (s == 0) CHECK(graphed_losses[0].flat(0) > 0);
        auto c1 = counters();
        auto g1 = graph_counters();
        if (s == 0) kernels = c1[0] - c0[0];
        CHECK(c1[0] - c0[0] == kernels); // the same kernels, from the host or from the graph
        if (s >= 1) {
            CHECK(g1[1] == g0[1] + 1);                         // one graph launch
            CHECK(g1[2] - g0[2] == x.bytes() + y.bytes() + 4); // the batch and the f32 rate
            CHECK(c1[2] - c0[2] == 1 + (s == 4 ? unread : 0)); // the loss, in the graph
            CHECK(graphed_losses.back().pending());
        } else {
            CHECK(g1[2] - g0[2] >= param_bytes); // the initial parameters, uploaded once
        }
        plain_losses.push_back(s == 0 ? first_step_without_graphs(plain, x, y) : plain.step(x, y));
        openmp.step(x, y);
        ref.step(x, y);
        if (s == 2) {
            graphed_at_2 = graphed.params();
            plain_at_2 = plain.params();
        }
    }
    const backend::CudaStats after = cuda()->stats();
    CHECK(after.graphs_captured - before.graphs_captured == 2);
    CHECK(after.graph_launches - before.graph_launches == steps - 1);
    // Unread parameters can be worked on where they are; the staged loss cannot (its host
    // contents come from the staging).
    REQUIRE(graphed.params()[0].pending());
    CHECK(backend::cuda_device_array(graphed.params()[0]).address != 0);
    REQUIRE(graphed_losses.back().pending());
    CHECK(backend::cuda_device_array(graphed_losses.back()).address == 0);
    for (int s = 0; s < steps; ++s) {
        CAPTURE(s);
        CHECK(graphed_losses[static_cast<std::size_t>(s)].flat(0) ==
              plain_losses[static_cast<std::size_t>(s)]);
    }
    for (std::size_t p = 0; p < graphed.params().size(); ++p) {
        CAPTURE(p);
        test::check_same(graphed.params()[p], plain.params()[p], true);
        test::check_same(graphed_at_2[p], plain_at_2[p], true);
        test::check_same(graphed.params()[p], openmp.params()[p], false, 1e-4, 1e-6);
        test::check_same(graphed.params()[p], ref.params()[p], false, 1e-4, 1e-6);
    }
    for (std::size_t k = 0; k < graphed.optimizer_state().size(); ++k)
        test::check_same(graphed.optimizer_state()[k], plain.optimizer_state()[k], true);
    // Evaluation reads the graph's parameters where they are.
    CHECK(graphed.count_correct(batches[0].x, batches[0].y) ==
          plain.count_correct(batches[0].x, batches[0].y));
    backend::set_cuda_image_hook(nullptr);
}

// A graph is made for one set of sizes and one pattern of inputs fed back: a step of another
// batch size (its own program) or parameters replaced from the host make the next step run
// launch by launch, and the one after capture again; after four graphs dropped, the program
// keeps to launches. Every loss equals the reference's.
TEST_CASE("cuda fake driver: graphs captured again when the step changes") {
    if (!in_child())
        return run_child("cuda fake driver: graphs captured again when the step changes");
    backend::set_cuda_image_hook(register_emulation);
    auto sgd = std::make_shared<nn::Sgd>(nn::SgdOptions{0.05, 0.9});
    ComputeOptions on_cuda, on_reference;
    on_cuda.backend = "cuda";
    on_reference.backend = "reference";
    const nn::Model model = nn::mlp({40, 24, 10}, 5);
    nn::TrainStep graphed(model, sgd, on_cuda), ref(model, sgd, on_reference);
    auto step = [&](std::int64_t batch, unsigned seed) {
        CAPTURE(seed);
        test::Batch b = test::batch(batch, 40, seed);
        CHECK(graphed.step(b.x, b.y) == doctest::Approx(ref.step(b.x, b.y)).epsilon(1e-4));
    };
    auto graph_launches = [&] { return cuda()->stats().graph_launches; };
    step(16, 0);
    step(16, 1);
    step(16, 2);
    std::uint64_t launched = graph_launches();
    CHECK(launched >= 2);
    step(8, 3); // another program: its first run is launch by launch
    CHECK(graph_launches() == launched);
    step(16, 4); // the parameters came from the other program
    CHECK(graph_launches() == launched);
    step(16, 5); // captured again
    CHECK(graph_launches() == launched + 1);
    const std::vector<HostArray> now = ref.params(); // from the host; the state reset on both
    graphed.set_params(now);
    ref.set_params(now);
    step(16, 6);
    CHECK(graph_launches() == launched + 1);
    step(16, 7);
    step(16, 8);
    CHECK(graph_launches() == launched + 3);
    auto replace_params = [&] {
        const std::vector<HostArray> params = ref.params();
        graphed.set_params(params);
        ref.set_params(params);
    };
    replace_params();
    step(16, 9); // the third graph dropped
    step(16, 10);
    CHECK(graph_launches() == launched + 4);
    replace_params();
    step(16, 11); // the fourth: no graphs from now on
    step(16, 12);
    step(16, 13);
    CHECK(graph_launches() == launched + 4);
    for (std::size_t p = 0; p < graphed.params().size(); ++p)
        test::check_same(graphed.params()[p], ref.params()[p], false, 1e-4, 1e-6);
    backend::set_cuda_image_hook(nullptr);
}

// Data-parallel training over NCCL with its programs on the cuda backend: each rank's gradients
// are summed where the program left them, in place, on the backend's stream, as one NCCL group
// (the fake NCCL sums
// the fake device's memory, which is host memory), and the update's program reads the sums
// there. Nothing crosses between host and device for them: NCCL stages only the initial
// parameters' broadcast and the losses, and the only downloads are the losses. Two ranks take
// one process's steps on the global batch.
TEST_CASE("cuda fake driver: data-parallel gradients summed on the device by NCCL") {
    if (!in_child())
        return run_child("cuda fake driver: data-parallel gradients summed on the device by NCCL");
    backend::set_cuda_image_hook(register_emulation);
    namespace dt = distributed::test;
    const int steps = 4, ranks = 2;
    nn::Trainer one = dt::make_trainer(1, 0.0, {}, DType::F32, "cuda");
    std::vector<double> want;
    for (int s = 0; s < steps; ++s)
        want.push_back(one.step(dt::batch(24, 100 + s), 0.05));
    std::size_t param_bytes = 0;
    for (const HostArray& p : one.params())
        param_bytes += p.bytes();
    std::vector<std::vector<double>> losses(ranks);
    std::vector<std::vector<HostArray>> params(ranks);
    std::vector<std::int64_t> device_sums(ranks);
    auto world = dt::on_fake_nccl(ranks, [&](int r,
                                             std::shared_ptr<distributed::NcclCommunicator> c) {
        distributed::DataParallelTrainer dp(
            c, dt::make_trainer(r == 0 ? 1 : 99, 0.0, {}, DType::F32, "cuda"), {.bucket_bytes = 0});
        for (int s = 0; s < steps; ++s)
            losses[r].push_back(dp.step(dt::batch(24, 100 + s), 0.05));
        params[r] = dp.local().params();
        device_sums[r] = dp.device_sums();
    });
    for (int r = 0; r < ranks; ++r) {
        CAPTURE(r);
        CHECK(device_sums[r] == steps * 4);
        for (int s = 0; s < steps; ++s)
            CHECK(losses[r][s] == doctest::Approx(want[s]).epsilon(1e-4));
        for (const HostArray& p : params[r])
            CHECK(p.pending()); // the update's results stayed on the device too
    }
    CHECK(world->sums_on_streams == ranks * steps * 4);
    CHECK(world->groups == ranks * steps); // one group per rank and step
    CHECK(world->open_groups == 0);
    CHECK(world->sums_outside_groups == 0);
    CHECK(world->streams.size() == 1);
    CHECK(world->streams.count(nullptr) == 0);
    // Rank 0 sends the parameters, both receive them; each step's loss goes in and out.
    CHECK(world->staged_bytes == 3 * param_bytes + ranks * steps * 2 * sizeof(double));
    CHECK(dt::flat(params[0]) == dt::flat(params[1]));
    const std::vector<float> got = dt::flat(params[0]), expected = dt::flat(one.params());
    for (std::size_t i = 0; i < expected.size(); ++i)
        CHECK(got[i] == doctest::Approx(expected[i]).epsilon(1e-4).scale(1e-2));
    backend::set_cuda_image_hook(nullptr);
}

// A batch made on the device (as the benchmark's, and PyTorch's peer's) and passed again each
// step is bound in place by the graph: a step then uploads only the learning rate. Batches on the
// device that alternate drop the graphs and start no capture (a capture needs two runs alike).
// Every loss equals the reference's.
TEST_CASE("cuda fake driver: a batch on the device is bound in place by the graph") {
    if (!in_child())
        return run_child("cuda fake driver: a batch on the device is bound in place by the graph");
    backend::set_cuda_image_hook(register_emulation);
    auto sgd = std::make_shared<nn::Sgd>(nn::SgdOptions{0.1, 0.9});
    ComputeOptions on_cuda, on_reference;
    on_cuda.backend = "cuda";
    on_reference.backend = "reference";
    const nn::Model model = nn::mlp({40, 24, 10}, 9);
    nn::TrainStep graphed(model, sgd, on_cuda), ref(model, sgd, on_reference);
    test::Batch a = test::batch(16, 40, 1), b = test::batch(16, 40, 2);
    const HostArray ax = compute(array(a.x) + 0.0f, on_cuda), ay = compute(array(a.y) + 0, on_cuda);
    const HostArray bx = compute(array(b.x) + 0.0f, on_cuda), by = compute(array(b.y) + 0, on_cuda);
    REQUIRE(ax.pending());
    auto step = [&](bool first, int s) {
        CAPTURE(s);
        const HostArray &x = first ? ax : bx, &y = first ? ay : by;
        const HostArray &hx = first ? a.x : b.x, &hy = first ? a.y : b.y;
        CHECK(graphed.step(x, y) == doctest::Approx(ref.step(hx, hy)).epsilon(1e-4));
    };
    step(true, 0);
    for (int s = 1; s < 4; ++s) {
        auto g0 = graph_counters();
        step(true, s);
        auto g1 = graph_counters();
        CHECK(g1[1] == g0[1] + 1);
        CHECK(g1[2] - g0[2] == 4); // the learning rate alone
    }
    CHECK(ax.pending()); // bound in place, never read
    const backend::CudaStats before = cuda()->stats();
    for (int s = 4; s < 10; ++s)
        step(s % 2 == 1, s); // B, A, B, A, ...
    CHECK(cuda()->stats().graph_launches == before.graph_launches);
    CHECK(cuda()->stats().graphs_captured == before.graphs_captured);
    for (std::size_t p = 0; p < graphed.params().size(); ++p)
        test::check_same(graphed.params()[p], ref.params()[p], false, 1e-4, 1e-6);
    backend::set_cuda_image_hook(nullptr);
}

// A W7-like step (a one-layer GPT: embeddings as gathers, causal attention, layer norms, GELU;
// AdamW with a decay mask, gradient clipping, a learning rate that changes every step) replayed
// as a CUDA graph: losses and gradient norms equal those of the same steps launch by launch bit
// for bit, and the reference's within 1e-4; so do the final parameters.
TEST_CASE("cuda fake driver: a GPT step replayed as a CUDA graph") {
    if (!in_child()) return run_child("cuda fake driver: a GPT step replayed as a CUDA graph");
    backend::set_cuda_image_hook(register_emulation);
    const nn::GptConfig cfg{.vocab = 13, .block = 8, .layers = 1, .heads = 2, .embd = 16};
    nn::AdamWOptions adamw{1e-2, 0.9, 0.99, 1e-8, 0.1};
    for (const nn::GptParameter& p : nn::gpt_parameters(cfg))
        adamw.decay_mask.push_back(p.decay);
    auto make = [&](const std::string& backend) {
        nn::TrainerOptions options;
        options.clip_norm = 1.0;
        options.compute.backend = backend;
        return nn::Trainer(
            [cfg](const std::vector<Array>& params, const std::vector<Array>& in) {
                return nn::gpt_loss(cfg, params, in[0], in[1]);
            },
            {{{2, cfg.block}, DType::I64, "tokens"}, {{2, cfg.block}, DType::I64, "targets"}},
            nn::gpt_init(cfg, 5), std::make_shared<nn::AdamW>(adamw), options);
    };
    nn::Trainer graphed = make("cuda"), plain = make("cuda"), ref = make("reference");
    const backend::CudaStats before = cuda()->stats();
    const int steps = 4;
    for (int s = 0; s < steps; ++s) {
        CAPTURE(s);
        HostArray tokens({2, cfg.block}, DType::I64), targets({2, cfg.block}, DType::I64);
        for (std::int64_t i = 0; i < tokens.size(); ++i) {
            tokens.set_flat(i, static_cast<double>((i * 5 + s * 3) % cfg.vocab));
            targets.set_flat(i, static_cast<double>((i * 7 + s + 1) % cfg.vocab));
        }
        const double lr = 1e-2 * (1.0 - 0.1 * s);
        nn::StepResult g = graphed.step_outputs({tokens, targets}, lr);
        if (s == 0) setenv("HEDRA_CUDA_GRAPHS", "0", 1);
        nn::StepResult p = plain.step_outputs({tokens, targets}, lr);
        unsetenv("HEDRA_CUDA_GRAPHS");
        nn::StepResult r = ref.step_outputs({tokens, targets}, lr);
        CHECK(g.loss.flat(0) == p.loss.flat(0));
        CHECK(g.grad_norm.flat(0) == p.grad_norm.flat(0));
        CHECK(g.loss.flat(0) == doctest::Approx(r.loss.flat(0)).epsilon(1e-4));
        CHECK(g.grad_norm.flat(0) == doctest::Approx(r.grad_norm.flat(0)).epsilon(1e-4));
    }
    const backend::CudaStats after = cuda()->stats();
    CHECK(after.graphs_captured - before.graphs_captured == 2);
    CHECK(after.graph_launches - before.graph_launches == steps - 1);
    for (std::size_t k = 0; k < graphed.params().size(); ++k) {
        CAPTURE(k);
        test::check_same(graphed.params()[k], plain.params()[k], true);
        test::check_same(graphed.params()[k], ref.params()[k], false, 1e-4, 1e-5);
    }
    backend::set_cuda_image_hook(nullptr);
}

// The device tests (test_gpu_training.cpp) on the fake driver, their kernels emulated: the MLP's
// gradients and training steps against the reference, the steps replayed as CUDA graphs against
// the same steps launch by launch (the CNN's steps, minutes on the emulator, only on a device).
TEST_CASE("cuda fake driver: the device training tests") {
    for (const char* name : {"cuda device: MLP gradients equal the reference",
                             "cuda device: MLP training steps equal the reference",
                             "cuda device: MLP steps replayed as CUDA graphs equal the steps "
                             "launch by launch"}) {
        CAPTURE(name);
        run_child(name);
    }
}
