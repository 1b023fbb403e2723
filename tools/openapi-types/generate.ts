/**
 * The typed client's types (client/src/schema.ts), generated from openapi.json by openapi-typescript,
 * plus `BASE_PATH`, the path every server URL of the document ends in.
 * This workspace exists because openapi-typescript 7 needs the TypeScript 5 compiler API, while the
 * repository type-checks with TypeScript 7 (which has none): npm gives this folder its own TypeScript 5.
 */
import openapiTS, { astToString } from 'openapi-typescript';

const BANNER = '/** Generated from openapi.json by `npm run openapi` (openapi-typescript). Do not edit. */\n';

export async function clientTypesText(documentText: string): Promise<string> {
  const ast = await openapiTS(documentText, { exportType: false, alphabetize: false });
  return BANNER + astToString(ast) + basePathText(documentText);
}

/** The one base path of the document's servers (`https://{apiId}.execute-api.{region}.amazonaws.com/v1` gives `/v1`). */
function basePathText(documentText: string): string {
  const { servers = [] } = JSON.parse(documentText) as { servers?: { url: string }[] };
  const paths = new Set(servers.map((server) => server.url.replace(/^[a-z]+:\/\/[^/]*/, '')));
  if (paths.size !== 1)
    throw new Error(`the servers of openapi.json must share one base path, not ${[...paths].join(', ')}`);
  return `/** The path every base URL of the API ends in. */\nexport const BASE_PATH = ${JSON.stringify([...paths][0])};\n`;
}
