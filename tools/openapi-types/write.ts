/** `npm run openapi` (second half): writes client/schema.ts from openapi.json. */
import { readFileSync, writeFileSync } from 'node:fs';
import { CLIENT_TYPES_FILE, OPENAPI_FILE } from '../../contract/files.ts';
import { clientTypesText } from './generate.ts';

writeFileSync(CLIENT_TYPES_FILE, await clientTypesText(readFileSync(OPENAPI_FILE, 'utf8')));
console.log('wrote client/schema.ts');
