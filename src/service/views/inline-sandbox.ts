/**
 * The view sandbox where there are no threads to give work to (Cloudflare Workers): JSON queries run
 * inline, under the platform's own CPU and memory limits per request, and PDF text is not offered
 * (pdf.js is too large for a Worker's bundle and its parse too long for one request's CPU time).
 *
 * The last parsed document is kept: a model's queries come in runs on one document, and a Worker's
 * isolate serves the requests of one run when they come close together. One document at most: an
 * isolate holds no more than one parsed document besides the request at hand.
 */
import { errors } from '../../core/errors.js';
import { checkJsonPath, queryJson } from './json-query.js';
import type { ViewSandbox } from './sandbox.js';

export function createInlineViewSandbox(): ViewSandbox {
  let last: { key: string; doc: unknown } | undefined;

  return {
    async pdfText() {
      throw errors.unsupportedType(
        'PDF text is not available on this deployment (Cloudflare Workers): it has no thread to parse PDFs on within its limits; use artifact_url to download the PDF instead.',
      );
    },

    async jsonQuery(key, bytes, path, budget) {
      checkJsonPath(path);
      if (last?.key !== key) {
        last = undefined;
        const doc = parseJsonDocument(new TextDecoder().decode(await bytes()));
        last = { key, doc };
      }
      return queryJson(last.doc, path, budget);
    },

    async close() {
      last = undefined;
    },
  };
}

/**
 * A JSON document from its text, or an `unprocessable` error that says where the text stops being
 * JSON (line, column, character). Shared with the Node sandbox's worker.
 */
export function parseJsonDocument(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw errors.unprocessable(
      `The artifact is not valid JSON (${whereJsonFails(text, err)}), so it cannot be queried with JSONPath; read it as text instead.`,
    );
  }
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const ESCAPE = /\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})/y;

/**
 * Where the first syntax error of a JSON text is (its character offset), or -1 when there is none.
 * V8's messages quote the text around the error but not always its position; this finds it with one
 * pass and a stack of open brackets (no recursion, however deep the nesting).
 */
export function jsonErrorOffset(text: string): number {
  const n = text.length;
  const closers: string[] = [];
  let i = 0;
  const space = () => {
    while (i < n && (text[i] === ' ' || text[i] === '\n' || text[i] === '\r' || text[i] === '\t')) i++;
  };
  const string = (): boolean => {
    if (text[i] !== '"') return false;
    i++;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return true;
      }
      if (c < 0x20) return false;
      if (c === 0x5c) {
        ESCAPE.lastIndex = i;
        if (!ESCAPE.test(text)) return false;
        i = ESCAPE.lastIndex;
      } else i++;
    }
    return false;
  };
  const scalar = (): boolean => {
    if (text[i] === '"') return string();
    for (const word of ['true', 'false', 'null']) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return true;
      }
    }
    NUMBER.lastIndex = i;
    if (!NUMBER.test(text)) return false;
    i = NUMBER.lastIndex;
    return true;
  };
  /** After `{` or `,` in an object: a key and its colon. */
  const key = (): boolean => {
    space();
    if (!string()) return false;
    space();
    if (text[i] !== ':') return false;
    i++;
    return true;
  };
  for (;;) {
    // A value.
    space();
    if (text[i] === '{' || text[i] === '[') {
      const object = text[i] === '{';
      i++;
      space();
      if (text[i] === (object ? '}' : ']')) i++;
      else {
        closers.push(object ? '}' : ']');
        if (object && !key()) return i;
        continue;
      }
    } else if (!scalar()) return i;
    // What follows a value: a comma, a closing bracket, or (at the top) the end.
    for (;;) {
      space();
      const closer = closers.at(-1);
      if (closer === undefined) return i < n ? i : -1;
      if (text[i] === closer) {
        closers.pop();
        i++;
        continue;
      }
      if (text[i] !== ',') return i;
      i++;
      if (closer === '}' && !key()) return i;
      break;
    }
  }
}

/** Where and why a text is not JSON, in words: line, column and what was found there. */
export function whereJsonFails(text: string, err: unknown): string {
  const at = jsonErrorOffset(text);
  if (at < 0) return err instanceof Error ? err.message : String(err);
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < at; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  const found = at >= text.length ? 'the end of the text' : JSON.stringify(text[at]);
  return `unexpected ${found} at line ${line}, column ${at - lineStart + 1} (character ${at + 1})`;
}
