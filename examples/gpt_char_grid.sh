#!/usr/bin/env bash
# gpt_char on a process grid trains what one process trains: it runs STEPS steps alone and under
# `mpirun -np RANKS ... --grid GRID [flags]` from the same seed, and compares the evaluation
# losses and the last step's loss (1e-5 relative), then checks that rank 0 gathered the
# checkpoint and sampled from it. Prints "skipped:" and exits 0 where the text
# (scripts/get_shakespeare.sh) is missing.
#   examples/gpt_char_grid.sh GPT_CHAR MPIEXEC RANKS DIR GRID [gpt_char flags for the grid]
set -euo pipefail
gpt_char=$1 mpiexec=$2 ranks=$3 dir=$4 grid=$5
shift 5
text=${HEDRA_DATA:-/var/cache/hedra-data}/shakespeare.txt
if [ ! -f "$text" ]; then
    echo "skipped: cannot open the text $text (scripts/get_shakespeare.sh)"
    exit 0
fi
mkdir -p "$dir"
common=(--steps 8 --eval-every 4 --eval-iters 2 --threads 1 --backend openmp --plot "")
alone=$("$gpt_char" "${common[@]}" --checkpoint "")
split=$(OMPI_MCA_btl_vader_single_copy_mechanism=none HEDRA_NUM_THREADS=1 \
    "$mpiexec" --allow-run-as-root --oversubscribe -np "$ranks" "$gpt_char" "${common[@]}" \
    --grid "$grid" "$@" --sample 10 --checkpoint "$dir/gpt_char_grid.safetensors")
echo "$split"
# The numbers of every "eval step" line and of the summary's losses, one per line.
numbers() {
    grep -E '^eval step|^gpt_char: steps=' <<<"$1" |
        grep -oE '(train loss|val loss|val_loss=|train_loss=|loss_last=) ?[0-9.]+' |
        grep -oE '[0-9.]+$'
}
paste <(numbers "$alone") <(numbers "$split") | awk '
    { n++; d = $1 - $2; if (d < 0) d = -d; if (d > 1e-5 * $1) { bad++; print "differs: alone " $1 ", grid " $2 } }
    END { if (n < 8 || bad) { print "gpt_char grid check: FAILED (" n " numbers compared)"; exit 1 }
          print "gpt_char grid check: " n " losses equal to one process within 1e-5" }'
grep -q "AdamW state gathered from $ranks ranks" <<<"$split"
grep -q "^sample" <<<"$split"
echo "gpt_char grid check: ok"
