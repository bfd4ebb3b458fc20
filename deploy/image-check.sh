#!/usr/bin/env bash
# Builds the image and runs it where no container runtime can: podman builds the Dockerfile
# (chroot isolation), then the image's own CMD starts as the image's USER inside the image's
# mounted filesystem (podman create + mount, /dev and /proc bound in, chroot --userspec),
# with the image's ENV and WORKDIR. It waits for /readyz, creates an org with credit, an
# app and a live key through the operator API, sends one paid 12 MP removal
# (deploy/image-call.ts), and prints the image size, start-to-ready seconds, the
# service's RSS right after the call and at rest REST_S (3) seconds later with its largest
# resident mappings, and whether any esbuild or tsx process ran in the image.
#
#   sudo deploy/image-check.sh                 # build, then check
#   sudo deploy/image-check.sh --no-build      # check the image already tagged
#   sudo deploy/image-check.sh --gpu           # the gpu target on Mesa's software adapter (below)
#   IMAGE=localhost/pixeldrop:x BUILD_ARGS="--build-arg MODELS=int8-static,medium" sudo -E deploy/image-check.sh
#   IMAGE_ENV="DATABASE_URL=postgres://… THREADS_PER_SESSION=2" sudo -E deploy/image-check.sh --no-build
#
# IMAGE_ENV adds KEY=VALUE words to the service's environment, as `docker run -e` would
# (unset: the image's defaults, i.e. the embedded PGlite in /data and the in-process limiter).
#
# Needs root, podman and debootstrap (apt-get install podman debootstrap), and the node base
# image: where no registry is reachable, ../shared/tools/make-node-base.sh makes a stand-in
# named node:20-bookworm-slim (run here when the image is missing). The service binds
# 127.0.0.1 on a free port of the host's network (a chroot shares it). Exits non-zero when
# the service does not get ready, the paid call fails, or esbuild/tsx ran in the image; the
# targets (size, ready time, RSS) are printed beside the measurements.
#
# --gpu checks the Dockerfile's gpu target (the service on Deno) on a machine without a GPU:
# it builds gpu-software-check (gpu + Mesa's lavapipe), on a stand-in debian:bookworm-slim
# made from the node base without Node, and also requires that the service logs that it
# found only a software adapter and serves /readyz on WebAssembly; it runs `pixeldrop
# doctor` in the image, a tiny graph on WebGPU with the image's pruned onnxruntime-web,
# and, when DATABASE_URL and REDIS_URL are set (the shared stores a gateway needs), the
# gateway role on a read-only root filesystem in front of the checked service.
set -euo pipefail
cd "$(dirname "$0")/.."

build=1
gpu=0
for arg in "$@"; do
  case "$arg" in
    --no-build) build=0 ;;
    --gpu) gpu=1 ;;
    *) echo "usage: $0 [--no-build] [--gpu]" >&2; exit 2 ;;
  esac
done
if [ "$gpu" = 1 ]; then
  IMAGE=${IMAGE:-localhost/pixeldrop:gpu-check}
  GPU_BASE=${GPU_BASE:-localhost/debian:bookworm-slim}
  BUILD_ARGS=${BUILD_ARGS:---target gpu-software-check --build-arg GPU_BASE_IMAGE=$GPU_BASE}
fi
IMAGE=${IMAGE:-localhost/pixeldrop:check}
BASE_IMAGE=${BASE_IMAGE:-localhost/node:20-bookworm-slim}
READY_TIMEOUT_S=${READY_TIMEOUT_S:-300}
REST_S=${REST_S:-3}

say() { printf 'image-check: %s\n' "$*" >&2; }
[ "$(id -u)" = 0 ] || { say "needs root (podman mount, chroot)"; exit 2; }
command -v podman >/dev/null || { say "podman is missing: apt-get install -y podman debootstrap"; exit 2; }

if ! podman image exists "$BASE_IMAGE"; then
  maker=../shared/tools/make-node-base.sh
  [ -x "$maker" ] || [ -f "$maker" ] || { say "$BASE_IMAGE is missing and $maker was not found"; exit 2; }
  say "making the stand-in base image $BASE_IMAGE"
  bash "$maker"
fi

# A stand-in for debian:bookworm-slim where no registry is reachable: the node base (itself
# Debian bookworm minbase) without Node, npm and the node user.
if [ "$gpu" = 1 ] && ! podman image exists "$GPU_BASE"; then
  say "making the stand-in base image $GPU_BASE from $BASE_IMAGE"
  base_ctr=$(podman create "$BASE_IMAGE" true)
  base_dir=$(mktemp -d /tmp/debian-base.XXXX)
  tar -C "$(podman mount "$base_ctr")" --exclude=./usr/local/bin/node --exclude=./usr/local/bin/npm --exclude=./usr/local/bin/npx \
    --exclude=./usr/local/lib/node_modules --exclude=./usr/local/share/extra-ca --exclude=./home/node -cf - . | tar -C "$base_dir" -xf -
  podman umount "$base_ctr" >/dev/null && podman rm "$base_ctr" >/dev/null
  chroot "$base_dir" /bin/sh -c 'userdel node 2>/dev/null; groupdel node 2>/dev/null; true'
  tar -C "$base_dir" -cf - . | podman import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' --change 'CMD ["bash"]' - "$GPU_BASE" >/dev/null
  rm -rf "$base_dir"
fi

if [ "$build" = 1 ]; then
  say "building $IMAGE (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  # shellcheck disable=SC2086 # BUILD_ARGS is a list of words
  # docker format keeps the HEALTHCHECK (OCI has no field for it).
  podman build --isolation chroot --network host --format docker ${BUILD_ARGS:-} -t "$IMAGE" . >&2
fi

size_b=$(podman image inspect "$IMAGE" --format '{{.Size}}')
base_b=$(podman image inspect "$BASE_IMAGE" --format '{{.Size}}' 2>/dev/null || echo 0)
if [ "$gpu" = 1 ]; then
  # The check runs gpu + Mesa; the gpu target itself (its layers are already built) is what ships.
  GPU_IMAGE=${GPU_IMAGE:-localhost/pixeldrop:gpu}
  [ "$build" = 0 ] && podman image exists "$GPU_IMAGE" ||
    podman build --isolation chroot --network host --format docker --target gpu --build-arg GPU_BASE_IMAGE="$GPU_BASE" -t "$GPU_IMAGE" . >/dev/null
  base_b=$(podman image inspect "$GPU_BASE" --format '{{.Size}}')
  gpu_size_b=$(podman image inspect "$GPU_IMAGE" --format '{{.Size}}')
fi
workdir=$(podman image inspect "$IMAGE" --format '{{.Config.WorkingDir}}')
user=$(podman image inspect "$IMAGE" --format '{{.Config.User}}')
mapfile -t image_env < <(podman image inspect "$IMAGE" --format '{{range .Config.Env}}{{println .}}{{end}}' | sed '/^$/d')
mapfile -t cmd < <(podman image inspect "$IMAGE" --format '{{range .Config.Entrypoint}}{{println .}}{{end}}{{range .Config.Cmd}}{{println .}}{{end}}' | sed '/^$/d')

ctr=$(podman create "$IMAGE")
mnt=""
pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  if [ -n "$mnt" ]; then
    umount "$mnt/proc" 2>/dev/null || true
    umount "$mnt/dev" 2>/dev/null || true
  fi
  podman umount "$ctr" >/dev/null 2>&1 || true
  podman rm -f "$ctr" >/dev/null 2>&1 || true
}
trap cleanup EXIT
mnt=$(podman mount "$ctr")
mount --bind /dev "$mnt/dev"
mount -t proc proc "$mnt/proc"

# The image's USER, as the image's own /etc/passwd names it (docker resolves it there too).
passwd_line=$(awk -F: -v u="${user:-root}" '$1 == u || $3 == u { print; exit }' "$mnt/etc/passwd")
[ -n "$passwd_line" ] || { say "user ${user:-root} is not in the image's /etc/passwd"; exit 1; }
uid=$(cut -d: -f3 <<<"$passwd_line")
gid=$(cut -d: -f4 <<<"$passwd_line")
home=$(cut -d: -f6 <<<"$passwd_line")

port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
token="image-check-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
log=$(mktemp /tmp/image-check-service.XXXXXX.log)

# The image's ENV, then what a `docker run -e` would add: the port, loopback, the token.
read -r -a extra_env <<<"${IMAGE_ENV:-}"
run_env=(HOME="$home" "${image_env[@]}" PORT="$port" HOST=127.0.0.1 OPERATOR_TOKEN="$token" "${extra_env[@]}")
say "starting '${cmd[*]}' as $user ($uid:$gid) in $workdir, port $port (log: $log)"
started_ms=$(date +%s%3N)
chroot --userspec="$uid:$gid" "$mnt" /usr/bin/env -i "${run_env[@]}" \
  /bin/sh -c 'cd "$0" && exec "$@"' "$workdir" "${cmd[@]}" >"$log" 2>&1 &
pid=$!

# A command inside the image as its user, in its WORKDIR, with the image's environment.
in_image() {
  chroot --userspec="$uid:$gid" "$mnt" /usr/bin/env -i HOME="$home" "${image_env[@]}" /bin/sh -c 'cd "$0" && exec "$@"' "$workdir" "$@"
}

# --gpu: what the service said and serves on a software adapter, the doctor, WebGPU with the
# image's own onnxruntime-web, and the gateway role on a read-only root.
gpu_checks() {
  local ok=0 line ready
  line=$(grep -m1 '"msg":"GPU: ' "$log" || true)
  echo "GPU line:       ${line:-none}"
  grep -q '"msg":"GPU: only a software WebGPU adapter' <<<"$line" || { say "the service did not log that it found only a software adapter"; ok=1; }
  ready=$(curl -fsS "http://127.0.0.1:$port/readyz" || true)
  echo "/readyz:        $ready"
  grep -q '"backend":"wasm"' <<<"$ready" || { say "/readyz does not say the engine runs on WebAssembly"; ok=1; }
  echo "doctor in the image:"
  in_image deno run -A bin/pixeldrop.mjs doctor | sed 's/^/                /' || { say "pixeldrop doctor failed in the image"; ok=1; }

  # A tiny graph of IS-Net's contract on WebGPU (lavapipe) through the image's pruned
  # onnxruntime-web: the bundle Deno imports and the asyncify build it loads are there.
  node --import tsx --input-type=module -e 'import { writeFileSync } from "node:fs"; import { tinyIsNetModel } from "./test/support/tiny-onnx.ts"; writeFileSync(process.argv[1], tinyIsNetModel(16, 16).bytes)' "$mnt/tmp/pd-tiny.onnx"
  local webgpu
  webgpu=$(in_image deno eval '
    const ort = await import("onnxruntime-web/webgpu");
    ort.env.wasm.wasmPaths = new URL("wasm/", `file://${Deno.cwd()}/`).href;
    ort.env.wasm.numThreads = 1;
    const s = await ort.InferenceSession.create(Deno.readFileSync("/tmp/pd-tiny.onnx"), { executionProviders: ["webgpu"] });
    const out = await s.run({ [s.inputNames[0]]: new ort.Tensor("float32", new Float32Array(3 * 16 * 16).fill(0.25), [1, 3, 16, 16]) });
    console.log(JSON.stringify({ provider: "webgpu", dims: out[s.outputNames[0]].dims }));
    await s.release();
    Deno.exit(0);' 2>&1 | tail -1) || true
  rm -f "$mnt/tmp/pd-tiny.onnx"
  echo "WebGPU session: $webgpu"
  grep -q '"dims":\[1,1,16,16\]' <<<"$webgpu" || { say "no WebGPU session with the image's onnxruntime-web"; ok=1; }

  if [ -n "${DATABASE_URL:-}" ] && [ -n "${REDIS_URL:-}" ]; then
    gateway_check || ok=1
  else
    echo "gateway role:   not run (needs DATABASE_URL and REDIS_URL: the shared stores a gateway uses)"
  fi
  return "$ok"
}

# The gateway role (PRODUCT_URL: the checked service) on Deno with the image's filesystem
# mounted read-only, as under readOnlyRootFilesystem: one paid call through it.
gateway_check() {
  local ro gport glog gpid gcall rc=0
  ro=$(mktemp -d /tmp/image-check-ro.XXXX)
  mount --bind "$mnt" "$ro" && mount -o remount,bind,ro "$ro"
  if touch "$ro/app/.written" 2>/dev/null; then rm -f "$ro/app/.written"; say "the read-only mount is writable"; return 1; fi
  mount --bind /dev "$ro/dev" && mount -t proc proc "$ro/proc"
  gport=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
  glog=$(mktemp /tmp/image-check-gateway.XXXXXX.log)
  chroot --userspec="$uid:$gid" "$ro" /usr/bin/env -i HOME="$home" "${image_env[@]}" PORT="$gport" HOST=127.0.0.1 OPERATOR_TOKEN="$token" \
    PRODUCT_URL="http://127.0.0.1:$port" DATABASE_URL="$DATABASE_URL" REDIS_URL="$REDIS_URL" KEY_PEPPER="image-check-pepper-0123456789abcdef" SESSION_SECRET="image-check-session-0123456789abcdef" \
    /bin/sh -c 'cd "$0" && exec "$@"' "$workdir" "${cmd[@]}" >"$glog" 2>&1 &
  gpid=$!
  gcall=$(node --import tsx deploy/image-call.ts --base "http://127.0.0.1:$gport" --token "$token" --started-ms "$(date +%s%3N)" --ready-timeout-s "$READY_TIMEOUT_S" --pid "$gpid") || rc=1
  echo "gateway role, read-only root, paid call through it: ${gcall:-failed}"
  [ "$rc" = 0 ] || { say "the gateway role failed; its log:"; tail -n 30 "$glog" >&2; }
  kill -TERM "$gpid" 2>/dev/null || true
  wait "$gpid" 2>/dev/null || true
  umount "$ro/proc" "$ro/dev" "$ro" 2>/dev/null || true
  rmdir "$ro"
  return "$rc"
}

call_ok=1
call=$(node --import tsx deploy/image-call.ts --base "http://127.0.0.1:$port" --token "$token" \
  --started-ms "$started_ms" --ready-timeout-s "$READY_TIMEOUT_S" --pid "$pid") || call_ok=0
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

kib() { awk -v k="$1" '$1 == k":" { print $2 }' "/proc/$pid/status" 2>/dev/null; }
rss_kib=$(kib VmRSS || true)
hwm_kib=$(kib VmHWM || true)
# And at rest: a pool worker gives back what a large job made it keep once the pool has no
# job for it, but the HTTP thread collects its share a second after the call
# (src/engine/pipeline/release-memory.ts), so the memory the service holds between calls
# is read REST_S seconds after the call.
sleep "$REST_S"
rest_kib=$(kib VmRSS || true)
# Where the RSS sits: each WebAssembly memory and each malloc arena is an anonymous mapping
# of its own (onnxruntime-web's heap is the largest, then the JPEG decoder's and PGlite's),
# so the largest resident anonymous mappings, and the files' total, name most of it.
mappings=$(awk '
  /^[0-9a-f]+-[0-9a-f]+ / { file = (NF >= 6 && $6 !~ /^\[/) ; next }
  /^Size:/ { size = $2 }
  /^Rss:/ { if (file) files += $2; else if ($2 >= 4096) printf "%d %d\n", $2 / 1024, size / 1024 }
  END { printf "files %d\n", files / 1024 }
' "/proc/$pid/smaps" 2>/dev/null | sort -k1,1nr | awk '
  $1 == "files" { files = $2; next }
  { n++; if (n <= 8) top = top sprintf("%s%d (%d)", n > 1 ? ", " : "", $1, $2); else rest += $1 }
  END { printf "%s%s; files %d", top, rest ? sprintf(", other mappings of 4 MiB or more %d", rest) : "", files }' || true)

# Every process whose root is the image's filesystem: the service and anything it started.
procs=$(for p in /proc/[0-9]*; do
  [ "$(readlink "$p/root" 2>/dev/null)" = "$mnt" ] || continue
  printf '%s %s\n' "${p#/proc/}" "$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null)"
done)
loaders=$(grep -Ei 'esbuild|tsx' <<<"$procs" || true)

mib() { [ -n "$1" ] && echo $(( $1 / 1024 )) || echo "?"; }
ready_s=$(node -e 'const j=JSON.parse(process.argv[1]||"{}");console.log(j.readyMs===undefined?"?":(j.readyMs/1000).toFixed(1))' "$call" 2>/dev/null || echo "?")
names=$(for w in "${extra_env[@]}"; do printf '%s ' "${w%%=*}"; done)
echo "image:          $IMAGE${names:+ (IMAGE_ENV sets ${names% })}"
if [ "$gpu" = 1 ]; then
  echo "image size:     $GPU_IMAGE $(( gpu_size_b / 1000000 )) MB (base $GPU_BASE $(( base_b / 1000000 )) MB, ours $(( (gpu_size_b - base_b) / 1000000 )) MB); with Mesa for this check $(( size_b / 1000000 )) MB"
else
  echo "image size:     $(( size_b / 1000000 )) MB (base $(( base_b / 1000000 )) MB, ours $(( (size_b - base_b) / 1000000 )) MB; target <= 400 MB)"
fi
echo "start to ready: ${ready_s} s (target <= 8 s on a quiet machine)"
echo "paid 12 MP call: ${call:-failed}"
echo "RSS after call: $(mib "$rss_kib") MiB right after, $(mib "$rest_kib") MiB at rest ${REST_S} s later (peak $(mib "$hwm_kib") MiB; target <= 900 MB = 858 MiB)"
echo "resident MiB:   ${mappings:-?} (at rest: largest anonymous mappings, their size in brackets)"
echo "processes:      $(wc -l <<<"$procs") in the image:"
sed 's/^/                /' <<<"$procs"
echo "esbuild/tsx:    ${loaders:-none}"
echo "load average:   $load_after (after the call), $(nproc) cores"

status=0
if [ "$call_ok" != 1 ]; then
  say "the paid call failed; the service's log:"
  tail -n 40 "$log" >&2
  status=1
fi
[ -z "$loaders" ] || { say "esbuild or tsx ran inside the image"; status=1; }
[ "$gpu" = 1 ] && { gpu_checks || status=1; }
exit "$status"
