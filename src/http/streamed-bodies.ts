/**
 * Download responses whose body is a stream, remembered by the response: a runtime that can send
 * such a body its own way (Node: node/body-writer.ts) looks it up here. Reading `response.body`
 * instead would turn @hono/node-server's light response into a full Fetch Response on every answer,
 * small ones included.
 */
const bodies = new WeakMap<Response, ReadableStream<Uint8Array>>();

/** The answer of a download: `body` as it is, with the status and headers given. */
export function downloadResponse(
  body: ReadableStream<Uint8Array> | Uint8Array,
  status: 200 | 206,
  headers: Record<string, string>,
): Response {
  const res = new Response(body as BodyInit, { status, headers });
  if (!(body instanceof Uint8Array)) bodies.set(res, body);
  return res;
}

/** The stream a download response was made with (undefined for any other response). */
export function streamedBodyOf(res: Response): ReadableStream<Uint8Array> | undefined {
  return bodies.get(res);
}
