// Faults in the on-disk kernel cache, in process: entries truncated, corrupted in their header
// or payload, emptied, swapped with another kernel's entry, replaced by a directory, or holding
// a well-formed entry whose object is garbage; a cache directory that cannot be created. In
// every case the compiler must recover (recompile, keep entries in memory) and the kernel must
// compute the right value: never a wrong number from a bad entry.
#include "faults/fault_testing.hpp"

#include "backends/common/kernel_cache.hpp"
#include "backends/openmp/jit_compiler.hpp"

using namespace hedra;
using namespace hedra::backend;
using namespace hedra::test;

namespace {

// Kernel `n` returns n * 1000 + 7: two kernels never share an entry or a value.
std::string kernel(int n) {
    return "extern \"C\" long long hedra_fault_kernel() { return " + std::to_string(n) +
           "LL * 1000 + 7; }\n";
}

long long run_kernel(JitCompiler& jit, int n) {
    return jit.compile(kernel(n))->function<long long()>("hedra_fault_kernel")();
}

// A compiler over `dir` (a fresh engine: nothing cached in memory).
std::unique_ptr<JitCompiler> compiler(const fs::path& dir) {
    JitOptions o;
    o.cache_directory = dir;
    return std::make_unique<JitCompiler>(o);
}

// Compiles kernel n into a fresh cache and returns the path of its entry.
fs::path populated_entry(const fs::path& dir, int n) {
    auto jit = compiler(dir);
    CHECK(run_kernel(*jit, n) == n * 1000 + 7);
    fs::path entry =
        jit->cache().entry_path(jit->cache_key(kernel(n), JitCompiler::default_flags()));
    REQUIRE(fs::exists(entry));
    return entry;
}

// A fresh compiler over the damaged cache: right value, damage counted, entry repaired.
void check_recovers(const fs::path& dir, const fs::path& entry, int n, bool counts_corrupt) {
    auto jit = compiler(dir);
    CHECK(run_kernel(*jit, n) == n * 1000 + 7);
    CacheStats s = jit->cache_stats();
    if (counts_corrupt) CHECK(s.corrupt == 1);
    CHECK(s.hits == 0);
    CHECK(leftover_temp_files(dir) == 0);
    auto again = compiler(dir); // the rewritten entry is valid and used
    CHECK(run_kernel(*again, n) == n * 1000 + 7);
    CHECK(again->cache_stats().hits == 1);
    CHECK(fs::is_regular_file(entry));
}

} // namespace

TEST_CASE("faults: a truncated cache entry is recompiled") {
    fs::path dir = scratch_directory("truncated");
    fs::path entry = populated_entry(dir, 1);
    std::string bytes = read_bytes(entry);
    for (std::size_t keep : {bytes.size() - 1, bytes.size() / 2, std::size_t{20}, std::size_t{3}}) {
        CAPTURE(keep);
        write_bytes(entry, bytes.substr(0, keep));
        check_recovers(dir, entry, 1, true);
    }
    write_bytes(entry, "");
    check_recovers(dir, entry, 1, true);
    fs::remove_all(dir);
}

TEST_CASE("faults: corrupted cache entries are rejected") {
    fs::path dir = scratch_directory("corrupted");
    fs::path entry = populated_entry(dir, 2);
    const std::string good = read_bytes(entry);
    // One flipped byte in the magic, the version, the key, the sizes, the checksum and the
    // payload (start, middle, end).
    for (std::size_t at : {std::size_t{0}, std::size_t{9}, std::size_t{30}, std::size_t{90},
                           good.size() / 2, good.size() - 1}) {
        CAPTURE(at);
        std::string bad = good;
        bad[at] = static_cast<char>(bad[at] ^ 0x5a);
        write_bytes(entry, bad);
        check_recovers(dir, entry, 2, true);
    }
    // Trailing bytes after a complete entry.
    write_bytes(entry, good + "junk");
    check_recovers(dir, entry, 2, true);
    fs::remove_all(dir);
}

TEST_CASE("faults: another kernel's entry under this key is not trusted") {
    fs::path dir = scratch_directory("swapped");
    fs::path a = populated_entry(dir, 3), b = populated_entry(dir, 4);
    fs::copy_file(b, a, fs::copy_options::overwrite_existing); // kernel 4 stored as kernel 3
    check_recovers(dir, a, 3, true);
    auto jit = compiler(dir);
    CHECK(run_kernel(*jit, 4) == 4007);
    fs::remove_all(dir);
}

TEST_CASE("faults: a well-formed entry holding a broken object is recompiled") {
    fs::path dir = scratch_directory("garbage_object");
    auto jit = compiler(dir);
    std::string key = jit->cache_key(kernel(5), JitCompiler::default_flags());
    write_bytes(jit->cache().entry_path(key),
                encode_cache_entry(key, "\x7f"
                                        "ELF this is not an object file"));
    CHECK(run_kernel(*jit, 5) == 5007);
    auto again = compiler(dir);
    CHECK(run_kernel(*again, 5) == 5007);
    fs::remove_all(dir);
}

TEST_CASE("faults: an entry path taken by a directory") {
    fs::path dir = scratch_directory("entry_is_dir");
    auto jit = compiler(dir);
    std::string key = jit->cache_key(kernel(6), JitCompiler::default_flags());
    fs::create_directories(jit->cache().entry_path(key) / "inner");
    CHECK(run_kernel(*jit, 6) == 6007);
    CHECK(jit->cache_stats().store_failures == 1); // kept in memory instead
    CHECK(run_kernel(*jit, 6) == 6007);
    CHECK(leftover_temp_files(dir) == 0);
    fs::remove_all(dir);
}

TEST_CASE("faults: a cache directory that cannot be created") {
    fs::path dir = scratch_directory("unwritable");
    write_bytes(dir / "file", "a regular file, not a directory");
    JitOptions o;
    o.cache_directory = dir / "file" / "cache"; // below a regular file: cannot exist
    JitCompiler jit(o);
    CHECK(run_kernel(jit, 7) == 7007);
    CHECK(run_kernel(jit, 7) == 7007); // from memory
    CacheStats s = jit.cache_stats();
    CHECK(s.store_failures == 1);
    CHECK(s.hits == 1);
    CHECK_FALSE(jit.cache().persistent());
    CHECK(jit.cache().scratch_directory() == fs::temp_directory_path());
    // A failing kernel's source goes to the scratch directory, which exists.
    try {
        jit.compile("this is not C++");
        FAIL("expected hedra::Error");
    } catch (const Error& e) {
        std::string m = e.what();
        CHECK(m.find("source saved to " + fs::temp_directory_path().string()) != std::string::npos);
    }
    fs::remove_all(dir);
}

TEST_CASE("faults: decode_cache_entry rejects every truncation and single-byte change") {
    std::string key(64, 'k');
    std::string object = "object bytes \x01\x02\x03 with a tail";
    std::string entry = encode_cache_entry(key, object);
    REQUIRE(decode_cache_entry(key, entry) == object);
    CHECK_FALSE(decode_cache_entry(std::string(64, 'j'), entry));
    for (std::size_t n = 0; n < entry.size(); ++n)
        CHECK_FALSE(decode_cache_entry(key, entry.substr(0, n)));
    for (std::size_t i = 0; i < entry.size(); ++i) {
        std::string bad = entry;
        bad[i] = static_cast<char>(bad[i] ^ 1);
        CHECK_FALSE(decode_cache_entry(key, bad));
    }
}
