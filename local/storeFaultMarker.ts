/**
 * `.data/store-faulted`: left by a store fault while the store serves, so that the next start
 * repairs (a write the fault cut may have left its index entry without its pet).
 *
 * The fault that calls for it may be the very one that keeps the data folder from taking a file (a
 * full disk, a folder made read-only or immutable): the marker is then written as soon as the
 * folder takes it again, tried every half second and once more at the stop. A stop that still
 * cannot write it cannot remove `.data/endpoint` either, so the next start repairs all the same.
 */
import { writeFileSync } from 'node:fs';

const RETRY_MS = 500;

export interface FaultMarker {
  /** A fault: the marker is written now, or as soon as the folder takes it. */
  record(): void;
  /** The folder is gone: nothing is written there any more. */
  abandon(): void;
  /** At a stop: one last try when the marker is still unwritten. */
  settle(): void;
}

export function faultMarker(file: string): FaultMarker {
  let retry: NodeJS.Timeout | undefined;
  const stopRetrying = () => {
    clearInterval(retry);
    retry = undefined;
  };
  const write = (): boolean => {
    try {
      writeFileSync(file, '');
      stopRetrying();
      return true;
    } catch {
      return false;
    }
  };
  return {
    record: () => {
      if (retry || write()) return;
      retry = setInterval(write, RETRY_MS);
      retry.unref();
    },
    abandon: stopRetrying,
    settle: () => {
      if (retry) write();
      stopRetrying();
    },
  };
}
