/** `npm run keys -- <create|list|revoke|rotate|...>`: a stage's API keys and cursor secret (tools/keys/keys.ts). */
import '../local/requireNode22.mjs';
import { runKeys } from '../tools/keys/keys.ts';

process.exitCode = await runKeys(process.argv.slice(2), {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  stdoutIsTerminal: process.stdout.isTTY === true,
});
