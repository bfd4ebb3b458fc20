#!/usr/bin/env bash
# `npm run bench:webgpu` on a GPU machine that has no network, no Node and no Deno, in one
# call: what the bench needs travels as one xz archive in .bench-gpu/ (ignored by git, so
# it goes as a carried path), under the 64 MiB a call may carry with the working tree.
#
#   bash scripts/webgpu-bench-device.sh prepare    here, after npm ci: writes .bench-gpu/
#   bash scripts/webgpu-bench-device.sh run        there: unpacks it and runs the bench
#   PD_BENCH_QUICK=1 bash scripts/webgpu-bench-device.sh run   the same at reduced counts
#       (64² only, one timed run, two exits, no bare-inference or throughput rows), to
#       check on Mesa's software adapter that the script runs end to end
#
# The run is, in order: the planned WebGPU run against onnxruntime-web's provider at 1024²
# and at 128², batch 1 (bench/webgpu-calls.ts: medians, ratio, WebGPU calls a run makes),
# then bench/webgpu.ts: 1024² bare inference per GPU form, a fresh process's first
# cut-out under auto against WebAssembly, warm 12 MP calls, throughput, and 20 fresh GPU
# processes that must exit 0 by themselves.
#
# The archive holds the Deno binary, the runtime's npm packages (pruned to the files a
# Deno process loads), dist/, the default model's graph with its int8 weight codes zeroed
# (bench/timing-model.ts: Deno and the real weights together exceed 64 MiB; there the codes
# are filled with a fixed sequence, same kernels and shapes, so the times hold but the
# masks mean nothing; a real models/isnet-int8-static.onnx found there is used instead) and
# Debian's Vulkan loader and libglvnd (deploy/gpu-library-packages.txt, the GPU image's list), unpacked
# there only where the machine lacks them: NVIDIA's Vulkan driver does not load without
# libglvnd's libGLdispatch.so.0. The run prints `pixeldrop doctor` first, then again if it
# had to add anything. docs/MODEL.md ("WebGPU on a real GPU") gives the call.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT_DIR=.bench-gpu
# The Vulkan loader and libglvnd, the Dockerfile's gpu target's list (Debian, amd64).
GPU_LIBRARY_PACKAGES=$(grep -v '^#' deploy/gpu-library-packages.txt | xargs)

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
  # The Vulkan loader and libglvnd, unpacked there only if the machine lacks them.
  local pkg
  for pkg in $GPU_LIBRARY_PACKAGES; do
    (cd "$OUT_DIR" && apt-get download "$pkg:amd64" >/dev/null 2>&1 && mv "${pkg}"_*.deb "$pkg.deb") ||
      echo "note: apt-get download $pkg:amd64 failed; the machine must have it" >&2
  done
  local carried tree
  carried=$(du -cb "$OUT_DIR" | tail -1 | cut -f1)
  tree=$( (git ls-files -z; git ls-files -z --others --exclude-standard) | xargs -0 du -cb 2>/dev/null | awk '/total$/ {s+=$1} END {print s}')
  echo "$OUT_DIR: $((carried / 1048576)) MiB; working tree $((tree / 1048576)) MiB; together $(((carried + tree) / 1048576)) MiB of 64"
  [ $((carried + tree)) -le $((64 * 1048576)) ] || { echo "over the 64 MiB a call carries" >&2; exit 1; }
}

# The library each of GPU_LIBRARY_PACKAGES holds, as ldconfig -p names it.
gpu_package_library() {
  case "$1" in
    libvulkan1) echo 'libvulkan\.so\.1' ;;
    libglvnd0) echo 'libGLdispatch\.so\.0' ;;
    libegl1) echo 'libEGL\.so\.1' ;;
    libgl1) echo 'libGL\.so\.1' ;;
    libglx0) echo 'libGLX\.so\.0' ;;
    libopengl0) echo 'libOpenGL\.so\.0' ;;
    libgles2) echo 'libGLESv2\.so\.2' ;;
  esac
}

# `pixeldrop doctor`: the GPU device nodes, the adapter Deno offers, what is missing.
doctor() {
  PIXELDROP_ALLOW_STALE_DIST=1 ./node_modules/.bin/deno run -A bin/pixeldrop.mjs doctor || true
}

run() {
  # ldconfig and dpkg live in the sbin folders, which a bare command's PATH may lack.
  export PATH="$PATH:/usr/sbin:/sbin"
  [ -f "$OUT_DIR/bundle.tar.xz" ] || { echo "$OUT_DIR/bundle.tar.xz missing: carry .bench-gpu (prepare it first)" >&2; exit 1; }
  python3 -c "import tarfile; tarfile.open('$OUT_DIR/bundle.tar.xz').extractall('.')" 2>/dev/null ||
    xz -dc "$OUT_DIR/bundle.tar.xz" | tar -xf -
  export DENO_WEBGPU_BACKEND=vulkan DENO_DIR="${DENO_DIR:-/tmp/pd-deno-dir}" DENO_NO_UPDATE_CHECK=1 XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
  # What the machine offers as it is (dist/ came with the bundle, built from these sources).
  doctor
  local added="" pkg have
  # Each package's own library tells whether the machine has it (read once: grep -q on a
  # pipe could end ldconfig early, which pipefail counts as a failure).
  have=$(ldconfig -p)
  for pkg in $GPU_LIBRARY_PACKAGES; do
    grep -q "$(gpu_package_library "$pkg")" <<<"$have" && continue
    [ -f "$OUT_DIR/$pkg.deb" ] || { echo "note: $pkg missing and $OUT_DIR/$pkg.deb not carried" >&2; continue; }
    dpkg -x "$OUT_DIR/$pkg.deb" / && added="$added $pkg"
  done
  [ -z "$added" ] || { ldconfig; echo "unpacked:$added"; }
  # The NVIDIA driver's Vulkan description, where the loader does not find it by itself
  # (the folders the doctor names: src/engine/inference/gpu-host.ts).
  local icd
  if [ -z "${VK_DRIVER_FILES:-}" ] && ! ls /usr/share/vulkan/icd.d/nvidia* /etc/vulkan/icd.d/nvidia* >/dev/null 2>&1; then
    for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/local/nvidia/vulkan/icd.d/nvidia_icd.json /usr/local/nvidia/icd.d/nvidia_icd.json; do
      [ -f "$icd" ] && { export VK_DRIVER_FILES=$icd; added="$added VK_DRIVER_FILES=$icd"; echo "VK_DRIVER_FILES=$icd"; break; }
    done
  fi
  [ -z "$added" ] || doctor
  if [ ! -f models/isnet-int8-static.onnx ]; then
    ./node_modules/.bin/deno run -A bench/timing-model.ts fill models/isnet-int8-static.timing-skeleton.onnx
  fi
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
  # The CPU beside it, and its SIMD width (every CPU number is named with it).
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) cores, SIMD: $(grep -m1 -o -w -E 'avx2|avx512f|avx512_vnni|avx_vnni|amx_tile' /proc/cpuinfo | sort -u | xargs)"
  ./node_modules/.bin/deno --version | head -1
  # Children within 150 s, so one that hangs cannot take the call's 10 minutes; the quick
  # run's 12 MP WebAssembly cut-outs on a small shared CPU need longer.
  local sides="1024 128" runs=5 exits=20 childTimeout=150 skip=()
  if [ "${PD_BENCH_QUICK:-0}" = 1 ]; then sides="64" runs=1 exits=2 childTimeout=400 skip=(--skip inference,throughput); fi
  # The planned run against the provider, each size in a process of its own, within 150 s
  # (a failure is printed and the rest still runs).
  local side
  for side in $sides; do
    echo "== planned WebGPU run against onnxruntime-web's provider: ${side}², batch 1, $runs timed runs"
    timeout 150 ./node_modules/.bin/deno run -A bench/webgpu-calls.ts --size "$side" --runs "$runs" || echo "bench/webgpu-calls.ts at ${side}² exited $?"
  done
  echo "== bench/webgpu.ts (runs $runs, exits $exits)"
  ./node_modules/.bin/deno run -A bench/webgpu.ts --child-timeout "$childTimeout" --runs "$runs" --exits "$exits" "${skip[@]}" "$@"
}

case "${1:-}" in
  prepare) prepare ;;
  run) shift; run "$@" ;;
  *) echo "usage: $0 prepare | run [bench/webgpu.ts options]" >&2; exit 2 ;;
esac
