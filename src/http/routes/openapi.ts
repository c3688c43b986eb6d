/** GET /openapi.json: the OpenAPI 3.1 document of every route the app registered (served at /docs too). */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../context.js';

/** Registers the document, built when it is asked for from every route registered by then. */
export function registerOpenApi(app: OpenAPIHono<AppEnv>, version = '0.1.0'): void {
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'A JWT (claims tenant, sub, session, trace, perms) or an API key ask_…',
  });
  app.doc31('/openapi.json', {
    openapi: '3.1.0',
    info: {
      title: 'artifact-store',
      version,
      description:
        'Keeps binary and oversized tool outputs out of LLM context: bytes stored once by content hash, scoped to tenant / user / session / trace; the model gets a small ArtifactRef.',
    },
    security: [{ bearer: [] }],
  });
}
