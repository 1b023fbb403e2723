/**
 * How the bench starts the processes it times (tools/bench/coldRequest.ts): Lambda's runtime arguments
 * for a function's memory, confinement to one CPU, and the refusal of a process that did not run as
 * asked. `npm run bench -- --quick --cold-only --lambda-node-args --one-core` runs them end to end
 * (test/docs/walkthrough.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import {
  checkLaunch,
  lambdaNodeArgs,
  launchReport,
  nodeCommand,
  PLAIN_LAUNCH,
  type LaunchReport,
} from '../../../tools/bench/coldRequest.ts';

describe('lambdaNodeArgs', () => {
  it("gives a 512 MiB function's node a tenth of its memory as young generation, half of that per semi-space, the rest as old space", () => {
    expect(lambdaNodeArgs(512)).toEqual([
      '--expose-gc',
      '--max-http-header-size',
      '81920',
      '--max-semi-space-size=25',
      '--max-old-space-size=461',
    ]);
    expect(lambdaNodeArgs(1769)).toEqual([
      '--expose-gc',
      '--max-http-header-size',
      '81920',
      '--max-semi-space-size=88',
      '--max-old-space-size=1593',
    ]);
  });
});

describe('nodeCommand', () => {
  /** What a process started by `nodeCommand` reports of itself, as a timed process does. */
  const seen = (launch: Parameters<typeof nodeCommand>[0]) => {
    const [command, args] = nodeCommand(launch, ['-e', `process.stdout.write(JSON.stringify(${launchReport}))`]);
    const run = spawnSync(command, args, { encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    return JSON.parse(run.stdout) as LaunchReport;
  };

  it('starts node as it is by default, free to use every CPU', () => {
    const report = seen(PLAIN_LAUNCH);
    expect(report.execArgv).toEqual(['-e']);
    expect(report.cpuList).toBe(availableParallelism() > 1 ? `0-${availableParallelism() - 1}` : '0');
  });

  it("starts node with Lambda's arguments, confined to the one CPU asked for, when asked", () => {
    const launch = { nodeArgs: lambdaNodeArgs(512), cpu: availableParallelism() - 1 };
    const report = seen(launch);
    expect(report).toEqual({ execArgv: [...lambdaNodeArgs(512), '-e'], cpuList: String(launch.cpu) });
    expect(() => checkLaunch('bundle.mjs', launch, report)).not.toThrow();
  });
});

describe('checkLaunch', () => {
  it('refuses a process that ran without the arguments asked for, naming them', () => {
    expect(() =>
      checkLaunch(
        'bundle.mjs',
        { nodeArgs: ['--expose-gc', '--max-semi-space-size=25'] },
        { execArgv: ['--expose-gc'], cpuList: '0-1' },
      ),
    ).toThrow('bundle.mjs: the process ran without --max-semi-space-size=25 (its arguments: --expose-gc)');
  });

  it('refuses a process that could run on any CPU but the one asked for, alone', () => {
    expect(() => checkLaunch('bundle.mjs', { nodeArgs: [], cpu: 1 }, { execArgv: [], cpuList: '0-1' })).toThrow(
      'bundle.mjs: the process could run on CPUs 0-1, not on CPU 1 alone',
    );
    // Confined, but to the bench's own CPU (a child inherits its parent's): refused too.
    expect(() => checkLaunch('bundle.mjs', { nodeArgs: [], cpu: 1 }, { execArgv: [], cpuList: '0' })).toThrow(
      'could run on CPUs 0, not on CPU 1 alone',
    );
  });
});
