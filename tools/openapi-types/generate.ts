/**
 * The typed client's types (client/schema.ts), generated from openapi.json by openapi-typescript.
 * This workspace exists because openapi-typescript 7 needs the TypeScript 5 compiler API, while the
 * repository type-checks with TypeScript 7 (which has none): npm gives this folder its own TypeScript 5.
 */
import openapiTS, { astToString } from 'openapi-typescript';

const BANNER = '/** Generated from openapi.json by `npm run openapi` (openapi-typescript). Do not edit. */\n';

export async function clientTypesText(documentText: string): Promise<string> {
  const ast = await openapiTS(documentText, { exportType: false, alphabetize: false });
  return BANNER + astToString(ast);
}
