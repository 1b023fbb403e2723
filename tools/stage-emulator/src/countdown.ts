/** A timeout that can stop (a debugger's pause), used for a sandbox's init and each invocation. */
import { performance } from 'node:perf_hooks';

/** A timeout that can stop: it fires after `ms` of time running, however often it was suspended. */
export class Countdown {
  readonly totalMs: number;
  #leftMs: number;
  #since = 0;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  readonly #onExpiry: () => void;

  constructor(ms: number, onExpiry: () => void) {
    this.totalMs = ms;
    this.#leftMs = ms;
    this.#onExpiry = onExpiry;
  }

  get running(): boolean {
    return this.#timer !== undefined;
  }

  /** Stopped for good: what it timed has ended. */
  get stopped(): boolean {
    return this.#stopped;
  }

  get leftMs(): number {
    return this.running ? Math.max(this.#leftMs - (performance.now() - this.#since), 0) : this.#leftMs;
  }

  resume(): void {
    if (this.running || this.#stopped) return;
    this.#since = performance.now();
    this.#timer = setTimeout(this.#onExpiry, this.#leftMs);
  }

  suspend(): void {
    if (!this.running) return;
    this.#leftMs = this.leftMs;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
