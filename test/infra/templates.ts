/**
 * Reading the synthesized templates in the infra tests: both stages synthesized once per worker,
 * and helpers for CloudFormation references, API methods, functions and alarms.
 */
import { beforeAll } from 'vitest';
import type { ErrorCode } from '../../lib/domain/errors.ts';
import type { OperationName } from '../../lib/domain/routes.ts';
import type { Stage } from '../../infra/stages.ts';
import { synthesize, testApp, type Resources, type SynthesizedStack } from './synth.ts';

let defaultStages: Map<Stage, SynthesizedStack> | undefined;

/**
 * Each stage of the default test app, synthesized once per worker: the infra tier's files share
 * this module (vitest.config.ts), and no test changes what it reads. Returns the accessor by stage.
 */
export function synthesizedStages(): (stage: Stage) => SynthesizedStack {
  beforeAll(() => {
    defaultStages ??= new Map([...testApp().stacks].map(([stage, stack]) => [stage, synthesize(stack)]));
  });
  return (stage) => {
    const found = defaultStages?.get(stage);
    if (!found) throw new Error(`${stage} was not synthesized`);
    return found;
  };
}

// --- Helpers reading CloudFormation -----------------------------------------------------------

export type Json = unknown;
export const ref = (logicalId: string) => ({ Ref: logicalId });
export const getAtt = (logicalId: string, attribute: string) => ({ 'Fn::GetAtt': [logicalId, attribute] });
export const props = (resource: Resources[string]) => resource.Properties ?? {};

/** The API path of a method's or resource's ResourceId/ParentId reference. */
function apiPath(resourceRef: Json, resources: Resources): string {
  const getAttr = (resourceRef as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'];
  if (getAttr?.[1] === 'RootResourceId') return '/';
  const id = (resourceRef as { Ref: string }).Ref;
  const resource = resources[id];
  if (resource?.Type !== 'AWS::ApiGateway::Resource')
    throw new Error(`not an API resource: ${JSON.stringify(resourceRef)}`);
  const parent = apiPath(props(resource).ParentId, resources);
  return `${parent === '/' ? '' : parent}/${String(props(resource).PathPart)}`;
}

export interface ApiMethod {
  logicalId: string;
  httpMethod: string;
  path: string;
  properties: Record<string, any>;
}

export function apiMethods(s: SynthesizedStack): ApiMethod[] {
  return s.ofType('AWS::ApiGateway::Method').map(([logicalId, method]) => ({
    logicalId,
    httpMethod: String(props(method).HttpMethod),
    path: apiPath(props(method).ResourceId, s.json.Resources),
    properties: props(method) as Record<string, any>,
  }));
}

/** The properties of `stage`'s alarm `petstore-<stage>-<name>`; throws naming it when the template has none. */
export function alarmNamed(s: SynthesizedStack, stage: Stage, name: string): Record<string, any> {
  const alarmName = `petstore-${stage}-${name}`;
  const found = s.ofType('AWS::CloudWatch::Alarm').find(([, alarm]) => props(alarm).AlarmName === alarmName);
  if (!found) throw new Error(`no alarm ${alarmName} in the ${stage} template`);
  return props(found[1]) as Record<string, any>;
}

export function functionOf(s: SynthesizedStack, operation: OperationName) {
  const fn = s.stack.functions.byOperation.get(operation)?.fn;
  if (!fn) throw new Error(`no function for ${operation}`);
  const logicalId = s.logicalId(fn);
  return { logicalId, properties: props(s.resource(logicalId)) as Record<string, any> };
}

/** Every string in a JSON value (to look for wildcards anywhere in it). */
export function strings(value: Json): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (value && typeof value === 'object') return Object.values(value).flatMap(strings);
  return [];
}

export const asArray = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

/** Fn::Join with every Ref replaced by `refs[id]` (or `<id>`), for checking rendered strings. */
export function render(value: Json, refs: Record<string, string>): string {
  if (typeof value === 'string') return value;
  const object = value as Record<string, any>;
  if (object.Ref) return refs[object.Ref] ?? `<${object.Ref}>`;
  if (object['Fn::Join'])
    return (object['Fn::Join'][1] as Json[]).map((part) => render(part, refs)).join(object['Fn::Join'][0]);
  if (object['Fn::GetAtt']) return `<${object['Fn::GetAtt'].join('.')}>`;
  throw new Error(`cannot render ${JSON.stringify(value)}`);
}

export const parseErrorBody = (template: string): { code: ErrorCode; message: string; status: number } =>
  // Mock templates are VTL: `$context.httpMethod` sits inside a JSON string, so the text parses as it is.
  JSON.parse(template) as { code: ErrorCode; message: string; status: number };
