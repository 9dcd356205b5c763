// A program outside the hedra tree: includes <hedra/hedra.hpp> from the install tree.
#include <hedra/hedra.hpp>

#include <cstdio>

int main() {
    using namespace hedra;
    Array a = array(std::vector<float>{1, 2, 3, 4}, Shape::of({2, 2}));
    HostArray s = compute(sum(a * a));
    std::printf("sum of squares = %g\n", s.flat(0));
    return s.flat(0) == 30.0 ? 0 : 1;
}
