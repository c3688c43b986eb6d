/** Assertions on ArtifactErrors for tests. */
import { expect } from 'vitest';
import { ArtifactError, type ErrorCode } from '../../src/core/errors.js';

/** Resolves with the ArtifactError a promise rejects with, failing the test if it has another code. */
export async function expectArtifactError(promise: Promise<unknown>, code: ErrorCode): Promise<ArtifactError> {
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  expect(caught, `expected an ArtifactError ${code}`).toBeInstanceOf(ArtifactError);
  expect((caught as ArtifactError).code).toBe(code);
  return caught as ArtifactError;
}

/** The ArtifactError a promise rejects with, whatever its code (failing the test on anything else). */
export async function rejection(promise: Promise<unknown>): Promise<ArtifactError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ArtifactError);
  return err as ArtifactError;
}
