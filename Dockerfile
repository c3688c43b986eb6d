# The service's image: the packed package installed with its production dependencies, run as `node`.
#
#   docker build -t artifact-store .
#   docker run -p 8787:8787 -v artifact-data:/data -e ARTIFACT_STORE_JWT_SECRETS=main:$(openssl rand -hex 32) artifact-store
#
# Production mode: it refuses to start without ARTIFACT_STORE_JWT_SECRETS (or JWKS). Other commands run in
# place of `serve`: `docker run --rm -v artifact-data:/data artifact-store fsck`.
#
# Docker does not run where this is developed. test/package.test.ts runs this file's own lines without it:
# the install line marked below in a scratch folder, then the last stage's ENV, ENTRYPOINT + CMD and
# HEALTHCHECK there, and the README walkthrough and a SIGTERM drain against that process.

# Build: compile src/ to dist/ and pack the package, as `npm pack` does anywhere.
FROM node:20-bookworm AS build
WORKDIR /src
COPY package.json package-lock.json ./
# No scripts: `prepare` would build before the sources are here, and tsc needs no native module.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json README.md ./
COPY scripts ./scripts
COPY bin ./bin
COPY migrations ./migrations
COPY src ./src
RUN npm run build && npm pack --ignore-scripts

# Install: the tarball and its production dependencies. This image has python3, make and g++, which
# better-sqlite3 needs when no prebuilt binary of it can be downloaded.
FROM node:20-bookworm AS install
WORKDIR /app
COPY --from=build /src/artifact-store-*.tgz ./
# package.test.ts: install
RUN npm install --omit=dev --no-audit --no-fund ./artifact-store-*.tgz

# Runtime: Node, the installed package (dist/, bin/, migrations) and its production dependencies; no
# compiler, no sources, no dev dependencies. Same Debian release as the install stage, so the native
# module links against the same glibc.
FROM node:20-bookworm-slim
ENV ARTIFACT_STORE_ENV=production
ENV ARTIFACT_STORE_HOST=0.0.0.0
ENV ARTIFACT_STORE_DATA_DIR=/data
ENV PATH=/app/node_modules/.bin:$PATH
WORKDIR /app
COPY --from=install /app/node_modules ./node_modules
# SQLite, local blobs and the audit trail live here; a new named volume takes this owner.
RUN mkdir /data && chown node:node /data
VOLUME /data
USER node
EXPOSE 8787
# Node's fetch, no curl in the image. /readyz answers 503 once a SIGTERM has begun draining.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.ARTIFACT_STORE_PORT || 8787}/readyz`, { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Exec form: node is PID 1 and gets the SIGTERM of `docker stop`, which the service drains on
# (ARTIFACT_STORE_SHUTDOWN_GRACE_MS, 30 s by default; give `docker stop -t` at least that).
ENTRYPOINT ["node", "--max-semi-space-size=2", "/app/node_modules/artifact-store/bin/artifact-store.js"]
CMD ["serve"]
