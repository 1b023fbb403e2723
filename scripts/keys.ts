/** `npm run keys -- <create|list|revoke|rotate|pets|...>`: a stage's API keys and cursor secret (tools/keys/keys.ts). */
import '../local/requireNode22.mjs';
import { createInterface } from 'node:readline/promises';
import { runKeys } from '../tools/keys/keys.ts';

process.exitCode = await runKeys(process.argv.slice(2), {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  stdoutIsTerminal: process.stdout.isTTY === true,
  ask: process.stdin.isTTY ? askAtTerminal : undefined,
});

/** One question at the terminal (`pets --remove`'s confirmation), its answer as typed. */
async function askAtTerminal(question: string): Promise<string> {
  const terminal = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return await terminal.question(question);
  } finally {
    terminal.close();
  }
}
