/**
 * `npm run test:host-node`: the client package's tests on the Node that launched npm (20 on the dev
 * box), after `npm test` has run every tier on Node 22. The client (`@petstore/client`, engines
 * `>=20.3`) is the one thing a user of an older Node runs: another team's service calling the API.
 * Everything else (the service, the local API, the tools, the CDK app) needs Node 22, the Lambda
 * runtime's major version (`engines`; Node 20's end of life was April 2026).
 */
import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

export default defineConfig({
  test: {
    ...base.test,
    projects: undefined,
    include: ['test/client/**/*.test.ts'],
  },
});
