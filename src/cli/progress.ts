/** The CLI's progress bar: on stderr, only when stderr is a terminal. */
import { formatBytes } from '../core/bytes.js';

/** A progress bar on stderr, only when stderr is a terminal and the transfer is big enough to wait for. */
export function progress(label: string, total: number | undefined, startAt = 0) {
  const tty = process.stderr.isTTY && (total === undefined || total >= 1024 * 1024);
  let done = startAt;
  let last = 0;
  const draw = (final = false) => {
    const now = Date.now();
    if (!tty || (!final && now - last < 100)) return;
    last = now;
    const width = 30;
    const share = total ? Math.min(1, done / total) : 0;
    const bar = total
      ? `[${'#'.repeat(Math.round(share * width)).padEnd(width, '.')}] ${Math.floor(share * 100)}%`
      : '';
    process.stderr.write(
      `\r${label} ${bar} ${formatBytes(done)}${total ? ` / ${formatBytes(total)}` : ''}\x1b[K${final ? '\n' : ''}`,
    );
  };
  return {
    /** Sets how far the transfer is (uploads in parts report acknowledged bytes, not a stream's). */
    at(bytes: number) {
      done = bytes;
      draw();
    },
    counter: new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        done += chunk.byteLength;
        draw();
        controller.enqueue(chunk);
      },
    }),
    done: () => done,
    finish: () => draw(true),
  };
}
