/**
 * The REST API's authorizer (lib/http/authorizer.ts): a cached Lambda REQUEST authorizer that reads
 * the control table's `apikeys` partition (and records each key's last use there) only; its role
 * reaches no pets table. It reads the keys within the same store budget as the operations.
 */
import { createAuthorizer } from '../lib/http/authorizer.ts';
import { authorizerFromEnvironment } from '../lib/service.ts';

const { keys, ...options } = authorizerFromEnvironment();
export const handler = createAuthorizer(keys, options);
