import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CloudFrontClient } from '@aws-sdk/client-cloudfront';
import { afterEach, describe, expect, it } from 'vitest';
import { cloudFrontInvalidator } from '../src/blob/s3-cdn.js';

// No CloudFront here: the real AWS SDK client talks to a local server that records what it sent and
// answers as CloudFront does (the request's shape and signature are what this checks).
let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

async function recorder(
  status: number,
): Promise<{ url: string; seen: { method: string; path: string; auth: string; body: string }[] }> {
  const seen: { method: string; path: string; auth: string; body: string }[] = [];
  server = createServer(async (req: IncomingMessage, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    seen.push({ method: req.method!, path: req.url!, auth: String(req.headers.authorization), body });
    res.writeHead(status, {
      'Content-Type': 'text/xml',
      Location: 'https://cloudfront.amazonaws.com/2020-05-31/distribution/E2X/invalidation/I1',
    });
    res.end(
      status === 201
        ? '<?xml version="1.0"?><Invalidation xmlns="http://cloudfront.amazonaws.com/doc/2020-05-31/"><Id>I1</Id><Status>InProgress</Status><CreateTime>2026-11-23T00:00:00Z</CreateTime><InvalidationBatch><Paths><Quantity>1</Quantity><Items><Path>/x</Path></Items></Paths><CallerReference>r</CallerReference></InvalidationBatch></Invalidation>'
        : '<?xml version="1.0"?><ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>nope</Message></Error></ErrorResponse>',
    );
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, seen };
}

const client = (endpoint: string) =>
  new CloudFrontClient({
    region: 'us-east-1',
    endpoint,
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
    maxAttempts: 1,
  });

describe('CloudFront invalidation for purges', () => {
  it('sends a signed CreateInvalidation for the blob path of the distribution', async () => {
    const r = await recorder(201);
    await cloudFrontInvalidator(client(r.url), 'E2X')(['/media/blobs/sha256/ab/cd/abcd']);
    expect(r.seen).toHaveLength(1);
    expect(r.seen[0]!.method).toBe('POST');
    expect(r.seen[0]!.path).toBe('/2020-05-31/distribution/E2X/invalidation');
    expect(r.seen[0]!.auth).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-east-1\/cloudfront\/aws4_request/,
    );
    expect(r.seen[0]!.body).toContain('<Path>/media/blobs/sha256/ab/cd/abcd</Path>');
    expect(r.seen[0]!.body).toMatch(/<CallerReference>artifact-store-[0-9a-f-]{36}<\/CallerReference>/);
  });

  it('a refusal becomes backend_unavailable naming the paths', async () => {
    const r = await recorder(403);
    await expect(cloudFrontInvalidator(client(r.url), 'E2X')(['/blobs/x'])).rejects.toMatchObject({
      code: 'backend_unavailable',
      message: expect.stringContaining('/blobs/x'),
    });
  });
});
