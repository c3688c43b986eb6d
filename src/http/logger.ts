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
  const at =
    (lvl: Exclude<LogLevel, 'silent'>) =>
    (msg: string, fields: LogFields = {}) => {
      if (ORDER[lvl] < min) return;
      write(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields }));
    };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    isEnabled: (lvl) => ORDER[lvl] >= min,
  };
}

export const silentLogger: Logger = createJsonLogger('silent');
