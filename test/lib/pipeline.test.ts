import { describe, expect, it } from 'vitest';
import { lowerCaseHeaders, pipeline } from '../../lib/pipeline.ts';

type Event = { headers?: Record<string, string> | null; multiValueHeaders?: Record<string, string[]> | null; log: string[] };

describe('pipeline (middy-shaped)', () => {
  it('runs before in order, the handler, then after in reverse', async () => {
    const event: Event = { log: [] };
    const handler = pipeline<Event, string, object>()
      .use({ before: ({ event }) => void event.log.push('a.before'), after: ({ event }) => void event.log.push('a.after') })
      .use({ before: ({ event }) => void event.log.push('b.before'), after: ({ event }) => void event.log.push('b.after') })
      .handler(async (event) => (event.log.push('handler'), 'done'));
    expect(await handler(event, {})).toBe('done');
    expect(event.log).toEqual(['a.before', 'b.before', 'handler', 'b.after', 'a.after']);
  });

  it('ends early when a before returns a response', async () => {
    const handler = pipeline<Event, string, object>()
      .use({ before: () => 'cached' })
      .handler(async () => {
        throw new Error('not reached');
      });
    expect(await handler({ log: [] }, {})).toBe('cached');
  });

  it('runs onError in reverse and answers with the response one of them set, else rethrows', async () => {
    const order: string[] = [];
    const answered = pipeline<Event, string, object>()
      .use({ onError: (request) => void (order.push('outer'), (request.response = `answered ${request.error?.message}`)) })
      .use({ onError: () => void order.push('inner') })
      .use({ before: () => { throw new Error('boom'); } })
      .handler(async () => 'never');
    expect(await answered({ log: [] }, {})).toBe('answered boom');
    expect(order).toEqual(['inner', 'outer']);

    const unanswered = pipeline<Event, string, object>().use({ onError: () => {} }).handler(async () => {
      throw new Error('kept');
    });
    await expect(unanswered({ log: [] }, {})).rejects.toThrow('kept');
  });

  it('lower-cases header names, single and multi-valued', async () => {
    const handler = pipeline<Event, Event, object>().use(lowerCaseHeaders()).handler(async (event) => event);
    const event = await handler({ headers: { 'Content-Type': 'a', AUTHORIZATION: 'b' }, multiValueHeaders: { 'X-Two': ['1', '2'] }, log: [] }, {});
    expect(event.headers).toEqual({ 'content-type': 'a', authorization: 'b' });
    expect(event.multiValueHeaders).toEqual({ 'x-two': ['1', '2'] });
    expect((await handler({ headers: null, log: [] }, {})).headers).toBeNull();
  });
});
