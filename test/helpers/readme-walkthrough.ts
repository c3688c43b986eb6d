/**
 * The README's curl walkthrough ("Try it over HTTP"), run as written against a given service: the
 * README's own server in test/readme.test.ts, the installed package in the image's runtime steps in
 * test/package.test.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { runBash } from '../doc-blocks.js';

/** The first JSON object in text where several answers are printed back to back. */
function firstJsonObject(text: string): Record<string, unknown> {
  const start = text.indexOf('{');
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '{') depth++;
    else if (ch === '}' && --depth === 0) return JSON.parse(text.slice(start, i + 1));
  }
  throw new Error(`no JSON object in ${text}`);
}

/**
 * Runs the block (`runBlock('README.md', 'curl-walkthrough')`) with the token and API address swapped for
 * `token` and `baseUrl`, in `workDir`, and checks what the README says comes back: the stored ref, the
 * bytes, the range, the link, the delete's 204. Asynchronously: the server answering curl may run in this
 * process. Resolves with curl's output.
 */
export async function runCurlWalkthrough(
  block: string,
  baseUrl: string,
  token: string,
  workDir: string,
): Promise<string> {
  const script = block
    .replace(/^export ARTIFACT_STORE_TOKEN=.*$/m, `export ARTIFACT_STORE_TOKEN=${token}`)
    .replace(/^API=.*$/m, `API=${baseUrl}`);
  const out = await runBash(script, { cwd: workDir });
  expect(out).not.toMatch(/"code":"/);
  const stored = firstJsonObject(out);
  expect(stored).toMatchObject({
    mimeType: 'application/pdf',
    filename: 'Sales.pdf',
    namespace: 'tableau.download_workbook',
    scope: { sessionId: 's-42' },
  });
  // The answer shown in the README matches what came back.
  expect(block).toContain(`"sizeBytes":${stored.sizeBytes}`);
  expect(out).toContain('%PDF-1.4');
  // The link for the browser.
  expect(out).toMatch(/"url":"http[^"]*\/v1\/download\/[^"]*signature=/);
  expect(out.trim().endsWith('204')).toBe(true);
  expect(readFileSync(join(workDir, 'Downloaded.pdf'))).toEqual(readFileSync(join(workDir, 'Sales.pdf')));
  return out;
}
