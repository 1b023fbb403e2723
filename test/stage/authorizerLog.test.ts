/**
 * The key authorizer's alarms that read its log (infra/constructs/authorizerMonitoring.ts and the
 * KeyStoreWarnings filters of infra/constructs/monitoring.ts), driven through the stage run as deployed: the
 * authorizer's own lines, as its sandbox writes them, judged by the synthesized template's own
 * filter patterns on its log group (tools/stage-emulator/src/alarms/filterPattern.ts). A failed key read counts as a
 * failure; refused keys, however many, count nothing; an unreadable key item is a key-store warning.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { stackName } from '../../infra/stages.ts';
import { createDocumentClient } from '../../lib/store/dynamo.ts';
import { fetchApi } from '../support/http.ts';
import { matchesFilterPattern } from '@petstore/stage-emulator/filterPattern';
import { generateApiKey } from '../../tools/keys/keys.ts';
import { readStack } from '../../tools/stage-emulator/src/cloudAssembly.ts';
import { startStage, type RunningStage } from '../support/deployedStage.ts';
import { DEFAULT_OUTDIR } from '../../local/stageApp.ts';

const STAGE = 'staging';
let running: RunningStage;
/** Every line the authorizer's sandboxes wrote, as the host prefixes them on stderr. */
const lines: string[] = [];
let authorizerPrefix: string;

/** The template's filter on the authorizer's log group that feeds `metricName`. */
function authorizerFilter(metricName: string): string {
  const resources = Object.values(readStack(DEFAULT_OUTDIR, stackName(STAGE)).template.Resources);
  const failures = resources.find(
    (r) =>
      r.Type === 'AWS::Logs::MetricFilter' &&
      JSON.stringify(r.Properties).includes('"MetricName":"AuthorizerFailures"'),
  )!;
  const logGroup = JSON.stringify(failures.Properties!.LogGroupName);
  const found = resources.find(
    (r) =>
      r.Type === 'AWS::Logs::MetricFilter' &&
      JSON.stringify(r.Properties!.LogGroupName) === logGroup &&
      JSON.stringify(r.Properties).includes(`"MetricName":"${metricName}"`),
  );
  if (!found) throw new Error(`no ${metricName} filter on the authorizer's log group`);
  return String(found.Properties!.FilterPattern);
}

/** The authorizer's lines written while `act` ran (its sandbox writes them as it runs). */
async function linesDuring(act: () => Promise<void>): Promise<string[]> {
  const from = lines.length;
  // All in once `act` has its answers: the sandbox writes its console lines, then its REPORT line, on
  // one pipe, and the host answers an invocation only after passing its REPORT line on.
  await act();
  return lines.slice(from);
}

beforeAll(async () => {
  // No log option: each function's lines go to stderr behind its own name, so the authorizer's can be told apart.
  running = await startStage(STAGE, { log: undefined });
  authorizerPrefix = `[${running.api.functions.find((fn) => /^AuthorizerFunction/.test(fn.logicalId))!.functionName}] `;
  const write = process.stderr.write.bind(process.stderr);
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = String(chunk);
    for (const line of text.split('\n'))
      if (line.startsWith(authorizerPrefix)) lines.push(line.slice(authorizerPrefix.length));
    // The functions' lines are kept here, not shown; anything else passes.
    return text.startsWith('[PetStore-') || write(chunk as string, ...(rest as []));
  });
  // An item the key store cannot read, there before anything reads the keys.
  const documents = createDocumentClient({ endpoint: running.api.storeEndpoint, region: 'us-east-1' });
  await documents.send(
    new PutCommand({
      TableName: running.api.output('ControlTableName'),
      Item: { pk: 'apikeys', sk: 'badbadbadbad', sha256: 'not a digest' },
    }),
  );
  documents.destroy();
}, 240_000);
afterAll(async () => {
  vi.restoreAllMocks();
  await running?.close();
});
afterEach(() => {
  running.proxy.fault = undefined;
});

describe("the key authorizer's log, as its alarms read it", () => {
  const get = (key: string) =>
    fetchApi(`${running.api.url}/pets?limit=1`, { headers: { Authorization: `Bearer ${key}` } });

  it('counts a failed key read as a failure (the request answered 503), and an unreadable key item as a key-store warning', async () => {
    const failure = authorizerFilter('AuthorizerFailures');
    const warnings = authorizerFilter('KeyStoreWarnings');

    running.proxy.fault = { kind: 'error500', operations: ['Query'] };
    let answer: Awaited<ReturnType<typeof get>> | undefined;
    const failed = await linesDuring(async () => {
      answer = await get(running.key);
    });
    expect(answer!.status).toBe(503);
    expect(answer!.body.code).toBe('SERVICE_UNAVAILABLE');
    expect(
      failed.filter((line) => matchesFilterPattern(failure, line)),
      failed.join('\n'),
    ).toHaveLength(1);

    running.proxy.fault = undefined;
    const loaded = await linesDuring(async () => {
      expect((await get(running.key)).status).toBe(200);
    });
    expect(
      loaded
        .filter((line) => matchesFilterPattern(warnings, line))
        .map((line) => JSON.parse(line.split('\t')[3]!).message),
    ).toEqual([expect.stringMatching(/^Ignoring API key item badbadbadbad of /)]);
    expect(loaded.filter((line) => matchesFilterPattern(failure, line))).toEqual([]);
  });

  it('counts nothing for refused keys: each is a thrown Unauthorized (an Errors datapoint), never a failure line', async () => {
    const failure = authorizerFilter('AuthorizerFailures');
    const warnings = authorizerFilter('KeyStoreWarnings');
    const refusals = await linesDuring(async () => {
      for (let i = 0; i < 3; i++) expect((await get(generateApiKey().key)).status).toBe(401);
    });
    // The runtime logged each thrown Unauthorized (what Lambda's Errors counts), and the filters count none.
    expect(refusals.filter((line) => line.includes('Invoke Error'))).toHaveLength(3);
    expect(
      refusals.filter((line) => matchesFilterPattern(failure, line) || matchesFilterPattern(warnings, line)),
    ).toEqual([]);
  });
});
