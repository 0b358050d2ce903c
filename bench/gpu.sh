#!/bin/bash
# flipzero on a GPU beside PyTorch on the same GPU: training samples/s (the small and
# standard CNN at batch 1,024) and self-play positions/s (GPU vs the machine's CPUs).
# Two steps, so that the GPU machine builds nothing and needs no network:
#
#   bench/gpu.sh prepare DIR [RUN]   here: DIR gets the wgpu binary (stripped, xz), the
#                                    Vulkan loader's Debian packages, a few self-play
#                                    shards of RUN (default data/runs/quick), the
#                                    2-hour CNN, the PyTorch step and the self-play
#                                    configs (about 25 MB in all)
#   DIR/gpu.sh run                   on the GPU machine (Linux, NVIDIA or AMD driver,
#                                    python3 with torch for the PyTorch column): prints
#                                    the table; under 8 minutes; OUT=folder keeps logs;
#                                    QUICK=1: a smoke run of the plumbing (a few steps
#                                    and games: any Vulkan device, lavapipe included)
#
# The table's rows: flipzero's trainer on wgpu (Vulkan) and PyTorch eager on CUDA (or
# ROCm) with the same network and step (bench/torch_train_bench.py), flipzero's CPU
# engine on every core; GPU self-play (selfplay.net_engine = "burn", device = "wgpu")
# against the fast path on every core, same net and searches. docs/benchmarks.md keeps
# the figures with the GPU named.
set -euo pipefail

prepare() {
  local dir=$1 run=${2:-data/runs/quick}
  cd "$(dirname "$0")/.."
  mkdir -p "$dir/sp" "$dir/debs"
  cargo build --profile tests --features wgpu --bin flipzero --target-dir target/gpu
  strip -o "$dir/flipzero-wgpu" target/gpu/tests/flipzero
  xz -6 -f "$dir/flipzero-wgpu"
  # Six shards of the newest generations (train --data reads one flat folder).
  find "$run/selfplay" -name '*.parquet' | sort | tail -6 | while read -r f; do
    cp "$f" "$dir/sp/$(basename "$(dirname "$f")")-$(basename "$f")"
  done
  [ -n "$(ls "$dir/sp")" ] || { echo "no shards under $run/selfplay: make run first, or name a run" >&2; exit 2; }
  cp -r docs/strength/gen-0131 "$dir/model"
  cp python/examples/torch_net.py bench/torch_train_bench.py "$dir/"
  mkdir -p "$dir/python/examples" && mv "$dir/torch_net.py" "$dir/python/examples/"
  mkdir -p "$dir/bench" && mv "$dir/torch_train_bench.py" "$dir/bench/"
  cp "$0" "$dir/gpu.sh"
  (cd "$dir/debs" && apt-get download libvulkan1 >/dev/null)
  cat > "$dir/sp-gpu.toml" <<'T'
[selfplay]
game = "ataxx"
threads = 4
games_per_thread = 256
games_per_worker_batch = 1024
net_engine = "burn"
device = "wgpu"
simulations = 128
fast_simulations = 32
T
  cat > "$dir/sp-cpu.toml" <<'T'
[selfplay]
game = "ataxx"
games_per_thread = 24
net_engine = "fast"
device = "cpu"
simulations = 128
fast_simulations = 32
T
  du -sh "$dir"
}

run() {
  local g; g=$(cd "$(dirname "$0")" && pwd)
  local out=${OUT:-$(mktemp -d)} fz=/tmp/flipzero-wgpu cores; cores=$(nproc)
  xz -dc "$g/flipzero-wgpu.xz" > $fz && chmod +x $fz
  # The Vulkan loader, unless the machine has one; the GPU driver's ICD file is the
  # machine's (NVIDIA's container toolkit puts it under /usr/local/nvidia).
  if ! ldconfig -p | grep -q libvulkan.so.1; then
    for f in "$g"/debs/*.deb; do dpkg -x "$f" /tmp/vk; done
    export LD_LIBRARY_PATH=/tmp/vk/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
  fi
  if ! ls /usr/share/vulkan/icd.d/*nvidia* /etc/vulkan/icd.d/*nvidia* >/dev/null 2>&1 \
     && [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
    export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  fi
  echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo 'GPU: (no nvidia-smi)'), $cores CPU cores, $(date -u +%F)"
  # Steady-state samples/s of a training run: the mean of metrics.csv's rates after its
  # first rows (shader compilation and autotuning happen in the first steps).
  rate() { awk -F, 'NR > 1 { r[NR] = $NF } END { n = 0; s = 0; for (i in r) if (i > NR / 2) { s += r[i]; n++ } if (n) printf "%.0f", s / n; else print "-" }' "$1"; }
  train() { # name device net batch steps timeout
    local d=/tmp/fz-train-$1; rm -rf "$d"
    timeout "$6" $fz train --data "$g/sp" --out "$d" --game ataxx --quiet --set device="$2" \
      --set net="$3" --set batch_size="$4" --set steps="$5" --set checkpoint_every=100000 \
      --set metrics_every=10 > "$out/train-$1.log" 2>&1 || echo "train $1: rc $? (log: $out/train-$1.log)" >&2
    if [ -f "$d/metrics.csv" ]; then cp "$d/metrics.csv" "$out/metrics-$1.csv"; rate "$d/metrics.csv"; else echo -; fi
  }
  sp() { # name timeout config games threads: positions/s as `selfplay` reports it
    local d=/tmp/fz-sp-$1; rm -rf "$d"
    timeout "$2" $fz selfplay --game ataxx --model "$g/model" --out "$d" --seed 1 --quiet \
      --config "$3" --games "$4" --threads "$5" > "$out/sp-$1.log" 2>&1 || { echo -; return; }
    grep -o '[0-9]* positions/s' "$out/sp-$1.log" | tail -1 | cut -d' ' -f1
  }
  local torch=()
  if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
    mapfile -t torch < <(cd "$g" && timeout 120 python3 bench/torch_train_bench.py "$cores" --device cuda \
      --batch 1024 --nets small,standard 2>&1 | grep -o '[0-9]* samples/s' | cut -d' ' -f1)
  fi
  # QUICK=1: the same commands, a few steps and games (checks the plumbing anywhere).
  local q=${QUICK:-0} k=1 batch=1024
  [ "$q" = 1 ] && { k=20; batch=64; }
  local ws ws2 cs cs2
  ws=$(train gpu-small wgpu small $batch $((120 / k + 2)) 100)
  ws2=$(train gpu-standard wgpu standard $batch $((80 / k + 2)) 100)
  cs=$(train cpu-small cpu small $batch $((20 / k + 2)) 60)
  cs2=$(train cpu-standard cpu standard $batch $((8 / k + 2)) 60)
  local spg spc
  spg=$(sp gpu 100 "$g/sp-gpu.toml" $((1024 / k / k + 2)) 4)
  spc=$(sp cpu 60 "$g/sp-cpu.toml" $((cores * 24 / k + 2)) "$cores")
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-" }'; }
  echo
  echo "| training, batch $batch (samples/s) | flipzero wgpu | PyTorch eager | ratio | flipzero CPU, $cores cores |"
  echo "|---|---:|---:|---:|---:|"
  echo "| small 6×64 | $ws | ${torch[0]:--} | $(ratio "$ws" "${torch[0]:-}") | $cs |"
  echo "| standard 10×128 | $ws2 | ${torch[1]:--} | $(ratio "$ws2" "${torch[1]:-}") | $cs2 |"
  echo
  echo "| self-play, gen-0131, 128/32 simulations (positions/s) | GPU (wgpu) | CPU, $cores threads | ratio |"
  echo "|---|---:|---:|---:|"
  echo "| positions/s | $spg | $spc | $(ratio "$spg" "$spc") |"
  echo "(logs and metrics: $out)"
}

case "${1:-}" in
  prepare) shift; prepare "$@" ;;
  run) run ;;
  *) echo "usage: bench/gpu.sh prepare DIR [RUN] | DIR/gpu.sh run" >&2; exit 2 ;;
esac
