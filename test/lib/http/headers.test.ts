import middy from '@middy/core';
import { describe, expect, it } from 'vitest';
import { lowerCaseHeaders } from '../../../lib/http/headers.ts';

type Event = { headers?: Record<string, string> | null; multiValueHeaders?: Record<string, string[]> | null };

describe('lowerCaseHeaders', () => {
  it('lower-cases header names, single and multi-valued, and leaves no headers alone', async () => {
    const handler = middy<Event, Event>()
      .use(lowerCaseHeaders())
      .handler(async (event: Event) => event);
    const event = await handler(
      { headers: { 'Content-Type': 'a', AUTHORIZATION: 'b' }, multiValueHeaders: { 'X-Two': ['1', '2'] } },
      {} as never,
    );
    expect(event.headers).toEqual({ 'content-type': 'a', authorization: 'b' });
    expect(event.multiValueHeaders).toEqual({ 'x-two': ['1', '2'] });
    expect((await handler({ headers: null }, {} as never)).headers).toBeNull();
  });
});
