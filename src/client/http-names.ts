/** Named versions over the service's /v1/names routes (docs/http-api.md#named-versions). */
import type { NamedArtifactStore, NameRef, NameWhere, UrlOptions } from '../core/artifact-store.js';
import { checkApp } from '../core/names.js';
import { TEXT_MIME } from '../core/put-options.js';
import { decodeBase64 } from '../core/base64.js';
import { ArtifactRefSchema, NameInfoSchema, type ArtifactRef, type NamePage } from '../core/schemas.js';
import { rangeHeaderOf } from '../core/store-scope.js';
import { z } from 'zod';
import { LINK_ANSWER, readAnswer, REF_ANSWER, type Answer } from './http-response-schemas.js';
import { nullWhenNotFound } from './http-errors.js';
import { putHeaders, type ScopeNames } from './http-headers.js';
import { emptyStream, sliceStream } from './http-streams.js';
import type { Call, HttpTransport } from './http-transport.js';

const VERSIONS_ANSWER: Answer<{ items: ArtifactRef[] }> = {
  name: 'version list',
  schema: z.object({ items: z.array(ArtifactRefSchema) }),
};
const NAMES_ANSWER: Answer<NamePage> = {
  name: 'name list',
  schema: z.object({ items: z.array(NameInfoSchema), nextCursor: z.string().optional() }),
};

export function httpNames(request: HttpTransport['request'], scope: ScopeNames): NamedArtifactStore {
  /** The query that says which name: user, session or user-wide, as the route reads it. */
  const where = (ref: NameWhere & { name?: string }, version?: number) => {
    const q = new URLSearchParams();
    if (ref.name !== undefined) q.set('name', ref.name);
    const user = ref.userId ?? scope.userId;
    if (user !== undefined) q.set('user', user);
    if (ref.userWide) q.set('scope', 'user');
    else {
      const session = ref.sessionId ?? scope.sessionId;
      if (session !== undefined) q.set('session', session);
    }
    if (version !== undefined) q.set('version', String(version));
    return q;
  };
  const path = (ref: NameWhere, tail = '') => {
    // Checked here: "." and ".." would vanish from the URL and reach another route.
    checkApp(ref.app);
    return `/v1/names/${encodeURIComponent(ref.app)}${tail}`;
  };

  const versionRef: NamedArtifactStore['versionRef'] = async (ref, version) => {
    const call: Call = { method: 'GET', path: path(ref, '/meta'), query: where(ref, version) };
    const found = await nullWhenNotFound(() => request(call));
    return found && readAnswer(found, REF_ANSWER, call);
  };

  /** The ref the service sends with a version's bytes (X-Artifact-Ref), when it fits a header. */
  const refOfResponse = (res: Response): ArtifactRef | undefined => {
    const raw = res.headers.get('x-artifact-ref');
    if (!raw) return undefined;
    try {
      const json = new TextDecoder().decode(decodeBase64(raw).bytes);
      const parsed = ArtifactRefSchema.safeParse(JSON.parse(json));
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  };

  const loadVersionStream: NamedArtifactStore['loadVersionStream'] = async (ref, version, o = {}) => {
    // One request: the bytes, and the version they are in X-Artifact-Ref.
    const rangeHeaders: Record<string, string> = o.range ? { Range: rangeHeaderOf(o.range) } : {};
    const direct: Call = {
      method: 'GET',
      path: path(ref, '/content'),
      query: where(ref, version),
      headers: rangeHeaders,
    };
    const answer = await nullWhenNotFound(() => request(direct));
    if (!answer) return null;
    const sent = refOfResponse(answer);
    if (sent && (version === undefined || sent.version === version)) {
      const body = answer.body ?? emptyStream();
      return { ref: sent, stream: o.range && answer.status === 200 ? sliceStream(body, o.range) : body };
    }
    // An older service, or a ref too big for a header: its ref, then its bytes by number.
    await answer.body?.cancel();
    const found = await versionRef(ref, version);
    if (!found) return null;
    // By its number: a save between the two calls does not change what is read.
    const headers: Record<string, string> = o.range ? { Range: rangeHeaderOf(o.range) } : {};
    const call: Call = { method: 'GET', path: path(ref, '/content'), query: where(ref, found.version), headers };
    const res = await nullWhenNotFound(() => request(call));
    if (!res) return null;
    const body = res.body ?? emptyStream();
    return { ref: found, stream: o.range && res.status === 200 ? sliceStream(body, o.range) : body };
  };

  return {
    versionRef,
    async saveVersion(ref, data, o = {}) {
      const { scope: _scope, namespace: _namespace, ...options } = o;
      const headers = putHeaders(options, {}, typeof data === 'string' ? TEXT_MIME : undefined);
      const body = typeof data === 'string' ? new TextEncoder().encode(data) : data;
      const call: Call = { method: 'POST', path: path(ref), query: where(ref), headers, body, once: true };
      return readAnswer(await request(call), REF_ANSWER, call);
    },
    async loadVersion(ref, version) {
      const found = await loadVersionStream(ref, version);
      return found && { ref: found.ref, bytes: new Uint8Array(await new Response(found.stream).arrayBuffer()) };
    },
    loadVersionStream,
    async listVersions(ref) {
      const call: Call = { method: 'GET', path: path(ref, '/versions'), query: where(ref) };
      const res = await nullWhenNotFound(() => request(call));
      return res ? (await readAnswer(res, VERSIONS_ANSWER, call)).items : [];
    },
    async listNames(at, query = {}) {
      const q = where(at);
      if (query.cursor !== undefined) q.set('cursor', query.cursor);
      if (query.limit !== undefined) q.set('limit', String(query.limit));
      const call: Call = { method: 'GET', path: path(at), query: q };
      const page = await readAnswer(await request(call), NAMES_ANSWER, call);
      return page.nextCursor ? { items: page.items, nextCursor: page.nextCursor } : { items: page.items };
    },
    async deleteName(ref) {
      const res = await nullWhenNotFound(() => request({ method: 'DELETE', path: path(ref), query: where(ref) }));
      await res?.body?.cancel();
      return res !== null;
    },
    async versionUrl(ref: NameRef, version?: number, o: UrlOptions = {}) {
      const asked = { mode: o.mode, expiresIn: o.expiresIn, disposition: o.disposition };
      const body = new TextEncoder().encode(JSON.stringify(asked));
      const call: Call = {
        method: 'POST',
        path: path(ref, '/url'),
        query: where(ref, version),
        headers: { 'Content-Type': 'application/json' },
        body,
      };
      return readAnswer(await request(call), LINK_ANSWER, call);
    },
  };
}
