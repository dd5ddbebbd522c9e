# syntax=docker/dockerfile:1
# conndrain admission webhook: `conndrain webhook` on Node 24, distroless, non-root.
# No compiler and no native addon: `npm ci --ignore-scripts` skips the root postinstall that
# builds native/ (the webhook never loads it; webhook/ cannot import native/ or agent/). The
# one CLI program (cli/main.ts) imports the netlink-native workspace package's JavaScript
# (types, NetlinkError, IPVS key helpers), so its TypeScript is copied and compiled to
# native/dist by `npm run build`; its C sources and addon never are. kube/ (the lean
# Kubernetes client of the agent and of `conntrack stale`/`doctor`) is compiled for the same
# reason; the webhook itself does not use it (--tls-mode=self-signed goes through
# @kubernetes/client-node's generated CoreV1/Admissionregistration clients).
# Build from the repository root:  docker build -f images/webhook.Dockerfile -t conndrain-webhook .
# BASE builds; RUNTIME runs (its Node at /nodejs/bin/node, as in distroless). The tests pass
# one offline-built image for both (test/images/offline-base.sh).
ARG BASE=node:24-bookworm-slim
ARG RUNTIME=gcr.io/distroless/nodejs24-debian12:nonroot

FROM ${BASE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
COPY native/package.json native/tsconfig.json ./native/
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY log ./log
COPY time ./time
COPY webhook ./webhook
COPY kube ./kube
COPY agent ./agent
COPY cli ./cli
COPY native/lib ./native/lib
# `npm run build` type-checks and bundles the CLI into dist/cli with scripts/build-cli.mjs.
COPY scripts/build-cli.mjs ./scripts/
RUN npm run build \
 && npm prune --omit=dev --ignore-scripts --no-audit --no-fund

FROM ${RUNTIME} AS runtime
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
# node_modules/netlink-native links to ../native: its JavaScript only (no addon here).
COPY --from=build /src/native/package.json ./native/package.json
COPY --from=build /src/native/dist ./native/dist
COPY bin/conndrain.mjs ./bin/conndrain.mjs
# 65532 = distroless "nonroot"; the Deployment runs it with runAsNonRoot and a read-only root.
USER 65532:65532
EXPOSE 9443
ENTRYPOINT ["/nodejs/bin/node", "/app/bin/conndrain.mjs"]
CMD ["webhook"]
