// safetensors (nn/io/safetensors.hpp): arrays of every dtype round-trip with their metadata; the
// bytes follow the format as read here by hand (length, JSON header, padding, raw data), down
// to the exact header the safetensors library writes for one tensor; truncated files and
// malformed headers throw errors naming the file and the fault.
#include "nn/io/safetensors.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "nn_test_files.hpp"

using namespace hedra;
using namespace hedra::nn;
using namespace hedra::nn::test;

namespace {

std::vector<HostArray> sample_arrays() {
    return {HostArray::from<float>({1.5f, -2.25f, 3.0f, 1e-30f, -0.0f, 7.0f}, {2, 3}),
            HostArray::from<std::int64_t>({-1, 0, std::int64_t(1) << 40}, {3}),
            HostArray::from<double>({3.141592653589793}, {}),
            HostArray::from<std::int32_t>({}, {0, 4}),
            HostArray::from<bool>({true, false, true}, {3})};
}
// An empty array's raw() is null, which memcmp may not take even for 0 bytes.
bool same_bytes(const void* a, const void* b, std::size_t bytes) {
    return bytes == 0 || std::memcmp(a, b, bytes) == 0;
}

const std::vector<std::string> kNames = {"w.weight", "tokens", "pi", "empty", "mask"};

std::uint64_t header_length(const Bytes& b) {
    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i)
        n = n << 8 | b[static_cast<std::size_t>(i)];
    return n;
}

Bytes with_header(const std::string& header, const Bytes& data = {}) {
    Bytes b;
    put_le(b, header.size(), 8);
    b.insert(b.end(), header.begin(), header.end());
    b.insert(b.end(), data.begin(), data.end());
    return b;
}

} // namespace

TEST_CASE("nn safetensors: f32, i64, f64, i32 and bool arrays and metadata round-trip") {
    ScratchDir dir("safetensors_roundtrip");
    const std::vector<HostArray> arrays = sample_arrays();
    save_safetensors(dir.file("a.safetensors"), kNames, arrays, {{"step", "5"}, {"format", "pt"}});
    SafetensorsFile f = load_safetensors(dir.file("a.safetensors"));
    CHECK(f.names == kNames);
    REQUIRE(f.arrays.size() == arrays.size());
    for (std::size_t i = 0; i < arrays.size(); ++i) {
        INFO(kNames[i]);
        CHECK(f.arrays[i].dtype() == arrays[i].dtype());
        CHECK(f.arrays[i].sizes() == arrays[i].sizes());
        CHECK(same_bytes(f.arrays[i].raw(), arrays[i].raw(), arrays[i].bytes()));
    }
    CHECK(f.metadata == std::map<std::string, std::string>{{"format", "pt"}, {"step", "5"}});
    CHECK_FALSE(std::filesystem::exists(dir.file("a.safetensors.tmp")));
}

TEST_CASE("nn safetensors: the bytes follow the format") {
    const std::vector<HostArray> arrays = sample_arrays();
    const Bytes b = safetensors_bytes(kNames, arrays, {{"step", "5"}});
    const std::uint64_t n = header_length(b);
    CHECK(n % 8 == 0);
    REQUIRE(8 + n <= b.size());
    const std::string text(b.begin() + 8, b.begin() + 8 + static_cast<long>(n));
    CHECK(text.front() == '{');
    const nlohmann::json h = nlohmann::json::parse(text);
    CHECK(h["__metadata__"] == nlohmann::json{{"step", "5"}});
    const std::vector<std::string> dtypes = {"F32", "I64", "F64", "I32", "BOOL"};
    std::uint64_t offset = 0;
    for (std::size_t i = 0; i < kNames.size(); ++i) {
        INFO(kNames[i]);
        const nlohmann::json& e = h[kNames[i]];
        CHECK(e["dtype"] == dtypes[i]);
        CHECK(e["shape"].get<std::vector<std::int64_t>>() == arrays[i].sizes());
        const auto offsets = e["data_offsets"].get<std::vector<std::uint64_t>>();
        CHECK(offsets == std::vector<std::uint64_t>{offset, offset + arrays[i].bytes()});
        CHECK(same_bytes(b.data() + 8 + n + offset, arrays[i].raw(), arrays[i].bytes()));
        offset += arrays[i].bytes();
    }
    CHECK(b.size() == 8 + n + offset);
    // One tensor: the exact header of Python's safetensors.torch.save_file({"a": tensor([1.,
    // -2.])}).
    const Bytes one = safetensors_bytes({"a"}, {HostArray::from<float>({1.0f, -2.0f}, {2})});
    const std::string expect = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
    CHECK(header_length(one) == 56);
    CHECK(std::string(one.begin() + 8, one.begin() + 64) ==
          expect + std::string(56 - expect.size(), ' '));
    CHECK(one.size() == 72);
    CHECK(one[64 + 3] == 0x3f); // 1.0f little-endian: 00 00 80 3f
    CHECK(one[71] == 0xc0);     // -2.0f: 00 00 00 c0
}

TEST_CASE("nn safetensors: truncated files and bad headers throw") {
    ScratchDir dir("safetensors_errors");
    const Bytes good = safetensors_bytes({"a"}, {HostArray::from<double>({1, 2, 3}, {3})});
    auto fails = [&](const Bytes& bytes, const std::string& message) {
        INFO(message);
        write_file(dir.file("bad.safetensors"), bytes);
        CHECK_THROWS_WITH_AS(load_safetensors(dir.file("bad.safetensors")),
                             doctest::Contains(message.c_str()), Error);
    };
    fails(Bytes(good.begin(), good.end() - 1), "outside the 23 data bytes (a truncated file?)");
    fails(Bytes(good.begin(), good.begin() + 40), "truncated: the header length is");
    fails(Bytes(good.begin(), good.begin() + 5), "fewer than the 8-byte header length");
    fails(with_header("{\"a\": {\"dtype\": \"F32\""), "malformed JSON header");
    fails(with_header("[1, 2]"), "the header is not a JSON object");
    fails(with_header(R"({"a": {"dtype": "F8_E4M3", "shape": [1], "data_offsets": [0, 1]}})", {0}),
          "dtype 'F8_E4M3', which hedra does not read");
    fails(with_header(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}})",
                      {0, 0, 0, 0}),
          "holds 4 bytes, its dtype and shape need 8");
    fails(with_header(R"({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}})"),
          "shape entries must be a non-negative integer");
    fails(with_header(R"({"a": {"dtype": "F32"}})"), "needs \"dtype\"");
    fails(with_header(R"({"__metadata__": {"step": 5}})"), "metadata 'step' is not a string");
    CHECK_THROWS_WITH_AS(load_safetensors(dir.file("missing.safetensors")),
                         doctest::Contains("missing.safetensors"), Error);
    CHECK_THROWS_WITH_AS(
        safetensors_bytes({"a", "a"}, {HostArray({1}, DType::F32), HostArray({1}, DType::F32)}),
        doctest::Contains("'a' appears twice"), Error);
    CHECK_THROWS_WITH_AS(safetensors_bytes({"a"}, {}), doctest::Contains("1 names for 0 arrays"),
                         Error);
}
