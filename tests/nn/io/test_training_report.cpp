// Training reports (nn/io/training_report.hpp): plain progress lines, the bar's final state, the
// loss CSV, and plotting (which must stay silent without gnuplot).
#include "nn/io/training_report.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "core/error.hpp"
#include "nn_test_files.hpp"

using namespace hedra;
using namespace hedra::nn;
using namespace hedra::nn::test;

namespace {

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string run_progress(bool interactive, const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    REQUIRE(f);
    TrainingProgress p(20, 2, f, interactive);
    for (int e = 1; e <= 2; ++e) {
        p.begin_epoch(e);
        for (int s = 0; s < 20; ++s)
            p.step(s, 1.0 + s, 64);
        p.end_epoch();
    }
    std::fclose(f);
    return read_text(path);
}

} // namespace

TEST_CASE("nn training report: plain lines every tenth of an epoch with the window's loss") {
    ScratchDir dir("progress");
    std::string text = run_progress(false, dir.file("lines.txt"));
    std::istringstream lines(text);
    std::string line;
    int count = 0;
    while (std::getline(lines, line))
        ++count;
    CHECK(count == 20); // 10 lines per epoch (every 2 steps)
    CHECK(text.find("epoch 1/2 step 2/20 loss 1.5000 examples/s ") == 0);
    CHECK(text.find("epoch 2/2 step 20/20 loss 19.5000 examples/s") != std::string::npos);
    CHECK(text.find('\r') == std::string::npos);
}

TEST_CASE("nn training report: the bar redraws in place and ends each epoch with a newline") {
    ScratchDir dir("bar");
    std::string text = run_progress(true, dir.file("bar.txt"));
    CHECK(text.find("\r\033[Kepoch 1/2 [") != std::string::npos);
    // The last draw of epoch 1 is complete: 20/20 and the epoch's mean loss (1 + ... + 20) / 20.
    CHECK(text.find("[==============================] 20/20 loss 10.5000 ") != std::string::npos);
    int newlines = 0;
    for (char c : text)
        newlines += c == '\n';
    CHECK(newlines == 2);
}

TEST_CASE("nn training report: loss csv, and a plot only with gnuplot") {
    ScratchDir dir("csv");
    const std::string csv = dir.file("loss.csv");
    write_loss_csv(csv, {2.5, 2.25, 1.5}, 2);
    CHECK(read_text(csv) == "step,epoch,loss\n1,1,2.5\n2,1,2.25\n3,2,1.5\n");
    CHECK_THROWS_AS(write_loss_csv(dir.file("missing/dir/loss.csv"), {1.0}, 1), Error);
    const std::string png = dir.file("loss.png");
    const bool plotted = plot_loss_png(csv, png, "test loss");
    CHECK(plotted == program_on_path("gnuplot"));
    CHECK(std::filesystem::exists(png) == plotted);
    CHECK(program_on_path("sh"));
    CHECK_FALSE(program_on_path("surely-not-a-program-hedra"));
}
