/** A document client's sends in flight, for a test that must let a cache's background refresh land. */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * Makes `documents` keep its sends in flight; `landed()` resolves once none is left, a turn of the
 * event loop after the last (for what the caller does with its answer).
 */
export function trackSends(documents: DynamoDBDocumentClient): { landed: () => Promise<void> } {
  const pending = new Set<Promise<unknown>>();
  const send = documents.send.bind(documents) as (...args: unknown[]) => Promise<unknown>;
  documents.send = ((...args: unknown[]) => {
    const sent = send(...args);
    pending.add(sent);
    sent.then(
      () => pending.delete(sent),
      () => pending.delete(sent),
    );
    return sent;
  }) as typeof documents.send;
  return {
    landed: async () => {
      while (pending.size > 0) {
        await Promise.allSettled([...pending]);
        await new Promise((done) => setImmediate(done));
      }
    },
  };
}
