/** Where the generated contract artefacts live. */
import { fileURLToPath } from 'node:url';

export const OPENAPI_FILE = fileURLToPath(new URL('../openapi.json', import.meta.url));
export const CLIENT_TYPES_FILE = fileURLToPath(new URL('../client/src/schema.ts', import.meta.url));
