# The service as an image: `docker build -t conversational-ai-platform .` (or `podman build`), then
#   docker run -d -p 8080:8080 -v platform-data:/app/data conversational-ai-platform
# and read the first admin key from `docker logs`. See docs/deployment.md.
#
# llama.cpp binaries (local GGUF models): the image carries node-llama-cpp's CPU build for x64 Linux
# only. `--build-arg LLAMA_GPU=cuda` adds its CUDA 12 build (with the CUDA runtime libraries it
# ships, ~540 MB more; run with the NVIDIA Container Toolkit, `--gpus all`, and LOCAL_MODEL_GPU=auto),
# `vulkan` its Vulkan build (plus libvulkan1), `all` both. Nothing else differs between them.
ARG LLAMA_GPU=none

# ---- dependencies: every package, from the lockfile alone ----
FROM node:20-bookworm-slim AS dependencies
# better-sqlite3 compiles its addon with node-gyp (the Node headers are in the base image).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ARG LLAMA_GPU
# node-llama-cpp's postinstall would look for (or build) binaries; the image uses the prebuilt ones.
ENV NODE_LLAMA_CPP_SKIP_DOWNLOAD=true
COPY package.json package-lock.json ./
COPY web/package.json web/
COPY scripts/container/image-lockfile.mjs scripts/container/
RUN node scripts/container/image-lockfile.mjs "$LLAMA_GPU" \
 && npm ci --no-audit --no-fund \
 && node -e "require('better-sqlite3')(':memory:')" \
 && test -d node_modules/@node-llama-cpp/linux-x64 && test -d node_modules/vite

# ---- build: the service bundle (dist/) and the dashboard (web/dist) ----
FROM dependencies AS build
COPY tsconfig.json ./
COPY scripts scripts
COPY src src
COPY web web
RUN npm run build:server \
 && npx tsx web/scripts/generate-api-types.ts \
 && npm run bundle -w web \
 && test -f dist/main.js && test -f web/dist/index.html

# ---- production dependencies: the service's only (no dev tools, no packages of the dashboard's
# sources), without what Node never loads there (scripts/container/trim-node-modules.mjs, which also
# drops what the bundle carries: build-server.mjs's list). From the dependencies alone, not the
# sources: a change to the sources rebuilds neither this stage nor the runtime's node_modules layer,
# which stays the same layer from release to release. ----
FROM dependencies AS production-dependencies
COPY scripts/build-server.mjs scripts/
COPY scripts/container/trim-node-modules.mjs scripts/container/
RUN npm prune --omit=dev --no-workspaces --include-workspace-root --no-audit --no-fund \
 && rm -rf node_modules/.cache \
 && node scripts/container/trim-node-modules.mjs \
 && test ! -d node_modules/vite && test ! -d node_modules/react && test ! -d node_modules/vitest \
 && test -d node_modules/fastify

# ---- runtime ----
FROM node:20-bookworm-slim
ARG LLAMA_GPU
# PocketSphinx, the built-in offline recogniser, runs as a program with its US English model.
# (eSpeak NG, the built-in synthesiser, is WebAssembly inside the service: no package needed.)
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      pocketsphinx pocketsphinx-en-us \
      $(case "$LLAMA_GPU" in vulkan|all) echo libvulkan1 ;; esac) \
 && apt-get clean && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb \
 && command -v pocketsphinx_continuous && test -d /usr/share/pocketsphinx/model/en-us
WORKDIR /app
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    NODE_LLAMA_CPP_SKIP_DOWNLOAD=true
COPY --from=production-dependencies /app/package.json ./
COPY --from=production-dependencies /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY --from=build /app/web/dist web/dist
# The native addons load here as they will at run time (a build can end "successfully" without).
COPY --from=build /app/scripts/container/check-native-addons.mjs ./
RUN node check-native-addons.mjs && rm check-native-addons.mjs \
 && mkdir -p data && chown node:node data
# The SQLite file (data/platform.db) and downloaded models (data/models): DATABASE_URL and MODELS_DIR
# default to them.
VOLUME ["/app/data"]
USER node
EXPOSE 8080
# Needs no curl: Node's fetch. PORT as the service reads it (a port set only in the config file
# needs a HEALTHCHECK of its own).
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/v1/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# The base image's entrypoint execs this: Node is PID 1 and receives SIGTERM itself (the service
# finishes in-flight requests, up to SHUTDOWN_TIMEOUT_MS, and exits 0).
CMD ["node", "dist/main.js"]
