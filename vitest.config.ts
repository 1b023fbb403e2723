import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'tools/*/test/**/*.test.ts'],
    // Mutes the one-line-per-request log (lib/http/requestLog.ts); test/functions/requestLog.test.ts reads it.
    setupFiles: ['test/support/muteRequestLog.ts'],
    // Two cores: files run in parallel on forks, each with its own embedded dynalite.
    pool: 'forks',
    // Two workers on two cores: vitest's default is one fewer than the cores. Most files wait on
    // child processes, sockets and dynalite rather than compute.
    maxWorkers: 2,
    // Node 20 (the host's run) has WebSocket behind a flag; the --inspect test speaks the inspector
    // protocol over it. Node 22 has it on.
    execArgv: Number(process.versions.node.split('.')[0]) < 22 ? ['--experimental-websocket'] : [],
    reporters: ['default', './test/support/summaryReporter.ts'],
    testTimeout: 60_000,
    // Logs of passing tests (expected 401s, injected faults) are noise; a failing test shows its own.
    silent: 'passed-only',
    hookTimeout: 120_000,
  },
});
