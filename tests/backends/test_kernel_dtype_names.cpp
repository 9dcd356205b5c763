// The kernel type names in core/dtypes.def are the ones the C and CUDA renderers print, so that
// the renderers can take them from the table.
#include <doctest/doctest.h>

#include <string>

#include "backends/common/c_expr.hpp"
#include "core/dtype.hpp"

using namespace hedra;

TEST_CASE("every dtype's kernel value and storage types are the renderers'") {
    for (DType t : kAllDTypes) {
        CAPTURE(std::string(dtype_name(t)));
        CHECK(std::string(dtype_info(t).kernel_value) == backend::c_value_type(t));
        CHECK(std::string(dtype_info(t).kernel_storage) == backend::c_storage_type(t));
    }
}
