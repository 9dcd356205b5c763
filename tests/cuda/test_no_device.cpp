// The "cuda" backend is registered wherever it is built. Without a usable device, choosing it
// throws hedra::Error("no CUDA device: <why>") at compile and at compute time; with a device
// this test says so and checks that it computes.
#include "cuda/cuda_testing.hpp"

using namespace hedra;

TEST_CASE("cuda: the backend is registered") {
    auto names = backend_names();
    CHECK(std::find(names.begin(), names.end(), "cuda") != names.end());
    CHECK(get_backend("cuda")->name() == "cuda");
}

TEST_CASE("cuda: without a device, compile and compute give a clear error") {
    std::string why = backend::cuda_unavailable_reason();
    Array x = array(std::vector<float>{1, 2, 3}, Shape::of({3}));
    ComputeOptions options;
    options.backend = "cuda";
    if (!why.empty()) {
        CHECK_THROWS_WITH_AS(compute(x * 2.0f, options), doctest::Contains("no CUDA device"),
                             Error);
        Array p = placeholder(Shape::of({3}));
        CHECK_THROWS_WITH_AS(compile({p + 1.0f}, {p}, options), doctest::Contains("no CUDA device"),
                             Error);
        CHECK_THROWS_WITH_AS(get_backend("cuda")->evaluate({(x + 1.0f).node()}, {}),
                             doctest::Contains(("no CUDA device: " + why).c_str()), Error);
        return;
    }
    MESSAGE("a CUDA device is present: checking that it computes instead");
    HostArray y = compute(x * 2.0f, options);
    CHECK(y.to_doubles() == std::vector<double>{2, 4, 6});
}
