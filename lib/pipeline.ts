/**
 * A middleware pipeline with middy's shape and order, in a few lines of our own (middy's core and
 * header normalizer were 4.6 kB of every bundle, more than this whole file's share):
 * `before` in the order `use`d, then the handler, then `after` in reverse; on an error, `onError`
 * in reverse, and the error is rethrown unless one of them set `request.response`. A `before` or
 * `after` that returns a value ends the pipeline with it as the response, as in middy.
 * Middleware objects written for middy (`{ before, after, onError }`) work unchanged.
 */
export interface PipelineRequest<E, R, C> {
  event: E;
  context: C;
  response: R | undefined;
  error: Error | undefined;
  internal: Record<string, unknown>;
}

type Step<E, R, C> = (request: PipelineRequest<E, R, C>) => unknown;

export interface Middleware<E, R, C> {
  before?: Step<E, R, C>;
  after?: Step<E, R, C>;
  onError?: Step<E, R, C>;
}

export interface Pipeline<E, R, C> {
  use(middleware: Middleware<E, R, C>): Pipeline<E, R, C>;
  handler(handle: (event: E, context: C) => Promise<R>): (event: E, context: C) => Promise<R>;
}

export function pipeline<E, R, C>(): Pipeline<E, R, C> {
  const befores: Step<E, R, C>[] = [];
  const afters: Step<E, R, C>[] = [];
  const onErrors: Step<E, R, C>[] = [];

  /** Runs `steps` in order; true when one of them answered (returned a response). */
  async function run(steps: Step<E, R, C>[], request: PipelineRequest<E, R, C>): Promise<boolean> {
    for (const step of steps) {
      const answer = await step(request);
      if (answer !== undefined) {
        request.response = answer as R;
        return true;
      }
    }
    return false;
  }

  const self: Pipeline<E, R, C> = {
    use(middleware) {
      if (middleware.before) befores.push(middleware.before);
      if (middleware.after) afters.unshift(middleware.after);
      if (middleware.onError) onErrors.unshift(middleware.onError);
      return self;
    },
    handler(handle) {
      return async (event, context) => {
        const request: PipelineRequest<E, R, C> = { event, context, response: undefined, error: undefined, internal: {} };
        try {
          if (!(await run(befores, request))) {
            request.response = await handle(request.event, request.context);
            await run(afters, request);
          }
        } catch (error) {
          request.error = error instanceof Error ? error : new Error(String(error));
          request.response = undefined;
          for (const step of onErrors) await step(request);
          if (request.response === undefined) throw error;
        }
        return request.response as R;
      };
    },
  };
  return self;
}

/** Lower-cases every header name (HTTP names are case-insensitive), as middy's normalizer did. */
export function lowerCaseHeaders<E extends { headers?: unknown; multiValueHeaders?: unknown }, R, C>(): Middleware<E, R, C> {
  const lower = <V>(headers: Record<string, V> | null | undefined) =>
    headers ? Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value])) : headers;
  return {
    before: ({ event }) => {
      event.headers = lower(event.headers as Record<string, unknown> | null | undefined);
      if (event.multiValueHeaders) event.multiValueHeaders = lower(event.multiValueHeaders as Record<string, unknown>);
    },
  };
}
