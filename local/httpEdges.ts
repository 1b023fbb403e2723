/**
 * The local API's answers to requests that never reach a route: what Node's HTTP parser refuses
 * (`clientError`), an `Expect` it cannot meet, HTTP/1.1 without `Host`. Each is a JSON Error and
 * the connection is closed, as a client of the deployed API never sees an empty, untyped answer.
 */
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError, type ErrorCode } from '../lib/domain/errors.ts';
import { JSON_CONTENT_TYPE, errorResponse } from '../lib/http/responses.ts';

/** Node's parser error codes (llhttp) that have a more precise status than 400. */
const PARSER_ERRORS: Readonly<Record<string, { code: ErrorCode; message: string }>> = {
  HPE_HEADER_OVERFLOW: { code: 'HEADERS_TOO_LARGE', message: 'The request line or headers are too large.' },
  HPE_INVALID_METHOD: { code: 'NOT_IMPLEMENTED', message: 'The request method is not one this API knows.' },
};

export function parserError(error: Error & { code?: string }): ApiError {
  const known = error.code ? PARSER_ERRORS[error.code] : undefined;
  if (known) return new ApiError(known.code, known.message);
  // Node's messages are fixed strings ("Parse Error: Invalid character in chunk size"): nothing the client sent.
  const reason = error.message.replace(/^Parse Error:\s*/, '');
  return new ApiError('VALIDATION_FAILED', `The request is not valid HTTP/1.1: ${reason}.`);
}

/** A complete JSON error response, as raw bytes for a socket the parser has given up on. */
export function rawErrorResponse(error: ApiError): string {
  const body = JSON.stringify(error.toBody());
  return [
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? 'Error'}`,
    `Content-Type: ${JSON_CONTENT_TYPE}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/** For the server's `clientError` event: answer in JSON unless an answer is already on its way, then close. */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  const response = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (socket.writable && !response?.headersSent && error.code !== 'ECONNRESET') {
    socket.end(rawErrorResponse(parserError(error)));
  }
  socket.destroy();
}

/** For the server's `checkExpectation` event (any `Expect` but `100-continue`). */
export function answerExpectation(request: IncomingMessage, response: ServerResponse): void {
  request.resume();
  sendError(response, new ApiError('EXPECTATION_FAILED', 'The only expectation this API meets is Expect: 100-continue.'));
}

/** HTTP/1.1 requires Host (RFC 9112, 3.2); the server lets such requests through so they get a JSON answer. */
export function missingHost(request: IncomingMessage): ApiError | undefined {
  if (request.httpVersion === '1.1' && request.headers.host === undefined) {
    return new ApiError('VALIDATION_FAILED', 'An HTTP/1.1 request must carry a Host header.');
  }
  return undefined;
}

/** The Error answer, as the functions give it, and the connection closed. */
export function sendError(response: ServerResponse, error: ApiError): void {
  const { statusCode, headers, body } = errorResponse(error);
  response.writeHead(statusCode, { ...headers, 'Content-Length': String(Buffer.byteLength(body)), Connection: 'close' });
  response.end(body);
}
