import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An HTTP proxy in front of `upstream` that counts the requests `gated` picks (part PUTs, tus
 * PATCHes) it passed and, once `passAfter` of them went through, holds every further one (never
 * forwarded) until it is opened again: a client can be stopped part way, deterministically.
 * `passed` counts those answered 2xx. The Host header goes through unchanged, so presigned
 * signatures still hold and the service's Location headers name the proxy.
 */
export async function requestGate(upstream: string, gated: (req: IncomingMessage) => boolean) {
  const target = new URL(upstream);
  let passed = 0;
  let started = 0;
  let held: ServerResponse[] = [];
  const gate = { passAfter: Number.POSITIVE_INFINITY, passed: () => passed, held: () => held.length };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const isPart = gated(req);
    if (isPart && started >= gate.passAfter) {
      held.push(res);
      return;
    }
    if (isPart) started++;
    const out = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        if (isPart && (answer.statusCode ?? 0) >= 200 && (answer.statusCode ?? 0) < 300) passed++;
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    gate,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    open() {
      gate.passAfter = Number.POSITIVE_INFINITY;
      for (const res of held) res.destroy();
      held = [];
    },
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  };
}
