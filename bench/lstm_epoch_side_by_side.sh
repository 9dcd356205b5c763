#!/usr/bin/env bash
# One epoch of examples/mnist_rnn beside PyTorch on Fashion-MNIST, from the same initial weights
# and in the same batch order: bench/peers/lstm_epoch_torch.py exports torch.nn.LSTM's initial
# state dict and its order of the 60000 training examples, trains its epoch (1 thread), then
# mnist_rnn --init --batch-order trains the same one (--threads 1). Prints both test accuracies,
# their difference and PASS when it is within --tolerance (default 0.01), else FAIL (status 1);
# also the first step's loss on both sides (the same weights and batch give the same loss) and
# each side's epoch time (hedra's without compiling). The two f32 runs part ways after about 100
# steps (rounding differences grow), so one seed's difference is partly chance; --seeds 0,1,2,3
# runs one pair per seed (each its own weights and order) and judges the mean difference.
#   bench/lstm_epoch_side_by_side.sh [BUILD] [--dir DIR] [--seeds 0,1,..] [--tolerance X]
#                                    [--limit N] [--data DIR]
# Needs the peers' venv ($PEERS_VENV, default /opt/hedra-peers: scripts/install_bench_peers.sh)
# and Fashion-MNIST (Debian's dataset-fashion-mnist, or --data DIR for both sides).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$here/build
dir=
seeds=0
tolerance=0.01
limit=0
data=/usr/share/datasets/fashion-mnist
while (($#)); do
    case $1 in
    --dir) dir=$2; shift 2 ;;
    --seed | --seeds) seeds=$2; shift 2 ;;
    --tolerance) tolerance=$2; shift 2 ;;
    --limit) limit=$2; shift 2 ;;
    --data) data=$2; shift 2 ;;
    -h | --help) sed -n '2,15p' "$0"; exit 0 ;;
    *) build=$1; shift ;;
    esac
done
python=${PEERS_VENV:-/opt/hedra-peers}/bin/python
peer=$here/bench/peers/lstm_epoch_torch.py
rnn=$build/examples/mnist_rnn
for need in "$python" "$peer" "$rnn"; do
    [ -e "$need" ] || { echo "lstm_epoch_side_by_side: $need is missing" >&2; exit 1; }
done
if [ -z "$dir" ]; then
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT
fi

field() { sed -n "s/.*$1=\([0-9.eE+-]*\).*/\1/p" | tail -1; }
results=()
for seed in ${seeds//,/ }; do
    out=$dir/seed$seed
    torch_line=$("$python" "$peer" --export "$out" --threads 1 --seed "$seed" --limit "$limit" \
        --data "$data" | grep '^lstm_epoch_torch test_accuracy=')
    # mnist_rnn's progress goes to stderr; keep it beside the export for a look afterwards.
    hedra_line=$("$rnn" --threads 1 --epochs 1 --seed "$seed" --data "$data" --init "$out" \
        --batch-order "$out/order.npy" --csv "$out/hedra_loss.csv" 2>"$out/hedra.log" |
        tee "$out/hedra.out" | grep '^test_accuracy=')
    t_acc=$(echo "$torch_line" | field test_accuracy)
    h_acc=$(echo "$hedra_line" | field test_accuracy)
    t_s=$(echo "$torch_line" | field epoch_seconds)
    h_s=$(echo "$hedra_line" | field epoch_seconds)
    t_first=$("$python" -c "import numpy; print('%.6f' % numpy.load('$out/losses.npy')[0])")
    h_first=$(sed -n '2s/^[0-9]*,[0-9]*,//p' "$out/hedra_loss.csv")
    awk -v s="$seed" -v ta="$t_acc" -v ha="$h_acc" -v ts="$t_s" -v hs="$h_s" -v tf="$t_first" \
        -v hf="$h_first" 'BEGIN {
        printf "lstm_epoch seed=%s first_loss hedra=%.6f torch=%.6f epoch_seconds hedra=%.2f torch=%.2f (1 thread each)\n",
               s, hf, tf, hs, ts
        printf "lstm_epoch seed=%s test_accuracy hedra=%.4f torch=%.4f difference=%+.4f\n",
               s, ha, ta, ha - ta }'
    results+=("$h_acc $t_acc")
done
printf '%s\n' "${results[@]}" | awk -v tol="$tolerance" -v n="${#results[@]}" '
    { h += $1; t += $2 }
    END {
        h /= n; t /= n; d = h - t
        ok = (d <= tol && -d <= tol)
        printf "lstm_epoch test_accuracy hedra=%.4f torch=%.4f difference=%+.4f tolerance=%s seeds=%d %s\n",
               h, t, d, tol, n, ok ? "PASS" : "FAIL"
        exit ok ? 0 : 1 }'
