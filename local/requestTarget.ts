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
