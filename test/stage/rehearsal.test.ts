/**
 * `npm run rehearse -- --stage <stage>` on each stage as synthesized: every alarm fires on its own
 * fault, none on the healthy day, and only what cannot be rehearsed offline is left (the WAF's,
 * and where a function reserves no concurrency, its Throttles). Stress tier: a stage's rehearsal
 * takes one to three minutes on two cores.
 */
import { describe, expect, it } from 'vitest';
import { STAGES } from '../../infra/stages.ts';
import { readAlarms } from '../../tools/stage-emulator/src/alarms/index.ts';
import { NOT_REHEARSED_OFFLINE } from '../../tools/stage-emulator/src/alarms/rehearsal.ts';
import { readStack } from '../../tools/stage-emulator/src/cloudAssembly.ts';
import { ensureCloudAssembly } from '../../tools/stage-emulator/src/freshAssembly.ts';
import { DEFAULT_OUTDIR, STAGE_APP, STAGE_STACKS } from '../../local/stageApp.ts';
import { runCli } from '../support/cli.ts';

/** A stage's whole rehearsal must take under three minutes here (issue 45). */
const BUDGET_MS = 180_000;

describe.each(STAGES)('the %s rehearsal', (stage) => {
  it(
    'proves every alarm: each fires on its fault and notifies the topic, none on the healthy day',
    async () => {
      await ensureCloudAssembly(DEFAULT_OUTDIR, STAGE_APP, { quiet: true });
      const started = Date.now();
      const run = await runCli('scripts/rehearse.ts', ['--stage', stage], {}, BUDGET_MS + 60_000);
      const took = Date.now() - started;
      expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
      expect(took).toBeLessThan(BUDGET_MS);
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
    BUDGET_MS + 120_000,
  );
});
