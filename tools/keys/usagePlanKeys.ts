/**
 * The API Gateway side of an API key (docs/operating.md "Keyless traffic and per-key limits"): an API Gateway
 * API key named `petstore-<stage>-<keyId>` whose value is the key's SHA-256 hex digest (what the
 * authorizer returns as usageIdentifierKey), in the stage's usage plan. `npm run keys` creates it
 * with the control-table item and deletes it on revoke. The plaintext key never reaches API Gateway.
 *
 * Four calls of API Gateway's REST control plane, each allowed by infra/policies/key-operator.json (the
 * key is created tagged with its stage and found among the plan's keys, never among the Region's), signed
 * with SigV4 through the SDK's own signer and credential chain (infra/awsRest.ts; no API Gateway client
 * package: the CLI needs only these).
 */
import { awsRestClient } from '../../infra/awsRest.ts';

export interface UsagePlanKeys {
  /** Creates the API key (`value`: the digest, `tags`: the stage's, infra/names.ts) and adds it to the plan. */
  add(
    planId: string,
    key: { name: string; value: string; description?: string | undefined; tags?: Readonly<Record<string, string>> },
  ): Promise<void>;
  /** Deletes every API key of that name in the plan (which also takes it out of it); how many there were. */
  remove(name: string, planId: string): Promise<number>;
}

export interface ApiGatewayOptions {
  region: string;
  /** Another endpoint than AWS's (tests). */
  endpoint?: string | undefined;
  fetch?: typeof fetch;
}

export function apiGatewayUsagePlanKeys({ region, endpoint, fetch }: ApiGatewayOptions): UsagePlanKeys {
  const call = awsRestClient({ service: 'apigateway', region, endpoint, ...(fetch ? { fetch } : {}) });

  return {
    async add(planId, { name, value, description, tags }) {
      const created = await call('POST', '/apikeys', {
        name,
        value,
        enabled: true,
        ...(description ? { description } : {}),
        ...(tags ? { tags } : {}),
      });
      try {
        await call('POST', `/usageplans/${encodeURIComponent(planId)}/keys`, { keyId: created.id, keyType: 'API_KEY' });
      } catch (error) {
        // Not in the plan, the key would only ever answer 403: take it away again.
        await call('DELETE', `/apikeys/${encodeURIComponent(String(created.id))}`).catch(() => undefined);
        throw error;
      }
    },
    async remove(name, planId) {
      // Looked up in the stage's plan, not among every API key of the Region (which the key operator's
      // policy does not grant); `nameQuery` filters by prefix, and only the exact name is this key's.
      const listed = await call('GET', `/usageplans/${encodeURIComponent(planId)}/keys`, undefined, {
        nameQuery: name,
        limit: '500',
      });
      const items = ((listed.item ?? listed.items ?? []) as { id: string; name: string }[]).filter(
        (item) => item.name === name,
      );
      for (const item of items) await call('DELETE', `/apikeys/${encodeURIComponent(item.id)}`);
      return items.length;
    },
  };
}
