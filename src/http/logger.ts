/** JSON lines logger; one object per line, levels filtered once. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** False when lines of this level are dropped, so callers can skip building them. */
  isEnabled?(level: Exclude<LogLevel, 'silent'>): boolean;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export function createJsonLogger(
  level: LogLevel = 'info',
  write: (line: string) => void = (l) => console.log(l),
): Logger {
  const min = ORDER[level];
  const at = (lvl: Exclude<LogLevel, 'silent'>) => {
    if (ORDER[lvl] < min) return () => {};
    const head = `","level":"${lvl}","msg":`;
    // The line JSON.stringify({ time, level, msg, ...fields }) would make, without copying the fields.
    return (msg: string, fields: LogFields = {}) => {
      const rest = JSON.stringify(fields);
      write(`{"time":"${isoNow()}${head}${JSON.stringify(msg)}${rest.length > 2 ? `,${rest.slice(1)}` : '}'}`);
    };
  };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    isEnabled: (lvl) => ORDER[lvl] >= min,
  };
}

/** The time as ISO 8601, formatted once per millisecond however many lines share it. */
let lastMs = Number.NaN;
let lastIso = '';
function isoNow(): string {
  const now = Date.now();
  if (now !== lastMs) {
    lastMs = now;
    lastIso = new Date(now).toISOString();
  }
  return lastIso;
}

export const silentLogger: Logger = createJsonLogger('silent');
