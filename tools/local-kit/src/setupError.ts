/** A local setting that stops the start, said in one line (no stack trace). */
export class LocalSetupError extends Error {}
