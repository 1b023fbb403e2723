/**
 * What a stage holds (docs/operating.md "Capacity"), as the templates set it: createPet's tighter
 * throttle per key in the usage plan, production's reserved concurrency for the authorizer and each
 * operation (and the concurrency alarms below it), staging reserving none; and the document's
 * arithmetic, held to the stage settings it is made from.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/bundle/bundling.ts';
import { UNRESERVED_MINIMUM } from '../../infra/concurrencyPreflight.ts';
import { STAGE_SETTINGS, STAGES, reservedTotal } from '../../infra/stages.ts';
import { routes } from '../../lib/domain/routes.ts';
import { alarmNamed, functionOf, props, synthesizedStages } from './templates.ts';

const of = synthesizedStages();

describe.each(STAGES)('PetStore-%s capacity', (stage) => {
  const settings = STAGE_SETTINGS[stage];

  it('throttles createPet per key tighter than the reads, on its own method of the usage plan', () => {
    const [, plan] = of(stage).ofType('AWS::ApiGateway::UsagePlan')[0]!;
    const { keyLimits } = settings;
    expect((props(plan).ApiStages as Record<string, unknown>[])[0]!.Throttle).toEqual({
      '/pets/POST': { RateLimit: keyLimits.createPet.rateLimit, BurstLimit: keyLimits.createPet.burstLimit },
    });
    expect(routes.find((route) => route.operation === 'createPet')).toMatchObject({ method: 'POST', path: '/pets' });
    expect(keyLimits.createPet.rateLimit).toBeLessThan(keyLimits.rateLimit);
    expect(keyLimits.createPet.burstLimit).toBeLessThan(keyLimits.burstLimit);
  });

  it(
    settings.reservedConcurrency
      ? 'reserves concurrency for the authorizer and each operation, each alarmed on below its reservation'
      : 'reserves no concurrency: it deploys into any account',
    () => {
      const s = of(stage);
      const reserved = settings.reservedConcurrency;
      const authorizer = props(s.resource(s.logicalId(s.stack.keyAuthorizer.fn))).ReservedConcurrentExecutions;
      const operations = Object.fromEntries(
        routes.map((route) => [
          route.operation,
          functionOf(s, route.operation).properties.ReservedConcurrentExecutions,
        ]),
      );
      if (!reserved) {
        expect([authorizer, ...Object.values(operations)]).toEqual([undefined, undefined, undefined, undefined]);
        return;
      }
      expect(authorizer).toBe(reserved.authorizer);
      expect(operations).toEqual(reserved.operations);
      const threshold = (name: string) => alarmNamed(s, stage, name).Threshold as number;
      expect(threshold('AuthorizerConcurrency')).toBeLessThan(reserved.authorizer);
      for (const route of routes) {
        const name = `${route.operation[0]!.toUpperCase()}${route.operation.slice(1)}Concurrency`;
        expect(threshold(name), name).toBeLessThan(reserved.operations[route.operation]);
        expect(threshold(name), name).toBeGreaterThan(0);
      }
    },
  );
});

describe('docs/operating.md "Capacity"', () => {
  const doc = readFileSync(join(PROJECT_ROOT, 'docs', 'operating.md'), 'utf8');
  const section = doc.slice(doc.indexOf('\n## Capacity\n'));
  const rows = new Map(
    section
      .split('\n')
      .filter((line) => line.startsWith('| ') && !line.startsWith('| |'))
      .map((line) =>
        line
          .slice(1, -1)
          .split('|')
          .map((cell) => cell.trim()),
      )
      .map(([name, ...cells]) => [name!, Object.fromEntries(STAGES.map((stage, i) => [stage, cells[i]!]))]),
  );
  const n = (value: number) => value.toLocaleString('en-US');

  it('states each stage setting it is made from', () => {
    for (const stage of STAGES) {
      const { throttling, keyLimits, webAcl, reservedConcurrency } = STAGE_SETTINGS[stage];
      expect(rows.get('Stage throttle, all keys together')![stage]).toBe(
        `${throttling.rateLimit}/s, burst ${throttling.burstLimit}`,
      );
      expect(rows.get('Per key, usage plan (best effort)')![stage]).toBe(
        `${keyLimits.rateLimit}/s, burst ${keyLimits.burstLimit}; ${n(keyLimits.requestsPerDay)} a day`,
      );
      expect(rows.get('createPet per key, usage plan')![stage]).toBe(
        `${keyLimits.createPet.rateLimit}/s, burst ${keyLimits.createPet.burstLimit}`,
      );
      expect(rows.get('Per key, web ACL (hard)')![stage]).toBe(
        webAcl
          ? `${n(webAcl.requestsPerKeyPerMinute)} in any minute (${webAcl.requestsPerKeyPerMinute / 60}/s)`
          : 'none (no web ACL)',
      );
      expect(rows.get('Per address, web ACL (hard)')![stage]).toBe(
        webAcl
          ? `${n(webAcl.requestsPerAddressPer5Minutes)} in any 5 minutes (${webAcl.requestsPerAddressPer5Minutes / 300}/s)`
          : 'none (no web ACL)',
      );
      expect(rows.get('Keys at full rate the stage holds')![stage]).toBe(
        String(Math.floor(throttling.rateLimit / keyLimits.rateLimit)),
      );
      const reservations = reservedConcurrency
        ? `authorizer ${reservedConcurrency.authorizer}, ${routes.map((r) => `${r.operation} ${reservedConcurrency.operations[r.operation]}`).join(', ')}: ${reservedTotal(STAGE_SETTINGS[stage])}`
        : 'none';
      expect(rows.get('Reserved concurrency')![stage]).toBe(reservations);
    }
  });

  it("states the quota production's reservations need, and what one key can take", () => {
    const { throttling, keyLimits, webAcl } = STAGE_SETTINGS.production;
    const text = section.replace(/\s+/g, ' ');
    expect(text).toContain(
      `the account's concurrency quota must be at least **${reservedTotal(STAGE_SETTINGS.production) + UNRESERVED_MINIMUM}**`,
    );
    expect(text).toContain(
      `${throttling.rateLimit} / ${keyLimits.rateLimit} = **${throttling.rateLimit / keyLimits.rateLimit}** in production`,
    );
    if (!webAcl) throw new Error('production has a web ACL');
    expect(text).toContain(
      `stops it at ${n(webAcl.requestsPerKeyPerMinute)} requests in any minute, ${webAcl.requestsPerKeyPerMinute / 60} a second, ${Math.round((100 * webAcl.requestsPerKeyPerMinute) / 60 / throttling.rateLimit)}% of the stage`,
    );
  });
});
