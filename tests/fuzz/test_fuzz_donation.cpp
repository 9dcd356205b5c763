// Input donation on random programs (CompileOptions::donate, scheduler/donate_inputs.hpp):
// every placeholder donated, the openmp program's results equal the undonated program's bit
// for bit, whatever the donate-inputs pass folded or kept (transposes, shifts, reductions,
// fuses, later reads of a donated input), and the inputs the caller holds stay unchanged.
#include <doctest/doctest.h>

#include <cstring>

#include "fuzz/lib/fuzz_generator.hpp"
#include "fuzz/lib/fuzz_program.hpp"
#include "hedra.hpp"

using namespace hedra;
using namespace hedra::fuzz;

namespace {

// A copy of `a` in memory of its own, which a program may take.
HostArray own_copy(const HostArray& a) {
    HostArray c(a.sizes(), a.dtype());
    std::memcpy(c.raw_mutable(), a.raw(), a.bytes());
    return c;
}

bool same_bits(const HostArray& a, const HostArray& b) {
    return a.sizes() == b.sizes() && a.dtype() == b.dtype() &&
           std::memcmp(a.raw(), b.raw(), a.bytes()) == 0;
}

} // namespace

TEST_CASE("fuzz: donated placeholders, openmp in place vs openmp with buffers of its own") {
    int programs = 0, donating = 0;
    GeneratorOptions options;
    options.placeholder_probability = 0.8; // most data read as inputs, each donated
    for (std::uint64_t seed = 1; seed <= 160; ++seed) {
        FuzzProgram p = generate(seed, options).program;
        std::optional<BuiltProgram> b;
        try {
            b = build(p);
        } catch (const Error&) {
            continue;
        }
        if (b->placeholders.empty()) continue;
        ComputeOptions plain, donated;
        plain.backend = donated.backend = "openmp";
        for (std::size_t i = 0; i < b->placeholders.size(); ++i)
            donated.donate.push_back(static_cast<int>(i));
        std::optional<CompiledProgram> want_p, got_p;
        try {
            want_p = compile(b->outputs, b->placeholders, plain);
        } catch (const Error&) {
            continue;
        }
        INFO("fuzz seed " << seed);
        got_p = compile(b->outputs, b->placeholders, donated);
        ++programs;
        donating += got_p->memory()->donated > 0;
        std::vector<HostArray> want = (*want_p)(b->inputs);
        std::vector<HostArray> given;
        for (const HostArray& in : b->inputs)
            given.push_back(own_copy(in));
        std::vector<HostArray> got = (*got_p)(std::move(given));
        REQUIRE(got.size() == want.size());
        for (std::size_t o = 0; o < want.size(); ++o)
            CHECK_MESSAGE(same_bits(got[o], want[o]), "output " << o);
        // Held by the caller: copied, and the inputs unchanged.
        std::vector<HostArray> again = (*got_p)(b->inputs);
        for (std::size_t o = 0; o < want.size(); ++o)
            CHECK_MESSAGE(same_bits(again[o], want[o]), "output " << o << " (inputs held)");
        std::vector<HostArray> twice = (*want_p)(b->inputs);
        for (std::size_t o = 0; o < want.size(); ++o)
            CHECK(same_bits(twice[o], want[o]));
    }
    MESSAGE(donating << " of " << programs << " programs wrote an output in place");
    CHECK(programs >= 50);
    CHECK(donating >= 5);
}
