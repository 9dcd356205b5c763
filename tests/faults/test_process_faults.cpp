// Faults seen through the openmp backend, each in a fresh process (the process-wide JIT reads
// $HEDRA_CXX and $HEDRA_CACHE_DIR once): several processes filling one cache at once (fork), a
// failing or useless external compiler, an unusable cache directory, and a cache whose entries
// were all corrupted between runs. The backend must compute the reference's numbers or throw a
// hedra::Error that names the compiler, never return wrong numbers or crash.
#include "faults/fault_testing.hpp"

#include <cstring>

using namespace hedra;
using namespace hedra::test;

namespace {

constexpr int kPrograms = 4;

// Child body: computes fault_program(0..kPrograms-1) with openmp and checks each against the
// reference. With HEDRA_FAULT_EXPECT_ERROR set, expects a hedra::Error containing it instead.
void compute_and_check() {
    const char* expect = std::getenv("HEDRA_FAULT_EXPECT_ERROR");
    for (int salt = 0; salt < kPrograms; ++salt) {
        CAPTURE(salt);
        Array p = fault_program(salt);
        std::vector<double> want = reference_values(p);
        try {
            HostArray got = compute(p, openmp_options());
            CHECK(expect == nullptr);
            CHECK(close_to(got.to_doubles(), want));
        } catch (const Error& e) {
            INFO(e.what());
            REQUIRE(expect != nullptr);
            CHECK(std::strstr(e.what(), expect) != nullptr);
        }
    }
}

} // namespace

TEST_CASE("faults child: compute and check") {
    if (child_role("compute")) compute_and_check();
}

TEST_CASE("faults: several processes fill one kernel cache at once") {
    fs::path dir = scratch_directory("processes");
    for (int round = 0; round < 2; ++round) { // round 0 writes the entries, round 1 reads them
        CAPTURE(round);
        std::vector<pid_t> children;
        for (int c = 0; c < 4; ++c)
            children.push_back(
                spawn_child("faults child: compute and check", {{"HEDRA_FAULT_ROLE", "compute"},
                                                                {"HEDRA_CACHE_DIR", dir.string()},
                                                                {"HEDRA_NUM_THREADS", "2"}}));
        for (pid_t pid : children)
            CHECK(wait_child(pid) == 0);
        CHECK(leftover_temp_files(dir) == 0);
        CHECK(cache_entries(dir, ".o").size() >= static_cast<std::size_t>(kPrograms));
        CHECK(cache_entries(dir, ".plan").size() >= static_cast<std::size_t>(kPrograms));
    }
    fs::remove_all(dir);
}

TEST_CASE("faults: corrupted entries between runs are recompiled, not trusted") {
    fs::path dir = scratch_directory("corrupted_between_runs");
    std::vector<std::pair<std::string, std::string>> env = {{"HEDRA_FAULT_ROLE", "compute"},
                                                            {"HEDRA_CACHE_DIR", dir.string()}};
    REQUIRE(run_child("faults child: compute and check", env) == 0);
    // Damage every kernel object and every lowered program differently: truncate, flip a
    // payload byte, swap two entries.
    for (const char* extension : {".o", ".plan"}) {
        CAPTURE(extension);
        std::vector<fs::path> entries = cache_entries(dir, extension);
        REQUIRE(!entries.empty());
        for (std::size_t i = 0; i < entries.size(); ++i) {
            std::string bytes = read_bytes(entries[i]);
            if (i % 3 == 0) write_bytes(entries[i], bytes.substr(0, bytes.size() / 3));
            if (i % 3 == 1) {
                bytes[bytes.size() - 5] = static_cast<char>(bytes[bytes.size() - 5] ^ 0x20);
                write_bytes(entries[i], bytes);
            }
        }
        if (entries.size() >= 3) // a valid entry under another program's name
            fs::copy_file(entries[2], entries[0], fs::copy_options::overwrite_existing);
    }
    CHECK(run_child("faults child: compute and check", env) == 0);
    fs::remove_all(dir);
}

TEST_CASE("faults: an unusable cache directory falls back to memory") {
    fs::path dir = scratch_directory("unusable_cache");
    write_bytes(dir / "not_a_directory", "x");
    CHECK(run_child("faults child: compute and check",
                    {{"HEDRA_FAULT_ROLE", "compute"},
                     {"HEDRA_CACHE_DIR", (dir / "not_a_directory").string()}}) == 0);
    CHECK(run_child("faults child: compute and check",
                    {{"HEDRA_FAULT_ROLE", "compute"},
                     {"HEDRA_CACHE_DIR", (dir / "not_a_directory" / "below").string()}}) == 0);
    CHECK(read_bytes(dir / "not_a_directory") == "x");
    fs::remove_all(dir);
}

TEST_CASE("faults: a failing external compiler gives a clear error") {
    fs::path dir = scratch_directory("failing_compiler");
    // Exits with an error.
    CHECK(run_child("faults child: compute and check",
                    {{"HEDRA_FAULT_ROLE", "compute"},
                     {"HEDRA_CACHE_DIR", dir.string()},
                     {"HEDRA_CXX", "/bin/false"},
                     {"HEDRA_FAULT_EXPECT_ERROR", "external compiler '/bin/false'"}}) == 0);
    // Succeeds without writing a library.
    CHECK(run_child("faults child: compute and check",
                    {{"HEDRA_FAULT_ROLE", "compute"},
                     {"HEDRA_CACHE_DIR", dir.string()},
                     {"HEDRA_CXX", "/bin/true"},
                     {"HEDRA_FAULT_EXPECT_ERROR", "'/bin/true'"}}) == 0);
    // Does not exist.
    CHECK(run_child("faults child: compute and check",
                    {{"HEDRA_FAULT_ROLE", "compute"},
                     {"HEDRA_CACHE_DIR", dir.string()},
                     {"HEDRA_CXX", "/nonexistent/c++"},
                     {"HEDRA_FAULT_EXPECT_ERROR", "'/nonexistent/c++'"}}) == 0);
    // Nothing was cached from the failures: the in-process compiler gets the right numbers.
    CHECK(run_child("faults child: compute and check",
                    {{"HEDRA_FAULT_ROLE", "compute"}, {"HEDRA_CACHE_DIR", dir.string()}}) == 0);
    fs::remove_all(dir);
}
