# The service's image: the packed packages installed with the production dependencies package-lock.json
# names, run as `node`.
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

# Build: compile src/ to both packages' dist/ and pack them (artifact-store and artifact-store-sdk), as
# `npm run pack` does anywhere.
FROM node:24-bookworm AS build
WORKDIR /src
COPY package.json package-lock.json ./
COPY packages/sdk/package.json ./packages/sdk/
# No scripts: `prepare` would build before the sources are here, and tsc needs no native module.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json README.md ./
COPY packages/sdk/tsconfig.build.json packages/sdk/README.md ./packages/sdk/
COPY scripts ./scripts
COPY bin ./bin
COPY migrations ./migrations
COPY src ./src
RUN npm run build && npm pack --workspaces --include-workspace-root --ignore-scripts

# Install: the packed server package is the app, the SDK package its workspace, and npm ci installs exactly
# the production dependencies package-lock.json names (never newer ones in range). Install scripts are off,
# and none is needed: better-sqlite3 13 carries its N-API binaries. The package's bin is linked where PATH
# finds it.
FROM node:24-bookworm AS install
WORKDIR /app
COPY --from=build /src/package-lock.json /src/artifact-store-*.tgz ./
# package.test.ts: install
RUN mkdir -p packages/sdk && tar -xzf artifact-store-[0-9]*.tgz --strip-components=1 && tar -xzf artifact-store-sdk-*.tgz -C packages/sdk --strip-components=1 && rm artifact-store-*.tgz && npm ci --omit=dev --ignore-scripts --no-audit --no-fund && mkdir -p node_modules/.bin && ln -s ../../bin/artifact-store.js node_modules/.bin/artifact-store

# Runtime: Node, the installed packages (dist/, bin/, migrations) and their production dependencies; no
# compiler, no sources, no dev dependencies. Same Debian release as the install stage, so the native
# module links against the same glibc.
FROM node:24-bookworm-slim
ENV ARTIFACT_STORE_ENV=production
ENV ARTIFACT_STORE_HOST=0.0.0.0
ENV ARTIFACT_STORE_DATA_DIR=/data
# `artifact-store` on PATH: `docker exec … artifact-store token` runs the installed bin.
ENV PATH=/app/node_modules/.bin:$PATH
WORKDIR /app
COPY --from=install /app ./
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
ENTRYPOINT ["node", "--max-semi-space-size=2", "/app/bin/artifact-store.js"]
CMD ["serve"]
