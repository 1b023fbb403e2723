/**
 * Every handler call writes a request log line; hundreds per test file are noise, and console
 * output through the test runner is slow enough to time out the concurrency tests. The tests that
 * read the lines install their own writer.
 */
import { setRequestLogWriter } from '../../lib/http/requestLog.ts';

setRequestLogWriter(() => undefined);
