/**
 * A sandbox preload (LambdaFunctionHost's `sandboxPreload` test seam, loaded with `node --import`)
 * that makes pet ids collide with no knob in the code or the template:
 * - `Date.now()` is floored to CLOCK_TICK_MS, so every create in one tick draws its id from one
 *   millisecond's (lib/domain/ids.ts), as separate Lambda instances sharing a millisecond do;
 * - `crypto.randomInt(max)` draws from at most DRAW_VALUES values (in createPet's bundle its one
 *   call is the id's random low bits), because the deployed runner creates a few dozen pets a
 *   second on a busy laptop, not the thousands a millisecond that would collide on 2,048 values.
 * Plain JavaScript: the sandbox is a bare Node 22.
 */
import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';

export const CLOCK_TICK_MS = 200;
export const DRAW_VALUES = 16;

const realNow = Date.now;
Date.now = () => Math.floor(realNow() / CLOCK_TICK_MS) * CLOCK_TICK_MS;

const realRandomInt = crypto.randomInt;
crypto.randomInt = (...args) =>
  args.length === 1 && typeof args[0] === 'number' ? realRandomInt(Math.min(args[0], DRAW_VALUES)) : realRandomInt(...args);
// The bundle's `import { randomInt } from 'node:crypto'` binds after this: make it see the change.
syncBuiltinESMExports();
