/**
 * The REST API's authorizer (lib/http/authorizer.ts): a cached Lambda REQUEST authorizer that reads
 * the control table's `apikeys` partition only; its role reaches no pets table.
 */
import { createAuthorizer } from '../lib/http/authorizer.ts';
import { keyStoreFromEnvironment } from '../lib/service.ts';

export const handler = createAuthorizer(keyStoreFromEnvironment());
