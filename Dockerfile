# syntax=docker/dockerfile:1
# The iam daemon (and its operator CLI) as a container image; docs/deployment.md, "Container".
#
#   docker build -t iam .
#   docker run -d --name iam -p 127.0.0.1:8080:8080 -v iam-data:/var/lib/iam \
#     --read-only --tmpfs /tmp iam
#   docker exec iam node bin/iam.js tenants list
#
# Two stages. `build` has Python, make and g++ for better-sqlite3's native module (compiled when
# no prebuilt binary matches) and every dependency, TypeScript included; the runtime stage gets
# the compiled service and the production node_modules only, and runs as an unprivileged user
# that can write nowhere but the data directory (a volume) and /tmp.

ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY package.json package-lock.json ./
# Install scripts off for every package, then run the one package.json's "allowScripts" permits
# (better-sqlite3), whether or not this image's npm honours allowScripts itself. It also skips the
# project's own `prepare` (the TypeScript build), which cannot run before the sources are here.
RUN npm ci --ignore-scripts --no-audit --no-fund \
  && npm rebuild better-sqlite3
COPY tsconfig.json ./
COPY bin ./bin
COPY cli ./cli
COPY daemon ./daemon
COPY shared ./shared
COPY migrations ./migrations
# Build first, then drop the development dependencies: `npm ci --omit=dev` would run `prepare`
# (tsc) without TypeScript, which is one of them.
RUN npm run build \
  && npm prune --omit=dev --ignore-scripts --no-audit --no-fund \
  && npm cache clean --force

FROM ${NODE_IMAGE}
# A fixed numeric user, so that `runAsNonRoot` checks (Kubernetes) can verify it without
# /etc/passwd, and so that a bind-mounted data directory can be chown'ed to it in advance. Its
# home is the data directory, as under systemd: the CLI's stored login (`iam login`) lands there.
RUN groupadd --system --gid 10001 iam \
  && useradd --system --uid 10001 --gid iam --home-dir /var/lib/iam --no-create-home \
    --shell /usr/sbin/nologin iam \
  && install -d -o iam -g iam -m 0700 /var/lib/iam
WORKDIR /opt/iam
# Owned by root and not writable by the service: the code is read-only even without --read-only.
COPY --from=build /src/package.json /src/oclif.manifest.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/bin ./bin
COPY --from=build /src/dist/daemon ./dist/daemon
COPY --from=build /src/dist/cli ./dist/cli
COPY --from=build /src/dist/shared ./dist/shared
COPY --from=build /src/dist/migrations ./dist/migrations

# Inside a container the daemon must listen on all interfaces (its default is 127.0.0.1, which
# nothing outside the container reaches). The SQLite file and the generated secret.key go to
# the data directory, the one place it writes (with MariaDB, set IAM_DATABASE_URL to a mysql://
# URL; secret.key and the federation metadata downloads still go there). Every other variable
# keeps its built-in default; see systemd/iam.env.example for the full list.
ENV IAM_HOST=0.0.0.0 \
  IAM_PORT=8080 \
  IAM_DATA_DIR=/var/lib/iam \
  IAM_DATABASE_URL=sqlite:/var/lib/iam/iam.db
VOLUME ["/var/lib/iam"]
EXPOSE 8080
USER 10001:10001

# /readyz answers 200 once the database answers and the migrations are current, 503 before
# (docs/deployment.md). The image has no curl: node's fetch does it. The first start migrates,
# hence the start period.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.IAM_PORT||8080)+'/readyz',{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]

# SIGTERM (docker stop) drains in-flight requests for IAM_SHUTDOWN_TIMEOUT_MS (10 s) before the
# daemon exits: give `docker stop` more than that (--time 20; compose: stop_grace_period).
CMD ["node", "dist/daemon/main.js"]
