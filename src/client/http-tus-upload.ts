/**
 * Resumable uploads through the service (tus 1.0 at /v1/tus), for a service without direct uploads
 * (the fs driver) or a client that cannot reach its bucket: the bytes go in PATCHes of
 * `tusChunkBytes`; after a dropped connection or a 5xx the client asks where the upload stands
 * (HEAD) and sends the rest. Bytes of a PATCH cut short that reached the service are kept, so nothing
 * acknowledged is sent twice. With resume records, the same bytes put again (here or in a new
 * process) continue the upload.
 */
import { errors, isArtifactError } from '../core/errors.js';
import type { ArtifactRef, PutOptions } from '../core/schemas.js';
import { type BigUploadOptions, rangeOf, type UploadBody } from './http-direct-upload.js';
import { errorFromResponse } from './http-errors.js';
import { scopeHeadersOf } from './http-headers.js';
import { readAnswer, REF_ANSWER } from './http-response-schemas.js';
import { backoffMs, describeError, isNetworkError, isRetryableStatus, retryWaitMs, sleep } from './http-retry.js';
import type { HttpTransport } from './http-transport.js';

const TUS = { 'Tus-Resumable': '1.0.0' };

export interface TusUploads {
  /** Learnt from the first answer: false once the service said it has no /v1/tus (Workers, or older). */
  readonly offered: boolean | undefined;
  /** The artifact, or null when the service has no tus (the caller then puts through POST /v1/artifacts). */
  put(
    data: UploadBody,
    declared: { sizeBytes: number; sha256: string },
    headers: Record<string, string>,
    o: PutOptions,
  ): Promise<ArtifactRef | null>;
}

/** A tus metadata pair: the key, a space, the value in base64. */
function metaPair(key: string, value: string): string {
  const bytes = new TextEncoder().encode(value);
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return `${key} ${btoa(binary)}`;
}

export function createTusUploads(transport: HttpTransport, big: BigUploadOptions = {}): TusUploads {
  let offered: boolean | undefined;
  const chunkBytes = Math.max(1, big.tusChunkBytes ?? 64 * 1024 * 1024);

  async function call(path: string, init: RequestInit): Promise<Response> {
    const headers = { ...(await transport.authHeaders()), ...TUS, ...(init.headers as Record<string, string>) };
    return transport.fetch(`${transport.baseUrl}${path}`, { ...init, headers });
  }

  /** Where the upload stands: its acknowledged offset, or null when it is gone (404). */
  async function offsetOf(path: string, scope: Record<string, string>): Promise<number | null> {
    for (let attempt = 0; ; attempt++) {
      let failure: string;
      try {
        const res = await call(path, { method: 'HEAD', headers: scope });
        if (res.status === 404) return null;
        if (res.ok) return Number(res.headers.get('Upload-Offset') ?? '0');
        if (!isRetryableStatus(res.status)) throw await errorFromResponse(res, { method: 'HEAD', path });
        failure = `HTTP ${res.status}`;
        if (attempt >= transport.retry.retries) throw await errorFromResponse(res, { method: 'HEAD', path });
        await sleep(retryWaitMs(transport.retry, res, attempt));
        continue;
      } catch (err) {
        if (isArtifactError(err) || !isNetworkError(err)) throw err;
        failure = describeError(err);
      }
      if (attempt >= transport.retry.retries)
        throw errors.backendUnavailable(`The service could not say where upload ${path} stands (${failure}).`);
      await sleep(backoffMs(transport.retry, attempt));
    }
  }

  async function create(
    declared: { sizeBytes: number; sha256: string },
    scope: Record<string, string>,
    headers: Record<string, string>,
    o: PutOptions,
  ): Promise<string | null> {
    const metadata = [
      o.filename !== undefined ? metaPair('filename', o.filename) : undefined,
      headers['Content-Type'] ? metaPair('filetype', headers['Content-Type']) : undefined,
      o.namespace !== undefined ? metaPair('namespace', o.namespace) : undefined,
      o.ttl !== undefined ? metaPair('ttl', String(o.ttl)) : undefined,
      o.meta !== undefined ? metaPair('meta', JSON.stringify(o.meta)) : undefined,
      metaPair('sha256', declared.sha256),
    ].filter((p): p is string => p !== undefined);
    const init = {
      method: 'POST',
      headers: { ...scope, 'Upload-Length': String(declared.sizeBytes), 'Upload-Metadata': metadata.join(',') },
    };
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await call('/v1/tus', init);
      } catch (err) {
        if (!isNetworkError(err) || attempt >= transport.retry.retries) throw err;
        await sleep(backoffMs(transport.retry, attempt));
        continue;
      }
      // No tus here (a Worker, or a service that predates it): the caller puts the plain way.
      if (res.status === 404 || res.status === 405) {
        await res.body?.cancel().catch(() => {});
        return null;
      }
      if (res.status === 201) {
        await res.body?.cancel().catch(() => {});
        const location = res.headers.get('Location') ?? '';
        const id = /\/v1\/tus\/(up_[0-9a-f]+)$/.exec(location)?.[1];
        if (!id) throw errors.backendUnavailable(`The service created a tus upload at an unknown place: ${location}`);
        return `/v1/tus/${id}`;
      }
      if (!isRetryableStatus(res.status) || attempt >= transport.retry.retries)
        throw await errorFromResponse(res, { method: 'POST', path: '/v1/tus' });
      await sleep(retryWaitMs(transport.retry, res, attempt));
    }
  }

  return {
    get offered() {
      return offered;
    },

    async put(data, declared, headers, o) {
      const scope = scopeHeadersOf(headers);
      const key = `${transport.baseUrl} tus ${declared.sha256} ${declared.sizeBytes}`;
      let path = (await big.resume?.get(key)) ?? null;
      let offset = path ? await offsetOf(path, scope) : null;
      if (path && offset === null) await big.resume?.delete(key);
      if (offset === null) {
        path = await create(declared, scope, headers, o);
        if (!path) {
          offered = false;
          return null;
        }
        offset = 0;
        await big.resume?.set(key, path);
      }
      offered = true;
      const where = path!;
      const total = declared.sizeBytes;
      let artifactId: string | null = null;
      big.onProgress?.({ uploadId: where.slice('/v1/tus/'.length), sentBytes: offset, totalBytes: total });
      for (let attempt = 0; artifactId === null; ) {
        if (offset >= total) {
          // Stored already (a HEAD after the last PATCH says so with the id).
          const res = await call(where, { method: 'HEAD', headers: scope });
          await res.body?.cancel().catch(() => {});
          artifactId = res.headers.get('X-Artifact-Id');
          if (!artifactId) throw errors.backendUnavailable(`Upload ${where} has all its bytes but no artifact.`);
          break;
        }
        const end = Math.min(total, offset + chunkBytes);
        const body = await rangeOf(data, offset, end);
        let failure: string;
        try {
          const res = await call(where, {
            method: 'PATCH',
            headers: { ...scope, 'Content-Type': 'application/offset+octet-stream', 'Upload-Offset': String(offset) },
            body,
          });
          await res.body?.cancel().catch(() => {});
          if (res.status === 204) {
            offset = Number(res.headers.get('Upload-Offset') ?? end);
            artifactId = res.headers.get('X-Artifact-Id');
            attempt = 0;
            big.onProgress?.({ uploadId: where.slice('/v1/tus/'.length), sentBytes: offset, totalBytes: total });
            continue;
          }
          if (res.status !== 409 && res.status < 500 && !isRetryableStatus(res.status))
            throw await errorFromResponse(res, { method: 'PATCH', path: where });
          failure = `HTTP ${res.status}`;
        } catch (err) {
          if (isArtifactError(err) || !isNetworkError(err)) {
            // The upload is over (refused for good): its record goes with it.
            if (isArtifactError(err) && err.code !== 'backend_unavailable') await big.resume?.delete(key);
            throw err;
          }
          failure = describeError(err);
        }
        if (attempt >= transport.retry.retries)
          throw errors.backendUnavailable(
            `The upload through the service failed after ${attempt + 1} attempts (${failure}); ${offset} of ${total} bytes are kept: put the same bytes again to resume.`,
          );
        await sleep(backoffMs(transport.retry, attempt++));
        // Whatever part of the cut PATCH reached the service is kept: continue from there.
        const now = await offsetOf(where, scope);
        if (now === null) {
          await big.resume?.delete(key);
          throw errors.backendUnavailable(`Upload ${where} is gone from the service; put the bytes again.`);
        }
        offset = now;
      }
      await big.resume?.delete(key);
      const meta = { method: 'GET', path: `/v1/artifacts/${encodeURIComponent(artifactId)}/meta` } as const;
      return readAnswer(await transport.request({ ...meta, headers: scope }), REF_ANSWER, meta);
    },
  };
}
