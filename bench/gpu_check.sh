#!/usr/bin/env bash
# bench/gpu_check.sh: the device check of the cuda backend (issue 8, docs/cuda.md).
#
# The GPU machine has the CUDA driver and toolkit (NVRTC), CMake and PyTorch, but neither isl,
# LLVM nor clang, so hedra is built elsewhere, in a CUDA-only configuration
# (backends/cuda/standalone: isl, GMP, zlib, libstdc++ linked statically), and the build folder
# is carried to the GPU machine. Two steps:
#
#   bench/gpu_check.sh build   on a development machine (isl, the CUDA toolkit's headers, a C++20
#                              compiler): configure and build into $HEDRA_GPU_BUILD (default
#                              build-gpu, ~46 MB), then run the tests that need no GPU (with
#                              QUICK=1, not the CPU emulation suite: CI runs it so, after the
#                              main build's ctest has run the same tests whole; scripts/test.sh).
#   bench/gpu_check.sh [run]   on the GPU machine, from the repository root with the build folder
#                              in place: the CUDA tests that need a device, the generated matmul
#                              against cuBLAS (N = 1024, 2048, 4096), steady-state training
#                              steps of two MLPs and the MNIST CNN (also autotuned), the same measured with PyTorch CUDA (its
#                              step also as one CUDA graph), and one summary.
#                              About 3 minutes on an H200 (the device tests alone took 103-116 s
#                              there); every stage has its own timeout (9.5 min in all). Each
#                              stage's log is copied to $OUT as it ends.
#   bench/gpu_check.sh peer    only the PyTorch peer (no build needed).
#   bench/gpu_check.sh summary [LOGS]
#                              the summary again, from a run's logs (default: the last run's;
#                              or the files the device tool brought back).
#
# Environment: HEDRA_GPU_BUILD (build folder), HEDRA_NVRTC_LIBRARY (libnvrtc to use, else found
# on the loader path, under /usr/local/cuda*, or in PyTorch's nvidia-* wheels), JOBS (build
# parallelism, default 2), PYTHON (default python3), QUICK=1 (build: fewer tests; run: one
# matmul size, fewer steps),
# FULL=1 (run every CUDA test on the GPU machine, not only those that need a device).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${HEDRA_GPU_BUILD:-$ROOT/build-gpu}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
PYTHON=${PYTHON:-python3}
MODE=${1:-run}
LOGS=$BUILD/gpu_check_logs

die() { echo "gpu_check: $*" >&2; exit 1; }

build() {
    command -v cmake > /dev/null || die "cmake not found"
    cmake -S "$ROOT/backends/cuda/standalone" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release ||
        die "configure failed (needs isl and GMP static libraries, zlib, doctest, the CUDA toolkit)"
    cmake --build "$BUILD" -j"${JOBS:-2}" || die "build failed"
    strip --strip-unneeded "$BUILD/hedra_cuda_tests" "$BUILD/hedra_cuda_bench" 2> /dev/null || true
    rm -rf "$LOGS" # a dry run's logs and kernel cache: not to be carried
    du -sh "$BUILD" | sed 's/^/gpu_check: build folder size /'
    local exclude='cuda device:*' log=$BUILD/no_device_tests.log
    if [ "${QUICK:-0}" = 1 ]; then
        # The emulation suite is most of the time and runs alike in either configuration.
        exclude+=',cuda emulation:*'
        echo "gpu_check: tests that need no GPU (NVRTC, ptxas, code generation, fake driver):"
    else
        echo "gpu_check: tests that need no GPU (NVRTC, ptxas, code generation, CPU emulation, fake driver):"
    fi
    if ! "$BUILD/hedra_cuda_tests" --test-case-exclude="$exclude" > "$log" 2>&1; then
        cat "$log"
        die "tests failed (log: $log)"
    fi
    tail -4 "$log"
}

# Makes sure NVRTC and cuBLAS (the benchmark's peer) can be opened: the loader path, the usual
# toolkit folders, then PyTorch's nvidia-* wheels, whose folder joins LD_LIBRARY_PATH (NVRTC opens
# its libnvrtc-builtins by name, from the same folder).
find_libs() {
    local lib dir candidate
    for lib in nvrtc cublas; do
        if ldconfig -p 2> /dev/null | grep -q "lib$lib\.so"; then continue; fi
        dir=
        for candidate in /usr/local/cuda/lib64/lib$lib.so* /usr/local/cuda-*/lib64/lib$lib.so* \
                         /usr/local/cuda/targets/x86_64-linux/lib/lib$lib.so*; do
            if [ -e "$candidate" ]; then dir=$(dirname "$candidate"); break; fi
        done
        if [ -z "$dir" ]; then
            candidate=$(LIB=$lib "$PYTHON" - 2> /dev/null << 'EOF'
import glob, os, site
lib = os.environ["LIB"]
dirs = site.getsitepackages() + [site.getusersitepackages()]
for d in dirs:
    for pattern in (f"nvidia/cuda_{lib}/lib/lib{lib}.so*", f"nvidia/{lib}/lib/lib{lib}.so*",
                    f"nvidia/cu*/lib/lib{lib}.so*", f"torch/lib/lib{lib}*.so*"):
        hits = [h for h in sorted(glob.glob(os.path.join(d, pattern))) if "builtins" not in h]
        if hits:
            print(hits[0]); raise SystemExit
EOF
)
            [ -n "$candidate" ] && dir=$(dirname "$candidate")
        fi
        [ "$lib" = nvrtc ] && [ -n "$dir" ] && [ -z "${HEDRA_NVRTC_LIBRARY:-}" ] &&
            export HEDRA_NVRTC_LIBRARY=$(ls "$dir"/libnvrtc.so* | grep -v builtins | head -1)
        [ -n "$dir" ] && export LD_LIBRARY_PATH=$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
        echo "gpu_check: lib$lib from ${dir:-nowhere found}"
    done
}

# Copies the logs to $OUT after each stage: the device tool brings back only what is there (and
# the output's tail), also when the run is stopped at its limit.
save_logs() {
    if [ -n "${OUT:-}" ] && [ -d "$OUT" ]; then
        cp "$LOGS"/*.log "$LOGS"/*.py "$OUT"/ 2> /dev/null
    fi
    return 0
}

# Writes the PyTorch peer to $LOGS/torch_peer.py.
write_torch_peer() {
    cat > "$LOGS/torch_peer.py" << 'EOF'
# PyTorch CUDA peer: the same matmuls (FP32, TF32 off, as cuBLAS above) and training steps
# (SGD lr 0.01, momentum 0.9, the batch already on the GPU), timed as hedra_cuda_bench does;
# with --graph, only the training steps, each captured as one CUDA graph.
import sys, time
try:
    import torch
except Exception as e:
    print(f"note: no PyTorch ({e})"); sys.exit(0)
if not torch.cuda.is_available():
    print("note: PyTorch sees no CUDA device"); sys.exit(0)
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
quick = "--quick" in sys.argv
def cuda_ms(fn):
    fn(); fn(); torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); fn(); e.record(); e.synchronize()
    reps = int(min(max(300.0 / max(s.elapsed_time(e), 1e-3), 3), 1000))
    s.record()
    for _ in range(reps): fn()
    e.record(); e.synchronize()
    return s.elapsed_time(e) / reps
graph_mode = "--graph" in sys.argv  # run alone: a failed capture spoils the process's CUDA state
def mlp(sizes, batch):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
        if i + 2 < len(sizes): layers.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*layers).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.rand(batch, sizes[0], device="cuda") * 2 - 1
    y = torch.arange(batch, device="cuda") % sizes[-1]
    return model, opt, torch.nn.CrossEntropyLoss(), x, y
def timed(run, steps, loss):
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(steps): run()
    loss().item()  # hedra's step returns the loss to the host too
    return (time.perf_counter() - t) * 1000 / steps
for n in ([] if graph_mode else [1024] if quick else [1024, 2048, 4096]):
    a = torch.rand(n, n, device="cuda") * 2 - 1
    b = torch.rand(n, n, device="cuda") * 2 - 1
    ms = cuda_ms(lambda: torch.mm(a, b))
    print(f"matmul n={n} peer=torch torch_ms={ms:.4f}")
def cnn(batch):  # nn::mnist_cnn: two 5x5 convolutions (16, 32 channels, pad 2), ReLU, 2x2 pools
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 16, 5, padding=2), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(16, 32, 5, padding=2), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(32 * 7 * 7, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.rand(batch, 1, 28, 28, device="cuda") * 2 - 1
    y = torch.arange(batch, device="cuda") % 10
    return model, opt, torch.nn.CrossEntropyLoss(), x, y
for name, sizes, batch in (("mlp-small", [784, 300, 100, 10], 64), ("mlp-large", [784, 1024, 1024, 10], 256),
                           ("cnn", None, 64)):
    model, opt, loss_fn, x, y = mlp(sizes, batch) if sizes else cnn(batch)
    steps = 10 if quick else 50
    last = [None]
    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        last[0] = loss
    if not graph_mode:
        for _ in range(3): step()
        ms = timed(step, steps, lambda: last[0])
        print(f"train_step model={name} batch={batch} peer=torch torch_ms={ms:.4f}")
        continue
    # The same step captured once as a CUDA graph and replayed, as PyTorch's documentation
    # captures a whole network: warmed up on a side stream, no eager step's graph kept alive.
    # What PyTorch's kernels cost without its host overhead per op.
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3): step()
        last[0] = None
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        opt.zero_grad(set_to_none=True)
        with torch.cuda.graph(graph):
            static_loss = loss_fn(model(x), y)
            static_loss.backward()
            opt.step()
        for _ in range(3): graph.replay()
        ms = timed(graph.replay, steps, lambda: static_loss)
        print(f"train_step_graph model={name} batch={batch} peer=torch_cuda_graph torch_ms={ms:.4f}")
    except Exception as e:
        print(f"note: PyTorch CUDA graph capture of {name} failed: {e}")
        break
EOF
}

# The PyTorch peer, eager then (in a process of its own) as CUDA graphs: torch.log and
# torch_graph.log. Returns the eager run's status.
run_torch_peer() {
    write_torch_peer
    timeout 70 "$PYTHON" "$LOGS/torch_peer.py" "$@" > "$LOGS/torch.log" 2>&1
    local rc=$?
    timeout 40 "$PYTHON" "$LOGS/torch_peer.py" --graph "$@" > "$LOGS/torch_graph.log" 2>&1
    return $rc
}

# value KEY LINE: the value of key=value in LINE.
value() { sed -n "s/.*[[:space:]]$1=\([^[:space:]]*\).*/\1/p" <<< "$2"; }

# The summary of the logs in $LOGS; $1 is the tests' exit status.
summarize() {
    echo "================ hedra cuda device check ================"
    grep -m1 '^device ' "$LOGS/bench.log" || true
    local summary line
    summary=$(grep -E '^\[doctest\] (test cases|assertions|Status)' "$LOGS/tests.log" | tr -s ' ')
    echo "tests (rc=$1):"
    while read -r line; do echo "  $line"; done <<< "${summary:-no summary: see $LOGS/tests.log}"
    local skipped
    skipped=$(grep -c '^skipped: ' "$LOGS/tests.log")
    [ "$skipped" -gt 0 ] && echo "  $skipped tests $(grep -m1 '^skipped: ' "$LOGS/tests.log")"
    grep -E 'ERROR|FATAL' "$LOGS/tests.log" | head -5 | sed 's/^/  /'
    echo "matmul (f32; speedup = peer_ms / hedra_ms; goal at N=4096: >= 0.8 x cuBLAS):"
    local n t
    while read -r line; do
        n=$(value n "$line")
        t=$(grep -E "^matmul n=$n " "$LOGS/torch.log" | head -1)
        printf '  N=%-5s hedra %8s ms (%s TFLOP/s)  cuBLAS %8s ms  speedup %-6s  torch %8s ms  max_rel_diff %s\n' \
            "$n" "$(value hedra_ms "$line")" "$(value hedra_tflops "$line")" \
            "$(value peer_ms "$line")" "$(value speedup "$line")" "$(value torch_ms "$t")" \
            "$(value max_rel_diff "$line")"
        t=$(grep -E "^matmul_tuned n=$n " "$LOGS/bench.log" | head -1)
        [ -n "$t" ] && printf '         autotuned %8s ms (%s TFLOP/s)  speedup %-6s  tiles %s  (%s candidates, %s s)\n' \
            "$(value hedra_ms "$t")" "$(value hedra_tflops "$t")" "$(value speedup "$t")" \
            "$(value tiles "$t")" "$(value candidates "$t")" "$(value tune_s "$t")"
    done < <(grep -E '^matmul ' "$LOGS/bench.log")
    if grep -q '^matmul_tc ' "$LOGS/bench.log"; then
        echo "  tensor cores (bf16 operands; f32 with TF32 allowed) against cublasGemmEx of the same types (goal at N=4096: >= 0.8 x):"
        while read -r line; do
            printf '    %-5s N=%-5s hedra %8s ms (%s TFLOP/s)  cuBLAS %8s ms  speedup %-6s  max_rel_diff %s\n' \
                "$(value kind "$line")" "$(value n "$line")" "$(value hedra_ms "$line")" \
                "$(value hedra_tflops "$line")" "$(value peer_ms "$line")" \
                "$(value speedup "$line")" "$(value max_rel_diff "$line")"
        done < <(grep -E '^matmul_tc ' "$LOGS/bench.log")
    fi
    if grep -q '^matmul_shape ' "$LOGS/bench.log"; then
        echo "  the MLP's shapes (the backend's choice, autotuned; then 32x32 and 64x64 tiles, unsplit):"
        while read -r line; do
            printf '    m=%-5s k=%-5s n=%-5s %8s ms  %6s TFLOP/s  speedup %-6s %s\n' \
                "$(value m "$line")" "$(value k "$line")" "$(value n "$line")" \
                "$(value hedra_ms "$line")" "$(value hedra_tflops "$line")" \
                "$(value speedup "$line")" "$(value tiles "$line")"
        done < <(grep -E '^matmul_shape(_tuned|_tiles)? ' "$LOGS/bench.log")
    fi
    if grep -q '^matmul_tiles ' "$LOGS/bench.log"; then
        echo "  tile sweep (BM,BN,chunk; the defaults are the lines above):"
        while read -r line; do
            printf '    N=%-5s %-12s %8s ms  %6s TFLOP/s  speedup %s\n' "$(value n "$line")" \
                "$(value tiles "$line")" \
                "$(value hedra_ms "$line")" "$(value hedra_tflops "$line")" \
                "$(value speedup "$line")"
        done < <(grep -E '^matmul_tiles ' "$LOGS/bench.log")
    fi
    echo "train step (ms per step, wall clock, the batch on the device as the peer's; goal: speedup = torch_ms / hedra_ms >= 1):"
    local model h p
    while read -r line; do
        model=$(value model "$line")
        h=$(value hedra_ms "$line")
        p=$(value torch_ms "$(grep -E "^train_step model=$model " "$LOGS/torch.log" | head -1)")
        printf '  %-10s hedra %8s ms  torch %8s ms  speedup %s  kernels/step %s  uploads/step %s  downloads/step %s  compile %s s  (batch from host: %s ms, %s uploads/step)\n' \
            "$model" "$h" "${p:-n/a}" \
            "$( [ -n "$p" ] && awk -v a="$p" -v b="$h" 'BEGIN { printf "%.3f", a / b }' || echo n/a)" \
            "$(value kernels_per_step "$line")" "$(value uploads_per_step "$line")" \
            "$(value downloads_per_step "$line")" \
            "$(value compile_s "$line")" "$(value host_batch_ms "$line")" \
            "$(value host_batch_uploads_per_step "$line")"
        printf '             hedra launch by launch (HEDRA_CUDA_GRAPHS=0) %8s ms  graph launches/step %s\n' \
            "$(value no_graph_ms "$line")" "$(value graph_launches_per_step "$line")"
        local graph
        graph=$(value torch_ms "$(grep -E "^train_step_graph model=$model " "$LOGS/torch_graph.log" | head -1)")
        [ -n "$graph" ] && printf '             torch as one CUDA graph %8s ms  speedup %s\n' "$graph" \
            "$(awk -v a="$graph" -v b="$h" 'BEGIN { printf "%.3f", a / b }')"
        local tuned
        tuned=$(grep -E "^train_step model=$model " "$LOGS/tuned.log" | head -1)
        [ -n "$tuned" ] && printf '             autotuned %8s ms  speedup %s  kernels/step %s  (%s contractions tuned, compile and tuning %s s)\n' \
            "$(value hedra_ms "$tuned")" \
            "$( [ -n "$p" ] && awk -v a="$p" -v b="$(value hedra_ms "$tuned")" 'BEGIN { printf "%.3f", a / b }' || echo n/a)" \
            "$(value kernels_per_step "$tuned")" "$(value tuned_kernels "$tuned")" \
            "$(value compile_s "$tuned")"
    done < <(grep -E '^train_step ' "$LOGS/bench.log")
    if grep -q '^hedra: program' "$LOGS/profile.log"; then
        echo "train step profile (HEDRA_PROFILE=1, --quick; the 6 slowest kernels per step program):"
        awk '/^hedra: program/ { show = $0 !~ / 1 kernels,/; n = 0; if (show) print "  " $0; next }
             /^  kernel / { if (show) print "  " $0; next }
             /^  k[0-9]/ { if (show && n++ < 6) print "  " $0 }' "$LOGS/profile.log" | cut -c1-150
    fi
    if grep -q '^hedra cuda autotune:' "$LOGS/tuned.log"; then
        echo "autotuned training-step contractions (the policy's time, then the chosen tiling's):"
        awk '/^hedra cuda autotune:/ { k = $5; sub(",", "", k); chose = $NF; next }
             /^  policy\// { policy = $2 }
             /^  [0-9p]/ && $1 == chose { printf "  %-5s %-16s policy %s ms  chosen %s ms\n", k, chose, policy, $2 }
             /^train_step model=/ { m = $2; sub("model=", "", m); print "  (above: " m ")" }' \
            "$LOGS/tuned.log"
    fi
    grep -hE '^(error|note):' "$LOGS/bench.log" "$LOGS/tuned.log" "$LOGS/torch.log" \
        "$LOGS/torch_graph.log" | sed 's/^/  /'
    # The device tool brings back what is under $OUT: every log, for what the summary leaves out.
}

run() {
    if [ ! -x "$BUILD/hedra_cuda_tests" ] || [ ! -x "$BUILD/hedra_cuda_bench" ]; then
        die "no build in $BUILD: run 'bench/gpu_check.sh build' on a machine with isl first"
    fi
    mkdir -p "$LOGS"
    find_libs
    local start=$SECONDS stages="" quick=() filter=(--test-case='cuda device:*,cuda: without a device*,cuda: the backend is registered')
    [ "${QUICK:-0}" = 1 ] && quick=(--quick)
    [ "${FULL:-0}" = 1 ] && filter=()
    echo "gpu_check: $(nvidia-smi -L 2> /dev/null | head -1 || echo 'nvidia-smi unavailable')"
    echo "gpu_check: NVRTC ${HEDRA_NVRTC_LIBRARY:-from the loader path}"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total \
        --format=csv,noheader 2> /dev/null | sed 's/^/gpu_check: /'

    # A fresh cache directory: every tuning is timed in this run (the NVRTC images too).
    export HEDRA_CACHE_DIR=$LOGS/cache
    rm -rf "$HEDRA_CACHE_DIR"
    timeout 180 "$BUILD/hedra_cuda_tests" "${filter[@]}" > "$LOGS/tests.log" 2>&1
    local tests_rc=$?
    save_logs
    stages+=" tests $((SECONDS - start))s"
    timeout 150 "$BUILD/hedra_cuda_bench" "${quick[@]}" > "$LOGS/bench.log" 2>&1
    local bench_rc=$?
    save_logs
    stages+=" bench $((SECONDS - start))s"
    # The training steps once more with HEDRA_PROFILE=1: GPU time per kernel (synchronous runs).
    timeout 40 env HEDRA_PROFILE=1 "$BUILD/hedra_cuda_bench" train_step --quick \
        > "$LOGS/profile.log" 2>&1
    save_logs
    stages+=" profile $((SECONDS - start))s"
    # And autotuned (HEDRA_CUDA_AUTOTUNE, docs/cuda.md): each contraction's tilings timed.
    timeout 90 env HEDRA_CUDA_AUTOTUNE=verbose "$BUILD/hedra_cuda_bench" train_step \
        "${quick[@]}" > "$LOGS/tuned.log" 2>&1
    save_logs
    stages+=" tuned $((SECONDS - start))s"
    run_torch_peer "${quick[@]}"
    local torch_rc=$?
    save_logs
    stages+=" torch $((SECONDS - start))s"

    summarize "$tests_rc"
    save_logs
    echo "exit codes: tests $tests_rc, bench $bench_rc, torch $torch_rc; $((SECONDS - start)) s (stages ended at:$stages); logs in $LOGS"
    [ "$tests_rc" = 0 ] && [ "$bench_rc" = 0 ]
}

# Only the PyTorch peer (no hedra build needed): its lines, and every log copied to $OUT.
peer() {
    mkdir -p "$LOGS"
    run_torch_peer "$@"
    local rc=$?
    cat "$LOGS/torch.log" "$LOGS/torch_graph.log"
    save_logs
    return $rc
}

case "$MODE" in
build) build ;;
run) run ;;
peer) shift; peer "$@" ;;
summary) LOGS=${2:-$LOGS}; summarize "see tests.log" ;;
*) die "usage: bench/gpu_check.sh [build|run|peer [--quick]|summary [LOGS]]" ;;
esac
