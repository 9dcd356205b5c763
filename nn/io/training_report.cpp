// Progress display, loss CSV and gnuplot plotting for training runs (training_report.hpp).
#include "nn/io/training_report.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <sys/wait.h>
#include <unistd.h>

#include "core/error.hpp"

namespace hedra::nn {

namespace {

constexpr int kBarWidth = 30;
constexpr double kRedrawSeconds = 0.1;
constexpr std::int64_t kLinesPerEpoch = 10;

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// A path quoted for gnuplot's single-quoted strings (which have no escapes), or "" when it
// cannot be.
std::string gnuplot_quoted(const std::string& path) {
    if (path.find('\'') != std::string::npos || path.find('\n') != std::string::npos) return "";
    return "'" + path + "'";
}

} // namespace

TrainingProgress::TrainingProgress(std::int64_t steps_per_epoch, std::int64_t epochs,
                                   std::FILE* stream)
    : TrainingProgress(steps_per_epoch, epochs, stream, isatty(fileno(stream)) != 0) {}

TrainingProgress::TrainingProgress(std::int64_t steps_per_epoch, std::int64_t epochs,
                                   std::FILE* stream, bool interactive)
    : steps_per_epoch_(steps_per_epoch), epochs_(epochs), stream_(stream),
      interactive_(interactive) {}

void TrainingProgress::begin_epoch(std::int64_t epoch) {
    epoch_ = epoch;
    epoch_start_ = last_draw_ = std::chrono::steady_clock::now();
    examples_ = epoch_steps_ = window_steps_ = 0;
    epoch_loss_sum_ = window_loss_sum_ = 0.0;
}

void TrainingProgress::step(std::int64_t step, double loss, std::int64_t examples) {
    examples_ += examples;
    epoch_loss_sum_ += loss;
    window_loss_sum_ += loss;
    ++epoch_steps_;
    ++window_steps_;
    const bool last = step + 1 == steps_per_epoch_;
    if (interactive_) {
        if (last || step == 0 || seconds_since(last_draw_) >= kRedrawSeconds) draw(step);
        return;
    }
    const std::int64_t every = std::max<std::int64_t>(1, steps_per_epoch_ / kLinesPerEpoch);
    if (last || (step + 1) % every == 0) print_line(step);
}

void TrainingProgress::draw(std::int64_t step) {
    last_draw_ = std::chrono::steady_clock::now();
    const double done = static_cast<double>(step + 1) / static_cast<double>(steps_per_epoch_);
    const int filled = static_cast<int>(done * kBarWidth);
    std::string bar(static_cast<std::size_t>(filled), '=');
    if (filled < kBarWidth) bar += '>' + std::string(kBarWidth - filled - 1, ' ');
    const double seconds = seconds_since(epoch_start_);
    std::fprintf(stream_, "\r\033[Kepoch %lld/%lld [%s] %lld/%lld loss %.4f %.0f examples/s",
                 static_cast<long long>(epoch_), static_cast<long long>(epochs_), bar.c_str(),
                 static_cast<long long>(step + 1), static_cast<long long>(steps_per_epoch_),
                 epoch_loss_sum_ / static_cast<double>(epoch_steps_),
                 seconds > 0 ? static_cast<double>(examples_) / seconds : 0.0);
    std::fflush(stream_);
}

void TrainingProgress::print_line(std::int64_t step) {
    const double seconds = seconds_since(epoch_start_);
    std::fprintf(stream_, "epoch %lld/%lld step %lld/%lld loss %.4f examples/s %.0f\n",
                 static_cast<long long>(epoch_), static_cast<long long>(epochs_),
                 static_cast<long long>(step + 1), static_cast<long long>(steps_per_epoch_),
                 window_loss_sum_ / static_cast<double>(window_steps_),
                 seconds > 0 ? static_cast<double>(examples_) / seconds : 0.0);
    std::fflush(stream_);
    window_loss_sum_ = 0.0;
    window_steps_ = 0;
}

void TrainingProgress::exclude_seconds(double seconds) {
    epoch_start_ += std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(seconds));
}

void TrainingProgress::end_epoch() {
    if (interactive_) {
        std::fputc('\n', stream_);
        std::fflush(stream_);
    }
}

void write_loss_csv(const std::string& path, const std::vector<double>& losses,
                    std::int64_t steps_per_epoch) {
    std::ofstream out(path);
    if (!out) throw Error("cannot write the loss csv '" + path + "'");
    out.precision(9);
    out << "step,epoch,loss\n";
    for (std::size_t i = 0; i < losses.size(); ++i)
        out << i + 1 << ',' << static_cast<std::int64_t>(i) / steps_per_epoch + 1 << ','
            << losses[i] << '\n';
    if (!out) throw Error("cannot write the loss csv '" + path + "'");
}

bool program_on_path(const std::string& name) {
    const char* path = std::getenv("PATH");
    if (!path) return false;
    std::stringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':'))
        if (!dir.empty() && access((dir + "/" + name).c_str(), X_OK) == 0) return true;
    return false;
}

bool plot_loss_png(const std::string& csv_path, const std::string& png_path,
                   const std::string& title) {
    if (!program_on_path("gnuplot")) return false;
    const std::string csv = gnuplot_quoted(csv_path), png = gnuplot_quoted(png_path);
    const std::string name = gnuplot_quoted(title);
    if (csv.empty() || png.empty() || name.empty()) {
        std::fprintf(stderr, "note: no loss plot: gnuplot cannot quote the path '%s'\n",
                     png_path.c_str());
        return false;
    }
    std::FILE* gp = popen("gnuplot", "w");
    if (!gp) return false;
    std::fprintf(gp,
                 "set terminal png size 900,500\nset output %s\nset datafile separator ','\n"
                 "set title %s noenhanced\nset xlabel 'step'\nset ylabel 'loss'\nset grid\n"
                 "plot %s using 1:3 skip 1 with lines lw 1 title 'training loss'\n",
                 png.c_str(), name.c_str(), csv.c_str());
    const int status = pclose(gp);
    if (status != 0) {
        std::fprintf(stderr, "note: gnuplot failed to plot '%s' (exit status %d)\n",
                     png_path.c_str(), WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        return false;
    }
    return true;
}

} // namespace hedra::nn
