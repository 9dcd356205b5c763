// HostArray: allocation, typed and untyped access with conversions, bounds and type errors,
// sharing between copies, borrowed memory, printing, and deferred contents (device results).
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>

#include "core/host_array.hpp"
#include "expect_error.hpp"

using namespace hedra;

TEST_CASE("zero-filled arrays") {
    HostArray a({2, 3}, DType::F64);
    CHECK(a.rank() == 2);
    CHECK(a.size() == 6);
    CHECK(a.bytes() == 48);
    CHECK(a.dtype() == DType::F64);
    CHECK(a.sizes() == std::vector<std::int64_t>{2, 3});
    CHECK(reinterpret_cast<std::uintptr_t>(a.raw()) % 64 == 0);
    for (double v : a.to_doubles())
        CHECK(v == 0.0);

    HostArray scalar(std::vector<std::int64_t>{}, DType::I32);
    CHECK(scalar.size() == 1);
    CHECK(scalar.at({}) == 0.0);
    HostArray empty({0, 4}, DType::F32);
    CHECK(empty.size() == 0);
    CHECK(empty.raw() != nullptr);
    CHECK(empty.to_doubles().empty());
    CHECK(HostArray().to_string() == "f32 () <no data>");
    CHECK_ERROR(HostArray().flat(0), "no data");
}

TEST_CASE("from() and typed access") {
    HostArray f = HostArray::from<float>({1.5f, -2, 3, 4, 5, 6}, {2, 3});
    CHECK(f.dtype() == DType::F32);
    CHECK(f.values<float>()[1] == -2.0f);
    CHECK(f.at({1, 2}) == 6.0);
    CHECK(f.at({0, 0}) == 1.5);
    CHECK(f.flat(4) == 5.0);

    HostArray i = HostArray::from<std::int64_t>({1, -2, std::int64_t{1} << 40}, {3});
    CHECK(i.dtype() == DType::I64);
    CHECK(i.flat(2) == 1099511627776.0);

    HostArray b = HostArray::from<bool>({true, false, true, true}, {2, 2});
    CHECK(b.dtype() == DType::Bool);
    CHECK(b.bytes() == 4);
    CHECK(b.values<bool>()[0]);
    CHECK_FALSE(b.values<bool>()[1]);
    CHECK(b.to_doubles() == std::vector<double>{1, 0, 1, 1});

    HostArray n = HostArray::from<std::int32_t>({7, 8}, {2});
    n.mutable_values<std::int32_t>()[1] = -9;
    CHECK(n.at({1}) == -9.0);
}

TEST_CASE("set_flat converts like a C++ cast") {
    HostArray i({4}, DType::I32);
    i.set_flat(0, 2.7);
    i.set_flat(1, -2.7);
    i.set_flat(2, std::nan(""));
    i.set_flat(3, 1e12);
    CHECK(i.values<std::int32_t>()[0] == 2);
    CHECK(i.values<std::int32_t>()[1] == -2);
    CHECK(i.values<std::int32_t>()[2] == 0);
    CHECK(i.values<std::int32_t>()[3] == 0);

    HostArray b({3}, DType::Bool);
    b.set_flat(0, 0.5);
    b.set_flat(1, 0.0);
    b.set_flat(2, -3);
    CHECK(b.to_doubles() == std::vector<double>{1, 0, 1});

    HostArray f({1}, DType::F32);
    f.set_flat(0, 0.1);
    CHECK(f.values<float>()[0] == 0.1f);
    HostArray d({1}, DType::F64);
    d.set_flat(0, 0.1);
    CHECK(d.values<double>()[0] == 0.1);
    HostArray l({1}, DType::I64);
    l.set_flat(0, -4e15);
    CHECK(l.values<std::int64_t>()[0] == -4000000000000000LL);
}

TEST_CASE("copies share the buffer; borrowed memory is not copied") {
    HostArray a({3}, DType::F32);
    HostArray b = a;
    a.set_flat(1, 5);
    CHECK(b.flat(1) == 5.0);
    CHECK(a.raw() == b.raw());

    std::vector<double> mine{1, 2, 3, 4};
    HostArray borrowed({2, 2}, DType::F64, nullptr, mine.data());
    CHECK(borrowed.raw() == mine.data());
    CHECK(borrowed.at({1, 0}) == 3.0);
    mine[3] = 40;
    CHECK(borrowed.at({1, 1}) == 40.0);

    auto owned = std::make_shared<std::vector<std::int32_t>>(std::vector<std::int32_t>{4, 5});
    HostArray kept({2}, DType::I32, owned, owned->data());
    owned.reset(); // the HostArray keeps it alive
    CHECK(kept.flat(1) == 5.0);
}

TEST_CASE("printing") {
    CHECK(HostArray::from<float>({1, 2, 3, 4, 5, 6}, {2, 3}).to_string() ==
          "f32 (2,3) [[1, 2, 3], [4, 5, 6]]");
    CHECK(HostArray::from<double>({2.5}, {}).to_string() == "f64 () 2.5");
    CHECK(HostArray::from<float>({0.1f}, {1}).to_string() == "f32 (1) [0.1]");
    CHECK(HostArray::from<bool>({true, false}, {2}).to_string() == "bool (2) [true, false]");
    CHECK(HostArray::from<std::int32_t>({0, 1, 2, 3, 4}, {5}).to_string(2) ==
          "i32 (5) [0, 1, ...]");
    CHECK(HostArray::from<std::int64_t>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2}).to_string(3) ==
          "i64 (2,2,2) [[[1, 2], [3, ...]]]");
    CHECK(HostArray({0}, DType::F32).to_string() == "f32 (0) []");
    CHECK(HostArray({2, 0}, DType::F32).to_string() == "f32 (2,0) [[], []]");
}

TEST_CASE("bad host array use throws") {
    HostArray f = HostArray::from<float>({1, 2, 3, 4}, {2, 2});
    CHECK_ERROR(f.values<std::int64_t>(), "HostArray::values<i64>", "has dtype f32", "(2,2)",
                "values<float>");
    CHECK_ERROR(f.mutable_values<double>(), "f32", "f64");
    CHECK_ERROR(f.at({2, 0}), "index (2,0)", "out of bounds", "(2,2)");
    CHECK_ERROR(f.at({0}), "index (0)", "out of bounds");
    CHECK_ERROR(f.at({0, -1}), "(0,-1)");
    CHECK_ERROR(f.flat(4), "element 4", "out of bounds", "4 elements");
    CHECK_ERROR(f.set_flat(-1, 0), "element -1");
    CHECK_ERROR(HostArray::from<float>({1, 2, 3}, {2, 2}), "3 values", "4 elements");
    CHECK_ERROR(HostArray::from<bool>({true}, {2}), "1 values", "2 elements");
    CHECK_ERROR(HostArray({2, -1}, DType::F32), "(2,-1)", "axis 1", "negative size -1");
    CHECK_ERROR(HostArray({3}, DType::F32, nullptr, nullptr), "null pointer");
    CHECK_NOTHROW(HostArray({0}, DType::F32, nullptr, nullptr));
}

TEST_CASE("deferred contents arrive once, on the first access, from any thread") {
    auto storage = std::make_shared<std::vector<float>>(4, 0.0f);
    std::atomic<int> fills{0};
    auto pending = std::make_shared<DeferredContents>([&] {
        ++fills;
        for (std::size_t i = 0; i < storage->size(); ++i)
            (*storage)[i] = static_cast<float>(i) + 0.5f;
    });
    HostArray a({2, 2}, DType::F32, storage, storage->data(), pending);
    HostArray copy = a;
    CHECK(a.pending());
    CHECK(a.address() == storage->data()); // identity without waiting
    CHECK(fills == 0);
    std::vector<std::thread> readers;
    std::vector<double> seen(8);
    for (int t = 0; t < 8; ++t)
        readers.emplace_back([&, t] { seen[t] = copy.flat(3); });
    for (auto& r : readers)
        r.join();
    CHECK(fills == 1);
    CHECK_FALSE(a.pending());
    for (double v : seen)
        CHECK(v == 3.5);
    CHECK(a.values<float>()[1] == 1.5f);
    CHECK(a.to_string() == "f32 (2,2) [[0.5, 1.5], [2.5, 3.5]]");
    CHECK(fills == 1);
}

TEST_CASE("deferred contents: a failing copy reaches the reader and is tried again") {
    auto storage = std::make_shared<std::vector<float>>(2, 0.0f);
    int attempts = 0;
    auto pending = std::make_shared<DeferredContents>([&] {
        if (++attempts == 1) throw Error("copy failed");
        (*storage)[0] = 7.0f;
    });
    HostArray a({2}, DType::F32, storage, storage->data(), pending);
    CHECK_THROWS_WITH_AS(a.raw(), doctest::Contains("copy failed"), Error);
    CHECK(a.pending());
    CHECK(a.flat(0) == 7.0);
    CHECK(attempts == 2);
    // Writing an element waits too: a late copy must not overwrite it.
    auto later = std::make_shared<DeferredContents>([&] { (*storage)[1] = 9.0f; });
    HostArray b({2}, DType::F32, storage, storage->data(), later);
    CHECK_FALSE(b.changed());
    b.set_flat(0, 1.0);
    CHECK(b.flat(0) == 1.0);
    CHECK(b.flat(1) == 9.0);
    CHECK(b.changed()); // a device copy of b is stale now
}
