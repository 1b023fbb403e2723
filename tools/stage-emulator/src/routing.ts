/**
 * Routing as API Gateway routes a REST API's requests: the resource tree read from the template
 * (`{param}` and `{proxy+}` path parts), a path matched against it (literal parts before `{param}`
 * before `{proxy+}`, path parameters decoded), and the method a request's HTTP method finds there.
 */
import { routingSegments } from '@petstore/local-kit/requestTarget';
import {
  RestApiTemplateError,
  type ApiMethod,
  type ApiResolver,
  type ApiResource,
  type Exchange,
  type Field,
  type RestApi,
  type TemplateResource,
} from './restApiModel.ts';

/**
 * The method a request names, with its path parameters; undefined when its path leads to no
 * resource, or the resource has no method for its HTTP method (nor ANY).
 */
export function methodFor(
  api: RestApi,
  exchange: Exchange,
): { apiMethod: ApiMethod; pathParameters: Record<string, string> } | undefined {
  // Routed as API Gateway routes: `/v1//pets/` is `/v1/pets` (see routingSegments).
  const segments = routingSegments(exchange.fullPath);
  const match =
    exchange.routable && segments[0] === api.stageName ? findResource(api.root, segments.slice(1), {}) : undefined;
  const apiMethod = match && (match.resource.methods.get(exchange.method) ?? match.resource.methods.get('ANY'));
  return match && apiMethod ? { apiMethod, pathParameters: match.pathParameters } : undefined;
}

/** The REST API's resources by id, each hung from its parent under the root. */
export function readResources(
  entries: [string, TemplateResource][],
  root: ApiResource,
  resolver: ApiResolver,
  field: Field,
): Map<string, ApiResource> {
  const byId = new Map<string, ApiResource>([[root.id, root]]);
  const pending = entries.map(([logicalId, resource]) => ({
    id: resolver.ref(logicalId),
    logicalId,
    parentId: String(field(resource, 'ParentId')),
    pathPart: String(field(resource, 'PathPart')),
  }));
  // Parents may come after their children in the template: attach in rounds.
  while (pending.length > 0) {
    const ready = pending.findIndex((entry) => byId.has(entry.parentId));
    if (ready < 0)
      throw new RestApiTemplateError(`The resource ${pending[0]?.logicalId} hangs from no resource of the REST API.`);
    const [{ id, parentId, pathPart }] = pending.splice(ready, 1) as [(typeof pending)[number]];
    const parent = byId.get(parentId) as ApiResource;
    const param = /^\{(\w+)(\+?)\}$/.exec(pathPart);
    const node: ApiResource = {
      id,
      path: `${parent.path === '/' ? '' : parent.path}/${pathPart}`,
      kind: param ? (param[2] ? 'greedy' : 'param') : 'literal',
      name: param ? (param[1] as string) : pathPart,
      children: [],
      methods: new Map(),
    };
    parent.children.push(node);
    byId.set(id, node);
  }
  return byId;
}

function findResource(
  node: ApiResource,
  segments: string[],
  pathParameters: Record<string, string>,
): { resource: ApiResource; pathParameters: Record<string, string> } | undefined {
  const [head, ...rest] = segments;
  if (head === undefined) return { resource: node, pathParameters };
  // Literal path parts win over `{param}`, which wins over `{proxy+}`.
  const literal = node.children.find((child) => child.kind === 'literal' && child.name === head);
  const viaLiteral = literal && findResource(literal, rest, pathParameters);
  if (viaLiteral) return viaLiteral;
  const param = node.children.find((child) => child.kind === 'param');
  const viaParam = param && findResource(param, rest, { ...pathParameters, [param.name]: decodePathSegment(head) });
  if (viaParam) return viaParam;
  const greedy = node.children.find((child) => child.kind === 'greedy');
  return (
    greedy && {
      resource: greedy,
      pathParameters: { ...pathParameters, [greedy.name]: segments.map(decodePathSegment).join('/') },
    }
  );
}

/** A malformed escape stays as sent. */
function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
