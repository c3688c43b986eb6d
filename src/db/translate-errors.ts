/** A repository whose every failure passes through its backend's error translation. */

/**
 * The repository with every method's failures translated (thrown or rejected alike). Methods that
 * succeed cost one more call (and, when they return a promise, one more reaction on it).
 */
export function withTranslatedErrors<T extends object>(repo: T, translate: (err: unknown) => unknown): T {
  const rethrow = (err: unknown): never => {
    throw translate(err);
  };
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(repo)) {
    if (typeof value !== 'function') {
      out[key] = value;
      continue;
    }
    const method = value as (...args: unknown[]) => unknown;
    out[key] = (...args: unknown[]) => {
      let result: unknown;
      try {
        result = method.apply(repo, args);
      } catch (err) {
        throw translate(err);
      }
      return result instanceof Promise ? result.catch(rethrow) : result;
    };
  }
  return out as T;
}
