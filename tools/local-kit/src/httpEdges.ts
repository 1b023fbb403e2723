/**
 * The answers of the local API, and of the stage emulator, to requests that never reach a route:
 * what Node's HTTP parser refuses (`clientError`), headers too slow (408), an `Expect` it cannot
 * meet, HTTP/1.1 without `Host`. Each is an error in the server's own shape (its caller's
 * `EdgeErrorShape`) and the connection is closed, as a client of a deployed API never sees an
 * empty, untyped answer. Answers on one connection keep the order of its requests, these included.
 */
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/** The refusals made at the edge, each with its HTTP status. */
export const EDGE_ERROR_STATUSES = {
  VALIDATION_FAILED: 400,
  REQUEST_TIMEOUT: 408,
  EXPECTATION_FAILED: 417,
  HEADERS_TOO_LARGE: 431,
  NOT_IMPLEMENTED: 501,
} as const;

export type EdgeErrorCode = keyof typeof EDGE_ERROR_STATUSES;

/** A request refused before the server's own routing: what is wrong, in words for the client. */
export interface EdgeError {
  code: EdgeErrorCode;
  status: number;
  message: string;
}

export const edgeError = (code: EdgeErrorCode, message: string): EdgeError => ({
  code,
  status: EDGE_ERROR_STATUSES[code],
  message,
});

/** An error answer as its server writes it: the status, its headers (Content-Type, a request id) and body. */
export interface ErrorAnswer {
  status: number;
  headers: Readonly<Record<string, string>>;
  body: string;
}

/**
 * How a server writes an edge error in its own shape (the local API: the service's Error resource).
 * `requestId` is the id of the request answered; a socket the parser has given up on has no request.
 */
export type EdgeErrorShape = (error: EdgeError, requestId?: string) => ErrorAnswer;

/** What Node's HTTP parser (llhttp) reports, with the bytes it was reading when it failed. */
export type ParserError = Error & { code?: string; bytesParsed?: number; rawPacket?: Buffer };

/** Node's parser error codes that have a more precise status than 400. */
const PARSER_ERRORS: Readonly<Record<string, { code: EdgeErrorCode; message: string }>> = {
  HPE_HEADER_OVERFLOW: { code: 'HEADERS_TOO_LARGE', message: 'The request line or headers are too large.' },
  // The client half-closed (FIN) before all of its body, as its Content-Length or chunks promised, came.
  HPE_INVALID_EOF_STATE: {
    code: 'VALIDATION_FAILED',
    message: 'The connection was closed before the request was complete.',
  },
  // Node's own (not llhttp's): the headers did not all arrive within headersTimeout, or the whole
  // request within requestTimeout. Node answers it an empty 408 without a listener; this is its JSON form.
  ERR_HTTP_REQUEST_TIMEOUT: { code: 'REQUEST_TIMEOUT', message: 'The request did not arrive in time.' },
};

/** How long a client may take to send its request line and headers: Node's default. */
export const HEADERS_TIMEOUT_MS = 60_000;

/**
 * Node's server options both local servers take: Host-less HTTP/1.1 requests let through (to get
 * a JSON 400, see missingHost), and the time a client may take over its headers. Node checks that
 * time every connectionsCheckingInterval (30 s by default), so a shorter time is checked more often.
 */
export function edgeServerOptions(headersTimeoutMs: number = HEADERS_TIMEOUT_MS): ServerOptions {
  return {
    requireHostHeader: false,
    headersTimeout: headersTimeoutMs,
    connectionsCheckingInterval: Math.min(30_000, Math.max(10, Math.floor(headersTimeoutMs / 4))),
  };
}

/** A request line as RFC 9112 (3) writes it: a method token, a target, the version. */
const REQUEST_LINE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ \S+ HTTP\/\d\.\d$/;

export function parserError(error: ParserError): EdgeError {
  const known = error.code ? PARSER_ERRORS[error.code] : undefined;
  if (known) return edgeError(known.code, known.message);
  if (error.code === 'HPE_INVALID_METHOD') {
    // llhttp says "invalid method" for any bytes where a request should start: only a well-formed
    // request line with a method it does not know is a 501; anything else is not a request at all.
    return REQUEST_LINE.test(failedLine(error) ?? '')
      ? edgeError('NOT_IMPLEMENTED', 'The request method is not one this API knows.')
      : edgeError(
          'VALIDATION_FAILED',
          'The request is not valid HTTP/1.1: the bytes where a request should start are not a request line.',
        );
  }
  // Node's messages are fixed strings ("Parse Error: Invalid character in chunk size"): nothing the client sent.
  const reason = error.message.replace(/^Parse Error:\s*/, '');
  return edgeError('VALIDATION_FAILED', `The request is not valid HTTP/1.1: ${reason}.`);
}

/**
 * A complete error response, as raw bytes for a socket no ServerResponse writes to: one the
 * parser has given up on, or a CONNECT's. The connection closes after it.
 */
export function rawErrorResponse({ status, headers, body }: ErrorAnswer): string {
  return [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/**
 * The line where the parser expected a request, from the bytes it was reading; undefined when
 * the line's end has not arrived yet. The parser stops on the first byte that no method it knows
 * continues: the line starts at the method letters (A-Z, -) it accepted before that byte.
 */
function failedLine({ rawPacket, bytesParsed }: ParserError): string | undefined {
  if (!Buffer.isBuffer(rawPacket) || typeof bytesParsed !== 'number') return undefined;
  let start = bytesParsed;
  while (start > 0 && isMethodLetter(rawPacket[start - 1] as number)) start--;
  const end = rawPacket.indexOf(0x0a, bytesParsed);
  if (end < 0) return undefined;
  return rawPacket.subarray(start, end).toString('latin1').replace(/\r$/, '');
}

const isMethodLetter = (byte: number) => (byte >= 0x41 && byte <= 0x5a) || byte === 0x2d;

/** Responses on each connection not yet finished, in the order their requests came. */
const unfinished = new WeakMap<Duplex, Set<ServerResponse>>();

/** Connections whose parser has failed and whose edge answer is written or waiting. */
const refused = new WeakSet<Duplex>();

/** Installs the edge answers, written in `shape`, and what keeps them in order on `server`. */
export function answerEdges(server: Server, shape: EdgeErrorShape): void {
  // A client that half-closes after its request (sends FIN, as `nc -N` does) still gets its answer:
  // Node's default (false) drops the request being answered on FIN and ends the socket, so a POST
  // was carried out but never answered. With true, Node writes the answer, then ends the connection.
  // (Node reads the property in _http_server.js socketOnEnd; @types/node does not declare it.)
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  server.on('request', track);
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) =>
    answerExpectation(request, response, shape),
  );
  server.on('clientError', (error: ParserError, socket: Duplex) => answerClientError(error, socket, shape));
}

/** Notes `response` as unfinished on its connection until it closes (finished, or cut off). */
function track(request: IncomingMessage, response: ServerResponse): void {
  const socket = request.socket;
  const responses = unfinished.get(socket) ?? new Set<ServerResponse>();
  unfinished.set(socket, responses);
  responses.add(response);
  response.once('close', () => responses.delete(response));
}

/**
 * For the server's `clientError` event: answer in JSON, then close. The parser may fail on bytes
 * that follow complete requests still being answered (a `Content-Length` shorter than the body
 * sent): this answer then waits for theirs, so a client reads its answers in the order it asked.
 * A request whose own bytes broke the parser (a bad chunk) is never answered otherwise: this
 * answer takes its place.
 */
function answerClientError(error: ParserError, socket: Duplex, shape: EdgeErrorShape): void {
  if (refused.has(socket)) return; // the parser reports again for every later packet
  refused.add(socket);
  if (error.code === 'ECONNRESET') return void socket.destroy();
  const answer = () => {
    if (!socket.writable) return void socket.destroy();
    socket.end(rawErrorResponse(shape(parserError(error))), () => socket.destroy());
  };
  const coming = [...(unfinished.get(socket) ?? [])].filter(
    (response) => response.req.complete || response.headersSent,
  );
  if (coming.length === 0) {
    answer();
    return;
  }
  // Written as the last of them finishes ('prefinish', its bytes already handed to the socket), not
  // after: a client that half-closed has Node end the socket once its last answer is done.
  let waiting = coming.length;
  for (const response of coming) {
    response.once('prefinish', () => --waiting === 0 && answer());
    response.once('close', () => waiting > 0 && !response.writableFinished && --waiting === 0 && answer());
  }
}

/** For the server's `checkExpectation` event (any `Expect` but `100-continue`). */
function answerExpectation(request: IncomingMessage, response: ServerResponse, shape: EdgeErrorShape): void {
  track(request, response);
  request.resume();
  const refusal = edgeError('EXPECTATION_FAILED', 'The only expectation this API meets is Expect: 100-continue.');
  sendError(response, shape(refusal, randomUUID()));
}

/** HTTP/1.1 requires Host (RFC 9112, 3.2); the server lets such requests through so they get a JSON answer. */
export function missingHost(request: IncomingMessage): EdgeError | undefined {
  if (request.httpVersion === '1.1' && request.headers.host === undefined) {
    return edgeError('VALIDATION_FAILED', 'An HTTP/1.1 request must carry a Host header.');
  }
  return undefined;
}

/** An error answer, and the connection closed. */
export function sendError(response: ServerResponse, { status, headers, body }: ErrorAnswer): void {
  response.writeHead(status, {
    ...headers,
    'Content-Length': String(Buffer.byteLength(body)),
    Connection: 'close',
  });
  response.end(body);
}
