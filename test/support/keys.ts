/**
 * API keys in what the tests read: a key picked out of printed text by the one format the service
 * declares (API_KEY_FORMAT in lib/domain/apiKeys.ts), and `npm run keys` run in-process with what it
 * prints collected.
 */
import { API_KEY_FORMAT } from '../../lib/domain/apiKeys.ts';
import { runKeys, type KeysIo } from '../../tools/keys/keys.ts';

const anchored = /^\^(.*)\$$/.exec(API_KEY_FORMAT.source);
if (!anchored) throw new Error(`API_KEY_FORMAT is no longer anchored at both ends: ${API_KEY_FORMAT.source}`);

/** A key anywhere in a text: API_KEY_FORMAT without its anchors. */
const API_KEY_IN_TEXT = new RegExp(anchored[1]!);

/** What a key file holds: the key and a newline, nothing else. */
export const API_KEY_FILE = new RegExp(`^${API_KEY_IN_TEXT.source}\\n$`);

/** The first key in `text`, if it has one. */
export const keyIn = (text: string): string | undefined => API_KEY_IN_TEXT.exec(text)?.[0];

/** One `npm run keys` command's exit code and its two streams, each joined by newlines. */
export interface KeysRun {
  code: number;
  out: string;
  err: string;
}

/** Runs `npm run keys -- <argv>` in-process (runKeys) with `io`, collecting what it prints. */
export async function runKeysCollected(argv: readonly string[], io: Omit<KeysIo, 'out' | 'err'>): Promise<KeysRun> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runKeys(argv, { ...io, out: (line) => out.push(line), err: (line) => err.push(line) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}
