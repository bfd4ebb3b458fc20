# Pixeldrop for CPU-only hosts. The model is assembled from the npm package at build
# time (npm ci runs scripts/assemble-models.mjs), so the image needs no network at run time.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
COPY scripts ./scripts
COPY models/manifest.json ./models/manifest.json
COPY wasm/README.md ./wasm/README.md
RUN npm ci --omit=dev --no-audit --no-fund
COPY . .

FROM node:20-bookworm-slim
ENV NODE_ENV=production PORT=8080 DATA_DIR=/data
WORKDIR /app
COPY --from=build --chown=node:node /app /app
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=3s --start-period=120s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "--import", "tsx", "src/main.ts"]
