// What every hedra benchmark shares: command-line flags (--quick, --threads, --reps), wall-clock
// medians of hedra and a peer timed alternately in one process, and the one output line per
// measurement
//   <name> threads=<t> hedra_ms=<x> peer=<peer> peer_ms=<y> speedup=<y/x>
// (speedup > 1: hedra is faster). Benchmarks are not tests: they print ratios measured side by
// side, never absolute claims, and the quick mode only checks that they run.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <unistd.h>
#include <vector>

namespace hedra::bench {

// OpenBLAS reads OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE when it is loaded, before main. Some
// shells here set them (for other tools); a BLAS peer must run without them, for this process
// only. So: unset them and re-execute the benchmark once.
inline void reexec_without_openblas_overrides(char** argv) {
    if (!std::getenv("OPENBLAS_CORETYPE") && !std::getenv("OPENBLAS_L2_SIZE")) return;
    unsetenv("OPENBLAS_CORETYPE");
    unsetenv("OPENBLAS_L2_SIZE");
    execv("/proc/self/exe", argv);
    std::perror("bench: re-exec without OPENBLAS_CORETYPE failed; continuing");
}

struct Args {
    bool quick = false;
    bool cpu_clock = false; // 1-thread lines: the calling thread's CPU time instead of wall time
    std::vector<int> threads{1, 2};
    int reps = 0;                    // 0: the benchmark's default per size
    std::vector<std::string> only;   // measurement names to run (empty: all)
    std::vector<std::int64_t> tiles; // --tiles: hedra's CompileOptions::tile_sizes (experiments)

    bool wants(const std::string& name) const {
        return only.empty() || std::find(only.begin(), only.end(), name) != only.end();
    }
};

inline std::vector<std::string> split_commas(const std::string& s) {
    std::vector<std::string> out;
    for (std::size_t p = 0; p <= s.size();) {
        std::size_t q = s.find(',', p);
        if (q == std::string::npos) q = s.size();
        if (q > p) out.push_back(s.substr(p, q - p));
        p = q + 1;
    }
    return out;
}

// --blocks: time_alternately times each side's reps in a block of their own (all of hedra's,
// then all of the peer's) instead of alternating, so neither side runs while the other's
// threads still wait for work: a peer with an OpenMP runtime of its own in this process (libtorch's
// libgomp beside hedra's libomp) otherwise shares the cores with threads that spin.
inline bool& time_in_blocks() {
    static bool on = false;
    return on;
}
// --hedra-only: the peer runs once, untimed (for the benchmark's check of hedra's result), and
// hedra alone is timed after the warm-up (the line says peer_ms=nan): hedra's times with no
// other runtime's threads at work in the process.
inline bool& hedra_only() {
    static bool on = false;
    return on;
}

// --quick, --threads 1,2, --reps N, --only a,b; anything else prints the usage and exits.
inline Args parse_args(int argc, char** argv, const char* usage_extra = "") {
    Args a;
    for (int i = 1; i < argc; ++i) {
        std::string s = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "%s needs a value\n", s.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (s == "--quick") {
            a.quick = true;
        } else if (s == "--threads") {
            a.threads.clear();
            for (const std::string& t : split_commas(value()))
                a.threads.push_back(std::max(1, std::atoi(t.c_str())));
        } else if (s == "--reps") {
            a.reps = std::max(1, std::atoi(value().c_str()));
        } else if (s == "--cpu-clock") {
            a.cpu_clock = true;
        } else if (s == "--tiles") {
            for (const std::string& t : split_commas(value()))
                a.tiles.push_back(std::max(1, std::atoi(t.c_str())));
        } else if (s == "--only") {
            a.only = split_commas(value());
        } else if (s == "--blocks") {
            time_in_blocks() = true;
        } else if (s == "--hedra-only") {
            hedra_only() = true;
        } else {
            std::fprintf(stderr,
                         "usage: %s [--quick] [--threads 1,2] [--reps N] [--only NAME,...] "
                         "[--cpu-clock] [--tiles A,B,...] [--blocks] [--hedra-only]%s\n",
                         argv[0], usage_extra);
            std::exit(s == "--help" || s == "-h" ? 0 : 2);
        }
    }
    return a;
}

inline double now_ms() {
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// The clock of measurements: wall time, or (select_clock with --cpu-clock at 1 thread) the
// calling thread's CPU time, which a loaded machine disturbs far less; the hedra side and the
// peer then both run in this thread.
inline bool& thread_cpu_clock() {
    static bool on = false;
    return on;
}

inline void select_clock(const Args& args, int threads) {
    thread_cpu_clock() = args.cpu_clock && threads == 1;
}

inline double measure_ms() {
    if (!thread_cpu_clock()) return now_ms();
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return 1e3 * double(t.tv_sec) + 1e-6 * double(t.tv_nsec);
}

inline double median(std::vector<double> v) {
    if (v.empty()) return NAN;
    std::sort(v.begin(), v.end());
    std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct PairTimes {
    double hedra_ms = NAN;
    double peer_ms = NAN;
};

// Untimed rounds run for at least this long before the timed ones: the steady state of a
// training loop. The first 15-35 ms of a 2-thread step loop after the compile ran at about half
// speed, then abruptly at full speed (W2a's step 1.0-1.2 ms for its first 14-32 steps, 0.45 ms
// after; not at 1 thread, not in a bare loop of OpenMP regions), so a median of 30 steps after
// one warm-up step was 2x slow in 6 of 20 runs; after 200 ms of warm-up, in none
// (bench/README.md, "Two threads").
inline constexpr double kWarmupMs = 200;

// Runs `hedra` and `peer` alternately: `warmup` untimed rounds (and more until kWarmupMs have
// passed), then `reps` timed rounds; the order within a round alternates too, so neither side
// always runs right after the other's threads went idle. Returns the medians. A null peer is
// skipped.
template <class H, class P>
PairTimes time_alternately(H&& hedra, P&& peer, bool have_peer, int warmup, int reps) {
    if (have_peer && hedra_only()) peer(); // once, untimed, for the benchmark's check
    have_peer = have_peer && !hedra_only();
    const double warm_start = now_ms();
    for (int w = 0; w < warmup || now_ms() - warm_start < kWarmupMs; ++w) {
        hedra();
        if (have_peer) peer();
    }
    std::vector<double> th, tp;
    if (time_in_blocks()) {
        for (int side = 0; side < (have_peer ? 2 : 1); ++side)
            for (int r = 0; r < reps; ++r) {
                double s = measure_ms();
                if (side == 0)
                    hedra();
                else
                    peer();
                (side == 0 ? th : tp).push_back(measure_ms() - s);
            }
        return {median(th), have_peer ? median(tp) : NAN};
    }
    for (int r = 0; r < reps; ++r) {
        for (int side = 0; side < 2; ++side) {
            bool hedra_turn = (side == 0) == (r % 2 == 0);
            if (!hedra_turn && !have_peer) continue;
            double s = measure_ms();
            if (hedra_turn)
                hedra();
            else
                peer();
            (hedra_turn ? th : tp).push_back(measure_ms() - s);
        }
    }
    return {median(th), have_peer ? median(tp) : NAN};
}

// One result line on stdout (flushed: the lines are the benchmark's output, also when piped).
inline void print_line(const std::string& name, int threads, const PairTimes& t,
                       const std::string& peer, const std::string& extra = "") {
    std::printf("%s threads=%d hedra_ms=%.4g peer=%s peer_ms=%.4g speedup=%.3g%s%s%s\n",
                name.c_str(), threads, t.hedra_ms, peer.c_str(), t.peer_ms, t.peer_ms / t.hedra_ms,
                extra.empty() ? "" : " ", extra.c_str(),
                thread_cpu_clock() ? " clock=thread_cpu" : "");
    std::fflush(stdout);
}

// The largest |a - b| / (|b| + 1) over two equally long arrays (a sanity check of the results).
template <class T, class U>
double max_relative_difference(const T* a, const U* b, std::size_t n) {
    double worst = 0;
    for (std::size_t i = 0; i < n; ++i) {
        double d = std::fabs(double(a[i]) - double(b[i])) / (std::fabs(double(b[i])) + 1.0);
        if (!(d <= worst)) worst = d; // NaN sticks
    }
    return worst;
}

} // namespace hedra::bench
