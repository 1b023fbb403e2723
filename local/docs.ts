/**
 * The local API's documentation: `GET /openapi.json` (the committed document, with the local server
 * first so "Try it out" calls it) and a Swagger UI page at `/docs`, served from node_modules so it
 * works offline. Local only: the deployed API serves the three operations and nothing else.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { OPENAPI_FILE } from '../contract/files.ts';

export interface StaticAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export const DOCS_PATH = '/docs';
export const OPENAPI_PATH = '/openapi.json';

const SWAGGER_UI = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
/**
 * The only files of swagger-ui-dist the page needs, with their types. A Map: a name from the
 * request is looked up among these keys only, never among what every object inherits
 * (`/docs/constructor`, `/docs/__proto__`).
 */
const ASSETS: ReadonlyMap<string, string> = new Map([
  ['swagger-ui.css', 'text/css; charset=utf-8'],
  ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
  ['favicon-32x32.png', 'image/png'],
]);

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Pet Store Inventory API</title>
  <link rel="stylesheet" href="${DOCS_PATH}/swagger-ui.css">
  <link rel="icon" href="${DOCS_PATH}/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="${DOCS_PATH}/swagger-ui-bundle.js"></script>
  <script src="${DOCS_PATH}/init.js"></script>
</body>
</html>
`;

// validatorUrl null: Swagger UI would otherwise send the document to validator.swagger.io.
const INIT = `window.ui = SwaggerUIBundle({
  url: '${OPENAPI_PATH}', dom_id: '#swagger-ui', deepLinking: true, displayOperationId: true, validatorUrl: null,
});
`;

/** The answer for a documentation path, or undefined when `pathname` is not one. */
export function docsAnswer(pathname: string, apiUrl: string): StaticAnswer | undefined {
  if (pathname === OPENAPI_PATH)
    return answer('application/json', Buffer.from(JSON.stringify(localDocument(apiUrl), null, 2)));
  if (pathname === DOCS_PATH || pathname === `${DOCS_PATH}/`)
    return answer('text/html; charset=utf-8', Buffer.from(PAGE));
  if (pathname === `${DOCS_PATH}/init.js`) return answer('text/javascript; charset=utf-8', Buffer.from(INIT));
  const asset = pathname.startsWith(`${DOCS_PATH}/`) ? pathname.slice(DOCS_PATH.length + 1) : undefined;
  const type = asset === undefined ? undefined : ASSETS.get(asset);
  return type && asset ? answer(type, readFileSync(join(SWAGGER_UI, asset))) : undefined;
}

function localDocument(apiUrl: string): Record<string, unknown> {
  const document = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as { servers?: unknown[] };
  return {
    ...document,
    servers: [{ url: apiUrl, description: 'this local API (npm start)' }, ...(document.servers ?? [])],
  };
}

/**
 * Its Cache-Control is the API's `no-store` (local/server.ts adds it to every answer): the page and
 * its assets are read from disk in a few milliseconds, and a browser never shows a document staler
 * than the one on disk.
 */
const answer = (contentType: string, body: Buffer): StaticAnswer => ({
  status: 200,
  headers: { 'Content-Type': contentType },
  body,
});
