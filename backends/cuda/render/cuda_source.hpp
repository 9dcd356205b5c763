// cuda_source: the pieces every CUDA kernel template prints. Scalar expressions go through the
// openmp backend's C expression printer (backends/common/c_expr.hpp), so both backends share the
// exact per-dtype semantics; what differs for CUDA is a small table of overrides in the prelude
// (the `__builtin_` math names c_expr prints, mapped to CUDA's device functions under NVRTC)
// and the kernel signatures. NVRTC runs with -default-device, so the prelude's helpers
// (static inline, unannotated) become device functions.
// Statement counters are always named i0, i1, ... (`const long`), as in the C printer.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "backends/cuda/render/cuda_lower.hpp"
#include "polyhedral/kernel_ir.hpp"

namespace hedra::backend::cuda {

// What one lowering pass accumulates: kernel functions, launches and scratch buffers.
struct SourceBuilder {
    const poly::ProgramIR& program;
    std::string functions;
    std::vector<CudaLaunch> launches;
    std::vector<ScratchBuffer> scratch;

    // A fresh __global__ name for kernel `k`: "k3_0", "k3_1", ...
    std::string next_name(int kernel);
    // Adds a scratch buffer; returns its argument index (program.buffers.size() + s).
    int add_scratch(DType dtype, std::int64_t elements);
    DType buffer_dtype(int buffer) const;
    std::string buffer_name(int buffer) const;
    const std::vector<std::int64_t>& buffer_sizes(int buffer) const;
};

// The buffers a launch touches, in index order, and which of them it writes.
struct KernelParams {
    std::vector<int> buffers;
    std::vector<bool> written;
    void add(int buffer, bool write);
    // "float* __restrict__ b2, const float* __restrict__ b0"
    std::string declaration(const SourceBuilder& b) const;
};
KernelParams statement_params(const poly::Statement& st);

// `extern "C" __global__ void __launch_bounds__(n[, min_blocks]) name(params) {` + body + `}`,
// plus a host trampoline name_emu(void**) under HEDRA_CUDA_EMULATION (used by the CPU emulator
// in tests). min_blocks > 0 asks ptxas to fit that many blocks per multiprocessor.
void emit_kernel(SourceBuilder& b, const std::string& name, const KernelParams& params,
                 int max_threads, const std::string& body, int min_blocks = 0);

std::string int_text(std::int64_t v); // "42L", "(-3L)"; "42", "(-3)" under an Index32Scope
// The C type of index arithmetic: "long", or "int" under an Index32Scope.
const char* index_type();

// While alive, index arithmetic printed on this thread (int_text, index_type, print_unflatten)
// is 32-bit: for a kernel whose every buffer and counter range fits in int (fewer registers:
// addresses and counters take one each instead of two).
class Index32Scope {
public:
    explicit Index32Scope(bool on);
    ~Index32Scope();
    Index32Scope(const Index32Scope&) = delete;
    Index32Scope& operator=(const Index32Scope&) = delete;

private:
    bool saved_;
};

// Row-major linear index of buffer `buffer` at access(i0, i1, ...).
std::string linear_index(const SourceBuilder& b, int buffer, const AffineMap& access);
// `b3[index]`, a bool buffer read as (b3[index] != 0).
std::string load(const SourceBuilder& b, int buffer, const AffineMap& access);
// The value of read k when it is the index expression itself (Read::buffer == -1).
std::string index_read(const poly::Read& read, DType t);

// Prints st.value at counters i0.. as const locals; `override_read(k)` may return the C
// expression of read k (e.g. a shared-memory element), or "" for the default global load.
// The values of a statement with tuple_writes: st.value's first, then each write's, every one
// computed (from the same reads) before the caller stores any.
std::vector<std::string>
print_tuple_values(const SourceBuilder& b, const poly::Statement& st, const std::string& indent,
                   const std::string& prefix, std::string& out,
                   const std::function<std::string(int)>& override_read = {});
std::string print_value(const SourceBuilder& b, const poly::Statement& st,
                        const std::string& indent, const std::string& prefix, std::string& out,
                        const std::function<std::string(int)>& override_read = {});

// combine(acc, value) of an Update statement (custom combiners printed as locals).
std::string print_combine(const poly::Statement& st, DType t, const std::string& acc,
                          const std::string& value, const std::string& indent,
                          const std::string& prefix, std::string& out);

// The fold step `acc = combine(acc, value of st)` as statements; a float sum of a product
// becomes one fused multiply-add (reductions are compared with tolerances anyway).
void print_fold(const SourceBuilder& b, const poly::Statement& st, const std::string& acc,
                const std::string& indent, const std::string& prefix, std::string& out,
                const std::function<std::string(int)>& override_read = {});

// The value stored into a buffer of dtype t ("(unsigned char)x" for bool).
std::string store_value(DType t, const std::string& value);
// The identity of a built-in reduction op as a literal of dtype t.
std::string identity_literal(ReduceOp op, DType t);

// Declares counters[d] (names) from the flat index `flat` over `extents`, last fastest.
void print_unflatten(const std::string& flat, const std::vector<std::int64_t>& extents,
                     const std::vector<std::string>& counters, const std::string& indent,
                     std::string& out);

std::int64_t product(const std::vector<std::int64_t>& v);
std::int64_t ceil_div(std::int64_t a, std::int64_t b);

// Macros and helpers printed once at the top of every CUDA program.
const std::string& cuda_prelude();

} // namespace hedra::backend::cuda
