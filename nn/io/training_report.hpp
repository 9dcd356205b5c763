// What a training run shows and leaves behind: a progress bar (epoch, step, loss, examples/s)
// redrawn in place when the stream is a terminal, plain periodic lines otherwise (logs, CI);
// a CSV of the loss per step; and a PNG plot of that curve drawn by gnuplot when it is
// installed (skipped silently when it is not).
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace hedra::nn {

class TrainingProgress {
public:
    // `interactive`: draw a bar (true), print lines (false); by default, whether `stream` is a
    // terminal.
    TrainingProgress(std::int64_t steps_per_epoch, std::int64_t epochs, std::FILE* stream = stderr);
    TrainingProgress(std::int64_t steps_per_epoch, std::int64_t epochs, std::FILE* stream,
                     bool interactive);

    bool interactive() const { return interactive_; }
    // epoch counts from 1.
    void begin_epoch(std::int64_t epoch);
    // After step `step` (from 0) of the current epoch, with its loss and batch size.
    void step(std::int64_t step, double loss, std::int64_t examples);
    // Leaves `seconds` (spent compiling, say) out of the examples/s rate.
    void exclude_seconds(double seconds);
    // Ends the bar's line (a no-op for plain lines).
    void end_epoch();

private:
    void draw(std::int64_t step);
    void print_line(std::int64_t step);

    std::int64_t steps_per_epoch_, epochs_, epoch_ = 0;
    std::FILE* stream_;
    bool interactive_;
    std::chrono::steady_clock::time_point epoch_start_, last_draw_;
    std::int64_t examples_ = 0;
    double epoch_loss_sum_ = 0.0, window_loss_sum_ = 0.0;
    std::int64_t epoch_steps_ = 0, window_steps_ = 0;
};

// Writes "step,epoch,loss" and one row per step (steps counted from 1 over the whole run,
// epochs from 1). Throws hedra::Error when the file cannot be written.
void write_loss_csv(const std::string& path, const std::vector<double>& losses,
                    std::int64_t steps_per_epoch);

// Whether an executable `name` is on $PATH.
bool program_on_path(const std::string& name);

// Plots the loss column of a CSV written by write_loss_csv into a PNG with gnuplot. Returns
// false without a word when gnuplot is not installed; prints a note on stderr and returns false
// when it is installed but fails.
bool plot_loss_png(const std::string& csv_path, const std::string& png_path,
                   const std::string& title);

} // namespace hedra::nn
