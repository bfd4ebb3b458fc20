#!/usr/bin/env bash
# `npm run bench:webgpu` on a GPU machine that has no network, no Node and no Deno, in one
# call: what the bench needs travels as one xz archive in .bench-gpu/ (ignored by git, so
# it goes as a carried path), under the 64 MiB a call may carry with the working tree.
#
#   bash scripts/webgpu-bench-device.sh prepare    here, after npm ci: writes .bench-gpu/
#   bash scripts/webgpu-bench-device.sh run        there: unpacks it and runs the bench
#
# The archive holds the Deno binary, the runtime's npm packages (pruned to the files a
# Deno process loads), dist/, the default model's graph with its int8 weight codes zeroed
# (bench/timing-model.ts: Deno and the real weights together exceed 64 MiB; there the codes
# are filled with a fixed sequence, same kernels and shapes, so the times hold but the
# masks mean nothing; a real models/isnet-int8-static.onnx found there is used instead) and
# Debian's libvulkan1 for a machine without the Vulkan loader. docs/MODEL.md ("WebGPU on
# a real GPU") gives the call.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT_DIR=.bench-gpu

prepare() {
  [ -x node_modules/deno/deno ] || { echo "node_modules/deno/deno missing: run npm ci first" >&2; exit 1; }
  [ -f models/isnet-int8-static.onnx ] || { echo "models/isnet-int8-static.onnx missing: run npm ci first" >&2; exit 1; }
  npm run build --silent
  rm -rf "$OUT_DIR" && mkdir -p "$OUT_DIR"
  ./node_modules/.bin/deno run -A bench/timing-model.ts skeleton models/isnet-int8-static.onnx models/isnet-int8-static.timing-skeleton.onnx
  local list="$OUT_DIR/files.txt"
  {
    echo node_modules/deno/deno
    echo node_modules/deno/package.json
    echo node_modules/.bin/deno
    echo models/isnet-int8-static.timing-skeleton.onnx
    ls models/*.LICENSE.md 2>/dev/null || true
    find dist -type f ! -name '*.map'
    # The builds the backends load (wasm: plain SIMD + threads; webgpu: asyncify) and their
    # JavaScript; the other builds (jsep, jspi, webgl, all) are never loaded by the engine.
    find node_modules/onnxruntime-web -type f ! -name '*.map' ! -name '*.d.ts' ! -path '*/lib/*' \
      ! -name '*jsep*' ! -name '*jspi*' ! -name 'ort.all*' ! -name 'ort.webgl*' ! -name 'ort.js' ! -name 'ort.mjs' ! -name 'ort.min.js'
    for pkg in onnxruntime-common zod imagescript @cwasm/jpeg-turbo @jsquash/webp @jsquash/png; do
      find "node_modules/$pkg" -type f ! -name '*.map' ! -name '*.d.ts' ! -name '*.d.cts' ! -name '*.d.mts'
    done
  } >"$list"
  tar -cf - -T "$list" | xz -T0 -6 >"$OUT_DIR/bundle.tar.xz"
  rm "$list" models/isnet-int8-static.timing-skeleton.onnx
  # The Vulkan loader, unpacked there only if the machine lacks it (Debian's, amd64).
  (cd "$OUT_DIR" && apt-get download libvulkan1 >/dev/null 2>&1 && mv libvulkan1_*.deb libvulkan1.deb) ||
    echo "note: apt-get download libvulkan1 failed; the machine must have the Vulkan loader" >&2
  local carried tree
  carried=$(du -cb "$OUT_DIR" | tail -1 | cut -f1)
  tree=$( (git ls-files -z; git ls-files -z --others --exclude-standard) | xargs -0 du -cb 2>/dev/null | awk '/total$/ {s+=$1} END {print s}')
  echo "$OUT_DIR: $((carried / 1048576)) MiB; working tree $((tree / 1048576)) MiB; together $(((carried + tree) / 1048576)) MiB of 64"
  [ $((carried + tree)) -le $((64 * 1048576)) ] || { echo "over the 64 MiB a call carries" >&2; exit 1; }
}

run() {
  # ldconfig and dpkg live in the sbin folders, which a bare command's PATH may lack.
  export PATH="$PATH:/usr/sbin:/sbin"
  [ -f "$OUT_DIR/bundle.tar.xz" ] || { echo "$OUT_DIR/bundle.tar.xz missing: carry .bench-gpu (prepare it first)" >&2; exit 1; }
  python3 -c "import tarfile; tarfile.open('$OUT_DIR/bundle.tar.xz').extractall('.')" 2>/dev/null ||
    xz -dc "$OUT_DIR/bundle.tar.xz" | tar -xf -
  if ! ldconfig -p | grep -q 'libvulkan\.so\.1'; then
    [ -f "$OUT_DIR/libvulkan1.deb" ] && dpkg -x "$OUT_DIR/libvulkan1.deb" / && ldconfig
  fi
  # The NVIDIA driver's Vulkan description, where the loader does not find it by itself.
  local icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$icd" ] && ! ls /usr/share/vulkan/icd.d/nvidia* /etc/vulkan/icd.d/nvidia* >/dev/null 2>&1; then
    export VK_DRIVER_FILES=$icd
  fi
  export DENO_WEBGPU_BACKEND=vulkan DENO_DIR="${DENO_DIR:-/tmp/pd-deno-dir}" DENO_NO_UPDATE_CHECK=1 XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
  if [ ! -f models/isnet-int8-static.onnx ]; then
    ./node_modules/.bin/deno run -A bench/timing-model.ts fill models/isnet-int8-static.timing-skeleton.onnx
  fi
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
  ./node_modules/.bin/deno --version | head -1
  # Each child within 150 s, so one that hangs cannot take the call's 10 minutes.
  ./node_modules/.bin/deno run -A bench/webgpu.ts --child-timeout 150 "$@"
}

case "${1:-}" in
  prepare) prepare ;;
  run) shift; run "$@" ;;
  *) echo "usage: $0 prepare | run [bench/webgpu.ts options]" >&2; exit 2 ;;
esac
