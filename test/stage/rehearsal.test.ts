/**
 * `npm run rehearse -- --stage <stage>` on each stage as synthesized: every alarm fires on its own
 * fault, none on the healthy day, and only what cannot be rehearsed offline is left (the WAF's,
 * and where a function reserves no concurrency, its Throttles). Stress tier: a stage's rehearsal
 * takes one to three minutes on two cores. The stages run one after the other: run at once, each
 * slows the other's paced traffic past its alarms' windows. Their times are printed, never asserted.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { STAGES } from '../../infra/stages.ts';
import { readAlarms } from '../../tools/stage-emulator/src/alarms/index.ts';
import { NOT_REHEARSED_OFFLINE } from '../../tools/stage-emulator/src/alarms/rehearsal.ts';
import { readStack } from '../../tools/stage-emulator/src/cloudAssembly.ts';
import { ensureCloudAssembly } from '../../tools/stage-emulator/src/freshAssembly.ts';
import { DEFAULT_OUTDIR, STAGE_APP, STAGE_STACKS } from '../../local/stageApp.ts';
import { runCli } from '../support/cli.ts';

/** How long a stage's rehearsal may run before the test gives up on it (about 1 to 3 minutes alone). */
const GIVE_UP_MS = 360_000;

beforeAll(() => ensureCloudAssembly(DEFAULT_OUTDIR, STAGE_APP, { quiet: true }), 600_000);

describe.each(STAGES)('the %s rehearsal', (stage) => {
  it(
    'proves every alarm: each fires on its fault and notifies the topic, none on the healthy day',
    async () => {
      const started = Date.now();
      const run = await runCli('scripts/rehearse.ts', ['--stage', stage], {}, GIVE_UP_MS);
      console.log(`The ${stage} rehearsal took ${Math.round((Date.now() - started) / 1000)} s.`);
      expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
      const { alarms } = readAlarms(readStack(DEFAULT_OUTDIR, STAGE_STACKS[stage]!));
      const rows = new Map(
        run.stdout
          .split('\n')
          .filter((line) => line.startsWith('| petstore-'))
          .map((line) => line.split('|').map((cell) => cell.trim()))
          .map(([, alarm, firedBy, minutes, healthy, notified]) => [alarm!, { firedBy, minutes, healthy, notified }]),
      );
      expect([...rows.keys()].sort()).toEqual(alarms.map(({ alarmName }) => alarmName).sort());
      for (const [alarm, row] of rows) {
        expect(row.healthy, alarm).toBe('OK');
        if (row.firedBy!.startsWith('not rehearsed offline')) continue;
        expect(Number(row.minutes), alarm).toBeGreaterThanOrEqual(1);
        expect(row.notified, alarm).toMatch(/^yes \(AlarmTopic/);
      }
      const offline = [...rows].filter(([, row]) => row.firedBy!.startsWith('not rehearsed offline'));
      expect(offline.map(([alarm]) => alarm)).toContain(`petstore-${stage}-WafBlocked`);
      expect(NOT_REHEARSED_OFFLINE.map(({ metricName }) => metricName)).toEqual(['BlockedRequests']);
      for (const [alarm] of offline) expect(alarm).toMatch(/WafBlocked|Throttles$/);
    },
    GIVE_UP_MS + 60_000,
  );
});
