# Every dependency comes from a Debian 12 package, found with find_package or pkg-config.
find_package(PkgConfig REQUIRED)
pkg_check_modules(ISL REQUIRED IMPORTED_TARGET isl)
# The zip container of .npz files (nn/io). pkg-config, not libzip's CMake package: Debian's
# names the zipcmp, zipmerge and ziptool programs, which libzip-dev does not install.
pkg_check_modules(LIBZIP REQUIRED IMPORTED_TARGET libzip)
find_package(OpenMP REQUIRED)
find_package(LLVM 14 REQUIRED CONFIG HINTS /usr/lib/llvm-14/lib/cmake/llvm)
find_package(Clang REQUIRED CONFIG HINTS /usr/lib/llvm-14/lib/cmake/clang)
find_package(nlohmann_json 3.10 REQUIRED) # JSON files (core/json.hpp)
find_package(OpenSSL REQUIRED)            # SHA-256 of cache keys (backends/common/hash.hpp)
find_package(CLI11 2.1 REQUIRED CONFIG)   # command lines of the examples and hedra-dump
if(HEDRA_BUILD_TESTS)
  find_package(doctest REQUIRED)
endif()
message(STATUS "hedra: isl ${ISL_VERSION}, LLVM ${LLVM_PACKAGE_VERSION} (${LLVM_DIR})")
