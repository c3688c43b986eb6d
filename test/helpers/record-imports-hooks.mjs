/** The module hooks of record-imports.mjs (they run on Node's loader thread). */
import { appendFileSync } from 'node:fs';

let file;

export function initialize(data) {
  file = data;
}

export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (file && !resolved.url.startsWith('node:')) appendFileSync(file, `${resolved.url}\n`);
  return resolved;
}
