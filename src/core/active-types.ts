// Types a browser would execute or render actively: never inline from the API origin.
const ACTIVE_TYPES =
  /^(text\/html|application\/xhtml\+xml|image\/svg\+xml|text\/xml|application\/xml|[a-z]+\/[a-z0-9.+-]*\+xml|text\/javascript|application\/javascript|application\/ecmascript|text\/ecmascript|application\/x-javascript|text\/xsl|application\/pdf-active)$/i;

/** Answers by the type as stored: every download asks, of a few types. */
const answers = new Map<string, boolean>();

export function isActiveType(mimeType: string): boolean {
  let active = answers.get(mimeType);
  if (active === undefined) {
    active = ACTIVE_TYPES.test(mimeType.split(';')[0]!.trim());
    // Bounded: types come from callers' puts.
    if (answers.size < 512) answers.set(mimeType, active);
  }
  return active;
}
