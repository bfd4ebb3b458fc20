# Pixeldrop for CPU-only hosts (no GPU, no CUDA). One image serves both roles of the
# split deployment: a gateway when PRODUCT_URL is set, gateway + product engine when not
# (see docs/DEPLOY.md). Everything the service needs at run time is in the image: the
# model is assembled at build time from the @imgly/background-removal-data npm package
# and checked by sha256, and the onnxruntime-web runtime is copied into wasm/, so a
# running container downloads nothing.
#
#   docker build -t pixeldrop .
#   docker run -p 8080:8080 -e OPERATOR_TOKEN=... pixeldrop
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# onnxruntime-node's install script fetches CUDA provider binaries on some hosts; its CPU
# binaries are inside the npm package already. Skipped here and in .npmrc.
ENV ONNXRUNTIME_NODE_INSTALL=skip
# Only what npm ci and its prepare step (scripts/assemble-models.mjs, which runs
# src/assets/assemble.ts and its one import, src/inference/file-hash.ts) read, so other
# source edits do not invalidate the cached dependency layer.
COPY package.json package-lock.json .npmrc ./
COPY scripts/assemble-models.mjs ./scripts/
COPY src/assets/assemble.ts ./src/assets/
COPY src/inference/file-hash.ts ./src/inference/
COPY models/manifest.json ./models/
COPY wasm/README.md ./wasm/
# Production dependencies only. tsx is one of them on purpose: the service runs its
# TypeScript through tsx's loader (CMD below); typescript, deno, playwright-core and the
# test tools are devDependencies and stay out. prepare assembles models/*.onnx,
# checking every chunk and the whole file by sha256; a mismatch fails the build.
RUN npm ci --omit=dev --no-audit --no-fund
# Verify again with a read-only check (assemble-models repairs; this one only fails).
COPY deploy/verify-models.mjs ./deploy/
RUN node deploy/verify-models.mjs .
# Slim the copy: the chunked model package (~350 MB) is not read once models/ is built,
# and onnxruntime-node's macOS and Windows binaries (~220 MB) never load on Linux.
RUN rm -rf node_modules/@imgly/background-removal-data \
 && find node_modules/onnxruntime-node/bin -mindepth 2 -maxdepth 2 -type d ! -name linux -exec rm -rf {} +

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    PORT=8080 \
    HOST=0.0.0.0 \
    DATA_DIR=/data
WORKDIR /app
# Application files stay owned by root and read-only to the service user; only DATA_DIR
# (PGlite when DATABASE_URL is unset, the generated key pepper) is writable.
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/models ./models
COPY --from=build /app/wasm ./wasm
# tsconfig.json is read at run time: tsx takes the console's JSX settings
# (jsxImportSource hono/jsx) from it.
COPY package.json tsconfig.json ./
COPY bin ./bin
COPY migrations ./migrations
COPY src ./src
COPY scripts/assemble-models.mjs ./scripts/
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 8080
# main.ts drains in-flight requests for up to DEADLINE_MS + 10 s (150 s) after SIGTERM, so give
# containers a stop timeout above that (compose stop_grace_period, k8s
# terminationGracePeriodSeconds).
STOPSIGNAL SIGTERM
# /readyz: stores reachable and, where the engine runs, the model warm. A WASM session
# takes up to ~10 s to start on a loaded 2-core machine, hence the start period.
HEALTHCHECK --interval=15s --timeout=5s --start-period=120s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "--import", "tsx", "src/main.ts"]
