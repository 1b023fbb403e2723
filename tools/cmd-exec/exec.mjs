#!/usr/bin/env node
/**
 * `exec` for cmd.exe, which has none. The long-running npm scripts start with `exec` so that, under
 * a POSIX shell, npm's signal reaches the program itself and not a shell left between them; there
 * the shell's own `exec` (a special built-in) runs and this file never does. On Windows npm runs
 * scripts with cmd.exe, which finds this one on PATH (node_modules/.bin/exec.cmd) and runs the rest
 * of the line, forwarding Ctrl-C and Ctrl-Break and ending with the program's exit code.
 */
import { spawn } from 'node:child_process';

const [command, ...args] = process.argv.slice(2);
if (command === undefined) {
  console.error('exec: nothing to run; usage: exec <command> [arguments...]');
  process.exit(2);
}
/** An argument as the shell must see it: cmd.exe's double quotes, or a POSIX shell's single quotes. */
const quoted = (arg) => {
  if (/^[\w@%+=:,./\\-]+$/.test(arg)) return arg;
  return process.platform === 'win32' ? `"${arg.replaceAll('"', '""')}"` : `'${arg.replaceAll("'", "'\\''")}'`;
};
// `node` is the Node running this file, started without a shell so that a signal reaches the program
// itself: npm's exec.cmd runs this file with the `node` first on PATH, node_modules/.bin's (the
// platform's Node 22). Anything else goes through the shell, which knows .cmd files and PATHEXT.
const child =
  command === 'node'
    ? spawn(process.execPath, args, { stdio: 'inherit' })
    : spawn([command, ...args].map(quoted).join(' '), { stdio: 'inherit', shell: true });
for (const signal of ['SIGINT', 'SIGTERM', 'SIGBREAK']) process.on(signal, () => child.kill(signal));
child.on('error', (error) => {
  console.error(`exec: ${command}: ${error.message}`);
  process.exit(127);
});
child.on('exit', (code, signal) => process.exit(code ?? (signal === null ? 0 : 1)));
