/** `npm run openapi` (second half): writes the client package's generated types from openapi.json. */
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLIENT_TYPES_FILE, OPENAPI_FILE } from '../../contract/files.ts';
import { clientTypesText } from './generate.ts';

writeFileSync(CLIENT_TYPES_FILE, await clientTypesText(readFileSync(OPENAPI_FILE, 'utf8')));
console.log(`wrote ${relative(fileURLToPath(new URL('../..', import.meta.url)), CLIENT_TYPES_FILE)}`);
