#
# One multi-stage build for every Billstream service; pick one with --target:
#   docker build --target gateway -t billstream/gateway .
# Targets: gateway, customer, wallet, ingestion-aggregator, webhook-dispatcher, billing, entitlements, standalone.
# Each runtime image: Node 20 slim, production dependencies only, the built libs and the one
# service, a non-root user, and a HEALTHCHECK on the service's /healthz.

ARG NODE_IMAGE=node:20-bookworm-slim

# ---- the workspace manifests only, so `npm ci` stays cached until a package.json changes
FROM ${NODE_IMAGE} AS manifests
WORKDIR /src
COPY . .
RUN mkdir -p /manifests \
 && cp package.json package-lock.json /manifests/ \
 && find libs services -mindepth 2 -maxdepth 2 -name package.json -exec cp --parents {} /manifests/ \;

# ---- compile TypeScript with the dev dependencies
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY --from=manifests /manifests/ ./
# A CA bundle for TLS to the npm registry (a proxy with its own CA) comes in as the optional build
# secret `ca` (`docker build --secret id=ca,src=/etc/ssl/certs/ca-certificates.crt`): it is
# mounted for this command only and never stored in a layer.
RUN --mount=type=secret,id=ca \
    if [ -s /run/secrets/ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca npm_config_cafile=/run/secrets/ca; fi \
 && npm ci --no-audit --no-fund
COPY tsconfig.base.json tsconfig.build.json ./
COPY libs ./libs
COPY services ./services
RUN npx tsc -b tsconfig.build.json \
 && npm run build --silent -w @billstream/console \
 && mkdir -p /out \
 && for dir in libs/* services/*; do \
      if [ -d "$dir/dist" ]; then mkdir -p "/out/$dir" && cp -r "$dir/dist" "$dir/package.json" "/out/$dir/"; fi; \
    done \
 && find /out \( -name '*.d.ts' -o -name '*.map' -o -name '*.test.js' \) -delete

# ---- production dependencies plus the compiled packages: the tree every runtime image copies from
FROM ${NODE_IMAGE} AS app
WORKDIR /app
COPY --from=manifests /manifests/ ./
RUN --mount=type=secret,id=ca \
    if [ -s /run/secrets/ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca npm_config_cafile=/run/secrets/ca; fi \
 && npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /out/ ./

# ---- common runtime settings
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    LOG_LEVEL=info \
    KAFKAJS_NO_PARTITIONER_WARNING=1
WORKDIR /app
COPY --from=app /app/package.json ./
COPY --from=app /app/node_modules ./node_modules
COPY --from=app /app/libs ./libs
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
USER node

FROM runtime AS gateway
COPY --from=app /app/services/gateway ./services/gateway
# The console's static files (ADR 0050), served at /console.
COPY --from=app /app/services/console ./services/console
ENV PORT=8080
EXPOSE 8080
CMD ["node", "--max-semi-space-size=16", "--no-allocation-site-pretenuring", "services/gateway/dist/main.js"]

FROM runtime AS customer
COPY --from=app /app/services/customer ./services/customer
ENV PORT=8081
EXPOSE 8081
CMD ["node", "services/customer/dist/main.js"]

FROM runtime AS wallet
COPY --from=app /app/services/wallet ./services/wallet
ENV PORT=8082
EXPOSE 8082
CMD ["node", "services/wallet/dist/main.js"]

FROM runtime AS ingestion-aggregator
COPY --from=app /app/services/ingestion-aggregator ./services/ingestion-aggregator
ENV PORT=8083
EXPOSE 8083
CMD ["node", "--max-semi-space-size=16", "services/ingestion-aggregator/dist/main.js"]

FROM runtime AS webhook-dispatcher
COPY --from=app /app/services/webhook-dispatcher ./services/webhook-dispatcher
ENV PORT=8084
EXPOSE 8084
CMD ["node", "services/webhook-dispatcher/dist/main.js"]

FROM runtime AS billing
COPY --from=app /app/services/billing ./services/billing
ENV PORT=8085
EXPOSE 8085
CMD ["node", "services/billing/dist/main.js"]

FROM runtime AS entitlements
COPY --from=app /app/services/entitlements ./services/entitlements
ENV PORT=8086
EXPOSE 8086
# The check's cache promotes what it reloads in the background: its old generation grows 4x its live size before a full GC (ADR 0031, ADR 0061).
CMD ["node", "--heap-growing-percent=300", "services/entitlements/dist/main.js"]

# All seven in one process (the embedded default: PGlite in /data and the in-process bus,
# or DATABASE_URL and KAFKA_BROKERS). `docker run -p 8080:8080 -v billstream:/data billstream/standalone`
FROM runtime AS standalone
COPY --from=app /app/services ./services
USER root
RUN mkdir -p /data && chown node:node /data
USER node
ENV PORT=8080 \
    DATA_DIR=/data
VOLUME ["/data"]
EXPOSE 8080
CMD ["node", "services/standalone/dist/main.js"]
