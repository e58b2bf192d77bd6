# syntax=docker/dockerfile:1
# Production image: build with the dev tools, run with production dependencies only, as a non-root user.
#   docker build -t svc-auth-sms .
#   docker run -e DATABASE_URL=... -e SVC_JWT_SECRET=... -p 8080:8080 svc-auth-sms

FROM node:22-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# The same script CI runs: package files, `npm ci --omit=dev`, the built dist/.
RUN npm run build && scripts/build-runtime.sh /runtime

FROM node:22-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080
WORKDIR /app
# Owned by root, run as `node`: the process cannot rewrite its own code or dependencies.
COPY --from=build /runtime ./
USER node
EXPOSE 8080
# Liveness asks nothing of the database (routes/actuator), so a database outage does not mark every container
# unhealthy; node's own fetch, no curl in the image.
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/actuator/health/liveness`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The same Node flags as `npm start` (package.json; docs/operations.md#node-flags).
CMD ["node", "--max-semi-space-size=64", "dist/server.js"]
