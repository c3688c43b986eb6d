/**
 * The gateway's log: one line per event, with how much it matters. Every part of the gateway logs
 * through it, so a failure it works around (a tool left out, a subscription not renewed, a host gone
 * before its notification) is one line the operator can find, with its cause.
 */

/**
 * debug: an error dropped on purpose (a best-effort close, a host that left); info: starts, failures
 * and restarts of a server; warn: something left out of what a host or scope gets.
 */
export type GatewayLogLevel = 'debug' | 'info' | 'warn';

/** Where the gateway's lines go (the CLI: stderr; the service: its logger). */
export type GatewayLog = (line: string, level: GatewayLogLevel) => void;

/** An error's message, for a log line or an answer. */
export function causeOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
