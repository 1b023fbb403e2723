/**
 * A history checker for the write path, as Jepsen and Elle judge databases: record what every
 * client was told (each create's request, key, answer and id; each walk's pages), then check the
 * whole history against the state stored afterwards. Nothing here knows how the service works
 * inside; it judges only what a client saw and what a store holds.
 *
 * The invariants (`checkHistory`):
 * 1. acknowledged: every 201 is readable by its id, with the body it acknowledged, which is the
 *    body that was sent;
 * 2. not merged: no two 201s share an id unless they share the API key and the Idempotency-Key;
 * 3. one pet per key: every 201 of one (API key, Idempotency-Key) has the same id;
 * 4. nothing extra: the stored pets that no 201 names are at most the creates that got no 201
 *    (without a key) plus the keys that got none: a key never ends in two pets, no create in two;
 * 5. walks: no walk shows a pet twice, and a walk that reached its end showed every pet of its
 *    status acknowledged before it began; every pet a walk showed is stored (no phantom);
 * 6. no 5xx and no missing answer outside an injected fault.
 */
import type { Pet, PetStatus } from '../../lib/domain/schemas.ts';
import { rawExchange } from './rawHttp.ts';

export interface SentPet {
  name: string;
  categoryId: number;
  status?: PetStatus;
}

export interface CreateEvent {
  apiKey: string;
  idempotencyKey?: string | undefined;
  sent: SentPet;
  /** The HTTP status, or 0 when no answer came (a reset, a timeout, a killed server). */
  status: number;
  /** The pet a 201 answered. */
  pet?: Pet;
  replayed: boolean;
  /** Sent while a fault was injected: a 5xx or no answer is allowed then. */
  faulted: boolean;
  /** Epoch ms when the answer arrived (for walks: what was acknowledged before they began). */
  answeredAt: number;
}

export interface WalkEvent {
  status?: PetStatus | undefined;
  startedAt: number;
  /** Every pet id the walk's pages showed, in order. */
  seen: number[];
  /** Whether the walk reached its last page. */
  finished: boolean;
  /** A page answered other than 200 (the walk stops there); allowed only when faulted. */
  failedStatus?: number;
  faulted: boolean;
}

/** What a test recorded. */
export class History {
  readonly creates: CreateEvent[] = [];
  readonly walks: WalkEvent[] = [];
  readonly #waiting = new Set<{ count: number; resolve: () => void }>();

  /** Records a create's answer. */
  addCreate(event: CreateEvent): void {
    this.creates.push(event);
    for (const waiter of this.#waiting)
      if (this.creates.length >= waiter.count) {
        this.#waiting.delete(waiter);
        waiter.resolve();
      }
  }

  /** Resolves once `count` creates have been answered. */
  createsAnswered(count: number): Promise<void> {
    if (this.creates.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.#waiting.add({ count, resolve }));
  }

  /** Counts by outcome, for the test's report line. */
  summary(): {
    creates: number;
    acknowledged: number;
    replayed: number;
    failed: number;
    walks: number;
    failures: Record<string, number>;
  } {
    const acknowledged = this.creates.filter((event) => event.status === 201);
    const failures: Record<string, number> = {};
    for (const event of this.creates)
      if (event.status !== 201) failures[event.status] = (failures[event.status] ?? 0) + 1;
    return {
      creates: this.creates.length,
      acknowledged: acknowledged.length,
      replayed: acknowledged.filter((event) => event.replayed).length,
      failed: this.creates.length - acknowledged.length,
      walks: this.walks.length,
      failures,
    };
  }
}

/** The stored state after the run, as the checker reads it. */
export interface StoredState {
  /** Every pet in the store (a scan, mapped to what clients see). */
  stored: Pet[];
  /** A pet as a client reads it by id (GET /pets/{id}), or undefined on 404. */
  read(id: number): Promise<Pet | undefined>;
}

/** Every violation of the invariants above, one line each; empty when the history is consistent. */
export async function checkHistory(history: History, state: StoredState): Promise<string[]> {
  const violations: string[] = [];
  const acknowledged = history.creates.filter((event) => event.status === 201 && event.pet);
  violations.push(...(await unreadable(acknowledged, state)));
  violations.push(
    ...merged(acknowledged),
    ...splitKeys(acknowledged),
    ...extraPets(history, acknowledged, state.stored),
  );
  violations.push(...badWalks(history, acknowledged, state.stored));
  for (const event of history.creates) {
    if (!event.faulted && (event.status >= 500 || event.status === 0)) {
      violations.push(`create ${describe(event)} answered ${event.status || 'nothing'} with no fault injected`);
    }
  }
  for (const walk of history.walks) {
    if (!walk.faulted && walk.failedStatus !== undefined)
      violations.push(`walk of ${walk.status ?? 'all'} answered ${walk.failedStatus} with no fault injected`);
  }
  return violations;
}

async function unreadable(acknowledged: CreateEvent[], state: StoredState): Promise<string[]> {
  const violations: string[] = [];
  for (const event of acknowledged) {
    const pet = event.pet as Pet;
    const expected = {
      id: pet.id,
      name: event.sent.name,
      categoryId: event.sent.categoryId,
      ...(event.sent.status ? { status: event.sent.status } : {}),
    };
    if (!samePet(pet, expected))
      violations.push(`create ${describe(event)} acknowledged ${JSON.stringify(pet)}, not what was sent`);
    const extra = Object.keys(pet).filter((field) => !PET_FIELDS.has(field));
    if (extra.length > 0)
      violations.push(`create ${describe(event)} was answered fields beyond Pet: ${extra.join(', ')}`);
    const read = await state.read(pet.id);
    if (!read) violations.push(`pet ${pet.id} acknowledged to ${describe(event)} is not readable`);
    else if (!samePet(read, pet))
      violations.push(`pet ${pet.id} reads ${JSON.stringify(read)}, acknowledged ${JSON.stringify(pet)}`);
  }
  return violations;
}

function merged(acknowledged: CreateEvent[]): string[] {
  const byId = groupBy(acknowledged, (event) => String(event.pet?.id));
  const violations: string[] = [];
  for (const [id, events] of byId) {
    const owners = new Set(events.map(ownerOf));
    if (owners.size > 1 || (events.some((event) => event.idempotencyKey === undefined) && events.length > 1)) {
      violations.push(
        `pet ${id} was acknowledged to ${events.length} creates that are not one key's: ${events.map(describe).join('; ')}`,
      );
    }
  }
  return violations;
}

function splitKeys(acknowledged: CreateEvent[]): string[] {
  const keyed = groupBy(
    acknowledged.filter((event) => event.idempotencyKey !== undefined),
    ownerOf,
  );
  return [...keyed]
    .filter(([, events]) => new Set(events.map((event) => event.pet?.id)).size > 1)
    .map(
      ([owner, events]) =>
        `key ${owner} was answered ${[...new Set(events.map((event) => event.pet?.id))].join(' and ')}`,
    );
}

function extraPets(history: History, acknowledged: CreateEvent[], stored: Pet[]): string[] {
  const named = new Set(acknowledged.map((event) => event.pet?.id));
  const unnamed = stored.filter((pet) => !named.has(pet.id));
  const keylessUnanswered = history.creates.filter(
    (event) => event.idempotencyKey === undefined && event.status !== 201,
  ).length;
  const keysAnswered = new Set(acknowledged.filter((event) => event.idempotencyKey !== undefined).map(ownerOf));
  const keysUnanswered = new Set(
    history.creates
      .filter((event) => event.idempotencyKey !== undefined)
      .map(ownerOf)
      .filter((owner) => !keysAnswered.has(owner)),
  );
  const allowed = keylessUnanswered + keysUnanswered.size;
  return unnamed.length > allowed
    ? [
        `${unnamed.length} stored pets were acknowledged to no one, but only ${allowed} creates could have stored them unanswered (e.g. ${unnamed
          .slice(0, 3)
          .map((pet) => JSON.stringify(pet))
          .join(', ')})`,
      ]
    : [];
}

function badWalks(history: History, acknowledged: CreateEvent[], stored: Pet[]): string[] {
  const storedIds = new Set(stored.map((pet) => pet.id));
  const violations: string[] = [];
  for (const walk of history.walks) {
    const name = `walk of ${walk.status ?? 'all'} started at ${walk.startedAt}`;
    const seen = new Set<number>();
    for (const id of walk.seen) {
      if (seen.has(id)) violations.push(`${name} showed pet ${id} twice`);
      seen.add(id);
      if (!storedIds.has(id)) violations.push(`${name} showed pet ${id}, which is not stored (a phantom)`);
    }
    if (!walk.finished) continue;
    const before = acknowledged.filter(
      (event) => event.answeredAt < walk.startedAt && (walk.status === undefined || event.pet?.status === walk.status),
    );
    const skipped = before.map((event) => event.pet?.id as number).filter((id) => !seen.has(id));
    if (skipped.length > 0)
      violations.push(
        `${name} skipped ${skipped.length} pets acknowledged before it began (e.g. ${skipped.slice(0, 3).join(', ')})`,
      );
  }
  return violations;
}

const PET_FIELDS = new Set(['id', 'name', 'categoryId', 'status']);

const samePet = (a: Pet, b: Pet): boolean =>
  a.id === b.id && a.name === b.name && a.categoryId === b.categoryId && (a.status ?? null) === (b.status ?? null);

const ownerOf = (event: CreateEvent): string => `${event.apiKey.slice(0, 12)}/${event.idempotencyKey ?? '(none)'}`;

const describe = (event: CreateEvent): string => `${ownerOf(event)} ${JSON.stringify(event.sent)}`;

function groupBy<T>(items: T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(keyOf(item), [...(groups.get(keyOf(item)) ?? []), item]);
  return groups;
}

/**
 * A client that records what it was told: creates and walks against a base URL (`.../v1`), over
 * plain HTTP with no retries, so each answer is exactly what the service said. `faulted` says
 * whether a fault is being injected when a request is sent.
 */
export class RecordingClient {
  constructor(
    private readonly base: string,
    private readonly apiKey: string,
    readonly history: History,
    private readonly faulted: () => boolean = () => false,
  ) {}

  /**
   * Sends a create and records its answer. `halfClose`: over a raw socket, the client ends its
   * side (FIN) right after the request, as `nc -N` or a proxy does, then reads the answer.
   */
  async create(sent: SentPet, idempotencyKey?: string, { halfClose = false } = {}): Promise<CreateEvent> {
    const faulted = this.faulted();
    const headers: Record<string, string> = { ...this.#auth(), 'Content-Type': 'application/json' };
    if (idempotencyKey !== undefined) headers['Idempotency-Key'] = idempotencyKey;
    const event: CreateEvent = {
      apiKey: this.apiKey,
      idempotencyKey,
      sent,
      status: 0,
      replayed: false,
      faulted,
      answeredAt: 0,
    };
    try {
      const answer = halfClose
        ? await this.#halfClosedPost(headers, JSON.stringify(sent))
        : await this.#post(headers, JSON.stringify(sent));
      event.status = answer.status;
      if (answer.status === 201) event.pet = answer.body as Pet;
      event.replayed = answer.replayed;
    } catch {
      event.status = 0;
    }
    event.answeredAt = Date.now();
    this.history.addCreate(event);
    return event;
  }

  /** Walks every page of a listing (`between` runs before each next page); recorded as it went. */
  async walk(status?: PetStatus, limit = 20, between: () => Promise<void> = async () => {}): Promise<WalkEvent> {
    const walk: WalkEvent = { status, startedAt: Date.now(), seen: [], finished: false, faulted: this.faulted() };
    this.history.walks.push(walk);
    let url: string | undefined = `${this.base}/pets?limit=${limit}${status ? `&status=${status}` : ''}`;
    while (url) {
      walk.faulted ||= this.faulted();
      let response: Response;
      try {
        response = await fetch(url, { headers: this.#auth(), signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
      } catch {
        walk.failedStatus = 0;
        return walk;
      }
      if (response.status !== 200) {
        walk.failedStatus = response.status;
        await response.body?.cancel();
        return walk;
      }
      walk.seen.push(...((await response.json()) as Pet[]).map((pet) => pet.id));
      url = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get('link') ?? '')?.[1];
      if (url) await between();
    }
    walk.finished = true;
    return walk;
  }

  /**
   * A pet as a client reads it by id; undefined on 404. A 429 (the key's usage plan, under the
   * checker's own burst of reads) or a 503 is retried after its Retry-After, as a careful client does.
   */
  async read(id: number): Promise<Pet | undefined> {
    for (let attempt = 1; ; attempt++) {
      const response = await fetch(`${this.base}/pets/${id}`, { headers: this.#auth() });
      if (response.status === 404) return void (await response.body?.cancel());
      if (response.status === 200) return (await response.json()) as Pet;
      if ((response.status !== 429 && response.status !== 503) || attempt === READ_ATTEMPTS) {
        throw new Error(`GET /pets/${id} answered ${response.status}`);
      }
      await response.body?.cancel();
      // The Retry-After the answer asked for, as a careful client waits it: not an ordering.
      await new Promise((resolve) => setTimeout(resolve, 1_000 * Number(response.headers.get('retry-after') ?? 1)));
    }
  }

  /**
   * One create as a careful client sends it: a 429 (the key's usage plan: production allows a key 50
   * a second, burst 100, which a fast machine's burst of replays exceeds) is sent again after its
   * Retry-After. API Gateway throttles before any function runs, so the 429 stored nothing; the
   * create's recorded answer is the last one.
   */
  async #post(
    headers: Record<string, string>,
    body: string,
  ): Promise<{ status: number; body: unknown; replayed: boolean }> {
    for (let attempt = 1; ; attempt++) {
      const response = await fetch(`${this.base}/pets`, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      if (response.status === 429 && attempt < THROTTLED_ATTEMPTS) {
        await response.body?.cancel();
        // The Retry-After the answer asked for, as a careful client waits it: not an ordering.
        await new Promise((resolve) => setTimeout(resolve, 1_000 * Number(response.headers.get('retry-after') ?? 1)));
        continue;
      }
      return {
        status: response.status,
        body: await response.json(),
        replayed: response.headers.get('idempotent-replayed') === 'true',
      };
    }
  }

  async #halfClosedPost(
    headers: Record<string, string>,
    body: string,
  ): Promise<{ status: number; body: unknown; replayed: boolean }> {
    const url = new URL(`${this.base}/pets`);
    const head = Object.entries({
      ...headers,
      Host: url.host,
      'Content-Length': String(Buffer.byteLength(body)),
      Connection: 'close',
    })
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    const answer = await rawExchange(Number(url.port), `POST ${url.pathname} HTTP/1.1\r\n${head}\r\n${body}`, {
      halfClose: true,
      timeoutMs: REQUEST_TIMEOUT_MS,
    });
    return {
      status: answer.status,
      body: JSON.parse(answer.body) as unknown,
      replayed: answer.headers['idempotent-replayed'] === 'true',
    };
  }

  #auth = () => ({ Authorization: `Bearer ${this.apiKey}` });
}

/**
 * How long a client waits before it counts a request unanswered: longer than API Gateway's 29 s
 * integration timeout, after which the service has answered (a 504 at the latest), so a request
 * queued behind busy sandboxes on a loaded machine is slow, not lost.
 */
const REQUEST_TIMEOUT_MS = 45_000;

/** How often a read is tried before its refusal is the answer. */
const READ_ATTEMPTS = 10;

/** How often a throttled create is sent before its 429 is the answer. */
const THROTTLED_ATTEMPTS = 5;

/** Runs `work` for each item with at most `width` in flight. */
export async function inParallel<T>(items: T[], width: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(width, items.length) }, async () => {
    while (next < items.length) await work(items[next++] as T);
  });
  await Promise.all(lanes);
}
