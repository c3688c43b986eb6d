// @ts-check
/**
 * How the artifact browser writes sizes and times. Pure: no DOM, so a Node test can hold formatBytes
 * to the same rule as the server's (src/core/bytes.ts), which the browser cannot import.
 */

const BYTE_UNITS = ['KiB', 'MiB', 'GiB', 'TiB'];

/**
 * The server's rule (formatBytes in src/core/bytes.ts; test/ui-format.test.ts holds them together):
 * under 1024 → "N B"; otherwise KiB, MiB, GiB or TiB, with one decimal under 10 and a whole number
 * from 10 up. 1023 → "1023 B", 1024 → "1.0 KiB", 49356 → "48 KiB", 5 TiB → "5.0 TiB".
 * @param {number} n
 */
export function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${BYTE_UNITS[unit]}`;
}

const timeOnly = new Intl.DateTimeFormat(undefined, { timeStyle: 'short' });
const dayAndTime = new Intl.DateTimeFormat(undefined, {
  month: 'short',
  day: 'numeric',
  hour: 'numeric',
  minute: '2-digit',
});
const full = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** Short where the context is obvious: today's times alone, this year's without the year. @param {string} iso */
export function formatTime(iso) {
  const d = new Date(iso);
  const now = new Date();
  if (d.toDateString() === now.toDateString()) return timeOnly.format(d);
  return (d.getFullYear() === now.getFullYear() ? dayAndTime : full).format(d);
}
