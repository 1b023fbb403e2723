/** A port given as text (PORT, --port), read the same way by every command that listens. */
import { LocalSetupError } from './setupError.ts';

/** Thrown for a port that is no port number; its message names the setting and says what it takes. */
export class PortSettingError extends LocalSetupError {}

/**
 * The port `given` names: digits only, 0 to 65535 (0: any free port). Unset gives `fallback`; an
 * empty value is refused rather than read as 0 (Number('') is 0: a random port nobody asked for).
 */
export function parsePort(given: string | undefined, fallback: number, setting: string): number {
  if (given === undefined) return fallback;
  const port = /^\d{1,5}$/.test(given) ? Number(given) : NaN;
  if (port >= 0 && port <= 65535) return port;
  const what = given === '' ? 'empty' : `"${given}"`;
  throw new PortSettingError(`${setting} must be a port number from 0 to 65535 (0: any free port), not ${what}.`);
}
