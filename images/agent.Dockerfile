# syntax=docker/dockerfile:1
# conndrain node agent: `conndrain agent` on Node 24 with the netlink-native addon.
# The addon is compiled in the build stage (build-essential, python3, npm's bundled node-gyp,
# the image's own Node headers) by the root postinstall that `npm ci` runs; the runtime stage
# gets only the .node file. native/binding.gyp links no library beyond libc (raw netlink
# sockets), so the runtime needs no extra Debian package; same Debian release in both stages
# keeps the glibc the addon was linked against.
# Build from the repository root:  docker build -f images/agent.Dockerfile -t conndrain-agent .
# BASE: the image both stages start from (a Debian 12 with Node at /usr/local, npm included in
# the build stage). The tests pass an offline-built one (test/images/offline-base.sh).
ARG BASE=node:24-bookworm-slim

FROM ${BASE} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential python3 \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# node-gyp: use the headers shipped in this image instead of downloading them.
ENV npm_config_nodedir=/usr/local
COPY package.json package-lock.json tsconfig.json ./
# netlink-native is an npm workspace: npm ci links it into node_modules and the postinstall
# builds its addon (native/src) and compiles its TypeScript (native/lib -> native/dist).
COPY native/package.json native/binding.gyp native/tsconfig.json ./native/
COPY native/scripts ./native/scripts
# The postinstall's second step (scripts/build-cli.mjs) compiles the CLI; it skips here, where
# the sources are not copied yet, and `npm run build` below compiles them.
COPY scripts/build-cli.mjs ./scripts/
COPY native/src ./native/src
COPY native/lib ./native/lib
RUN npm ci --no-audit --no-fund \
 && test -f native/build/Release/netlink_native.node \
 && test -f native/dist/index.js
COPY tsconfig.build.json ./
COPY src ./src
COPY log ./log
COPY time ./time
COPY webhook ./webhook
COPY kube ./kube
COPY agent ./agent
COPY cli ./cli
RUN npm run build \
 && npm prune --omit=dev --ignore-scripts --no-audit --no-fund

FROM ${BASE} AS runtime
# npm and yarn are not needed at run time: less to patch.
# nftables: flow pinning replaces conndrain's table with `nft -j -f` (JSON transaction).
RUN apt-get update \
 && apt-get install -y --no-install-recommends nftables \
 && rm -rf /var/lib/apt/lists/*
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack /opt/yarn-* /usr/local/bin/yarn /usr/local/bin/yarnpkg
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
# node_modules/netlink-native links to ../native: the package's compiled JavaScript, and the
# addon its loader finds from the package root (native/build/Release/netlink_native.node).
COPY --from=build /src/native/package.json ./native/package.json
COPY --from=build /src/native/dist ./native/dist
COPY --from=build /src/native/build/Release/netlink_native.node ./native/build/Release/netlink_native.node
COPY bin/conndrain.mjs ./bin/conndrain.mjs
# Root, on purpose: the agent needs CAP_NET_ADMIN in its effective set, and Kubernetes grants
# no ambient capabilities, so a non-root process could not use the NET_ADMIN the DaemonSet
# adds. Every other capability is dropped there, and it is neither privileged nor able to
# escalate (allowPrivilegeEscalation: false, read-only root filesystem).
USER 0:0
EXPOSE 9901 9902
ENTRYPOINT ["node", "/app/bin/conndrain.mjs"]
CMD ["agent"]
