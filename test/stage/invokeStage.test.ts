/** `npm run invoke -- --stage`: one function from its cdk.out asset, as start:deployed runs it, per process. */
import { beforeAll, expect, it } from 'vitest';
import { ensureCloudAssembly } from '../../tools/stage-emulator/src/freshAssembly.ts';
import { expectOneLineRefusal, runCli } from '../support/cli.ts';
import { DEFAULT_OUTDIR, STAGE_APP } from '../../local/stageApp.ts';
import { invoke, UsageError } from '../../local/invoke.ts';
import { stageInvoker } from '../../local/stageInvoke.ts';

beforeAll(async () => {
  await ensureCloudAssembly(DEFAULT_OUTDIR, STAGE_APP);
}, 300_000);

interface LambdaResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

async function invokeStage(fn: string, eventFile: string) {
  const run = await runCli('scripts/invoke.ts', ['--stage', 'staging', fn, '--event', eventFile]);
  expect(run.code, run.stderr).toBe(0);
  const reports = run.stderr.split('\n').filter((line) => line.startsWith('REPORT RequestId: '));
  return { result: JSON.parse(run.stdout) as LambdaResult, stderr: run.stderr, reports };
}

it('invokes each sample event on the staging asset, with the stage tables, its result alone on stdout and its REPORT on stderr', async () => {
  const created = await invokeStage('createPet', 'events/createPet.json');
  expect(created.result.statusCode).toBe(201);
  expect(JSON.parse(created.result.body)).toMatchObject({ name: expect.any(String), status: 'available' });
  expect(created.reports).toHaveLength(1);
  expect(created.reports[0]).toMatch(/\tInit Duration: \d+\.\d\d ms/);
  // The bundle from cdk.out, not the sources: its log carries the Lambda runtime's START line.
  expect(created.stderr).toMatch(/^START RequestId: \S+ Version: 1$/m);

  // Each invocation gets a fresh in-memory stage: nothing listed, pet 1 unknown.
  const listed = await invokeStage('listPets', 'events/listPets.json');
  expect(listed.result.statusCode).toBe(200);
  expect(JSON.parse(listed.result.body)).toEqual([]);
  expect(listed.reports).toHaveLength(1);

  const fetched = await invokeStage('getPet', 'events/getPet.json');
  expect(fetched.result.statusCode).toBe(404);
  expect(JSON.parse(fetched.result.body)).toEqual({ code: 'NOT_FOUND', message: 'No pet has the id 1.', status: 404 });
  expect(fetched.reports).toHaveLength(1);
}, 120_000);

it("invokes the authorizer on its own sample event (a REQUEST authorizer's), its sample key issued in the stage: an Allow for the stage", async () => {
  const run = await runCli('scripts/invoke.ts', [
    '--stage',
    'staging',
    'authorizer',
    '--event',
    'events/authorizer.json',
  ]);
  expect(run.code, run.stderr).toBe(0);
  const verdict = JSON.parse(run.stdout) as {
    principalId: string;
    policyDocument: { Statement: { Effect: string; Resource: string[] }[] };
  };
  expect(verdict.policyDocument.Statement).toEqual([
    expect.objectContaining({
      Effect: 'Allow',
      // The sample key is a write key: every method of the stage.
      Resource: ['arn:aws:execute-api:us-east-1:000000000000:local/v1/*'],
    }),
  ]);
  expect(run.stderr).toMatch(/^REPORT RequestId: /m);
}, 120_000);

it('refuses bad arguments in one line, exit 2', async () => {
  const cases: [string[], RegExp][] = [
    [
      ['--stage', 'qa', 'listPets', '--event', 'events/listPets.json'],
      /^unknown stage "qa": the stages are staging and production\.$/,
    ],
    [
      ['--stage', 'staging', 'deletePet', '--event', 'events/listPets.json'],
      /^PetStore-staging has no function "deletePet": its functions are listPets, createPet, getPet, authorizer\.$/,
    ],
    [['--stage', 'staging', 'listPets'], /^--stage takes one function and --event <file>\.$/],
    [
      ['--stage', 'staging', 'listPets', '--event', 'events/missing.json'],
      /^Cannot read the event file events\/missing\.json \(ENOENT\)\.$/,
    ],
    [
      ['--stage', 'staging', 'authorizer', '--event', 'events/listPets.json'],
      /^authorizer takes an API Gateway REQUEST authorizer event \(type REQUEST, methodArn; e\.g\. events\/authorizer\.json\), not a proxy event\.$/,
    ],
    [
      ['--stage', 'staging', 'listPets', '--event', 'events/authorizer.json'],
      /^listPets takes an API Gateway proxy event \(e\.g\. events\/listPets\.json\), not a REQUEST authorizer event\.$/,
    ],
    [
      ['listPets', '--event', 'events/authorizer.json'],
      /^listPets takes an API Gateway proxy event \(e\.g\. events\/listPets\.json\), not a REQUEST authorizer event; the authorizer runs with --stage\.$/,
    ],
  ];
  // Through the command, the first: one line, exit 2; each of them as the command reads its arguments.
  const [[firstArgs, firstSays]] = cases as [[string[], RegExp]];
  const run = await runCli('scripts/invoke.ts', firstArgs);
  expectOneLineRefusal(run, firstSays);
  expect(run).toMatchObject({ code: 2, stdout: '' });
  for (const [args, says] of cases) {
    const refusal = await invoke(args, stageInvoker()).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refusal, args.join(' ')).toBeInstanceOf(UsageError);
    expect((refusal as Error).message).toMatch(says);
  }
}, 120_000);
