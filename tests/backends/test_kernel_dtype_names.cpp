// The C and CUDA renderers' spellings of each dtype's value and storage types (core/dtypes.def):
// what kernels compute in and what buffers hold, which the preludes and host code rely on.
#include <doctest/doctest.h>

#include <string>

#include "backends/common/c_expr.hpp"
#include "core/dtype.hpp"

using namespace hedra;

TEST_CASE("the kernel spellings of the dtypes") {
    using backend::c_storage_type;
    using backend::c_value_type;
    CHECK(std::string(c_value_type(DType::Bool)) == "bool");
    CHECK(std::string(c_storage_type(DType::Bool)) == "unsigned char");
    CHECK(std::string(c_value_type(DType::I32)) == "int");
    CHECK(std::string(c_value_type(DType::I64)) == "long long");
    CHECK(std::string(c_value_type(DType::F32)) == "float");
    CHECK(std::string(c_value_type(DType::F64)) == "double");
    CHECK(std::string(c_value_type(DType::BF16)) == "float");
    CHECK(std::string(c_storage_type(DType::BF16)) == "hd_bf16");
    CHECK(std::string(c_value_type(DType::F16)) == "float");
    CHECK(std::string(c_storage_type(DType::F16)) == "hd_f16");
    CHECK(std::string(c_storage_type(DType::I64)) == "long long");
}
