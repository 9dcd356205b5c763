// NVRTC through dlopen: a kernel compiles to PTX, a broken one gives a hedra::Error with
// NVRTC's log and the path of the saved source, compiled images come back from the cache, and
// the cache keys' SHA-256 matches the FIPS 180-4 test vectors.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "backends/common/hash.hpp"
#include "cuda/cuda_testing.hpp"

using namespace hedra;
using backend::cuda::Nvrtc;

TEST_CASE("cuda: sha256 of the FIPS 180-4 test vectors") {
    using backend::sha256_hex;
    CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    CHECK(sha256_hex(std::string(1000000, 'a')) ==
          "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("cuda: nvrtc compiles a kernel to PTX and caches it") {
    if (test::skip_without_nvrtc()) return;
    Nvrtc& nvrtc = Nvrtc::instance();
    CHECK(nvrtc.major >= 11);
    std::string source = "extern \"C\" __global__ void hd_scale(float* x, long n) {\n"
                         "    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;\n"
                         "    if (i < n) x[i] = 2.0f * x[i] + (float)" +
                         std::to_string(std::rand()) + ";\n}\n";
    backend::cuda::NvrtcImage first = nvrtc.compile(source, "compute_80");
    CHECK_FALSE(first.cubin);
    CHECK(first.image.find(".entry hd_scale") != std::string::npos);
    CHECK(first.image.find(".target sm_80") != std::string::npos);
    backend::cuda::NvrtcImage again = nvrtc.compile(source, "compute_80");
    CHECK(again.from_cache);
    CHECK(again.image == first.image);
    CHECK(again.key == first.key);
    CHECK(nvrtc.compile(source, "compute_90").key != first.key);
}

TEST_CASE("cuda: nvrtc errors carry the log and the saved source") {
    if (test::skip_without_nvrtc()) return;
    std::string source =
        "extern \"C\" __global__ void broken(float* x) { x[0] = undefined_name; }\n";
    try {
        Nvrtc::instance().compile(source, "compute_90");
        FAIL("no error");
    } catch (const Error& e) {
        std::string m = e.what();
        CHECK(m.find("nvrtc: cannot compile") != std::string::npos);
        CHECK(m.find("undefined_name") != std::string::npos);
        std::size_t at = m.find("source saved to ");
        REQUIRE(at != std::string::npos);
        std::string path = m.substr(at + 16, m.find('\n', at) - at - 16);
        std::stringstream saved;
        saved << std::ifstream(path).rdbuf();
        CHECK(saved.str() == source);
    }
}
