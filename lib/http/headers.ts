/**
 * Header names lower-cased (HTTP names are case-insensitive) before anything reads them. Six lines of
 * our own in place of `@middy/http-header-normalizer`, which also canonicalises names we never read.
 */
import type { MiddlewareObj } from '@middy/core';

type WithHeaders = { headers?: unknown; multiValueHeaders?: unknown };

export function lowerCaseHeaders<E extends WithHeaders, R, C>(): MiddlewareObj<E, R, Error, C> {
  const lower = <V>(headers: Record<string, V> | null | undefined) =>
    headers ? Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value])) : headers;
  return {
    before: ({ event }) => {
      event.headers = lower(event.headers as Record<string, unknown> | null | undefined);
      if (event.multiValueHeaders) event.multiValueHeaders = lower(event.multiValueHeaders as Record<string, unknown>);
    },
  };
}
