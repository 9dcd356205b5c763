// The README's example, compiled and run as a test so the README keeps telling the truth.
#include "hedra.hpp"

#include <cstdio>

using namespace hedra;

int main() {
    Array x = array(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape::of({2, 3}));
    Array w = array(std::vector<float>{1, 0, -1, 2, 0.5f, 1}, Shape::of({3, 2}));
    Array y = lazy([](auto v) { return max(v, 0.0f); }, matmul(x, w)); // relu(x·w)
    Array total = sum(y, {1});                                          // reduce over axis 1
    // Arrays live on shapes made of ranges: this one has indices 1..4.
    Array ramp = index_components(Shape{range(1, 5)}, 0);
    Array evens = reshape(x, Shape{range(2), range(0, 3, 2)});          // select columns 0 and 2
    auto r = compute(y, total, ramp, evens);                            // evaluated together
    std::printf("%s\n%s\n", r[0].to_string().c_str(), r[1].to_string().c_str());
    // relu(x·w) = [[0.5, 7], [2, 16]] (by hand): check it, and the others.
    bool ok = r[0].at({0, 0}) == 0.5 && r[0].at({0, 1}) == 7.0 && r[0].at({1, 1}) == 16.0 &&
              r[1].at({1}) == 18.0 && r[2].at({0}) == 1.0 && r[2].at({3}) == 4.0 &&
              r[3].at({1, 1}) == 6.0;
    std::printf("%s\n", ok ? "ok" : "MISMATCH");
    return ok ? 0 : 1;
}
