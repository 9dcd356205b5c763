// .npy and .npz reading: files written byte by byte here (several versions and element types;
// zip archives with stored, deflated and zip64 members), malformed cases, and the PyTorch replay
// archive of tests/data/w2a_replay, checked against values read with Python's zipfile and struct
// modules.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>

#include "core/error.hpp"
#include "nn/io/npy_reader.hpp"
#include "nn_test_files.hpp"

using namespace hedra;
using namespace hedra::nn;
using namespace hedra::nn::test;

namespace {

template <class F>
std::string error_of(F f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    FAIL("expected hedra::Error");
    return "";
}

// An .npy file of format `major`.0 with the given header dict and data bytes.
Bytes npy_bytes(const std::string& dict, const Bytes& data, int major = 1) {
    std::size_t prefix = major == 1 ? 10 : 12;
    std::string header = dict;
    while ((prefix + header.size() + 1) % 64 != 0)
        header += ' ';
    header += '\n';
    Bytes b{0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<unsigned char>(major), 0};
    put_le(b, header.size(), major == 1 ? 2 : 4);
    b.insert(b.end(), header.begin(), header.end());
    b.insert(b.end(), data.begin(), data.end());
    return b;
}

template <class T>
Bytes raw_bytes(std::initializer_list<T> values) {
    Bytes b(values.size() * sizeof(T));
    std::memcpy(b.data(), std::data(values), b.size());
    return b;
}

struct ZipEntry {
    std::string name;
    Bytes data;
    bool deflate = false;
    bool zip64_extra = false; // saturate sizes and offset in the central directory
};

// A zip archive as numpy's savez writes one; with `zip64_end` it ends with zip64 records.
Bytes zip_bytes(const std::vector<ZipEntry>& entries, bool zip64_end = false) {
    Bytes out, central;
    for (const ZipEntry& e : entries) {
        Bytes body = e.deflate ? raw_deflate_bytes(e.data) : e.data;
        auto crc =
            static_cast<std::uint32_t>(crc32(0, e.data.data(), static_cast<uInt>(e.data.size())));
        std::size_t offset = out.size();
        put_le(out, 0x04034b50, 4);
        put_le(out, 20, 2);
        put_le(out, 0, 2);
        put_le(out, e.deflate ? 8 : 0, 2);
        put_le(out, 0, 4); // time, date
        put_le(out, crc, 4);
        put_le(out, body.size(), 4);
        put_le(out, e.data.size(), 4);
        put_le(out, e.name.size(), 2);
        put_le(out, 0, 2);
        out.insert(out.end(), e.name.begin(), e.name.end());
        out.insert(out.end(), body.begin(), body.end());

        std::uint64_t saturated = 0xFFFFFFFFu;
        put_le(central, 0x02014b50, 4);
        put_le(central, 45, 2);
        put_le(central, 20, 2);
        put_le(central, 0, 2);
        put_le(central, e.deflate ? 8 : 0, 2);
        put_le(central, 0, 4);
        put_le(central, crc, 4);
        put_le(central, e.zip64_extra ? saturated : body.size(), 4);
        put_le(central, e.zip64_extra ? saturated : e.data.size(), 4);
        put_le(central, e.name.size(), 2);
        put_le(central, e.zip64_extra ? 28 : 0, 2);
        put_le(central, 0, 6); // comment length, disk, internal attributes
        put_le(central, 0, 4); // external attributes
        put_le(central, e.zip64_extra ? saturated : offset, 4);
        central.insert(central.end(), e.name.begin(), e.name.end());
        if (e.zip64_extra) {
            put_le(central, 0x0001, 2);
            put_le(central, 24, 2);
            put_le(central, e.data.size(), 8);
            put_le(central, body.size(), 8);
            put_le(central, offset, 8);
        }
    }
    std::size_t cd_offset = out.size();
    out.insert(out.end(), central.begin(), central.end());
    if (zip64_end) {
        std::size_t eocd64 = out.size();
        put_le(out, 0x06064b50, 4);
        put_le(out, 44, 8);
        put_le(out, 45, 2);
        put_le(out, 45, 2);
        put_le(out, 0, 8); // disk numbers
        put_le(out, entries.size(), 8);
        put_le(out, entries.size(), 8);
        put_le(out, central.size(), 8);
        put_le(out, cd_offset, 8);
        put_le(out, 0x07064b50, 4);
        put_le(out, 0, 4);
        put_le(out, eocd64, 8);
        put_le(out, 1, 4);
    }
    put_le(out, 0x06054b50, 4);
    put_le(out, 0, 4);
    put_le(out, zip64_end ? 0xFFFF : entries.size(), 2);
    put_le(out, zip64_end ? 0xFFFF : entries.size(), 2);
    put_le(out, central.size(), 4);
    put_le(out, zip64_end ? 0xFFFFFFFFu : cd_offset, 4);
    put_le(out, 0, 2);
    return out;
}

const std::string kF4Header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
const Bytes kF4Data = raw_bytes<float>({1.5f, -2.0f, 0.25f, 3.0f, 4.0f, -0.125f});

} // namespace

TEST_CASE("npy files of each supported element type read back") {
    ScratchDir dir("npy_types");
    write_file(dir.file("f4.npy"), npy_bytes(kF4Header, kF4Data));
    write_file(dir.file("f8.npy"), npy_bytes("{'descr': '<f8', 'fortran_order': False, "
                                             "'shape': (2,), }",
                                             raw_bytes<double>({0.1, -1e300}), 2));
    write_file(dir.file("i4.npy"), npy_bytes("{\"descr\": \"<i4\", \"fortran_order\": False, "
                                             "\"shape\": (1, 1, 2)}",
                                             raw_bytes<std::int32_t>({-7, 123456}), 3));
    write_file(dir.file("i8.npy"), npy_bytes("{'descr': '<i8', 'fortran_order': False, "
                                             "'shape': (), }",
                                             raw_bytes<std::int64_t>({-(std::int64_t{1} << 40)})));
    write_file(dir.file("u1.npy"),
               npy_bytes("{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", {0, 7, 255}));
    write_file(dir.file("b1.npy"),
               npy_bytes("{'descr': '|b1', 'fortran_order': True, 'shape': (3,), }", {1, 0, 1}));

    HostArray f4 = read_npy(dir.file("f4.npy"));
    CHECK(f4.dtype() == DType::F32);
    CHECK(f4.sizes() == std::vector<std::int64_t>{2, 3});
    CHECK(f4.at({0, 1}) == -2.0);
    CHECK(f4.at({1, 2}) == -0.125);
    HostArray f8 = read_npy(dir.file("f8.npy"));
    CHECK(f8.values<double>()[0] == 0.1);
    CHECK(f8.values<double>()[1] == -1e300);
    HostArray i4 = read_npy(dir.file("i4.npy"));
    CHECK(i4.sizes() == std::vector<std::int64_t>{1, 1, 2});
    CHECK(i4.values<std::int32_t>()[1] == 123456);
    HostArray i8 = read_npy(dir.file("i8.npy"));
    CHECK(i8.rank() == 0);
    CHECK(i8.values<std::int64_t>()[0] == -(std::int64_t{1} << 40));
    HostArray u1 = read_npy(dir.file("u1.npy"));
    CHECK(u1.dtype() == DType::I32);
    CHECK(u1.values<std::int32_t>()[2] == 255);
    HostArray b1 = read_npy(dir.file("b1.npy"));
    CHECK(b1.dtype() == DType::Bool);
    CHECK(b1.values<bool>()[0]);
    CHECK(!b1.values<bool>()[1]);
}

TEST_CASE("malformed or unsupported npy files throw naming the file") {
    ScratchDir dir("npy_bad");
    Bytes bad_magic = npy_bytes(kF4Header, kF4Data);
    bad_magic[1] = 'X';
    Bytes truncated = npy_bytes(kF4Header, kF4Data);
    truncated.pop_back();
    struct Case {
        std::string name;
        Bytes bytes;
        std::string expected;
    } cases[] = {
        {"magic.npy", bad_magic, "bad magic"},
        {"cut.npy", truncated, "truncated"},
        {"big.npy",
         npy_bytes("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", kF4Data),
         "big-endian"},
        {"fortran.npy",
         npy_bytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", kF4Data),
         "fortran"},
        {"c8.npy", npy_bytes("{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }", kF4Data),
         "unsupported element type '<c8'"},
        {"header.npy", npy_bytes("{'descr': '<f4', 'shape': (2, 3), }", kF4Data), "lacks"},
        {"version.npy", npy_bytes(kF4Header, kF4Data, 4), "version 4.0"},
    };
    for (const Case& c : cases) {
        write_file(dir.file(c.name), c.bytes);
        std::string message = error_of([&] { read_npy(dir.file(c.name)); });
        CAPTURE(message);
        CHECK(message.find("'" + dir.file(c.name) + "'") != std::string::npos);
        CHECK(message.find(c.expected) != std::string::npos);
    }
    CHECK(error_of([&] { read_npy(dir.file("absent.npy")); }).find("no such file") !=
          std::string::npos);
}

TEST_CASE("npz archives with stored, deflated and zip64 members") {
    ScratchDir dir("npz_members");
    Bytes big(5000);
    for (std::size_t i = 0; i < big.size(); ++i)
        big[i] = static_cast<unsigned char>(i % 7);
    Bytes u1 = npy_bytes("{'descr': '|u1', 'fortran_order': False, 'shape': (50, 100), }", big);
    for (bool zip64_end : {false, true}) {
        std::string path = dir.file(zip64_end ? "z64.npz" : "plain.npz");
        write_file(path, zip_bytes({{"w.npy", npy_bytes(kF4Header, kF4Data), false, false},
                                    {"big.npy", u1, true, false},
                                    {"also.npy", npy_bytes(kF4Header, kF4Data), true, true}},
                                   zip64_end));
        auto arrays = read_npz(path);
        REQUIRE(arrays.size() == 3);
        REQUIRE(arrays.count("w"));
        REQUIRE(arrays.count("big"));
        REQUIRE(arrays.count("also"));
        CHECK(arrays["w"].at({1, 0}) == 3.0);
        CHECK(arrays["also"].at({0, 0}) == 1.5);
        CHECK(arrays["big"].sizes() == std::vector<std::int64_t>{50, 100});
        CHECK(arrays["big"].at({49, 99}) == 4999 % 7);
    }
}

TEST_CASE("corrupt npz archives throw naming the file and member") {
    ScratchDir dir("npz_bad");
    Bytes good = zip_bytes({{"w.npy", npy_bytes(kF4Header, kF4Data), true, false}});
    Bytes flipped = good;
    flipped[40] ^= 0xFF; // inside the deflated data
    Bytes stored = zip_bytes({{"w.npy", npy_bytes(kF4Header, kF4Data), false, false}});
    stored[60] ^= 0x01; // inside the stored header text: the crc no longer matches
    write_file(dir.file("flipped.npz"), flipped);
    write_file(dir.file("stored.npz"), stored);
    write_file(dir.file("cut.npz"), Bytes(good.begin(), good.begin() + good.size() / 2));
    write_file(dir.file("text.npz"), Bytes(40, 'x'));
    for (const char* name : {"flipped.npz", "stored.npz"}) {
        std::string message = error_of([&] { read_npz(dir.file(name)); });
        CAPTURE(message);
        CHECK(message.find("'" + dir.file(name) + "'") != std::string::npos);
        CHECK(message.find("'w.npy'") != std::string::npos);
    }
    CHECK(error_of([&] { read_npz(dir.file("cut.npz")); }).find("not a zip archive") !=
          std::string::npos);
    CHECK(error_of([&] { read_npz(dir.file("text.npz")); }).find("not a zip archive") !=
          std::string::npos);
}

TEST_CASE("truncated, bit-flipped and lying npz archives throw hedra::Error") {
    ScratchDir dir("npz_damaged");
    Bytes good = zip_bytes({{"w.npy", npy_bytes(kF4Header, kF4Data), true, false},
                            {"s.npy", npy_bytes(kF4Header, kF4Data), false, true}},
                           true);
    std::string path = dir.file("damaged.npz");
    // Every prefix, and every byte flipped: each read returns arrays or throws hedra::Error.
    auto read_or_error = [&](const Bytes& bytes) {
        write_file(path, bytes);
        try {
            read_npz(path);
        } catch (const Error& e) {
            CHECK(std::string(e.what()).find("'" + path + "'") != std::string::npos);
        }
    };
    for (std::size_t n = 0; n < good.size(); ++n)
        read_or_error(Bytes(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n)));
    for (std::size_t i = 0; i < good.size(); ++i) {
        Bytes flipped = good;
        flipped[i] ^= 0xA5;
        read_or_error(flipped);
    }
    for (std::size_t n : {std::size_t{0}, good.size() / 2, good.size() - 1}) {
        write_file(path, Bytes(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n)));
        CHECK_THROWS_AS(read_npz(path), Error);
    }

    // A member whose directory entry claims far more bytes than its data can inflate to, one
    // with an unsupported method, and an encrypted one: each named in the message.
    Bytes lying = zip_bytes({{"w.npy", npy_bytes(kF4Header, kF4Data), true, false}});
    std::size_t central = 0;
    for (std::size_t i = 0; i + 4 <= lying.size(); ++i)
        if (lying[i] == 0x50 && lying[i + 1] == 0x4b && lying[i + 2] == 1 && lying[i + 3] == 2)
            central = i;
    REQUIRE(central > 0);
    Bytes huge = lying;
    for (std::size_t k = 0; k < 4; ++k)
        huge[central + 24 + k] = 0xFE; // uncompressed size: almost 4 GiB
    write_file(path, huge);
    std::string message = error_of([&] { read_npz(path); });
    CHECK(message.find("member 'w.npy'") != std::string::npos);
    Bytes method = lying;
    method[central + 10] = 12; // bzip2
    write_file(path, method);
    CHECK(error_of([&] { read_npz(path); }).find("compression method 12") != std::string::npos);
    Bytes encrypted = lying;
    encrypted[central + 8] |= 1;
    write_file(path, encrypted);
    CHECK(error_of([&] { read_npz(path); }).find("'w.npy' is encrypted") != std::string::npos);
}

TEST_CASE("the pytorch replay archive of tests/data/w2a_replay") {
    const std::filesystem::path path =
        std::filesystem::path(HEDRA_TEST_DATA_DIR) / "w2a_replay" / "w2a_replay_seed0.npz";
    auto arrays = read_npz(path.string());
    std::vector<std::string> names;
    for (const auto& [name, array] : arrays)
        names.push_back(name);
    CHECK(names == std::vector<std::string>{"first50_step_losses", "init_0.bias", "init_0.weight",
                                            "init_2.bias", "init_2.weight", "init_4.bias",
                                            "init_4.weight", "perm_epoch1"});
    using S = std::vector<std::int64_t>;
    CHECK(arrays["init_0.weight"].sizes() == S{300, 784});
    CHECK(arrays["init_0.bias"].sizes() == S{300});
    CHECK(arrays["init_2.weight"].sizes() == S{100, 300});
    CHECK(arrays["init_2.bias"].sizes() == S{100});
    CHECK(arrays["init_4.weight"].sizes() == S{10, 100});
    CHECK(arrays["init_4.bias"].sizes() == S{10});
    CHECK(arrays["perm_epoch1"].sizes() == S{60000});
    CHECK(arrays["first50_step_losses"].sizes() == S{50});
    CHECK(arrays["init_0.weight"].dtype() == DType::F32);
    CHECK(arrays["perm_epoch1"].dtype() == DType::I64);
    CHECK(arrays["first50_step_losses"].dtype() == DType::F64);

    // Values read with Python's zipfile + struct (numpy was not installed).
    auto w0 = arrays["init_0.weight"].values<float>();
    CHECK(w0[0] == -0.00026738643646240234f);
    CHECK(w0[1] == 0.019158700481057167f);
    CHECK(w0[300 * 784 - 1] == 0.004915356636047363f);
    CHECK(*std::min_element(w0.begin(), w0.end()) == -0.035714175552129745f);
    CHECK(*std::max_element(w0.begin(), w0.end()) == 0.035713788121938705f);
    auto b4 = arrays["init_4.bias"].values<float>();
    CHECK(b4[0] == -0.09227432310581207f);
    CHECK(b4[9] == -0.048564612865448f);
    auto perm = arrays["perm_epoch1"].values<std::int64_t>();
    CHECK(std::vector<std::int64_t>(perm.begin(), perm.begin() + 5) ==
          std::vector<std::int64_t>{36044, 10678, 57327, 55074, 21567});
    CHECK(perm[59999] == 1544);
    std::vector<std::int64_t> sorted(perm.begin(), perm.end());
    std::sort(sorted.begin(), sorted.end());
    bool is_permutation = true;
    for (std::int64_t i = 0; i < 60000; ++i)
        is_permutation &= sorted[i] == i;
    CHECK(is_permutation);
    auto losses = arrays["first50_step_losses"].values<double>();
    CHECK(losses[0] == 2.3108062744140625);
    CHECK(losses[1] == 2.2941203117370605);
    CHECK(losses[49] == 1.2954367399215698);
}
