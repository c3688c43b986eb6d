/**
 * Shared by the server processes the bench starts: announce the address as one JSON line on stdout,
 * then run until stdin closes (the bench ended or died) or a signal arrives.
 */
export function announceAndWait(info: { url: string } & Record<string, unknown>, close: () => Promise<void>): void {
  process.stdout.write(`${JSON.stringify(info)}\n`);
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => process.exit(0), 3000).unref();
    close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.stdin.on('end', stop);
  process.stdin.on('close', stop);
  process.stdin.resume();
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
