# Pixeldrop for CPU-only hosts (no GPU, no CUDA). One image serves both roles of the
# split deployment: a gateway when PRODUCT_URL is set, gateway + product engine when not
# (see docs/DEPLOY.md). Everything the service needs at run time is in the image and
# nothing else: JavaScript built from src/ (no TypeScript at run time), production
# dependencies, one model (MODELS), the one onnxruntime-web build Node loads, and
# migrations. A running container downloads nothing.
#
#   docker build -t pixeldrop .                              # the service, WASM backend
#   docker build --build-arg MODELS=int8-static,medium -t pixeldrop .   # two models
#   docker build --target native -t pixeldrop:native .      # + onnxruntime-node, backend native
#   docker build --target gpu -t pixeldrop:gpu .            # on Deno, WebGPU on an NVIDIA GPU
#   docker run -p 8080:8080 -e OPERATOR_TOKEN=... pixeldrop
#   docker run --gpus all -p 8080:8080 -e OPERATOR_TOKEN=... pixeldrop:gpu
#
# Where no registry or container runtime is reachable: deploy/image-check.sh builds it
# and runs its CMD in a chroot (docs/DEPLOY.md).
ARG NODE_IMAGE=node:20-bookworm-slim
# The gpu target's base: Debian without Node (the service runs on Deno there).
ARG GPU_BASE_IMAGE=debian:bookworm-slim

# ---- build: every dependency (TypeScript, the model data package), dist/ and models/.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
# onnxruntime-node's install script fetches CUDA provider binaries on some hosts; its CPU
# binaries are inside the npm package already. No install script runs here at all: the
# two steps the repository's prepare would run are explicit below.
ENV ONNXRUNTIME_NODE_INSTALL=skip
COPY package.json package-lock.json .npmrc ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.mjs scripts/assemble-models.mjs ./scripts/
COPY src ./src
COPY models/manifest.json ./models/
COPY wasm/README.md ./wasm/
# The models the image serves (manifest names, comma-separated). Each is assembled from
# @imgly/background-removal-data, every chunk and the whole file checked by sha256.
ARG MODELS=int8-static
RUN node scripts/build.mjs \
 && find dist -name '*.d.ts' -delete \
 && node scripts/assemble-models.mjs --models "$MODELS" --runtimes wasm
# Verify again with a read-only check (assemble-models repairs; this one only fails).
COPY deploy/verify-models.mjs ./deploy/
RUN node deploy/verify-models.mjs . "$MODELS"
# The embedded database's data directory, initialised and migrated (no secrets: the key
# pepper is made by the service in the container), so a start without DATABASE_URL skips
# PGlite's initdb: seconds of start-up and ~300 MB of resident memory.
COPY migrations ./migrations
COPY deploy/init-data.mjs ./deploy/
RUN node deploy/init-data.mjs /data-template

# ---- deps: production dependencies only, without what Node never loads.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
# --omit=dev leaves out tsx, esbuild, TypeScript, the model data package and
# onnxruntime-node (optional peers, kept as devDependencies for the repository's tests).
# onnxruntime-web ships ~135 MB of builds (WebGPU, JSPI, WebGL, bundles, source maps);
# Node imports ort.node.min.mjs, which loads the plain SIMD + threads build; the engine's
# asset check finds the package by its require entry, ort.node.min.js. Source maps, type
# declarations and zod's TypeScript sources (~20 MB) are never read at run time.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && find node_modules -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.cts' -o -name '*.d.mts' \) -delete \
 && rm -rf node_modules/zod/src \
 && cd node_modules/onnxruntime-web \
 && find dist -type f ! -name 'ort.node.min.mjs' ! -name 'ort.node.min.js' ! -name 'ort-wasm-simd-threaded.mjs' ! -name 'ort-wasm-simd-threaded.wasm' -delete \
 && rm -rf lib docs \
 && test -f dist/ort.node.min.mjs -a -f dist/ort.node.min.js -a -f dist/ort-wasm-simd-threaded.wasm

# ---- service: the image (the default target; see the last line).
FROM ${NODE_IMAGE} AS service
# MALLOC_MMAP_THRESHOLD_: glibc serves every allocation of 1 MiB or more with a mapping of
# its own and unmaps it when freed. By default the threshold rises to the largest block
# freed so far (up to 32 MiB), after which a job's buffers and the compilers' large blocks
# come from the threads' malloc arenas, which keep them after they are freed (about 60 MiB
# in each of two arenas after one 12 MP call). See docs/DECISIONS.md, "Memory back after a
# large job".
ENV NODE_ENV=production \
    PORT=8080 \
    HOST=0.0.0.0 \
    DATA_DIR=/data \
    MALLOC_MMAP_THRESHOLD_=1048576
WORKDIR /app
# Application files stay owned by root and read-only to the service user; only DATA_DIR
# (PGlite when DATABASE_URL is unset, the generated key pepper) is writable, and starts
# initialised.
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/models ./models
COPY package.json ./
COPY migrations ./migrations
COPY wasm/README.md ./wasm/
COPY --from=build --chown=node:node /data-template /data
# wasm/ is where the engine points onnxruntime-web (src/engine/inference/backend-ort-web.ts); it
# checks these against the package's own copies by sha256 at start, so links to them
# serve without a second 14 MB copy.
RUN ln -s ../node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.mjs ../node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.wasm wasm/ \
 && chown node:node /data && chmod 700 /data
USER node
EXPOSE 8080
# main.js drains in-flight requests for up to DEADLINE_MS + 10 s (150 s) after SIGTERM, so give
# containers a stop timeout above that (compose stop_grace_period, k8s
# terminationGracePeriodSeconds).
STOPSIGNAL SIGTERM
# /readyz: stores reachable and, where the engine runs, the model session started.
HEALTHCHECK --interval=15s --timeout=5s --start-period=120s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# One V8 platform thread (Node starts four, whatever the cores). They compile onnxruntime-web's
# hot functions with TurboFan while and after the first inference, and every compiling
# thread's malloc arena kept tens to hundreds of MB of freed compiler memory that glibc does
# not return (malloc_trim gave back ~195 MiB of a 1.2 GiB service). With one thread it is one
# arena's, reused from compile to compile: RSS after one paid 12 MP call 1,090-1,161 MiB
# against 1,215-1,272, with no more CPU per call and the same time to ready
# (docs/DECISIONS.md, "One V8 platform thread in the image").
# --expose-gc lets each pool worker collect a large job's buffers, in its own thread and
# its band helpers', and give back the decoder's heap, the band memory and the input tensor
# once the pool has no job for it (src/engine/pipeline/release-memory.ts).
# --no-concurrent-array-buffer-sweeping: those collections then free the buffers (the
# decoder's WebAssembly heap among them) inside the gc() call, not in a task queued for the
# one platform thread, which after a first inference is busy compiling the runtime's hot
# functions: the memory came back 5-90 ms after the answer, often after the client had it
# (docs/DECISIONS.md, "Memory back after a large job").
CMD ["node", "--v8-pool-size=1", "--expose-gc", "--no-concurrent-array-buffer-sweeping", "dist/main.js"]

# ---- native (opt-in: --target native): onnxruntime-node with this platform's binaries
# only (the package carries macOS, Windows and both Linux architectures), backend native.
FROM build AS native-files
RUN mkdir -p /out && cd node_modules/onnxruntime-node \
 && arch=$(node -p process.arch) \
 && cp -r --parents package.json dist "bin/napi-v6/linux/$arch" /out/ \
 && test -f "/out/bin/napi-v6/linux/$arch/onnxruntime_binding.node"

FROM service AS native
COPY --from=native-files /out /app/node_modules/onnxruntime-node
ENV INFERENCE_BACKEND=native

# ---- gpu (opt-in: --target gpu): the service on Deno, whose WebGPU drives the GPU through
# Vulkan; `auto` runs the default model's GPU form there and WebAssembly elsewhere
# (docs/DEPLOY.md, "GPU hosts"). The NVIDIA Container Toolkit mounts the driver into the
# container (its Vulkan driver only with the graphics capability, set below); the image
# brings what Debian's GPU images have beside it, the Vulkan loader and libglvnd, unpacked
# without their Mesa dependencies.
FROM build AS gpu-files
COPY deploy/gpu-library-packages.txt ./deploy/
# The default model's GPU form (IS-Net's int8 weights as float16, 88 MB) is made now and
# checked by sha256: made at the first start instead, it would need a writable models/ or
# cache folder, which a read-only root filesystem does not have. Deno is the npm
# devDependency's binary for this platform (npm ci --ignore-scripts leaves it in its
# platform package).
RUN node --input-type=module -e "const { main } = await import('./dist/cli/main.js'); process.exitCode = await main(['assemble', 'int8-static-gpu'])" \
 && node deploy/verify-models.mjs . int8-static-gpu \
 && mkdir -p /out/models /out/bin /out/root \
 && mv models/isnet-int8-static-gpu.onnx /out/models/ \
 && cp "$(dirname "$(node -p "require.resolve('@deno/linux-' + process.arch + '-glibc/package.json')")")/deno" /out/bin/deno \
 && /out/bin/deno --version \
 && cd /tmp && apt-get update -qq \
 && apt-get download $(grep -v '^#' /app/deploy/gpu-library-packages.txt) \
 && for deb in *.deb; do dpkg -x "$deb" /out/root; done \
 && rm -rf /out/root/usr/share/doc/*/changelog* /out/root/usr/share/lintian /var/lib/apt/lists/* \
 && test -e /out/root/usr/lib/*/libvulkan.so.1 -a -e /out/root/usr/lib/*/libGLdispatch.so.0

# The production dependencies as the service prunes them, plus the WebGPU bundle Deno
# imports for onnxruntime-web/webgpu and the asyncify build it loads.
FROM deps AS gpu-deps
COPY --from=build /app/node_modules/onnxruntime-web/dist/ort.webgpu.bundle.min.mjs /app/node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.mjs /app/node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.wasm ./node_modules/onnxruntime-web/dist/

FROM ${GPU_BASE_IMAGE} AS gpu
# As the service's, plus: DENO_WEBGPU_BACKEND keeps wgpu on Vulkan (its OpenGL backend
# loads libEGL, whose exit handler can abort the process at exit: deno.json); no update
# check or prompt from Deno; and the NVIDIA Container Toolkit's variables: every GPU, and
# the graphics capability, without which it mounts no Vulkan driver.
ENV NODE_ENV=production \
    PORT=8080 \
    HOST=0.0.0.0 \
    DATA_DIR=/data \
    MALLOC_MMAP_THRESHOLD_=1048576 \
    DENO_WEBGPU_BACKEND=vulkan \
    DENO_NO_UPDATE_CHECK=1 \
    DENO_NO_PROMPT=1 \
    NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics
WORKDIR /app
COPY --from=gpu-files /out/root/ /
COPY --from=gpu-files /out/bin/deno /usr/local/bin/deno
COPY --from=gpu-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/models ./models
COPY --from=gpu-files /out/models/ ./models/
COPY package.json ./
COPY migrations ./migrations
COPY wasm/README.md ./wasm/
# `deno run -A bin/pixeldrop.mjs doctor` in the container says what the GPU check finds.
COPY bin/pixeldrop.mjs ./bin/
COPY --from=build --chown=1000:1000 /data-template /data
RUN ldconfig \
 && useradd --uid 1000 --user-group --create-home --shell /usr/sbin/nologin pixeldrop \
 && ln -s ../node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.mjs ../node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.wasm \
          ../node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.mjs ../node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.wasm wasm/ \
 && chmod 700 /data
USER pixeldrop
EXPOSE 8080
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=15s --timeout=5s --start-period=120s --retries=3 \
  CMD ["deno", "eval", "const r = await fetch('http://127.0.0.1:' + (Deno.env.get('PORT') || 8080) + '/readyz').catch(() => null); Deno.exit(r?.ok ? 0 : 1)"]
# All permissions, as `deno task start`. The V8 flags are the service's (above): gc()
# for the pool workers' release after a large job, freed within the call.
CMD ["deno", "run", "-A", "--v8-flags=--expose-gc,--no-concurrent-array-buffer-sweeping", "dist/main.js"]

# ---- gpu-software-check (deploy/image-check.sh --gpu): the gpu image plus Mesa's
# software Vulkan driver (lavapipe), so that a machine without a GPU shows what the image
# does there: it starts, finds only a software adapter and serves on WebAssembly.
FROM gpu AS gpu-software-check
USER root
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends mesa-vulkan-drivers >/dev/null && rm -rf /var/lib/apt/lists/*
USER pixeldrop
# Mesa's window-system code asks for a runtime folder, and says so on stderr without one.
ENV XDG_RUNTIME_DIR=/tmp

# The last stage is what a plain `docker build .` produces: the service without native.
FROM service
