/** An error the CLI prints as one line and exits with `code`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2 | 3 = 1,
  ) {
    super(message);
  }
}

export const EXIT = { ok: 0, failed: 1, usage: 2, notFound: 3 } as const;

/**
 * The commands that talk to a running service over HTTP (src/cli/remote-commands.ts), named here so
 * that `serve` and the ops commands start without loading the HTTP client.
 */
export const REMOTE_COMMANDS = ['put', 'get', 'ls', 'rm', 'url', 'end-session'] as const;
export type RemoteCommand = (typeof REMOTE_COMMANDS)[number];
