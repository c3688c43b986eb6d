// Types a browser would execute or render actively: never inline from the API origin.
const ACTIVE_TYPES =
  /^(text\/html|application\/xhtml\+xml|image\/svg\+xml|text\/xml|application\/xml|[a-z]+\/[a-z0-9.+-]*\+xml|text\/javascript|application\/javascript|application\/ecmascript|text\/ecmascript|application\/x-javascript|text\/xsl|application\/pdf-active)$/i;

export function isActiveType(mimeType: string): boolean {
  return ACTIVE_TYPES.test(mimeType.split(';')[0]!.trim());
}
