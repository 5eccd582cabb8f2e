# syntax=docker/dockerfile:1
#
# The Petstore GraphQL gateway as a container image. Unbuilt here (no
# container engine in this environment): see README "Operations".
#
#   docker build -t petstore-gateway .                      # the server (target: runtime)
#   docker build -t petstore-gateway-migrate --target migrate .   # npm run db:migrate, one-shot
#
# The server needs DATABASE_URL and AUTH_JWT_SECRET (or AUTH_JWKS_URL with
# AUTH_ISSUER and AUTH_AUDIENCE) from the environment: no secret is baked in.

ARG NODE_IMAGE=node:24-slim

# ---- build: every dependency, the generated Prisma client, the compiled server ----
FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV CHECKPOINT_DISABLE=1 \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false \
    NPM_CONFIG_AUDIT=false
COPY package.json package-lock.json ./
# Scripts later, once the schema is in: postinstall runs `prisma generate`.
RUN npm ci --ignore-scripts
COPY prisma.config.ts tsconfig.json tsconfig.build.json ./
COPY prisma ./prisma
RUN npm run generate
COPY src ./src
# The released contracts: the OpenAPI document takes its info.version from contract/release.json.
COPY contract ./contract
RUN npm run build

# ---- migrate: the one-shot `npm run db:migrate` (tsx on the sources), as the compose file runs it ----
FROM build AS migrate
RUN chown -R node:node /app
USER node
CMD ["npm", "run", "db:migrate"]

# ---- runtime: production dependencies, the compiled server and the migrations it checks for ----
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=4000 \
    DATA_DIR=/var/lib/petstore \
    NPM_CONFIG_UPDATE_NOTIFIER=false
WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts: the Prisma client was generated (and compiled into dist/) in the build stage.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
    && npm cache clean --force \
    && mkdir -p "$DATA_DIR" \
    && chown node:node "$DATA_DIR"
COPY --from=build /app/dist ./dist
# /readyz compares the applied migrations with these; MIGRATE_ON_START applies them.
COPY prisma ./prisma
USER node
EXPOSE 4000
# Liveness only: /readyz (database and migrations) is for the load balancer, not for restarts.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 4000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node itself as PID 1 (no npm in between), so SIGTERM reaches the gateway's graceful shutdown.
STOPSIGNAL SIGTERM
# The same node flags as package.json's start:prod (a young generation of 16 MB: see src/heap.ts).
CMD ["node", "--max-semi-space-size=16", "dist/src/main.js"]
