/**
 * When a request's store calls must stop, in epoch ms: fixed once as the request starts (from its
 * store budget, lib/store/deadline.ts) and read by every store call and wait it makes, so a hung
 * store costs a client a few seconds and a 503, not the function's whole timeout. Outside a request
 * (scripts, set-up) there is none, and calls are bounded only by the client's own timeouts.
 */
export type Deadline = number;
