/**
 * Each synthesized stage run as deployed (tools/stage-emulator/src/deployedApi.ts): the smoke command, the
 * contract checks of every answer (test/support/http.ts validates against openapi.json), every
 * DynamoDB path that needs a grant, each through its function's IAM gate, and a copy of the template
 * with one grant removed, to prove the gate bites.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stackName } from '../../infra/stages.ts';
import { STAGES } from '../../lib/domain/stages.ts';
import type { DeployedApi } from '../../tools/stage-emulator/src/deployedApi.ts';
import { ensureCloudAssembly } from '../../tools/stage-emulator/src/freshAssembly.ts';
import { readStack } from '../../tools/stage-emulator/src/cloudAssembly.ts';
import { evaluateCheck } from '../../tools/stage-emulator/src/grantUsage.ts';
import { rolePolicies } from '../../tools/stage-emulator/src/iamGate.ts';
import type { PolicyStatement } from '../../tools/stage-emulator/src/iamPolicy.ts';
import { OFFLINE_ENVIRONMENT, TemplateResolver } from '../../tools/stage-emulator/src/intrinsics.ts';
import { runSmoke } from '../../tools/smoke/smoke.ts';
import { DEPLOY_PARAMETERS, driveEveryGrantedPath, startStage, type RunningStage } from '../support/deployedStage.ts';
import { fetchApi, validatingFetch } from '../support/http.ts';
import { DEFAULT_OUTDIR, STAGE_APP } from '../../local/stageApp.ts';

/**
 * Every gate decision as `<Operation> <action> <table logical id>[/index/<name>] [<leading key kind>]`, e.g.
 * `CreatePet dynamodb:PutItem ControlTable idempotency#`: physical names and ids vary per run, these do not.
 */
function decisionSummaries(api: DeployedApi, which: 'allowed' | 'denied'): string[] {
  const tableIds = new Map(api.tables.map((table) => [table.tableName, table.logicalId.replace(/[0-9A-F]{8}$/, '')]));
  const summaries = api.functions.flatMap((fn) =>
    fn.gate.decisions
      .filter((decision) => decision.allowed === (which === 'allowed'))
      .map((decision) => {
        const operation = /(ListPets|CreatePet|GetPet|Authorizer)/.exec(fn.functionName)?.[1] ?? fn.functionName;
        const [, table = '', index = ''] = /:table\/([^/]+)(\/index\/.+)?$/.exec(decision.resource) ?? [];
        const keys = (decision.leadingKeys ?? [])
          .filter((key) => !/^\d+$/.test(key))
          .map((key) => key.replace(/#.*/, '#'));
        return [operation, decision.action, `${tableIds.get(table) ?? table}${index}`, ...new Set(keys)].join(' ');
      }),
  );
  return [...new Set(summaries)].sort();
}

describe.each(STAGES)('%s, run as deployed', (stage) => {
  let running: RunningStage;
  const auth = () => ({ Authorization: `Bearer ${running.key}` });

  beforeAll(async () => {
    running = await startStage(stage);
  }, 240_000);
  afterAll(() => running?.close());

  it('passes the smoke command, every answer checked against openapi.json', async () => {
    const lines: string[] = [];
    const result = await runSmoke(running.api.url, running.key, {
      print: (line) => lines.push(line),
      fetch: validatingFetch,
    });
    expect(lines.filter((line) => line.startsWith('FAIL'))).toEqual([]);
    expect(result.failed).toBe(0);
    expect(result.passed).toBeGreaterThanOrEqual(7);
  });

  it("answers API Gateway's own answers from the template, within the contract", async () => {
    const base = running.api.url;
    const unknown = await fetchApi(`${base}/nothing/here`, { headers: auth() });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ code: 'NOT_FOUND', message: 'No resource exists at this path.', status: 404 });
    const wrongMethod = await fetchApi(`${base}/pets`, { method: 'DELETE', headers: auth() });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET, POST');
    expect(wrongMethod.body.message).toContain('DELETE');
    const noKey = await fetchApi(`${base}/pets`);
    expect(noKey.status).toBe(401);
    expect(noKey.body.code).toBe('UNAUTHORIZED');
    expect(noKey.headers.get('x-amzn-requestid')).toBeTruthy();
    // Over Lambda's 6 MB invoke limit (API Gateway takes up to 10 MB): the function never sees it.
    const huge = await fetchApi(`${base}/pets`, {
      method: 'POST',
      headers: { ...auth(), 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'x'.repeat(7 * 1024 * 1024), categoryId: 1 }),
    });
    expect(huge.status).toBe(413);
    // API Gateway's own body: its 413 cannot be customized (docs/api.md, GatewayMessage in openapi.json).
    expect(huge.body).toEqual({ message: 'Request Too Long' });
    // The key authorizer's gateway response (no function ran), so the challenge keeps its own name:
    // API Gateway renames only a function's WWW-Authenticate.
    expect(noKey.headers.get('www-authenticate')).toBe('Bearer realm="petstore"');
  });

  it('runs every DynamoDB path that needs a grant, each allowed by its own role', async () => {
    await driveEveryGrantedPath(running, stage);

    expect(decisionSummaries(running.api, 'denied')).toEqual([]);
    expect(decisionSummaries(running.api, 'allowed')).toEqual([
      'Authorizer dynamodb:Query ControlTable apikeys',
      // Each key's last use, recorded by the authorizer (lib/store/keyUses.ts).
      'Authorizer dynamodb:UpdateItem ControlTable apikeys',
      'CreatePet dynamodb:GetItem ControlTable idempotency#',
      'CreatePet dynamodb:GetItem PetsTable',
      'CreatePet dynamodb:PutItem ControlTable idempotency#',
      'CreatePet dynamodb:PutItem PetsTable',
      'CreatePet dynamodb:Query ControlTable apikeys',
      // Each create counted against its key's daily ceiling (lib/store/dailyCreates.ts).
      'CreatePet dynamodb:UpdateItem ControlTable creates#',
      'CreatePet dynamodb:UpdateItem ControlTable idempotency#',
      'GetPet dynamodb:GetItem PetsTable',
      'GetPet dynamodb:Query ControlTable apikeys',
      'ListPets dynamodb:GetItem ControlTable cursor-secret',
      'ListPets dynamodb:PutItem ControlTable cursor-secret',
      'ListPets dynamodb:Query ControlTable apikeys',
      'ListPets dynamodb:Query PetsTable/index/status-index',
      'ListPets dynamodb:Scan PetsTable',
    ]);
  });
});

describe('the IAM gate bites', () => {
  let running: RunningStage;

  beforeAll(async () => {
    await ensureCloudAssembly(DEFAULT_OUTDIR, STAGE_APP, { quiet: true });
    const template = structuredClone(readStack(DEFAULT_OUTDIR, stackName('staging')).template);
    const role = Object.values(template.Resources).find(
      (r) => r.Type === 'AWS::IAM::Role' && JSON.stringify(r.Properties).includes('"PolicyName":"listPets"'),
    )!;
    const policy = (role.Properties!.Policies as { PolicyDocument: { Statement: { Sid?: string }[] } }[])[0]!
      .PolicyDocument;
    policy.Statement = policy.Statement.filter((statement) => statement.Sid !== 'CursorSecret');
    running = await startStage('staging', { template });
  }, 240_000);
  afterAll(() => running?.close());

  it('denies the call the removed grant covered, and the client gets the documented error, not a pass', async () => {
    const auth = { Authorization: `Bearer ${running.key}` };
    // A first page with more to come needs the cursor secret, which listPets may no longer read.
    for (const name of ['A', 'B']) {
      const created = await fetchApi(`${running.api.url}/pets`, {
        method: 'POST',
        headers: { ...auth, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name, categoryId: 1 }),
      });
      expect(created.status).toBe(201);
    }
    const page = await fetchApi(`${running.api.url}/pets?limit=1`, { headers: auth });
    expect(page.status).toBe(500);
    expect(page.body).toMatchObject({ code: 'INTERNAL', status: 500 });
    expect(page.body.requestId).toBeTruthy();
    expect(decisionSummaries(running.api, 'denied')).toEqual(['ListPets dynamodb:GetItem ControlTable cursor-secret']);
    expect(running.logs.join('\n')).toContain('AccessDeniedException');
  });

  it('logs, beside the denial, the statement that would allow the call and where the role is written', async () => {
    const denial = running.logs.find((line) => line.startsWith('IAM ListPetsFunction: AccessDeniedException'));
    expect(denial).toMatch(/ for dynamodb:GetItem on ControlTable \(dynamodb:LeadingKeys cursor-secret\)\. /);
    expect(denial).toMatch(
      /ListPetsRole's grants are written in infra\/constructs\/functions\.ts \(PetStore-staging\/Functions\/ListPetsRole\)/,
    );
    expect(denial).toMatch(/its statements: Table at infra\/constructs\/permissions\.ts:\d+, StatusIndex at /);
    const statement = JSON.parse(/would allow it: (\{.*\})\. /.exec(denial ?? '')?.[1] ?? 'null') as PolicyStatement;
    const listPets = running.api.functions.find((fn) => fn.logicalId.startsWith('ListPetsFunction'))!;
    const controlArn = listPets.gate.decisions.find((decision) => !decision.allowed)!.resource;
    expect(statement).toEqual({
      Effect: 'Allow',
      Action: 'dynamodb:GetItem',
      Resource: controlArn,
      Condition: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['cursor-secret'] } },
    });
    // And it is the statement that was missing: the role as it runs is denied the call, with it allowed.
    const resolver = new TemplateResolver(running.api.stack, OFFLINE_ENVIRONMENT, DEPLOY_PARAMETERS);
    const policies = rolePolicies(running.api.stack.template, resolver, listPets.roleLogicalId);
    const check = { action: 'dynamodb:GetItem', resource: controlArn, leadingKeys: ['cursor-secret'] };
    const principal = `arn:aws:sts::${OFFLINE_ENVIRONMENT.accountId}:assumed-role/ListPetsRole/session`;
    expect((await evaluateCheck(policies, check, principal, OFFLINE_ENVIRONMENT)).allowed).toBe(false);
    const amended = [...policies, { Version: '2012-10-17', Statement: [statement] }];
    expect((await evaluateCheck(amended, check, principal, OFFLINE_ENVIRONMENT)).allowed).toBe(true);
    expect(running.api.iamReport().functions.find((fn) => fn.function === 'ListPetsFunction')?.denied).toBe(1);
  });
});
