/**
 * `npm run rehearse` fails a stage whose alarm never fires on its fault, or fires on a healthy day:
 * a copy of the cloud assembly with one alarm's threshold made unreachable, and one with an alarm
 * made to fire on any traffic, each rehearsed with the healthy day and the one fault scenario that
 * concerns it (`--scenario`, so that the check stays quick). The full rehearsals of both stages are
 * test/stage/rehearsal.test.ts (stress tier).
 */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { stackName } from '../../infra/stages.ts';
import { DEFAULT_OUTDIR, STAGE_APP } from '../../local/stageApp.ts';
import { ensureCloudAssembly } from '../../tools/stage-emulator/src/freshAssembly.ts';
import { runCli } from '../support/cli.ts';

const STAGE = 'production';
const TEMPLATE = `${stackName(STAGE)}.template.json`;

beforeAll(() => ensureCloudAssembly(DEFAULT_OUTDIR, STAGE_APP, { quiet: true }), 120_000);

/** A copy of the assembly whose alarm named `name` is changed by `change`. */
function assemblyWith(name: string, change: (properties: Record<string, unknown>) => void): string {
  const copy = mkdtempSync(join(tmpdir(), 'rehearsal-assembly-'));
  cpSync(DEFAULT_OUTDIR, copy, { recursive: true });
  const template = JSON.parse(readFileSync(join(copy, TEMPLATE), 'utf8'));
  const [, alarm] = Object.entries<{ Type: string; Properties: Record<string, unknown> }>(template.Resources).find(
    ([id, resource]) => resource.Type === 'AWS::CloudWatch::Alarm' && id.startsWith(name),
  )!;
  change(alarm.Properties);
  writeFileSync(join(copy, TEMPLATE), JSON.stringify(template));
  return copy;
}

const rehearse = (outdir: string, scenario: string) =>
  runCli('scripts/rehearse.ts', ['--stage', STAGE, '--cdk-out', outdir, '--scenario', scenario], {}, 120_000);

describe('the rehearsal’s verdict', () => {
  it('an alarm whose threshold its fault never reaches fails the rehearsal, named', async () => {
    const outdir = assemblyWith('PetsSystemErrorsAlarm', (alarm) => {
      alarm.Threshold = 1_000_000;
    });
    const run = await rehearse(outdir, 'Pets table failing');
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toMatch(/^\| petstore-production-PetsSystemErrors +\| none /m);
    expect(run.stdout.split('\n').filter((line) => line.startsWith('FAIL'))).toEqual([
      'FAIL petstore-production-PetsSystemErrors never fires: no scenario reached its threshold (GreaterThanOrEqualToThreshold 1000000, 2 of 3).',
    ]);
  });

  it('an alarm that fires on healthy traffic fails the rehearsal, named; the faults it was not rehearsed against are said', async () => {
    const outdir = assemblyWith('ListPetsLatencyP99Alarm', (alarm) => {
      alarm.Threshold = 0;
      alarm.ComparisonOperator = 'GreaterThanOrEqualToThreshold';
    });
    const run = await rehearse(outdir, 'Pets table failing');
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toMatch(/^\| petstore-production-ListPetsLatencyP99 +\| .* \| ALARM +\|/m);
    expect(run.stdout).toMatch(
      /^\| petstore-production-PetsSystemErrors +\| Pets table failing +\| 2 +\| OK +\| yes \(AlarmTopic/m,
    );
    expect(run.stdout).toMatch(/^\| petstore-production-CreatePetErrors +\| not run: runtime killed /m);
    expect(run.stdout).toMatch(/^\| petstore-production-WafBlocked +\| not rehearsed offline: the web ACL/m);
    expect(run.stdout.split('\n').filter((line) => line.startsWith('FAIL'))).toEqual([
      'FAIL petstore-production-ListPetsLatencyP99 fires on the healthy scenario (ALARM).',
    ]);
  });

  it('a mistake answers one line and exit 2', async () => {
    const run = await runCli('scripts/rehearse.ts', ['--stage', 'qa']);
    expect(run.code).toBe(2);
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(
      /^rehearse: unknown stage "qa": the stages are staging and production\. Usage: npm run rehearse/,
    );
  });
});
