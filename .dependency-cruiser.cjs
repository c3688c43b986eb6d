/**
 * The layer rules of docs/architecture.md, checked by `npm run lint:layers` (part of `npm test`).
 * Each rule names the layer and says what it may not import; the doc says why.
 */
const layer = (name) => `^src/${name}/`;
const outside = (...allowed) => `^src/(?!(${allowed.join('|')})/)[^/]+/`;
/** The files of the folders that are one module each, but their fronts (index.ts). */
const MODULE_INTERNALS =
  '^src/(service/retention|service/views|db/sqlite|db/d1|db/postgres|mcp/transform)/(?!index\\.ts$)[^/]+$';
/** What a runtime implements the views' sandbox with: the seam, and the parsers its Node worker runs. */
const VIEWS_SANDBOX_SEAM = '^src/service/views/(sandbox|inline-sandbox|json-query)\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'core-imports-nothing',
      comment: 'core/ is the bottom layer: schemas, errors, ids, config, shared types. It imports no other layer.',
      severity: 'error',
      from: { path: layer('core') },
      to: { path: outside('core') },
    },
    {
      name: 'web-standards-only',
      comment:
        'core/, the SDK (client/), the MCP layer, the framework adapters and the Worker run on any runtime: no node:* modules.',
      severity: 'error',
      from: { path: '^src/(core|client|mcp|adk|ai-sdk|langchain|worker)/|^src/worker\\.ts$|^src/index\\.ts$' },
      // A dynamic import() is a runtime seam (content.ts reads file:// URIs only where node:fs exists).
      to: { dependencyTypes: ['core'], dynamic: false },
    },
    {
      name: 'db-imports-core-only',
      comment: 'The repositories (SQLite, D1) know the schema and core types, nothing above.',
      severity: 'error',
      from: { path: layer('db') },
      to: { path: outside('core', 'db') },
    },
    {
      name: 'blob-imports-core-only',
      comment: 'The blob stores (fs, memory, S3, R2) know bytes and core types, nothing above.',
      severity: 'error',
      from: { path: layer('blob') },
      to: { path: outside('core', 'blob') },
    },
    {
      name: 'service-below-transports',
      comment: 'The service knows storage (db/, blob/) and core, never HTTP, the SDK, MCP, the CLI or a runtime.',
      severity: 'error',
      from: { path: layer('service') },
      to: { path: outside('core', 'db', 'blob', 'service') },
    },
    {
      name: 'service-not-http',
      comment: 'The service answers every transport alike: it never imports the HTTP layer.',
      severity: 'error',
      from: { path: layer('service') },
      to: { path: layer('http') },
    },
    {
      name: 'module-fronts-only',
      comment:
        "A folder that is one module is imported through its front (index.ts); its other files are the module's private helpers. The views' sandbox seam (sandbox.ts, and the parsers its Node worker runs) is the runtimes' to implement.",
      severity: 'error',
      from: { path: '^src/(.+)/[^/]+$' },
      to: {
        path: MODULE_INTERNALS,
        pathNot: ['^src/$1/', VIEWS_SANDBOX_SEAM],
      },
    },
    {
      name: 'module-fronts-only',
      comment: 'The same, for the entry files at the top of src/ (index.ts, node.ts, blob.ts, worker.ts).',
      severity: 'error',
      from: { path: '^src/[^/]+$' },
      to: { path: MODULE_INTERNALS, pathNot: VIEWS_SANDBOX_SEAM },
    },
    {
      name: 'db-plans-are-db-private',
      comment: 'The SQL both repositories run (db/plans/) is theirs: the rest of the code asks a repository.',
      severity: 'error',
      from: { pathNot: '^src/db/' },
      to: { path: '^src/db/plans/' },
    },
    {
      name: 'client-imports-core-only',
      comment: 'The SDK (artifact-store/client) is browser-safe and knows only core: no service, no server code.',
      severity: 'error',
      from: { path: layer('client') },
      to: { path: outside('core', 'client') },
    },
    {
      name: 'mcp-imports-core-and-client',
      comment:
        'The MCP layer stores through the ArtifactStore interface; it never reaches into the service or storage.',
      severity: 'error',
      from: { path: layer('mcp') },
      to: { path: outside('core', 'client', 'mcp') },
    },
    {
      name: 'adk-imports-core-and-client',
      comment: "The ADK adapter stores through the ArtifactStore interface's named versions, like any SDK user.",
      severity: 'error',
      from: { path: layer('adk') },
      to: { path: outside('core', 'client', 'adk') },
    },
    {
      name: 'adk-types-only',
      comment:
        '@google/adk and @google/genai are optional peers: the adapter imports their types only, so nothing loads them.',
      severity: 'error',
      from: { path: layer('adk') },
      to: { path: 'node_modules/@google/(adk|genai)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'ai-sdk-imports-core-client-mcp',
      comment:
        "The Vercel AI SDK adapter stores through the ArtifactStore interface and the MCP layer's transformer and guardrail, like any SDK user.",
      severity: 'error',
      from: { path: layer('ai-sdk') },
      to: { path: outside('core', 'client', 'mcp', 'ai-sdk') },
    },
    {
      name: 'ai-sdk-types-only',
      comment: 'ai and @ai-sdk/* are optional peers: the adapter imports their types only, so nothing loads them.',
      severity: 'error',
      from: { path: layer('ai-sdk') },
      to: { path: 'node_modules/(ai|@ai-sdk/[^/]+)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'langchain-imports-core-client-mcp',
      comment:
        "The LangChain.js adapter stores through the ArtifactStore interface and the MCP layer's transformer, tools and guardrail, like any SDK user.",
      severity: 'error',
      from: { path: layer('langchain') },
      to: { path: outside('core', 'client', 'mcp', 'langchain') },
    },
    {
      name: 'langchain-peers-only',
      comment:
        '@langchain/core and @langchain/langgraph-checkpoint are optional peers (the app has them); @langchain/langgraph itself, langchain and the providers are never loaded.',
      severity: 'error',
      from: { path: layer('langchain') },
      to: {
        path: 'node_modules/(langchain|@langchain/(?!core/|langgraph-checkpoint/)[^/]+)/',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'sdk-package-dependencies',
      comment:
        'core/, client/, mcp/ and the framework adapters (adk/, ai-sdk/, langchain/) are the artifact-store-sdk package: they import only what packages/sdk/package.json declares (no native module, no AWS SDK, no server library).',
      severity: 'error',
      from: { path: '^src/(core|client|mcp|adk|ai-sdk|langchain)/' },
      to: {
        path: 'node_modules/',
        pathNot:
          'node_modules/(zod|eventsource-parser|file-type|mime|image-size|@modelcontextprotocol/sdk|@google/adk|@google/genai|ai|@ai-sdk/[^/]+|@langchain/(core|langgraph-checkpoint))/',
      },
    },
    {
      name: 'http-asks-the-service',
      comment:
        'Routes ask the service (ArtifactService, ServiceOperations); they never read the repository or blob store.',
      severity: 'error',
      from: { path: layer('http') },
      to: { path: outside('core', 'service', 'mcp', 'http') },
    },
    {
      name: 'compose-is-runtime-neutral',
      comment: 'The composition root runs on Node and Workers alike: it takes drivers, it does not open them.',
      severity: 'error',
      from: { path: layer('compose') },
      to: { path: '^src/(node|worker|cli|client|ui)/|^src/(node|worker)\\.ts$' },
    },
    {
      name: 'node-runtime-not-worker',
      comment: "Node's startup machinery does not load the Worker's, nor the CLI.",
      severity: 'error',
      from: { path: '^src/node/|^src/node\\.ts$' },
      to: { path: '^src/(worker|cli)/|^src/worker\\.ts$' },
    },
    {
      name: 'worker-runtime-not-node',
      comment: 'The Worker bundle carries no Node drivers (better-sqlite3, postgres.js, fs) and no Node startup code.',
      severity: 'error',
      from: { path: '^src/worker/|^src/worker\\.ts$' },
      to: {
        path: '^src/(node|cli)/|^src/node\\.ts$|^src/db/(sqlite|postgres)|^src/blob/(fs|node-hash|s3(?!-presign)[^/]*)\\.ts$',
      },
    },
    {
      name: 'cli-remote-commands-are-clients',
      comment: 'The CLI commands that talk to a running service use the SDK; they load no server code.',
      severity: 'error',
      from: { path: '^src/cli/(remote-commands|connection|big-put|progress)\\.ts$' },
      to: { path: '^src/(node|http|service|db|blob|compose|worker)/' },
    },
    {
      name: 'cli-main-loads-commands-when-run',
      comment:
        "The CLI's entry loads a command's modules when that command runs (import()): `put` or `--help` do not load SQLite, the blob drivers or the server.",
      severity: 'error',
      from: { path: '^src/cli/main\\.ts$' },
      to: {
        path: '^src/(node|http|service|db|blob|compose|worker|client|mcp)/|^src/cli/(admin|maintenance|remote|token|gateway)-commands?\\.ts$|^src/cli/data-dir\\.ts$',
        dynamic: false,
      },
    },
    {
      name: 'ui-is-static',
      comment: 'The browser page is served as static files; it imports nothing from the TypeScript source.',
      severity: 'error',
      from: { path: layer('ui') },
      to: { path: outside('ui') },
    },
    {
      name: 'src-not-tests',
      comment: 'Source never imports tests, benches or scripts.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench|scripts|examples)/' },
    },
    {
      name: 'no-circular',
      comment: 'Modules form no import cycles (type-only imports and dynamic import() seams do not count).',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only', 'dynamic-import'] } },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
  },
};
