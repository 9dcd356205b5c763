// Kernels that differ only in their buffers print once (backends/common/shared_kernels.hpp):
// the canonical text, and whole programs whose identical layers share their functions.
#include <doctest/doctest.h>

#include "backends/common/c_renderer.hpp"
#include "backends/common/shared_kernels.hpp"
#include "backends/openmp/lower.hpp"
#include "hedra.hpp"
#include "scheduler/partition.hpp"

using namespace hedra;

namespace {

int count(const std::string& text, const std::string& what) {
    int n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

Array nn_free_softmax(const Array& z) {
    Array e = exp(z - max(z, {1}, true));
    return e / sum(e, {1}, true);
}

} // namespace

TEST_CASE("shared kernels: buffers by position, the kernel's own names by a token") {
    std::string text = "static void k12_p0(long c0, const float* __restrict b7, float* b12) {\n"
                       "    b12[i0] = hd_k12_s3(b7[i0 + 1L]) * 0x1.b5p+0f + b9[0] + k1(b7);\n"
                       "}\nstatic void k12(int hd_nt) { k12_p0(0, b7, b12); }\n";
    std::string c = backend::canonical_kernel_text(text, "k12", {"b7", "b12"}, "KK");
    CHECK(c == "static void KK_p0(long c0, const float* __restrict a0, float* a1) {\n"
               "    a1[i0] = hd_KK_s3(a0[i0 + 1L]) * 0x1.b5p+0f + b9[0] + k1(a0);\n"
               "}\nstatic void KK(int hd_nt) { KK_p0(0, a0, a1); }\n");
    // The same kernel over other buffers has the same canonical text.
    std::string other = text;
    for (auto [from, to] :
         {std::pair<std::string, std::string>{"b12", "b40"}, {"b7", "b31"}, {"k12", "k77"}})
        for (std::size_t at = other.find(from); at != std::string::npos; at = other.find(from))
            other.replace(at, from.size(), to);
    CHECK(backend::canonical_kernel_text(other, "k77", {"b31", "b40"}, "KK") == c);
}

TEST_CASE("shared kernels: identical layers print one function, called once per layer") {
    const std::int64_t n = 48;
    Array x = placeholder(Shape::of({n, n}), DType::F32, "x");
    std::vector<Array> inputs{x}, ws;
    Array h = x;
    for (int l = 0; l < 4; ++l) {
        ws.push_back(placeholder(Shape::of({n, n}), DType::F32, "w" + std::to_string(l)));
        inputs.push_back(ws.back());
        h = tanh(matmul(h, ws.back()));
    }
    std::vector<NodePtr> nodes;
    for (const Array& a : inputs)
        nodes.push_back(a.node());
    poly::ProgramIR ir = sched::partition({h.node()}, nodes);
    std::string code = backend::lower(ir, {}).source;
    std::string entry = code.substr(code.find("extern \"C\" void hedra_program"));
    CAPTURE(entry);
    // The middle layers (a temporary in, a temporary out) are one function, called twice.
    int defined = count(code, "(int hd_nt, ");
    int calls = count(entry, "(hd_nt, ");
    CHECK(calls == static_cast<int>(ir.kernels.size()));
    CHECK(defined < calls);
    // And each layer computes with its own buffers.
    std::vector<HostArray> values;
    for (int k = 0; k < 5; ++k) {
        std::vector<float> v(static_cast<std::size_t>(n * n));
        for (std::int64_t i = 0; i < n * n; ++i)
            v[static_cast<std::size_t>(i)] = float((i * (k + 3)) % 7) * 0.1f - 0.3f;
        values.push_back(HostArray::from(v, std::vector<std::int64_t>{n, n}));
    }
    ComputeOptions reference;
    reference.backend = "reference";
    HostArray want = compile({h}, inputs, reference)(values)[0];
    HostArray got = compile({h}, inputs)(values)[0];
    for (std::int64_t i = 0; i < n * n; ++i)
        CHECK(got.flat(i) == doctest::Approx(want.flat(i)).epsilon(1e-5));
}

TEST_CASE("translation units: the kernels of a larger program compile as several units") {
    const std::int64_t n = 40;
    Array x = placeholder(Shape::of({n, n}), DType::F32, "x");
    Array w = placeholder(Shape::of({n, n}), DType::F32, "w");
    // Several different kernels: a contraction, a row softmax, column sums, a transpose.
    std::vector<Array> outputs = {nn_free_softmax(matmul(x, w)), sum(tanh(x), {0}),
                                  transpose(w) * 2.0f, max(x * w, {1})};
    std::vector<NodePtr> outs, ins{x.node(), w.node()};
    for (const Array& a : outputs)
        outs.push_back(a.node());
    poly::ProgramIR ir = sched::partition(outs, ins);
    backend::LowerOptions lower;
    lower.units = 2;
    std::string code = backend::lower(ir, lower).source;
    CHECK(count(code, backend::kTranslationUnitMarker) == 2);
    // The JIT compiles the units in parallel and links them into one program.
    std::vector<float> xv(n * n), wv(n * n);
    for (std::int64_t i = 0; i < n * n; ++i) {
        xv[i] = float(i % 11) * 0.1f - 0.5f;
        wv[i] = float(i % 13) * 0.05f - 0.3f;
    }
    std::vector<HostArray> values = {HostArray::from(xv, std::vector<std::int64_t>{n, n}),
                                     HostArray::from(wv, std::vector<std::int64_t>{n, n})};
    ComputeOptions reference;
    reference.backend = "reference";
    std::vector<HostArray> want = compile(outputs, {x, w}, reference)(values);
    std::vector<HostArray> got = compile(outputs, {x, w})(values);
    for (std::size_t k = 0; k < want.size(); ++k)
        for (std::int64_t i = 0; i < want[k].size(); ++i)
            CHECK(got[k].flat(i) == doctest::Approx(want[k].flat(i)).epsilon(1e-5));
}

TEST_CASE("shared kernels: isl runs once per kernel structure, not once per layer") {
    // A stack of L identical layers: the kernels that go through isl do not grow with L (each
    // further layer's kernels take an earlier one's AST). (Every compiled program in the other
    // tests runs with this reuse, against the reference.)
    auto stack = [](int layers) {
        const std::int64_t n = 40;
        Array x = placeholder(Shape::of({n, n}), DType::F32, "x");
        std::vector<NodePtr> inputs{x.node()};
        Array h = x;
        for (int l = 0; l < layers; ++l) {
            Array w = placeholder(Shape::of({n, n}), DType::F32, "w" + std::to_string(l));
            inputs.push_back(w.node());
            h = tanh(matmul(h, w));
        }
        poly::ProgramIR ir = sched::partition({sum(h * h).node()}, inputs);
        backend::LoweredProgram lowered = backend::lower(ir, {});
        return std::pair{static_cast<int>(ir.kernels.size()), lowered.reused};
    };
    auto [k3, reused3] = stack(3);
    auto [k7, reused7] = stack(7);
    CHECK(k7 > k3);
    CHECK(reused7 > reused3);
    CHECK(k7 - reused7 == k3 - reused3); // the kernels scheduled by isl
}
