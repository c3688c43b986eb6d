import { describe, expect, it } from 'vitest';
import { isArtifactError } from '../src/core/errors.js';
import { narrowScope, readFilterOf } from '../src/core/scope.js';

const codeOf = (fn: () => unknown) => {
  try {
    fn();
    return 'ok';
  } catch (err) {
    return isArtifactError(err) ? err.code : String(err);
  }
};

describe('narrowScope: one rule for HTTP puts, the service and in-process stores', () => {
  it('a tenant-wide caller names session, trace and user; its own user is only a default', () => {
    expect(narrowScope({ tenantId: 't', userId: 'dev' }, { sessionId: 's1', traceId: 'r1' })).toEqual({
      tenantId: 't',
      userId: 'dev',
      sessionId: 's1',
      traceId: 'r1',
    });
    expect(narrowScope({ tenantId: 't', userId: 'dev' }, { userId: 'bob' })).toEqual({ tenantId: 't', userId: 'bob' });
  });

  it('a session-bound caller keeps its session and user, and may add a trace', () => {
    const caller = { tenantId: 't', userId: 'u', sessionId: 's1' };
    expect(narrowScope(caller, { traceId: 'r1' })).toEqual({ ...caller, traceId: 'r1' });
    expect(narrowScope(caller, { sessionId: 's1' })).toEqual(caller);
    expect(codeOf(() => narrowScope(caller, { sessionId: 's2' }))).toBe('forbidden');
    expect(codeOf(() => narrowScope(caller, { userId: 'bob' }))).toBe('forbidden');
  });

  it('a trace-bound caller keeps its trace and cannot name a session', () => {
    expect(codeOf(() => narrowScope({ tenantId: 't', traceId: 'r1' }, { traceId: 'r2' }))).toBe('forbidden');
    expect(codeOf(() => narrowScope({ tenantId: 't', traceId: 'r1' }, { sessionId: 's1' }))).toBe('forbidden');
  });

  it('the tenant never changes, and scope values are 1-256 characters', () => {
    expect(codeOf(() => narrowScope({ tenantId: 't' }, { tenantId: 'other' }))).toBe('forbidden');
    expect(codeOf(() => narrowScope({ tenantId: 't' }, { sessionId: 'x'.repeat(257) }))).toBe('bad_request');
    expect(codeOf(() => narrowScope({ tenantId: 't' }, { sessionId: '' }))).toBe('bad_request');
    expect(narrowScope({ tenantId: 't' }, { sessionId: 'x'.repeat(256) }).sessionId).toHaveLength(256);
  });

  it('reads are filtered by the bound session and trace only', () => {
    expect(readFilterOf({ tenantId: 't', userId: 'u' })).toEqual({});
    expect(readFilterOf({ tenantId: 't', userId: 'u', sessionId: 's', traceId: 'r' })).toEqual({
      sessionId: 's',
      traceId: 'r',
    });
  });
});
