/**
 * tools/cmd-exec: the `exec` cmd.exe finds on PATH on Windows, run here directly (a POSIX shell
 * uses its own built-in): it runs the rest of the line, passes its arguments and exit code, forwards
 * a signal to the program, and refuses an empty line in one line.
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const EXEC = join(ROOT, 'tools/cmd-exec/exec.mjs');
const run = (...args: string[]) => spawnSync(process.execPath, [EXEC, ...args], { encoding: 'utf8' });

describe('exec for cmd.exe', () => {
  it("runs the rest of the line with its arguments, spaces and quotes kept, and ends with the program's exit code", () => {
    const result = run(
      'node',
      '-e',
      'console.log(JSON.stringify(process.argv.slice(1))); process.exit(3)',
      'a b',
      'c"d',
    );
    expect(result.stdout.trim()).toBe(JSON.stringify(['a b', 'c"d']));
    expect(result.status).toBe(3);
  });

  it('runs any other command through the shell, its arguments quoted', () => {
    const result = run('sh', '-c', 'echo "$0|$1"; exit 4', 'a b', 'c"d');
    expect(result.stdout.trim()).toBe('a b|c"d');
    expect(result.status).toBe(4);
  });

  it('refuses an empty line in one line, exit 2', () => {
    const result = run();
    expect(result.stderr.trim().split('\n')).toEqual(['exec: nothing to run; usage: exec <command> [arguments...]']);
    expect(result.status).toBe(2);
  });

  it('forwards SIGTERM to the program, which stops as it chooses', async () => {
    const child = spawn(process.execPath, [
      EXEC,
      'node',
      '-e',
      "process.on('SIGTERM', () => { console.log('stopping'); process.exit(0); }); console.log('ready'); setInterval(() => {}, 1000);",
    ]);
    const [chunk] = await once(child.stdout, 'data');
    expect(String(chunk)).toContain('ready');
    child.kill('SIGTERM');
    let output = '';
    child.stdout.on('data', (data) => {
      output += String(data);
    });
    const [code] = await once(child, 'exit');
    expect(output).toContain('stopping');
    expect(code).toBe(0);
  });
});
