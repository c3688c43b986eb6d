/** How a log line names the cause of a failure it reports. */

/** `<name>: <message>` of an Error (`TypeError: fetch failed`); anything else thrown, as a string. */
export function errorText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
