/**
 * CloudFormation's own question about a template: in what order can the resources be created?
 * Every Ref, Fn::GetAtt and Fn::Sub reference in a resource's Properties, UpdatePolicy and
 * CreationPolicy, and every DependsOn, is an edge "this resource needs that one first". A cycle
 * means CloudFormation refuses the template ("Circular dependency between resources") before
 * creating anything, so a test that only asserts on properties can pass on an undeployable stack.
 */

export interface TemplateLike {
  Resources: Record<
    string,
    { DependsOn?: string | string[]; Properties?: unknown; UpdatePolicy?: unknown; CreationPolicy?: unknown }
  >;
}

/** The resources each resource depends on (only edges to resources of the template). */
export function dependencyGraph(template: TemplateLike): Map<string, Set<string>> {
  const ids = new Set(Object.keys(template.Resources));
  const graph = new Map<string, Set<string>>();
  for (const [id, resource] of Object.entries(template.Resources)) {
    const needs = new Set<string>();
    const dependsOn = resource.DependsOn === undefined ? [] : [resource.DependsOn].flat();
    for (const target of [
      ...dependsOn,
      ...references(resource.Properties),
      ...references(resource.UpdatePolicy),
      ...references(resource.CreationPolicy),
    ]) {
      if (ids.has(target)) needs.add(target);
    }
    graph.set(id, needs);
  }
  return graph;
}

/** The logical ids a value refers to through Ref, Fn::GetAtt and Fn::Sub (pseudo parameters are not resources). */
export function references(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(references);
  if (value === null || typeof value !== 'object') return [];
  const found: string[] = [];
  for (const [key, inner] of Object.entries(value)) {
    if (key === 'Ref' && typeof inner === 'string') found.push(inner);
    else if (key === 'Fn::GetAtt') found.push(getAttTarget(inner));
    else if (key === 'Fn::Sub') found.push(...subReferences(inner));
    else found.push(...references(inner));
  }
  return found;
}

const getAttTarget = (value: unknown): string =>
  Array.isArray(value) ? String(value[0]) : String(value).split('.')[0]!;

/** `${Name}` and `${Name.Attribute}` in a Fn::Sub string (not `${!Literal}`), plus refs in its variable map. */
function subReferences(value: unknown): string[] {
  const [text, variables] = Array.isArray(value)
    ? [String(value[0]), value[1] as Record<string, unknown>]
    : [String(value), {}];
  const local = new Set(Object.keys(variables ?? {}));
  const named = [...text.matchAll(/\$\{([^!}][^}]*)\}/g)].map((match) => match[1]!.split('.')[0]!);
  return [...named.filter((name) => !local.has(name)), ...references(variables)];
}

/**
 * The cycles of the graph, each as the path that closes it (`A -> B -> C -> A`), one per strongly
 * connected component (Tarjan's algorithm).
 */
export function findCycles(graph: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const lowLink = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let next = 0;

  const visit = (node: string): void => {
    index.set(node, next);
    lowLink.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        lowLink.set(node, Math.min(lowLink.get(node)!, lowLink.get(target)!));
      } else if (onStack.has(target)) {
        lowLink.set(node, Math.min(lowLink.get(node)!, index.get(target)!));
      }
    }
    if (lowLink.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    const selfLoop = graph.get(node)?.has(node) ?? false;
    if (component.length > 1 || selfLoop) components.push(cyclePath(graph, new Set(component)));
  };

  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return components;
}

/** One concrete cycle inside a strongly connected component, as a closed path. */
function cyclePath(graph: Map<string, Set<string>>, component: Set<string>): string[] {
  const start = [...component].sort()[0]!;
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const target of [...(graph.get(node) ?? [])].sort()) {
      if (!component.has(target)) continue;
      if (target === start) {
        const path = [node];
        while (path[0] !== start) path.unshift(previous.get(path[0]!)!);
        return [...path, start];
      }
      if (!previous.has(target)) {
        previous.set(target, node);
        queue.push(target);
      }
    }
  }
  return [start, start];
}
