import { connect, createServer, type Socket } from 'node:net';

/** One cut the proxy made. */
export interface Cut {
  /** Bytes forwarded upstream (over all connections) when it cut. */
  atByte: number;
  /** The last request line the cut connection carried before the cut (e.g. `PATCH /v1/tus/up_…`). */
  request: string;
  /** Which connection it was (1 = the first accepted). */
  connection: number;
}

export interface DroppingProxy {
  /** http://127.0.0.1:{port} */
  url: string;
  cuts: Cut[];
  /** Every request line seen going upstream, in order: method and path, and the connection's number. */
  requests: { request: string; connection: number }[];
  /** Every answer's status line seen coming back, in order, and the connection's number. */
  answers: { status: number; connection: number }[];
  forwarded(): number;
  connections(): number;
  close(): Promise<void>;
}

/** Scans for request lines; a match in random body bytes is as good as impossible. */
const REQUEST_LINE = /(OPTIONS|HEAD|GET|POST|PATCH|DELETE|PUT) (\/\S*) HTTP\/1\.1\r\n/g;
const STATUS_LINE = /HTTP\/1\.1 (\d{3}) /g;
/** Longest request line kept from a chunk's end to find one split across chunks. */
const TAIL = 512;

/**
 * A TCP proxy to `target` (http://host:port) that drops the connection carrying the byte at each of
 * `cutAt` (bytes forwarded upstream, counted over all connections): that connection gets the bytes
 * up to the cut point, then both of its sockets are reset, as a network failure would. Connections
 * made after a cut are forwarded as usual, until the next cut point.
 */
export async function droppingProxy(target: string, cutAt: number[]): Promise<DroppingProxy> {
  const { hostname, port } = new URL(target);
  const pending = [...cutAt].sort((a, b) => a - b);
  const cuts: Cut[] = [];
  const requests: { request: string; connection: number }[] = [];
  const answers: { status: number; connection: number }[] = [];
  const sockets = new Set<Socket>();
  let forwarded = 0;
  let accepted = 0;

  const proxy = createServer((client) => {
    const connection = ++accepted;
    const upstream = connect(Number(port), hostname);
    sockets.add(client).add(upstream);
    let tail = '';
    let lastRequest = '';
    let cut = false;

    const drop = () => {
      client.resetAndDestroy();
      upstream.resetAndDestroy();
    };
    const noteRequests = (chunk: Buffer) => {
      const text = tail + chunk.toString('latin1');
      for (const m of text.matchAll(REQUEST_LINE)) {
        if (m.index + m[0].length <= tail.length) continue; // seen with the previous chunk
        lastRequest = `${m[1]} ${m[2]}`;
        requests.push({ request: lastRequest, connection });
      }
      tail = text.slice(-TAIL);
    };

    client.on('data', (chunk: Buffer) => {
      if (cut) return;
      const next = pending[0];
      if (next !== undefined && forwarded + chunk.length >= next) {
        const part = chunk.subarray(0, next - forwarded);
        noteRequests(part);
        pending.shift();
        cut = true;
        forwarded += part.length;
        cuts.push({ atByte: forwarded, request: lastRequest, connection });
        // Let the part reach the service, then drop both sides.
        upstream.write(part, () => setTimeout(drop, 20));
        return;
      }
      noteRequests(chunk);
      forwarded += chunk.length;
      if (!upstream.write(chunk)) {
        client.pause();
        upstream.once('drain', () => client.resume());
      }
    });
    upstream.on('data', (chunk: Buffer) => {
      if (cut) return;
      // Answers carry no bodies worth scanning here (tus answers are empty or small JSON).
      for (const m of chunk.toString('latin1').matchAll(STATUS_LINE))
        answers.push({ status: Number(m[1]), connection });
      if (!client.write(chunk)) {
        upstream.pause();
        client.once('drain', () => upstream.resume());
      }
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', end);
    upstream.on('error', end);
    client.on('close', end);
    upstream.on('close', end);
  });
  await new Promise<void>((ok) => proxy.listen(0, '127.0.0.1', ok));
  const address = proxy.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    cuts,
    requests,
    answers,
    forwarded: () => forwarded,
    connections: () => accepted,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((ok) => proxy.close(() => ok()));
    },
  };
}
