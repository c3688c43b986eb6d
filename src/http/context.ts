import type { Caller } from './auth.js';

/** Per-request values set by middleware. */
export interface AppEnv {
  Variables: {
    requestId: string;
    caller: Caller;
  };
}
