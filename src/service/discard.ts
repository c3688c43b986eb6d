/** Giving up a request's body the service will not read. */
import { errorText, type Logger } from '../core/logger.js';

/**
 * Cancels a body the service refused before reading it (a bad option, a scope it may not use). The
 * refusal is what the caller gets; a body that cannot be cancelled (it already failed, or its client
 * went away) changes nothing, so that is logged at debug and not thrown.
 */
export async function discardBody(body: ReadableStream<Uint8Array>, reason: unknown, logger: Logger): Promise<void> {
  try {
    await body.cancel(reason);
  } catch (err) {
    logger.debug('request body not cancelled', { error: errorText(err) });
  }
}
