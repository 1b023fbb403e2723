/**
 * SigV4 as DynamoDB checks it: the signature, the session token, the credential's scope and the
 * clock skew, with the refusal DynamoDB gives for each (the IAM gate's first question, iamGate.ts).
 */
import { SignatureV4 } from '@smithy/signature-v4';
import { createHash, createHmac, timingSafeEqual, type Hash, type Hmac } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { DeployedEnvironment } from './intrinsics.ts';

/** What @smithy/signature-v4 hands a hash. */
type SourceData = string | ArrayBuffer | ArrayBufferView;

const SIGNATURE_MAX_SKEW_MS = 15 * 60_000;

export interface GateCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string;
}

export interface Refusal {
  type: string;
  message: string;
}

const INVALID_TOKEN = 'The security token included in the request is invalid.';
const SIGNATURE_MISMATCH =
  'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.';
const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/(\d{8})\/([^/,\s]+)\/([^/,\s]+)\/aws4_request,\s*SignedHeaders=([a-z0-9;-]+),\s*Signature=([0-9a-f]{64})$/;

/** Verifies a request's SigV4 signature as DynamoDB does; the refusal DynamoDB would give, or undefined. */
export async function verifySignature(
  req: IncomingMessage,
  body: Buffer,
  credentials: GateCredentials,
  env: DeployedEnvironment,
): Promise<Refusal | undefined> {
  const authorization = header(req, 'authorization');
  if (!authorization)
    return { type: 'MissingAuthenticationTokenException', message: 'Request is missing Authentication Token' };
  const parsed = AUTHORIZATION.exec(authorization);
  if (!parsed) {
    return {
      type: 'IncompleteSignatureException',
      message: `Authorization header requires 'Credential', 'Signature' and 'SignedHeaders' parameters.`,
    };
  }
  const [, accessKeyId, scopeDate, scopeRegion, scopeService, signedHeaderList, signature] =
    parsed as unknown as string[];
  if (accessKeyId !== credentials.accessKeyId) return { type: 'UnrecognizedClientException', message: INVALID_TOKEN };
  const token = header(req, 'x-amz-security-token');
  if (!token || !safeEqual(token, credentials.sessionToken))
    return { type: 'UnrecognizedClientException', message: INVALID_TOKEN };
  if (scopeRegion !== env.region)
    return { type: 'InvalidSignatureException', message: 'Credential should be scoped to a valid region.' };
  if (scopeService !== 'dynamodb')
    return {
      type: 'InvalidSignatureException',
      message: `Credential should be scoped to correct service: 'dynamodb'.`,
    };
  const amzDate = header(req, 'x-amz-date');
  const signingDate = amzDate ? parseAmzDate(amzDate) : undefined;
  if (!signingDate) {
    return {
      type: 'IncompleteSignatureException',
      message: `Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.`,
    };
  }
  if (Math.abs(Date.now() - signingDate.getTime()) > SIGNATURE_MAX_SKEW_MS) {
    return {
      type: 'InvalidSignatureException',
      message: `Signature expired: ${amzDate} is now earlier or later than 15 minutes from the server's time.`,
    };
  }
  const signedNames = signedHeaderList!.split(';');
  const headers: Record<string, string> = {};
  for (const name of signedNames) {
    const value = req.headers[name];
    if (value === undefined) return { type: 'InvalidSignatureException', message: SIGNATURE_MISMATCH };
    headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const bodyHash = createHash('sha256').update(body).digest('hex');
  if (headers['x-amz-content-sha256'] !== undefined && headers['x-amz-content-sha256'] !== bodyHash) {
    return { type: 'InvalidSignatureException', message: SIGNATURE_MISMATCH };
  }
  const url = new URL(req.url ?? '/', 'http://gate');
  const query: Record<string, string | string[]> = {};
  for (const key of new Set(url.searchParams.keys())) {
    const all = url.searchParams.getAll(key);
    query[key] = all.length === 1 ? all[0]! : all;
  }
  const signer = new SignatureV4({
    credentials,
    region: env.region,
    service: 'dynamodb',
    sha256: Sha256,
    applyChecksum: false,
  });
  const signed = await signer.sign(
    {
      method: req.method ?? 'POST',
      protocol: 'http:',
      hostname: url.hostname,
      path: url.pathname,
      query,
      headers,
      body,
    },
    { signingDate, signableHeaders: new Set(signedNames) },
  );
  const expected = AUTHORIZATION.exec(String(signed.headers.authorization ?? ''));
  const matches =
    expected !== null &&
    expected[2] === scopeDate &&
    expected[5] === signedHeaderList &&
    safeEqual(expected[6]!, signature!);
  return matches ? undefined : { type: 'InvalidSignatureException', message: SIGNATURE_MISMATCH };
}

/** `20260101T120000Z` -> Date, or undefined when malformed. */
function parseAmzDate(value: string): Date | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second] = match.map(Number) as number[];
  return new Date(Date.UTC(year!, month! - 1, day!, hour!, minute!, second!));
}

function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** SHA-256 (HMAC-SHA-256 with a secret) in the shape @smithy/signature-v4 takes. */
class Sha256 {
  private readonly hash: Hash | Hmac;
  constructor(secret?: SourceData) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', toBuffer(secret));
  }
  update(data: SourceData): void {
    this.hash.update(toBuffer(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.hash.digest()));
  }
  reset(): void {
    throw new Error('not resettable');
  }
}

function toBuffer(data: SourceData): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

export function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}
