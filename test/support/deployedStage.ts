/**
 * A synthesized stage started as deployed for a test (tools/stage-emulator/src/deployedApi.ts), its DynamoDB
 * calls through a fault proxy, with an API key issued as an operator issues one after a deploy.
 */
import { stackName } from '../../infra/stages.ts';
import type { Stage } from '../../lib/domain/stages.ts';
import {
  startDeployedApi,
  type DeployedApi,
  type DeployedApiOptions,
} from '../../tools/stage-emulator/src/deployedApi.ts';
import { ensureCloudAssembly } from '../../tools/stage-emulator/src/freshAssembly.ts';
import { KEY_REVOCATION_BOUND_MS } from '../../lib/store/controlTableKeys.ts';
import { runKeys } from '../../tools/keys/keys.ts';
import { expect } from 'vitest';
import { startFaultProxy, type FaultProxy } from '@petstore/stage-emulator/faultProxy';
import { fetchApi } from './http.ts';
import { keyIn } from './keys.ts';
import { DEFAULT_OUTDIR, EDGE_ERRORS, STAGE_APP } from '../../local/stageApp.ts';

/** What `cdk deploy` is given for parameters without a default (production's alarm subscriber). */
export const DEPLOY_PARAMETERS = { AlarmEmail: 'ops@example.com' };

export interface RunningStage {
  api: DeployedApi;
  proxy: FaultProxy;
  key: string;
  logs: string[];
  close(): Promise<void>;
}

/**
 * The stage from a fresh cloud assembly, gate decisions recorded; `options` add to or change the
 * defaults; `keyOptions` are `keys create`'s for the stage's key (e.g. `--creates-per-day`).
 */
export async function startStage(
  stage: Stage,
  options: Partial<DeployedApiOptions> = {},
  keyOptions: readonly string[] = [],
): Promise<RunningStage> {
  await ensureCloudAssembly(DEFAULT_OUTDIR, STAGE_APP, { quiet: true });
  const logs: string[] = [];
  let proxy: FaultProxy | undefined;
  const api = await startDeployedApi({
    stackName: stackName(stage),
    outdir: DEFAULT_OUTDIR,
    app: STAGE_APP,
    edgeErrors: EDGE_ERRORS,
    port: 0,
    parameters: DEPLOY_PARAMETERS,
    recordDecisions: true,
    log: (line) => logs.push(line),
    storeFront: async (endpoint) => {
      proxy = await startFaultProxy(endpoint);
      return proxy.endpoint;
    },
    ...options,
  });
  const close = async () => {
    await api.close();
    await proxy?.close();
  };
  try {
    return { api, proxy: proxy!, key: await issueKey(stage, api, { options: keyOptions }), logs, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * `npm run keys -- create`, exactly as an operator runs it after a deploy (at a terminal). `createdAt`
 * backdates the key (keys' clock), so that it expires soon, or has expired already; `options` are
 * create's own (`--scope read`, `--creates-per-day 2`).
 */
export async function issueKey(
  stage: Stage,
  api: DeployedApi,
  { createdAt, options = [] }: { createdAt?: Date; options?: readonly string[] } = {},
): Promise<string> {
  const out: string[] = [];
  const code = await runKeys(
    [
      'create',
      '--stage',
      stage,
      '--table',
      api.output('ControlTableName'),
      '--endpoint',
      api.storeEndpoint,
      '--description',
      'deployed-runner test',
      ...options,
    ],
    {
      out: (line) => out.push(line),
      err: (line) => out.push(line),
      stdoutIsTerminal: true,
      env: { AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'operator', AWS_SECRET_ACCESS_KEY: 'operator' },
      ...(createdAt ? { now: () => createdAt } : {}),
    },
  );
  const key = keyIn(out.join('\n'));
  if (code !== 0 || !key) throw new Error(`keys create failed: ${out.join('\n')}`);
  return key;
}

/**
 * Every path through the stage that needs a DynamoDB grant, each checked as it goes: creates without
 * and with an Idempotency-Key and a replay (the idempotency record's put, read and update), a create
 * whose put answer is lost (the pet read back), status pages (the status index, the cursor secret
 * created on first use and read after) and an unfiltered listing (the scan); every call passes the
 * key authorizer (the API keys' query). Last, each operation's request again, as API Gateway replays
 * a cached Allow whose digests are past the bound: the function checks the key itself (the same
 * query, under its own role). `tag` keeps keys distinct.
 */
export async function driveEveryGrantedPath(running: RunningStage, tag: string): Promise<void> {
  const recorded = recordIntegrationEvents(running.api);
  const base = running.api.url;
  const auth = { Authorization: `Bearer ${running.key}` };
  const json = { ...auth, 'Content-Type': 'application/json' };
  const create = (body: object, headers: Record<string, string> = {}) =>
    fetchApi(`${base}/pets`, { method: 'POST', headers: { ...json, ...headers }, body: JSON.stringify(body) });

  const plain = await create({ name: 'Plain', categoryId: 1, status: 'available' });
  expect(plain.status).toBe(201);
  const keyed = await create({ name: 'Keyed', categoryId: 1, status: 'available' }, { 'Idempotency-Key': `k-${tag}` });
  const replay = await create({ name: 'Keyed', categoryId: 1, status: 'available' }, { 'Idempotency-Key': `k-${tag}` });
  expect([keyed.status, replay.status]).toEqual([201, 201]);
  expect(replay.body.id).toBe(keyed.body.id);
  expect(replay.headers.get('idempotent-replayed')).toBe('true');

  // A put whose answer is lost: the SDK retries, finds the pet stored and reads it back (GetItem).
  running.proxy.fault = { kind: 'dropAnswer', operations: ['PutItem'], bodyIncludes: '"Lost"', times: 1 };
  const lost = await create({ name: 'Lost', categoryId: 2, status: 'available' });
  running.proxy.fault = undefined;
  expect(lost.status).toBe(201);
  const read = await fetchApi(`${base}/pets/${lost.body.id}`, { headers: auth });
  expect(read.body).toEqual(lost.body);

  // Status pages: the cursor secret is created on first use and read after; every page follows the contract.
  const seen: number[] = [];
  let next: string | undefined = `${base}/pets?status=available&limit=1`;
  while (next) {
    const page = await fetchApi(next, { headers: auth });
    expect(page.status).toBe(200);
    seen.push(...page.body.map((pet: { id: number }) => pet.id));
    next = /<([^>]+)>; rel="next"/.exec(page.headers.get('link') ?? '')?.[1];
  }
  expect(seen).toEqual([plain.body.id, keyed.body.id, lost.body.id].sort((a, b) => a - b));
  const all = await fetchApi(`${base}/pets?limit=100`, { headers: auth });
  expect(all.body.length).toBeGreaterThanOrEqual(3);
  await recorded.withVerdictsPastTheBound();
}

/**
 * Keeps each operation function's last event as the REST API built it, to invoke it again with its
 * authorizer verdict aged past KEY_REVOCATION_BOUND_MS (lib/http/authorizerVerdict.ts): API Gateway
 * keeps a verdict for its TTL (300 s), and the digests behind it may then be up to 330 s older still.
 */
function recordIntegrationEvents(api: DeployedApi) {
  const last = new Map<string, { requestContext: { authorizer?: Record<string, unknown> } }>();
  for (const fn of api.functions) {
    const invoke = fn.host.invoke.bind(fn.host);
    fn.host.invoke = (event) => {
      const verdict = (event as { requestContext?: { authorizer?: Record<string, unknown> } }).requestContext
        ?.authorizer;
      if (verdict?.keysReadAt !== undefined) last.set(fn.functionName, event as never);
      return invoke(event);
    };
  }
  return {
    async withVerdictsPastTheBound() {
      const pastTheBound = String(Date.now() - KEY_REVOCATION_BOUND_MS - 1_000);
      expect([...last.keys()].sort()).toEqual(
        api.functions
          .filter((fn) => !/Authoriz/i.test(fn.logicalId))
          .map((fn) => fn.functionName)
          .sort(),
      );
      for (const [name, event] of last) {
        const aged = {
          ...event,
          requestContext: {
            ...event.requestContext,
            authorizer: { ...event.requestContext.authorizer, keysReadAt: pastTheBound },
          },
        };
        const outcome = await api.functions.find((fn) => fn.functionName === name)!.host.invoke(aged);
        expect(outcome.kind === 'ok' && (outcome.payload as { statusCode?: number }).statusCode, name).toBeLessThan(
          300,
        );
      }
    },
  };
}
