// @ts-check
/**
 * One state for the service, shown in one place: live (the event stream is open), reconnecting (it
 * dropped; the page tries again), or down (a call failed too; it says when it tries next, with a
 * button to try now). The listing and the stream report here; nothing else writes the indicator.
 */
import { ui } from './page.js';

/** @typedef {'connecting' | 'live' | 'reconnecting' | 'down'} ConnectionState */

/** Waits 1 s, then twice as long after each failure, up to 15 s: the stream's and the listing's backoff. */
export class Backoff {
  delay = 1000;
  next() {
    const wait = this.delay;
    this.delay = Math.min(this.delay * 2, 15_000);
    return wait;
  }
  reset() {
    this.delay = 1000;
  }
}

/** @type {ConnectionState} */
let current = 'connecting';
/** @type {Set<() => void>} what "Retry now" wakes */
const retries = new Set();
/** @type {ReturnType<typeof setInterval> | undefined} */
let countdown;

/**
 * Says what the service's state is. `retryAt` (ms since the epoch) shows when the next try is.
 * @param {ConnectionState} next @param {{ reason?: string, retryAt?: number }} [detail]
 */
export function setConnection(next, detail = {}) {
  current = next;
  clearInterval(countdown);
  ui.live.dataset.state = next;
  ui.retryNow.hidden = next !== 'down' && next !== 'reconnecting';
  const text = () => {
    switch (next) {
      case 'connecting':
        return 'Connecting…';
      case 'live':
        return 'Live';
      case 'reconnecting':
        return 'Reconnecting…';
      default: {
        const wait = detail.retryAt ? Math.max(0, Math.ceil((detail.retryAt - Date.now()) / 1000)) : 0;
        const when = wait > 0 ? ` Trying again in ${wait} s.` : ' Trying again…';
        return `${detail.reason ?? 'The service cannot be reached.'}${when}`;
      }
    }
  };
  ui.liveText.textContent = text();
  if (next === 'down' && detail.retryAt) {
    // The countdown's own text, once a second; the live region is polite, so it is not read each time.
    countdown = setInterval(() => {
      ui.liveText.textContent = text();
    }, 1000);
  }
}

export const connection = () => current;

/** Calls `retry` when the person asks to try now. @param {() => void} retry */
export function onRetryNow(retry) {
  retries.add(retry);
  return () => retries.delete(retry);
}

ui.retryNow.addEventListener('click', () => {
  for (const retry of [...retries]) retry();
});

/**
 * Sleeps `ms`, or less when the person asks to try now. @param {number} ms @param {AbortSignal} [signal]
 */
export function pause(ms, signal) {
  return new Promise((done) => {
    const stop = () => {
      clearTimeout(timer);
      forget();
      done(undefined);
    };
    const timer = setTimeout(stop, ms);
    const forget = onRetryNow(stop);
    signal?.addEventListener('abort', stop, { once: true });
  });
}
