/**
 * DynamoDB's endpoint for the two cases this service runs in, without the SDK's rules engine:
 * AWS's own endpoint in a commercial region, and a loopback endpoint (dynalite, a stand-in). Every
 * other case goes to the SDK's resolver, unchanged.
 *
 * Why: the SDK decides each call's endpoint by walking DynamoDB's endpoint rules (a decision
 * diagram over the region's partition, FIPS, dual-stack, account-id endpoints, ARNs and a configured
 * endpoint). Its answer is cached, but a cold start pays its first walk: about 2 ms of the first
 * invocation, most of it V8 compiling the rules' functions (docs/performance.md).
 *
 * Safety: a case is taken here only when every input the rules read is one this module knows, and
 * the answer is the rules' own for it. test/lib/store/endpoint.test.ts proves that against the
 * installed SDK's resolver over every region the SDK knows and every combination of the other
 * inputs, and fails when an SDK update adds an input, so an update that changes DynamoDB's rules
 * cannot silently change our endpoints. (The SDK's partition data can be replaced at run time,
 * `setPartitionInfo`; nothing in this service does.)
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

export type EndpointResolver = DynamoDBClient['config']['endpointProvider'];
type EndpointInputs = Parameters<EndpointResolver>[0];

/** The rules' inputs (the SDK's endpoint parameters for DynamoDB); any other set input goes to the SDK. */
export const ENDPOINT_INPUTS = [
  'AccountId',
  'AccountIdEndpointMode',
  'Endpoint',
  'IsSearchOperation',
  'Region',
  'ResourceArn',
  'ResourceArnList',
  'UseDualStack',
  'UseFIPS',
] as const;
const KNOWN = new Set<string>(ENDPOINT_INPUTS);

/**
 * The `aws` partition's own pattern (its `regionRegex`, `^(us|eu|ap|sa|ca|me|af|il|mx)-\w+-\d+$`), narrowed
 * to lower-case letters in the middle: regions matching it resolve to `amazonaws.com` unless another
 * partition lists them, and none does. Checked without a regular expression: V8 compiles one on its
 * first run and again, to machine code, on its second, about 0.1 ms each on a cold start.
 */
const COMMERCIAL_PREFIXES = new Set(['us', 'eu', 'ap', 'sa', 'ca', 'me', 'af', 'il', 'mx']);
function isCommercialRegion(region: string): boolean {
  const parts = region.split('-');
  return parts.length === 3 && COMMERCIAL_PREFIXES.has(parts[0]!) && only(parts[1]!, 'a', 'z') && only(parts[2]!, '0', '9');
}

/** A configured endpoint on this machine (`http(s)://` a loopback host, a port, a `/`): never one of AWS's hosts, which the rules treat apart. */
const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'];
function isLoopbackEndpoint(endpoint: string): boolean {
  const scheme = endpoint.startsWith('http://') ? 'http://'.length : endpoint.startsWith('https://') ? 'https://'.length : 0;
  if (scheme === 0) return false;
  const host = LOOPBACK_HOSTS.find((loopback) => endpoint.startsWith(loopback, scheme));
  if (host === undefined) return false;
  const rest = endpoint.slice(scheme + host.length, endpoint.endsWith('/') ? -1 : undefined);
  return rest === '' || (rest[0] === ':' && rest.length <= 6 && only(rest.slice(1), '0', '9'));
}

/** Whether `text` is not empty and each of its characters is within `first`..`last`. */
function only(text: string, first: string, last: string): boolean {
  for (const char of text) if (char < first || char > last) return false;
  return text.length > 0;
}

/** `sdkResolver`, answering the cases above itself. */
export const withKnownEndpoints =
  (sdkResolver: EndpointResolver): EndpointResolver =>
  (inputs, context) =>
    knownEndpoint(inputs) ?? sdkResolver(inputs, context);

/** The endpoint for `inputs` when they are one of the cases above; undefined for the SDK to decide. */
export function knownEndpoint(inputs: EndpointInputs): ReturnType<EndpointResolver> | undefined {
  if (!onlyPlainInputs(inputs)) return undefined;
  const { Endpoint: endpoint, Region: region } = inputs;
  if (typeof region !== 'string' || !isCommercialRegion(region)) return undefined;
  if (endpoint !== undefined) {
    return typeof endpoint === 'string' && isLoopbackEndpoint(endpoint) ? answer(endpoint) : undefined;
  }
  return answer(`https://dynamodb.${region}.amazonaws.com`);
}

/**
 * No FIPS, no dual-stack, no search operation, no account-id endpoint (no account id, and a mode that
 * does not require one), no ARN the rules could take an account from, and nothing the rules do not read.
 */
function onlyPlainInputs(inputs: EndpointInputs): boolean {
  const { UseFIPS, UseDualStack, IsSearchOperation, AccountId, AccountIdEndpointMode, ResourceArn, ResourceArnList } = inputs;
  if (UseFIPS !== false || UseDualStack !== false) return false;
  if (IsSearchOperation !== undefined && IsSearchOperation !== false) return false;
  if (AccountId !== undefined) return false;
  if (AccountIdEndpointMode !== undefined && AccountIdEndpointMode !== 'preferred' && AccountIdEndpointMode !== 'disabled') return false;
  if (ResourceArn !== undefined && !isPlainName(ResourceArn)) return false;
  if (ResourceArnList !== undefined && !(Array.isArray(ResourceArnList) && ResourceArnList.every(isPlainName))) return false;
  for (const key in inputs) if (!KNOWN.has(key) && (inputs as Record<string, unknown>)[key] !== undefined) return false;
  return true;
}

/** A table name, not an ARN: the rules parse only values starting `arn:`. */
const isPlainName = (value: unknown): boolean => typeof value === 'string' && !value.startsWith('arn:');

const answer = (url: string): ReturnType<EndpointResolver> => ({ url: new URL(url), properties: {}, headers: {} });
