// Trainer with update_in_place (nn/trainer.hpp, CompileOptions::donate): AdamW steps of a small
// MLP give the same losses, parameters and state bit for bit as the copying trainer on openmp,
// c and the reference, with and without clipping; the step program donates the parameters and
// the state (its results shrink to the loss), later steps keep the parameters' memory, and a
// parameter array the caller still holds is never changed by a step.
#include "nn/trainer.hpp"

#include <cstring>

#include "nn/layers.hpp"
#include "nn/lr_schedule.hpp"
#include "nn_layer_testing.hpp"

using namespace hedra;
using namespace hedra::nn;
using namespace hedra::nn::test;

namespace {

constexpr int kIn = 12, kHidden = 16, kClasses = 5, kBatch = 24;

HostArray f32(const std::vector<double>& v, std::vector<std::int64_t> sizes) {
    HostArray a(std::move(sizes), DType::F32);
    for (std::size_t i = 0; i < v.size(); ++i)
        a.set_flat(static_cast<std::int64_t>(i), v[i]);
    return a;
}

std::vector<HostArray> batch(std::uint64_t seed) {
    std::vector<double> x = random_values(static_cast<std::size_t>(kBatch * kIn), seed);
    std::vector<std::int64_t> y;
    for (int i = 0; i < kBatch; ++i)
        y.push_back(static_cast<std::int64_t>((x[static_cast<std::size_t>(i * kIn)] + 1.0) * 2.4) %
                    kClasses);
    return {f32(x, {kBatch, kIn}), HostArray::from(y, {kBatch})};
}

std::vector<HostArray> initial_params() {
    return {f32(random_values(kHidden * kIn, 11, -0.3, 0.3), {kHidden, kIn}),
            f32(random_values(kHidden, 12, -0.3, 0.3), {kHidden}),
            f32(random_values(kClasses * kHidden, 13, -0.3, 0.3), {kClasses, kHidden}),
            f32(random_values(kClasses, 14, -0.3, 0.3), {kClasses})};
}

Array mlp_loss(const std::vector<Array>& p, const std::vector<Array>& in) {
    return cross_entropy(linear(relu(linear(in[0], p[0], p[1])), p[2], p[3]), in[1]);
}

Trainer make_trainer(const std::string& backend, bool in_place, double clip) {
    TrainerOptions o;
    o.clip_norm = clip;
    o.compute.backend = backend;
    o.update_in_place = in_place;
    return Trainer(LossFunction(mlp_loss),
                   {{{kAnyExtent, kIn}, DType::F32, "x"}, {{kAnyExtent}, DType::I64, "labels"}},
                   initial_params(),
                   std::make_shared<AdamW>(AdamWOptions{0.05, 0.9, 0.99, 1e-8, 0.1}), o);
}

bool same_bits(const HostArray& a, const HostArray& b) {
    return a.sizes() == b.sizes() && a.dtype() == b.dtype() &&
           std::memcmp(a.raw(), b.raw(), a.bytes()) == 0;
}

bool same_bits(const std::vector<HostArray>& a, const std::vector<HostArray>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (!same_bits(a[i], b[i])) return false;
    return true;
}

std::size_t bytes_of(const std::vector<HostArray>& arrays) {
    std::size_t n = 0;
    for (const HostArray& a : arrays)
        n += a.bytes();
    return n;
}

} // namespace

TEST_CASE("trainer in place: AdamW steps equal the copying trainer's bit for bit") {
    const WarmupCosine schedule{0.05, 0.005, 2, 8};
    for (const std::string backend : {"openmp", "c", "reference"})
        for (double clip : {0.0, 1.0}) {
            INFO(backend << " clip " << clip);
            Trainer copying = make_trainer(backend, false, clip);
            Trainer in_place = make_trainer(backend, true, clip);
            for (int step = 0; step < 6; ++step) {
                const std::vector<HostArray> data = batch(100 + static_cast<std::uint64_t>(step));
                const double lr = schedule.at(step);
                const double a = copying.step(data, lr);
                const double b = in_place.step(data, lr);
                CHECK(std::memcmp(&a, &b, sizeof a) == 0);
            }
            // Two updates through apply_gradients too.
            for (int step = 0; step < 2; ++step) {
                const std::vector<HostArray> data = batch(200 + static_cast<std::uint64_t>(step));
                Trainer::Gradients g = copying.gradients(data, 1.0);
                copying.apply_gradients(g.grads, 0.01);
                in_place.apply_gradients(in_place.gradients(data, 1.0).grads, 0.01);
            }
            CHECK(same_bits(copying.params(), in_place.params()));
            CHECK(same_bits(copying.optimizer_state(), in_place.optimizer_state()));
        }
}

TEST_CASE("trainer in place: the step donates parameters and state and keeps their memory") {
    for (const std::string backend : {"openmp", "c"}) {
        INFO(backend);
        Trainer copying = make_trainer(backend, false, 1.0);
        Trainer in_place = make_trainer(backend, true, 1.0);
        copying.set_symbolic_batch(false); // c plans memory for a program per batch size
        in_place.set_symbolic_batch(false);
        const std::vector<HostArray> data = batch(7);
        std::optional<ProgramMemory> before = copying.step_memory(data);
        std::optional<ProgramMemory> after = in_place.step_memory(data);
        REQUIRE(before.has_value());
        REQUIRE(after.has_value());
        const std::size_t updated =
            bytes_of(in_place.params()) + bytes_of(in_place.optimizer_state());
        CHECK(before->donated == 0);
        CHECK(after->donated == updated);
        CHECK(after->results + updated == before->results);
        in_place.step(data, 0.01); // the initial parameters are still the test's: copied
        std::vector<const void*> where;
        for (const HostArray& p : in_place.params())
            where.push_back(p.address());
        for (int step = 0; step < 3; ++step) {
            in_place.step(data, 0.01);
            for (std::size_t i = 0; i < where.size(); ++i)
                CHECK(in_place.params()[i].address() == where[i]);
        }
    }
}

TEST_CASE("trainer in place: parameters the caller holds are not changed by a step") {
    for (const std::string backend : {"openmp", "c"}) {
        INFO(backend);
        Trainer in_place = make_trainer(backend, true, 0.0);
        Trainer copying = make_trainer(backend, false, 0.0);
        const std::vector<HostArray> data = batch(9);
        in_place.step(data, 0.01);
        copying.step(data, 0.01);
        const HostArray held = in_place.params()[0]; // shares the trainer's memory
        const std::vector<double> snapshot = held.to_doubles();
        const HostArray held_state = in_place.optimizer_state().back();
        const std::vector<double> state_snapshot = held_state.to_doubles();
        in_place.step(data, 0.01);
        copying.step(data, 0.01);
        CHECK(held.to_doubles() == snapshot);
        CHECK(held_state.to_doubles() == state_snapshot);
        CHECK(in_place.params()[0].address() != held.address());
        CHECK(same_bits(in_place.params(), copying.params()));
        CHECK(same_bits(in_place.optimizer_state(), copying.optimizer_state()));
    }
}
