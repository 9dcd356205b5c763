// The listing of the kernel IR (poly::to_string), on matmul: one kernel, the init nest and the
// update over (i, j, k) with the reads of A and B composed through the broadcast views.
#include "partition_testing.hpp"

using namespace hedra;
using namespace hedra::test;

TEST_CASE("to_string of a partitioned matmul") {
    Array a = placeholder(Shape::of({3, 4}), DType::F32, "a");
    Array b = placeholder(Shape::of({4, 5}), DType::F32, "b");
    poly::ProgramIR ir = sched::partition({matmul(a, b).node()}, {a.node(), b.node()});
    std::string want = "b0 input f32 [3,4] placeholder 'a'\n"
                       "b1 input f32 [4,5] placeholder 'b'\n"
                       "b2 output f32 [3,5] reduce\n"
                       "inputs: b0 b1\n"
                       "outputs: b2\n"
                       "k0\n"
                       "    S0 assign [3,5] b2[(d0, d1) -> (d0, d1)] = 0:f32\n"
                       "    S1 update sum [3,5,4] reduce (2) b2[(d0, d1, d2) -> (d0, d1)] = "
                       "mul(in0:f32, in1:f32)\n"
                       "      in0 = b0[(d0, d1, d2) -> (d0, d2)]\n"
                       "      in1 = b1[(d0, d1, d2) -> (d2, d1)]\n";
    CHECK(poly::to_string(ir) == want);
}
