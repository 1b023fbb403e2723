/**
 * The client's options refused when the client is made, in one line, as `npm run smoke` refuses
 * them: a base URL without the API's base path (every call would answer 404), and an API key given
 * but undefined or empty (`apiKey: process.env.PETSTORE_KEY` with the variable unset).
 */
import { describe, expect, it } from 'vitest';
import { type ClientOptions, petStoreClient } from '../../client/src/index.ts';

const made = (options: Record<string, unknown>) => () => petStoreClient(options as unknown as ClientOptions);

describe('petStoreClient options', () => {
  it.each([
    'https://abc123.execute-api.us-east-1.amazonaws.com',
    'https://abc123.execute-api.us-east-1.amazonaws.com/',
    'http://127.0.0.1:3000',
    'http://127.0.0.1:3000/v1/pets',
    'http://127.0.0.1:3000/v1?x=1',
  ])('refuses the base URL %s, which lacks the base path /v1, in one line', (baseUrl) => {
    expect(made({ baseUrl, apiKey: 'k' })).toThrow(/^baseUrl must end in \/v1, the API's base path .*, not "[^"]+"$/);
  });

  it.each([
    ['undefined', undefined, /^apiKey is undefined: give the API key/],
    ['empty', '', /^apiKey is empty: give the API key/],
    ['null', null, /^apiKey is null: give the API key/],
  ])('refuses an API key given as %s, in one line', (_what, apiKey, message) => {
    expect(made({ baseUrl: 'http://127.0.0.1:3000/v1', apiKey })).toThrow(message);
  });

  it('takes a base URL ending in /v1 (with or without a slash), a key, or no key at all', () => {
    expect(made({ baseUrl: 'https://abc123.execute-api.us-east-1.amazonaws.com/v1/', apiKey: 'k' })).not.toThrow();
    expect(made({ baseUrl: 'https://gateway.example.com/petstore/v1' })).not.toThrow();
  });
});
