/**
 * A sandbox preload (LambdaFunctionHost's `sandboxPreload` test seam, loaded with `node --import`)
 * that makes pet ids collide with no knob in the code or the template:
 * - `Date.now()` is floored to CLOCK_TICK_MS, so every create in one tick draws its id from one
 *   millisecond's (lib/domain/ids.ts), as separate Lambda instances sharing a millisecond do;
 * - every other `crypto.randomInt(max)` draws from at most DRAW_VALUES values (in createPet's
 *   bundle its one call is the id's random low bits), because the deployed runner creates a few
 *   dozen pets a second on a busy laptop, not the thousands a millisecond that would collide on
 *   2,048 values. The draws in between are the real ones: a sandbox serves one invocation at a
 *   time, so a create whose narrow draw collided draws its next id wide. Narrowing every draw
 *   would let a busy tick fill all 16 values and a create exhaust its 8 draws (a 500 the product
 *   would only give when 8 draws from 2,048 values all collide: below 10^-25).
 * Plain JavaScript: the sandbox is a bare Node 22.
 */
import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';

export const CLOCK_TICK_MS = 200;
export const DRAW_VALUES = 16;

const realNow = Date.now;
Date.now = () => Math.floor(realNow() / CLOCK_TICK_MS) * CLOCK_TICK_MS;

const realRandomInt = crypto.randomInt;
let draws = 0;
crypto.randomInt = (...args) => {
  if (args.length !== 1 || typeof args[0] !== 'number') return realRandomInt(...args);
  const narrow = draws++ % 2 === 0;
  return realRandomInt(narrow ? Math.min(args[0], DRAW_VALUES) : args[0]);
};
// The bundle's `import { randomInt } from 'node:crypto'` binds after this: make it see the change.
syncBuiltinESMExports();
