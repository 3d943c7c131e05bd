# syntax=docker/dockerfile:1
# The worker's container image: `docker build -t import-worker:<build-id> .`
# (docs/production.md). Three stages:
# - build: every dependency and the source; compiles to dist/ with the
#   prebuilt workflow bundle (`npm run build`);
# - dev-tools: build plus the service simulator, for deploy/compose.yaml only;
# - runtime (the default target): production dependencies, dist/ and bin/,
#   run as the unprivileged `node` user. No compiler, no tests, no simulator.
# test/deploy/image-build.test.ts runs these steps in a clean folder.
ARG NODE_VERSION=24

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json temporal.config.ts ./
COPY workflows ./workflows
COPY activities ./activities
COPY worker ./worker
RUN npm run build

FROM build AS dev-tools
COPY test/simulator ./test/simulator

FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# The npm cache lives in a build cache mount, never in the image.
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --no-audit --no-fund
COPY --from=build /app/dist ./dist
COPY bin ./bin
USER node
# WORKER_METRICS_PORT and WORKER_HEALTH_PORT, by default.
EXPOSE 9464 9465
# Liveness only: readiness (/readyz) says whether this worker should get work, which a restart does not fix.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.WORKER_HEALTH_PORT || 9465}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/worker/process/main.js"]
