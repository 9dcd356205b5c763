// The driver loader text hedra-aot writes into its cuda libraries (aot/cuda_driver_loader_
// source.hpp): made at configure time from aot/runtime/cuda_driver_loader.hpp with its includes
// in place, it must stand alone, since a library is compiled where neither hedra's sources nor
// the CUDA toolkit are. Checked here without the toolkit: no include of a repository file, the
// entry table inside, and the text compiles on its own as C++17.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "aot/cuda_driver_loader_source.hpp"

TEST_CASE("the cuda driver loader text stands alone") {
    const std::string text = hedra::aot::cuda_driver_loader_source();
    CHECK(text.find("#include \"") == std::string::npos);
    CHECK(text.find("#pragma once") == std::string::npos);
    for (const char* symbol : {"\"cuMemAlloc_v2\"", "\"cuLaunchKernel\"", "\"cuEventElapsedTime\"",
                               "kNoDriverCode = 3", "struct CudaDriverApi", "load_cuda_driver"})
        CHECK_MESSAGE(text.find(symbol) != std::string::npos, symbol);

    if (std::system("command -v c++ > /dev/null 2>&1") != 0) {
        MESSAGE("skipped compiling it: no c++ on PATH");
        return;
    }
    const std::filesystem::path dir = HEDRA_TEST_OUTPUT_DIR;
    const std::filesystem::path source = dir / "cuda_driver_loader_text.cpp";
    std::ofstream(source) << text
                          << "\nint main() {\n    hedra_aot_cuda::CudaDriver d;\n"
                             "    return hedra_aot_cuda::open_cuda_driver(d) ? 0 : 1;\n}\n";
    const std::string command = "c++ -std=c++17 -Wall -Wno-unused-function -Werror -fsyntax-only " +
                                source.string() + " > " +
                                (dir / "cuda_driver_loader_text.log").string() + " 2>&1";
    CHECK_MESSAGE(std::system(command.c_str()) == 0, command);
    std::filesystem::remove(source);
}
