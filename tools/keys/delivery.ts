/**
 * Where a new key is shown, once: on standard output only when it is a terminal (a person reads it,
 * nothing records it), else only to the file `--out` names, created new with mode 0600 (owner read
 * and write) before anything is issued. A key is never printed into a pipe, a redirect or a CI log.
 */
import { closeSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { typedPath } from '@petstore/local-kit/typedPath';
import { UsageError } from './commandLine.ts';

export interface KeyDelivery {
  /** Shows the key (prints it, or writes and closes the file); the lines that say where it went. */
  deliver(key: string): string[];
  /** When nothing was delivered (nothing issued): takes back the file made for it; else nothing. */
  abandon(): void;
}

/**
 * The delivery for a command that issues a key: the file `out` (created now, exclusively, 0600), or
 * standard output when it is a terminal. Refused in one line (a UsageError) when neither holds:
 * `stdoutIsTerminal` false and no `out`, or `out` already there.
 */
export function keyDelivery(out: string | undefined, stdoutIsTerminal: boolean | undefined): KeyDelivery {
  if (out === undefined) {
    if (stdoutIsTerminal === false) {
      throw new UsageError(
        'standard output is not a terminal, so the key would land in a pipe, a file or a log: give --out <file> (written with mode 0600).',
      );
    }
    return {
      deliver: (key) => ['', `    ${key}`, '', 'WARNING: copy this key now and hand it over through a secure channel.'],
      abandon: () => {},
    };
  }
  // From the folder the command was typed in, not the package's (where npm runs it).
  const file = typedPath(out, 'keys');
  let fd: number;
  try {
    fd = openSync(file, 'wx', 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(
      code === 'EEXIST'
        ? `--out ${out} exists: give a new file (a key is never written over another file).`
        : `--out ${out} cannot be created (${code ?? String(error)}).`,
    );
  }
  let open = true;
  return {
    deliver: (key) => {
      writeSync(fd, `${key}\n`);
      closeSync(fd);
      open = false;
      return [`The key is in ${out} (mode 0600): hand it over through a secure channel, then delete the file.`];
    },
    abandon: () => {
      if (!open) return;
      open = false;
      closeSync(fd);
      unlinkSync(file);
    },
  };
}
