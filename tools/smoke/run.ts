/**
 * How a smoke run goes (./smoke.ts): one line per check (`ok`, `FAIL`, `skip`) and a count of each.
 * Once the API does not answer at all (after the client's retries), the checks after it fail as not
 * run; once it refuses the key (401), the checks that need the key are skipped, said once.
 */
import { PetStoreNetworkError, petStoreClient } from '../../client/src/index.ts';

/** Where the key is read from: never the command line. */
export const SMOKE_KEY_VARIABLE = 'PETSTORE_API_KEY';

export interface SmokeResult {
  passed: number;
  failed: number;
  skipped: number;
  /** The id of the pet a creating run stored. */
  createdId?: number;
}

/** A check that cannot be made here, and says why: counted apart, never as passed. */
export class Skipped extends Error {}

export interface SmokeRunOptions {
  base: string;
  key: string;
  retryBudgetMs: number;
  print: (line: string) => void;
  fetch: (request: Request) => Promise<Response>;
}

export class SmokeRun {
  readonly result: SmokeResult = { passed: 0, failed: 0, skipped: 0 };
  /** Requests with the key. */
  readonly client: ReturnType<typeof petStoreClient>;
  /** Requests without any key. */
  readonly anonymous: ReturnType<typeof petStoreClient>;
  /** What every client shares: the base, the retry budget, the fetch that watches for refused keys. */
  readonly shared: { baseUrl: string; retry: { budgetMs: number }; fetch: (request: Request) => Promise<Response> };
  keyRefused = false;
  /** 401s answered to a request that carried a key: the key was refused, whatever the check then said. */
  #keyRefusals = 0;
  #unreachable: string | undefined;

  constructor(readonly options: SmokeRunOptions) {
    const watched = async (request: Request) => {
      const response = await options.fetch(request);
      if (response.status === 401 && request.headers.has('authorization')) this.#keyRefusals++;
      return response;
    };
    this.shared = { baseUrl: options.base, retry: { budgetMs: options.retryBudgetMs }, fetch: watched };
    this.client = petStoreClient({ ...this.shared, apiKey: options.key });
    this.anonymous = petStoreClient(this.shared);
  }

  /** Runs one check and prints its line. `withoutKey`: it sends no request with the key, so a refused key does not stop it. */
  async check(name: string, run: () => Promise<string>, { withoutKey = false } = {}): Promise<void> {
    const { print } = this.options;
    if (this.#unreachable) {
      this.result.failed++;
      return print(`FAIL  ${name}: not run, the API did not answer (${this.#unreachable})`);
    }
    if (this.keyRefused && !withoutKey) {
      this.result.skipped++;
      return print(`skip  ${name}: not run, the API refused the key`);
    }
    const refusalsBefore = this.#keyRefusals;
    try {
      const detail = await run();
      this.result.passed++;
      print(`ok    ${name}${detail ? `: ${detail}` : ''}`);
    } catch (error) {
      this.#failed(name, error, !withoutKey && this.#keyRefusals > refusalsBefore);
    }
  }

  #failed(name: string, error: unknown, byRefusedKey: boolean): void {
    const { print } = this.options;
    if (error instanceof Skipped) {
      this.result.skipped++;
      print(`skip  ${name}: ${error.message}`);
      return;
    }
    if (error instanceof PetStoreNetworkError) this.#unreachable = error.message;
    this.result.failed++;
    if (byRefusedKey) {
      this.keyRefused = true;
      print(
        `FAIL  ${name}: the API refused the key (401): check ${SMOKE_KEY_VARIABLE}; the checks that need it are skipped`,
      );
      return;
    }
    print(`FAIL  ${name}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

export function expect(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

export function need<T>(value: T | undefined, why: string): T {
  if (value === undefined) throw new Error(`not run: ${why}`);
  return value;
}
