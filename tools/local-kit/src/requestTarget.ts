/**
 * The path and query of a request target (RFC 9112, 3.2), for the local API and the deployed
 * runner alike. Node's parser hands over any target it can split off the request line: `//`,
 * `http://[`, `*`, `example.com:443`; none of them may throw where a request is answered.
 */

/**
 * The URL whose path and query the target names, or undefined when it names none. An origin-form
 * target (`/v1/pets?limit=2`) is a path as written: `//x/v1/pets` is the path `//x/v1/pets`, not a
 * reference to the host `x` (which resolving it against a base would make it). An absolute-form
 * target (`http://host/v1/pets`) names its own path; HTTP/1.1 servers must accept it. The
 * authority form (CONNECT's `host:port`), the asterisk form (`OPTIONS *`) and anything else name
 * no path.
 */
export function targetUrl(target: string): URL | undefined {
  const text = target.startsWith('/') ? `http://localhost${target}` : /^https?:\/\//i.test(target) ? target : undefined;
  if (text === undefined) return undefined;
  try {
    return new URL(text);
  } catch {
    return undefined; // `http://[`: an absolute URL that is none
  }
}

/**
 * The segments a request is routed by: the non-empty ones of its path (`/v1//pets/` routes as
 * `/v1/pets`). Both local servers route by it; the event's `path` keeps the path as sent.
 *
 * Real API Gateway (REST) ignores a trailing slash: `/pets/` is served by `/pets`
 * (aws/aws-sam-cli#1495, aws-powertools/powertools-lambda-python#1552, aws/chalice#65; localstack's
 * REST router, "trailing slashes are ignored in APIGW"), and serves `/prod//orders` as
 * `/prod/orders` (localstack/localstack#11253: "In the AWS service, both of these work
 * correctly"). ministackorg/ministack#1423 measured REST routing on real API Gateway and routes on
 * the non-empty segments too. An empty segment inside the path (`/v1/pets//7`) is measured nowhere
 * public: it counts as none here as well, so one rule covers every place a slash doubles
 * (docs/api.md, "Paths").
 */
export function routingSegments(pathname: string): string[] {
  return pathname.split('/').filter(Boolean);
}

/** The routing path of `pathname` (see routingSegments): `/v1//pets/` is `/v1/pets`. */
export const routingPath = (pathname: string): string => `/${routingSegments(pathname).join('/')}`;
