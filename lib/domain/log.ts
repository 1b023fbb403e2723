/** Structured log lines: one JSON object a line, for CloudWatch Logs Insights. Never a secret. */

/** Something degraded but answered; `error` (name and message only) says why. */
export function warn(message: string, error?: unknown): void {
  const cause = error === undefined ? {} : { error: summary(error) };
  console.warn(JSON.stringify({ level: 'WARN', message, ...cause }));
}

/** An unexpected failure, with the ids that tie it to one Lambda invocation and one API request. */
export function logError(fields: Record<string, unknown>, error: unknown): void {
  const details =
    error instanceof Error
      ? { name: error.name, message: error.message, stack: error.stack }
      : { error: String(error) };
  console.error(JSON.stringify({ level: 'ERROR', ...fields, ...details }));
}

function summary(error: unknown): { name: string; message: string } | string {
  return error instanceof Error ? { name: error.name, message: error.message } : String(error);
}
