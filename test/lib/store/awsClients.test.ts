/** The settings every AWS client shares (lib/store/awsClients.ts), as the built client holds them and as the SDK calls them. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { createDynamoClient } from '../../../lib/store/dynamo.ts';
import { collectResponseBody } from '../../../lib/store/responseBody.ts';
import { useEmbeddedStore } from '../../support/store.ts';

const endpoint = useEmbeddedStore();
afterEach(() => vi.unstubAllEnvs());

describe("the clients' logger", () => {
  it('has no info method, so the SDK builds no info entry after each call (its only caller of info asks first)', async () => {
    const client = createDynamoClient({ region: 'us-east-1', endpoint: endpoint() });
    try {
      const { logger } = client.config;
      expect('info' in logger).toBe(false);
      for (const method of ['trace', 'debug', 'warn', 'error'] as const) expect(typeof logger[method]).toBe('function');
      // The logger middleware runs after every call: with an unguarded info call, this would throw.
      expect((await client.send(new ListTablesCommand({}))).TableNames).toBeInstanceOf(Array);
    } finally {
      client.destroy();
    }
  });

  it("serves a client on the SDK's own credential chain, whose environment provider calls logger.debug unguarded", async () => {
    // No endpoint given, so no local credentials: the default chain runs, as on AWS, and finds these.
    vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', endpoint());
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDLOGGERTEST');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'logger-test-secret');
    vi.stubEnv('AWS_PROFILE', '');
    const client = createDynamoClient({ region: 'us-east-1' });
    try {
      expect((await client.send(new ListTablesCommand({}))).TableNames).toBeInstanceOf(Array);
      expect((await client.config.credentials()).accessKeyId).toBe('AKIDLOGGERTEST');
    } finally {
      client.destroy();
    }
  });
});

describe("the clients' response body collector", () => {
  it("reads every response body with collectResponseBody, not the SDK's piping collector", async () => {
    const client = createDynamoClient({ region: 'us-east-1', endpoint: endpoint() });
    try {
      expect(client.config.streamCollector).toBe(collectResponseBody);
      // And the SDK reads the setting when it reads a body: each call's answer passes through it.
      const bodies: unknown[] = [];
      client.config.streamCollector = (body: unknown) => (bodies.push(body), collectResponseBody(body));
      expect((await client.send(new ListTablesCommand({}))).TableNames).toBeInstanceOf(Array);
      expect(bodies).toHaveLength(1);
    } finally {
      client.destroy();
    }
  });
});
