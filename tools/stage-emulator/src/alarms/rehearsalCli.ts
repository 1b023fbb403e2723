/**
 * `npm run rehearse -- --stage <stage> [--cdk-out <dir>] [--parameter Name=Value ...]`: the stage's
 * alarms rehearsed offline (./rehearsal.ts). Synthesizes first when the assembly is stale, as
 * start:deployed does; prints one table (alarm | scenario that fires it | simulated minutes to
 * ALARM | state under healthy traffic | topic notified) and each failure in one line. Exit codes:
 * 0 every alarm proven, 1 an alarm failed (or the stage could not start), 2 bad usage.
 */
import { parseArgs } from 'node:util';
import { typedPath } from '@petstore/local-kit/typedPath';
import { readStack } from '../cloudAssembly.ts';
import { startDeployedApi } from '../deployedApi.ts';
import { ensureCloudAssembly } from '../freshAssembly.ts';
import type { StartDeployedProduct } from '../cli.ts';
import { readAlarms } from './alarmModel.ts';
import { MetricStore } from './metricStore.ts';
import {
  formatTable,
  rehearsalRows,
  runScenario,
  SimulatedClock,
  type Scenario,
  type ScenarioRun,
} from './rehearsal.ts';
import { RehearsalDriver } from './rehearsalDriver.ts';
import { rehearsalScenarios } from './rehearsalScenarios.ts';
import type { RehearsalProduct } from './rehearsalTraffic.ts';

export type RehearseProduct = Pick<
  StartDeployedProduct,
  'app' | 'stacks' | 'outdir' | 'offlineParameters' | 'edgeErrors'
> &
  RehearsalProduct;

const USAGE =
  'Usage: npm run rehearse -- --stage <stage> [--cdk-out <dir>] [--parameter Name=Value ...] [--scenario <name> ...]';

function parse(argv: readonly string[], product: RehearseProduct) {
  const stages = Object.keys(product.stacks);
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    options: {
      stage: { type: 'string' },
      'cdk-out': { type: 'string' },
      parameter: { type: 'string', multiple: true },
      scenario: { type: 'string', multiple: true },
    },
  });
  if (values.stage === undefined) throw new Error(`--stage is required (${stages.join(' or ')}).`);
  if (!Object.hasOwn(product.stacks, values.stage))
    throw new Error(`unknown stage "${values.stage}": the stages are ${stages.join(' and ')}.`);
  const parameters: Record<string, string> = { ...product.offlineParameters };
  for (const assignment of values.parameter ?? []) {
    const at = assignment.indexOf('=');
    if (at < 1) throw new Error(`--parameter takes Name=Value, not "${assignment}".`);
    parameters[assignment.slice(0, at)] = assignment.slice(at + 1);
  }
  const outdir = values['cdk-out'] === undefined ? product.outdir : typedPath(values['cdk-out'], 'rehearse');
  return { stage: values.stage, outdir, parameters, only: values.scenario ?? [] };
}

export async function runRehearseCommand(argv: string[], product: RehearseProduct): Promise<void> {
  let args: ReturnType<typeof parse>;
  try {
    args = parse(argv, product);
  } catch (error) {
    console.error(
      `rehearse: ${(error as Error).message} ${USAGE.replace('<stage>', Object.keys(product.stacks).join('|'))}`,
    );
    process.exit(2);
  }
  const started = performance.now();
  try {
    await ensureCloudAssembly(args.outdir, product.app);
    const stackName = product.stacks[args.stage]!;
    const stack = readStack(args.outdir, stackName);
    const { alarms, refused } = readAlarms({ stackName, template: stack.template });
    const clock = new SimulatedClock(0);
    const store = new MetricStore(clock);
    const api = await startDeployedApi({
      stackName,
      outdir: args.outdir,
      port: 0,
      parameters: args.parameters,
      ...(product.edgeErrors ? { edgeErrors: product.edgeErrors } : {}),
      metrics: store,
      // The functions' lines feed the metric filters; shown, they would bury the table.
      log: () => {},
      apiLog: () => {},
      report: () => {},
    });
    const runs: ScenarioRun[] = [];
    const skipped: Scenario[] = [];
    try {
      const driver = new RehearsalDriver(product, alarms, args.stage, api);
      const every = rehearsalScenarios(driver);
      const unknown = args.only.filter((name) => !every.some((scenario) => scenario.name === name));
      if (unknown.length > 0)
        throw new Error(
          `no scenario ${unknown.join(', ')}: the scenarios are ${every.map(({ name }) => name).join(', ')}.`,
        );
      // The healthy day always runs; `--scenario` picks among the faults.
      const scenarios = every.filter(
        (scenario, i) => i === 0 || args.only.length === 0 || args.only.includes(scenario.name),
      );
      skipped.push(...every.filter((scenario) => !scenarios.includes(scenario)));
      for (const [index, scenario] of scenarios.entries()) {
        const run = await runScenario(scenario, index, { api, alarms, store, clock });
        console.error(
          `  ${scenario.name} (${driver.tally()}): ${scenario.minutes} simulated minutes in ${(run.realMs / 1000).toFixed(1)} s, ${run.fired.size} alarms fired`,
        );
        runs.push(run);
      }
    } finally {
      await api.close();
    }
    const [healthy, ...faults] = runs;
    const unreserved = new Set(
      Object.entries(stack.template.Resources)
        .filter(
          ([, resource]) =>
            resource.Type === 'AWS::Lambda::Function' &&
            resource.Properties?.ReservedConcurrentExecutions === undefined,
        )
        .map(([logicalId]) => api.functions.find((fn) => fn.logicalId === logicalId)?.functionName ?? logicalId),
    );
    const rows = rehearsalRows(alarms, refused, healthy!, faults, skipped, unreserved);
    console.log(
      `${stackName}: ${alarms.length + refused.length} alarms rehearsed offline in ${((performance.now() - started) / 1000).toFixed(0)} s`,
    );
    for (const line of formatTable(rows)) console.log(line);
    const failures = rows.flatMap((row) => (row.failure ? [row.failure] : []));
    for (const failure of failures) console.log(`FAIL ${failure}`);
    process.exit(failures.length > 0 ? 1 : 0);
  } catch (error) {
    console.error(`rehearse: failed: ${(error as Error).message}`);
    process.exit(1);
  }
}
