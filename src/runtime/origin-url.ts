/**
 * An absolute URL with its scheme and host in lower case and a default port (`:80` for http, `:443` for https)
 * dropped: what a WHATWG `URL` does when it parses one, and what React Native's `URL` does not (it keeps the string
 * as given). failwise compares origin URLs itself in this form, so `HTTP://API.Example.com` and
 * `http://api.example.com:80/` name the same origin on every runtime. The userinfo, path, query and fragment are
 * kept as they are; a string that is not `scheme://...` comes back unchanged, for `URL` to judge.
 */
const ABSOLUTE = /^([a-z][a-z\d+.-]*):\/\/((?:[^@/?#]*@)?)(\[[^\]/?#]*\]|[^:/?#]*)(?::(\d*))?(?=[/?#]|$)/i;

export function canonicalOrigin(url: string): string {
  const match = ABSOLUTE.exec(url);
  if (match === null) return url;
  const [whole, scheme, userinfo, host, port] = match as unknown as [string, string, string, string, string?];
  const lower = scheme.toLowerCase();
  const defaultPort = lower === 'http' ? '80' : lower === 'https' ? '443' : undefined;
  const keepPort = port !== undefined && port !== '' && port !== defaultPort;
  return `${lower}://${userinfo}${host.toLowerCase()}${keepPort ? `:${port}` : ''}${url.slice(whole.length)}`;
}
