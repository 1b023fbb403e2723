/**
 * Ends a run with one plain line, `Tests: N passed, N failed, N skipped`, that CI can read, after a
 * line per skipped test (`Skipped: <file> > <title>`): a skip says why in its title, and the
 * reporter's own output hides what a skipped test would print.
 */
import type { Reporter, TestModule } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed' || state === 'failed') counts[state]++;
        else {
          counts.skipped++;
          console.log(`Skipped: ${module.moduleId.replace(`${process.cwd()}/`, '')} > ${test.name}`);
        }
      }
    }
    console.log(`\nTests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
  }
}
