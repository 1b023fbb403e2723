/**
 * One HTTP/1.1 exchange over a raw TCP socket (node:net), for requests no HTTP client sends as
 * written: odd targets, CONNECT, a client that half-closes after its request.
 */
import { connect } from 'node:net';

export interface RawAnswer {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: string;
  /** Whether the server closed the connection (else the client closed it after a whole answer). */
  closedByServer: boolean;
}

/**
 * Writes `request` to `port` on loopback and reads one answer: until its Content-Length is in, or
 * the server closes. `halfClose` ends the client's side (FIN) right after the request, as `nc -N`
 * does, and then reads until the server closes. Rejects when no whole answer comes within
 * `timeoutMs`, with what did come.
 */
export function rawExchange(
  port: number,
  request: string,
  options: { halfClose?: boolean; timeoutMs?: number } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      if (options.halfClose) socket.end(request);
      else socket.write(request);
    });
    let data = Buffer.alloc(0);
    let done = false;
    const finish = (closedByServer: boolean) => {
      if (done) return;
      const answer = parse(data.toString('latin1'), closedByServer);
      if (!closedByServer && (!answer || options.halfClose)) return; // not all of it yet
      done = true;
      clearTimeout(timer);
      socket.destroy();
      if (answer) resolve(answer);
      else
        reject(new Error(`the server closed without a whole answer; got ${JSON.stringify(data.toString('latin1'))}`));
    };
    // A safety timeout: fails the exchange when no whole answer comes.
    const timer = setTimeout(() => {
      done = true;
      socket.destroy();
      reject(
        new Error(
          `no whole answer within ${options.timeoutMs ?? 5_000} ms; got ${JSON.stringify(data.toString('latin1'))}`,
        ),
      );
    }, options.timeoutMs ?? 5_000);
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      finish(false);
    });
    socket.on('error', () => undefined); // a reset shows as a close without an answer
    socket.on('close', () => finish(true));
  });
}

/** The first answer in `text`, once its head and Content-Length bytes of body are in. */
function parse(text: string, closed: boolean): RawAnswer | undefined {
  const headEnd = text.indexOf('\r\n\r\n');
  if (headEnd < 0) return undefined;
  const [statusLine = '', ...lines] = text.slice(0, headEnd).split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );
  const length = headers['content-length'] === undefined ? undefined : Number(headers['content-length']);
  const rest = text.slice(headEnd + 4);
  if (length === undefined ? !closed : rest.length < length) return undefined;
  const body = Buffer.from(length === undefined ? rest : rest.slice(0, length), 'latin1').toString('utf8');
  return { status: Number(statusLine.split(' ')[1]), headers, body, closedByServer: closed };
}

/**
 * Requests Node's HTTP parser refuses before any handler, each with the status and code both servers
 * answer (tools/local-kit/src/httpEdges.ts): the local API's and the emulator's tests share them.
 */
export const PARSER_EDGE_REQUESTS: readonly (readonly [name: string, request: string, status: number, code: string])[] =
  [
    [
      'a header too large',
      `GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      431,
      'HEADERS_TOO_LARGE',
    ],
    ['obsolete line folding', 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-A: a\r\n  b\r\n\r\n', 400, 'VALIDATION_FAILED'],
    [
      'a malformed chunk size',
      'POST /v1/pets HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n',
      400,
      'VALIDATION_FAILED',
    ],
    [
      'Content-Length with Transfer-Encoding',
      'POST /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      400,
      'VALIDATION_FAILED',
    ],
    [
      'an unknown Expect',
      'POST /v1/pets HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nContent-Length: 0\r\n\r\n',
      417,
      'EXPECTATION_FAILED',
    ],
    ['HTTP/1.1 without Host', 'GET /v1/pets HTTP/1.1\r\n\r\n', 400, 'VALIDATION_FAILED'],
    ['an unregistered method', 'BREW /v1/pets HTTP/1.1\r\nHost: x\r\n\r\n', 501, 'NOT_IMPLEMENTED'],
    ['Content-Length: -1', 'POST /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n', 400, 'VALIDATION_FAILED'],
    ['a DEL in a header value', 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-A: a\x7fb\r\n\r\n', 400, 'VALIDATION_FAILED'],
    ['a DEL in a header name', 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-\x7fA: b\r\n\r\n', 400, 'VALIDATION_FAILED'],
  ];
